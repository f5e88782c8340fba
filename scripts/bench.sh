#!/usr/bin/env bash
# Benchmarks gitward against plain git on generated repositories and prints every figure
# with its target, then a summary. Not a test: figures depend on the machine.
# Whole run: several minutes (the first run also generates the repositories).
#
#   scripts/bench.sh
#
# Environment:
#   ROUNDS=30         interleaved rounds per comparison (one warm server; each round one
#                     tool call and one direct git run, alternating which goes first)
#   STARTS=200        process starts for the start-up figure
#   BIG_DIFF_MIB=256  MiB of changed text (64 MiB files) behind the diff.text memory
#                     figure; the diff is about twice that. diff.text stops counting
#                     past 256 MiB or 20 s, and its git deadline is 30 s.
#   FLEET_REPOS=100   repositories for fleet.digest and fleet.radar
#   EXTRA=1           also run scripts/bench-audit.sh and scripts/bench-specs.sh (0: skip)
#   BENCH_DIR=...     where the generated repositories live (kept between runs; the
#                     100,000-file one takes a few minutes to generate)
#   DIFF_TEXT_ARGS    diff.text arguments after repoPath (default: base main~1, head main)
#   FSMONITOR_GIT     a git whose builtin fsmonitor daemon runs here (Linux: 2.55 and
#                     later), when the one on PATH has none
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-30}
STARTS=${STARTS:-200}
BIG_DIFF_MIB=${BIG_DIFF_MIB:-256}
FLEET_REPOS=${FLEET_REPOS:-100}
EXTRA=${EXTRA:-1}
TARGET=${CARGO_TARGET_DIR:-target}
BENCH_DIR=${BENCH_DIR:-$TARGET/bench}

if ! command -v hyperfine >/dev/null; then
    if ! apt-cache policy hyperfine 2>/dev/null | grep -q 'Candidate: [0-9]'; then
        apt-get update -qq
    fi
    apt-get install -y -qq hyperfine >/dev/null
fi
command -v /usr/bin/time >/dev/null || apt-get install -y -qq time >/dev/null

cargo build --quiet --release --bin gitward --examples
BIN=$(realpath "$TARGET/release/gitward")
DRIVER=$(realpath "$TARGET/release/examples/mcp_bench")
mkdir -p "$BENCH_DIR"
BENCH_DIR=$(realpath "$BENCH_DIR")
SUMMARY=$BENCH_DIR/summary.txt
: >"$SUMMARY"
# Keeps a figure, with its target, for the summary.
figure() { printf '%s\n    target %s\n' "$1" "$2" >>"$SUMMARY"; }

REPO=$BENCH_DIR/repo
if [ ! -d "$REPO/.git" ]; then
    echo "== generating $REPO (5,000 commits, 20,000 files, 100 modified)"
    scripts/gen-bench-repo "$REPO"
fi
TOOLS=$("$BIN" tools | awk '{print $1}')
listed() { grep -qx "$1" <<<"$TOOLS"; }

echo "== warm server vs direct git ($ROUNDS interleaved rounds; median (min–max); ratio = gitward / git)"
vs() {
    local name=$1 target=$2 line
    shift 2
    if ! listed "$name"; then
        echo "$name not served by this build: skipped"
        return
    fi
    line=$("$DRIVER" vs "$BIN" "$ROUNDS" "$name" "$@")
    echo "$line"
    figure "$line" "$target"
}
vs repo.status "ratio ≤ 1.05x vs git status --porcelain=v2 -z --branch" \
    "{\"repoPath\":\"$REPO\"}" git -C "$REPO" status --porcelain=v2 -z --branch
vs repo.brief "ratio ≤ 1.15x vs git status --porcelain=v2 -z --branch" \
    "{\"repoPath\":\"$REPO\"}" git -C "$REPO" status --porcelain=v2 -z --branch
vs repo.history "ratio ≤ 1.2x vs git log -50" \
    "{\"repoPath\":\"$REPO\",\"limit\":50}" git -C "$REPO" log -50
# The same walk with the fields repo.history asks for (git log -z --format, one commit
# more to know whether a next page exists): what is left is the server's own cost.
HISTORY_FORMAT='--format=%H%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%s%x00%b%x00%h%x00'
vs repo.history "ratio ≤ 1.2x vs git log -51 with the same fields" \
    "{\"repoPath\":\"$REPO\",\"limit\":50}" git -C "$REPO" log -z -51 "$HISTORY_FORMAT"

REBASE=$BENCH_DIR/rebase
if [ ! -d "$REBASE/.git" ]; then
    echo "== generating $REBASE (50 commits on topic to rebase onto a diverged main)"
    scripts/gen-bench-repo --rebase "$REBASE"
fi
# The commits `git rebase main` would replay, each with the parent it is replayed from.
git -C "$REBASE" rev-list --reverse --no-merges --right-only --cherry-pick --parents \
    main...topic | awk '{print $1, $2}' >"$BENCH_DIR/rebase-pairs.txt"
PREFLIGHT="{\"repoPath\":\"$REBASE\",\"targetRef\":\"main\",\"currentRef\":\"topic\",\"mode\":\"rebase\"}"
if listed repo.conflictPreflight; then
    "$BIN" call repo.conflictPreflight "$PREFLIGHT" |
        python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; print("preflight:", d["status"], "after replaying", d["rebase"]["commitsReplayed"], "of", d["rebase"]["commitsTotal"], "commits")'
fi
vs repo.conflictPreflight "ratio ≤ 2x vs its $(wc -l <"$BENCH_DIR/rebase-pairs.txt") git merge-tree --write-tree runs" \
    "$PREFLIGHT" replay "$REBASE" "$(git -C "$REBASE" rev-parse main)" "$BENCH_DIR/rebase-pairs.txt"

# Status riding git's builtin fsmonitor daemon: repeated repo.status on a copy of the
# 20,000-file repository with core.fsmonitor and the untracked cache on and the daemon
# running, against a cold plain git status (no daemon) of the original, the same git on
# both sides. Git has the daemon on Linux from 2.55: FSMONITOR_GIT names such a git when
# the one on PATH is older; without one the figure is skipped.
FSM_REPO=$BENCH_DIR/repo-fsmonitor
FSM_BIN=$BENCH_DIR/fsmonitor-bin
fsm_git=
for g in "${FSMONITOR_GIT:-}" "$(command -v git)" /opt/git-next/bin/git; do
    # `status` exits 1 when no daemon watches the repository; it says so only where it
    # could.
    if [ -n "$g" ] && [ -x "$g" ] &&
        [[ $("$g" -C "$REPO" fsmonitor--daemon status 2>&1 || true) == *"fsmonitor-daemon is"* ]]; then
        fsm_git=$g
        break
    fi
done
if [ -n "$fsm_git" ] && listed repo.status; then
    rm -rf "$FSM_REPO" "$FSM_BIN"
    cp -a "$REPO" "$FSM_REPO"
    mkdir -p "$FSM_BIN"
    ln -s "$(realpath "$fsm_git")" "$FSM_BIN/git"
    "$fsm_git" -C "$FSM_REPO" config core.fsmonitor true
    "$fsm_git" -C "$FSM_REPO" config core.untrackedCache true
    "$fsm_git" -C "$FSM_REPO" fsmonitor--daemon start 2>/dev/null || true
    trap '"$fsm_git" -C "$FSM_REPO" fsmonitor--daemon stop 2>/dev/null || true' EXIT
    # The user's own status stores the daemon's token and the untracked cache.
    "$fsm_git" -C "$FSM_REPO" status >/dev/null
    echo "== repo.status with the fsmonitor daemon ($("$fsm_git" version))"
    PATH="$FSM_BIN:$PATH" vs repo.status "ratio ≤ 0.3x vs a cold git status without the daemon (repeated calls, daemon running)" \
        "{\"repoPath\":\"$FSM_REPO\"}" git -C "$REPO" status --porcelain=v2 -z --branch
    "$fsm_git" -C "$FSM_REPO" fsmonitor--daemon stop 2>/dev/null || true
    trap - EXIT
else
    echo "repo.status with the fsmonitor daemon: skipped (no git whose fsmonitor--daemon runs here; set FSMONITOR_GIT)"
fi

LARGE=$BENCH_DIR/large
if [ ! -d "$LARGE/.git" ]; then
    echo "== generating $LARGE (50,000 commits, 100,000 files, 100 modified)"
    scripts/gen-bench-repo --large "$LARGE"
fi
echo "== cost growth: the same calls on 20,000 and on 100,000 files"
for R in "$REPO" "$LARGE"; do
    n=$(git -C "$R" ls-files | wc -l)
    vs repo.status "growth ($n files)" "{\"repoPath\":\"$R\"}" \
        git -C "$R" status --porcelain=v2 -z --branch
    vs repo.brief "growth ($n files)" "{\"repoPath\":\"$R\"}" \
        git -C "$R" status --porcelain=v2 -z --branch
    vs repo.history "growth ($n files)" "{\"repoPath\":\"$R\",\"limit\":50}" git -C "$R" log -50
    vs diff.text "growth ($n files)" "{\"repoPath\":\"$R\",\"base\":\"main~10\",\"head\":\"main\"}" \
        git -C "$R" diff --no-ext-diff --no-textconv main~10 main
done

echo "== start-up"
# Measured on a copy, as `cargo install` leaves it: the file the linker has just written
# starts measurably slower (about 0.15 ms here) than the same bytes copied.
STARTUP_BIN="$BENCH_DIR/gitward-startup"
cp "$BIN" "$STARTUP_BIN"
"$DRIVER" startup "$STARTUP_BIN" "$STARTS" | tee "$BENCH_DIR/startup.txt"
figure "$(head -1 "$BENCH_DIR/startup.txt")" "within 0.3 ms of head -1 answering the same line (median $(sed -n '2s/.*median \([0-9.]* ms\).*/\1/p' "$BENCH_DIR/startup.txt"), same run, interleaved)"
figure "$(sed -n 3p "$BENCH_DIR/startup.txt")" "≤ 0.3 ms"
# Most of that is the dynamic loader's: each shared library it maps, the relocations it
# applies (build.rs says which link settings keep both small).
if command -v readelf >/dev/null; then
    relr=$(readelf -r "$BIN" | sed -n "s/^Relocation section '.relr.dyn' .* contains \([0-9]*\) entries:/\1/p")
    echo "loader work: shared libraries $(readelf -d "$BIN" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | paste -sd ' ');" \
        "relative relocations: $(readelf -r "$BIN" | grep -c '_RELATIVE ') RELA entries, ${relr:-0} packed RELR words"
fi

# Side by side with a process that reads one line and prints it: whatever gitward costs
# beyond that is its own start work. The whole run (answer, then exit at end of input).
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
    >"$BENCH_DIR/init.json"
hyperfine --warmup 5 --runs "$ROUNDS" --style none --export-json "$BENCH_DIR/startup.json" \
    "$STARTUP_BIN serve <$BENCH_DIR/init.json" "head -1 <$BENCH_DIR/init.json" >/dev/null
line=$(python3 - "$BENCH_DIR/startup.json" <<'PY'
import json, sys
gw, head = json.load(open(sys.argv[1]))["results"]
cpu = lambda r: (r["user"] + r["system"]) * 1000
print(f"start, answer initialize, exit: gitward median {gw['median'] * 1000:.2f} ms "
      f"(cpu {cpu(gw):.2f} ms), head -1 {head['median'] * 1000:.2f} ms (cpu {cpu(head):.2f} ms)")
PY
)
echo "$line"
figure "$line" "within 0.3 ms of head -1"

echo "== context economy (tokens ≈ compact JSON bytes / 4; tools/list: the whole response, per era)"
python3 scripts/bench/economy.py tools "$BIN" | tee "$BENCH_DIR/economy.txt"
python3 scripts/bench/economy.py brief "$BIN" "$REPO" | tee -a "$BENCH_DIR/economy.txt"
CHANGED=$BENCH_DIR/changed
if [ ! -d "$CHANGED/.git" ]; then
    echo "== cloning $REPO to $CHANGED with every tracked file modified"
    git clone -q --local "$REPO" "$CHANGED"
    git -C "$CHANGED" ls-files -z | (cd "$CHANGED" && xargs -0 sh -c 'for f; do echo x >>"$f"; done' sh)
fi
python3 scripts/bench/economy.py status "$BIN" "$CHANGED" | tee -a "$BENCH_DIR/economy.txt"
while IFS= read -r line; do
    case $line in
        "tools/list "*) figure "$line" "≤ 64 KB for 38 git + 5 spec tools in every era; ≤ 200 tokens per tool before outputSchema" ;;
        repo.brief*) figure "$line" "≤ 0.35x the raw commands" ;;
        repo.status*) figure "$line" "≤ 64 KiB by default, true totals" ;;
    esac
done <"$BENCH_DIR/economy.txt"

# The brief's bytes and tokens at 100,000 files, beside the raw commands it replaces.
economy_at_scale() {
    local line
    line="100k files: $(python3 scripts/bench/economy.py brief "$BIN" "$LARGE")"
    echo "$line"
    figure "$line" "≤ 0.35x the raw commands"
}
economy_at_scale

if listed diff.text; then
    BIG=$BENCH_DIR/big-$BIG_DIFF_MIB
    if [ ! -d "$BIG/.git" ]; then
        echo "== generating $BIG (a ${BIG_DIFF_MIB} MiB file rewritten)"
        scripts/gen-bench-repo --big-diff "$BIG_DIFF_MIB" "$BIG"
    fi
    ARGS=${DIFF_TEXT_ARGS:-\"base\":\"main~1\",\"head\":\"main\"}
    echo "== peak memory of diff.text over a ~$((2 * BIG_DIFF_MIB)) MiB diff"
    # The server's own peak, then the whole process tree's (the larger of gitward and
    # git), then git's alone for the same diff.
    line=$("$DRIVER" peak "$BIN" diff.text "{\"repoPath\":\"$BIG\",$ARGS}")
    echo "$line"
    figure "$line" "server's own RSS < 32 MiB (diff ~$((2 * BIG_DIFF_MIB)) MiB)"
    /usr/bin/time -v "$BIN" call diff.text "{\"repoPath\":\"$BIG\",$ARGS}" \
        >/dev/null 2>"$BENCH_DIR/diff-time.txt" || true
    /usr/bin/time -v git -C "$BIG" diff --no-ext-diff --no-textconv main~1 main \
        >/dev/null 2>"$BENCH_DIR/git-diff-time.txt"
    peak() { awk -F': ' '/Maximum resident set size/ {printf "%d MiB", $2 / 1024}' "$1"; }
    echo "peak RSS with its git child: $(peak "$BENCH_DIR/diff-time.txt");" \
        "git diff alone: $(peak "$BENCH_DIR/git-diff-time.txt")"
else
    echo "diff.text not served by this build: memory figure skipped"
fi

echo "== a burst of 1,000 concurrent repo.status calls on one connection"
line=$("$DRIVER" burst "$BIN" 1000 repo.status "{\"repoPath\":\"$REPO\"}")
echo "$line"
figure "$line" "all answered; git children at most the bound (4 per core, 4..32); flat RSS"

echo "== fleet over $FLEET_REPOS repositories"
FLEET_JSON=$BENCH_DIR/fleet.json scripts/bench-fleet.sh "$FLEET_REPOS"
python3 - "$BENCH_DIR/fleet.json" <<'PY' >"$BENCH_DIR/fleet.txt"
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f'{r["command"]}\t{r["median"] * 1000:.0f} ms ({r["min"] * 1000:.0f}–{r["max"] * 1000:.0f}), {len(r["times"])} runs')
PY
while IFS=$'\t' read -r name value; do
    case $name in
        fleet.digest*) figure "$name: $value" "< 0.2 s" ;;
        fleet.radar*) figure "$name: $value" "< 2 s" ;;
    esac
done <"$BENCH_DIR/fleet.txt"

if [ "$EXTRA" = 1 ]; then
    echo "== audit ledger"
    scripts/bench-audit.sh | tee "$BENCH_DIR/audit.txt"
    grep -v '^ledger directory' "$BENCH_DIR/audit.txt" >>"$SUMMARY"
    echo "== explore"
    GITWARD_BIN=$BIN scripts/bench-specs.sh | tee "$BENCH_DIR/specs.txt"
    figure "$(tail -1 "$BENCH_DIR/specs.txt")" "< 1 s"
fi

echo
echo "== summary ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
cat "$SUMMARY"
