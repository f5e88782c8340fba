#!/usr/bin/env bash
# How cost grows with the repository: repo.status, repo.brief, repo.history, diff.text and
# repo.conflictPreflight on 20,000 and on 100,000 files, each as a ratio to the plain git
# command it stands for, then the growth 20k -> 100k of both. Then git status with and
# without the user's untracked cache on the 20,000-file repository. Not a test: figures
# depend on the machine.
#
#   scripts/bench-scale.sh
#
# Environment:
#   ROUNDS=20        interleaved rounds per comparison (one warm server; each round one
#                    tool call and one direct git run, alternating which goes first)
#   BENCH_DIR=...    where the generated repositories live (default target/bench, shared
#                    with scripts/bench.sh; generating the 100,000-file ones takes long)
#   GITWARD_BIN, MCP_BENCH   prebuilt binaries to measure instead of building them
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-20}
TARGET=${CARGO_TARGET_DIR:-target}
BENCH_DIR=${BENCH_DIR:-$TARGET/bench}

command -v hyperfine >/dev/null || { echo "hyperfine is required" >&2; exit 1; }
if [ -z "${GITWARD_BIN:-}" ] || [ -z "${MCP_BENCH:-}" ]; then
    cargo build --quiet --release --locked --bin gitward --example mcp_bench
fi
BIN=$(realpath "${GITWARD_BIN:-$TARGET/release/gitward}")
DRIVER=$(realpath "${MCP_BENCH:-$TARGET/release/examples/mcp_bench}")
mkdir -p "$BENCH_DIR"
BENCH_DIR=$(realpath "$BENCH_DIR")
OUT=$BENCH_DIR/scale.txt
: >"$OUT"

generate() {
    local dir=$1 what=$2
    shift 2
    if [ ! -d "$dir/.git" ]; then
        echo "== generating $dir ($what)"
        scripts/gen-bench-repo "$@" "$dir"
    fi
}
generate "$BENCH_DIR/repo" "5,000 commits, 20,000 files"
generate "$BENCH_DIR/large" "50,000 commits, 100,000 files" --large
generate "$BENCH_DIR/rebase" "50 commits to rebase, 20,000 files" --rebase
generate "$BENCH_DIR/rebase-large" "50 commits to rebase, 100,000 files" --rebase --large

# One comparison: "SIZE TOOL" then the driver's line, kept for the growth table.
vs() {
    local size=$1 tool=$2 line
    shift 2
    line=$("$DRIVER" vs "$BIN" "$ROUNDS" "$tool" "$@")
    echo "$size $line" | tee -a "$OUT"
}

echo "== ratio to plain git ($ROUNDS interleaved rounds; median (min–max); ratio = gitward / git)"
for size in 20k 100k; do
    case $size in
        20k) R=$BENCH_DIR/repo REBASE=$BENCH_DIR/rebase ;;
        100k) R=$BENCH_DIR/large REBASE=$BENCH_DIR/rebase-large ;;
    esac
    vs "$size" repo.status "{\"repoPath\":\"$R\"}" git -C "$R" status --porcelain=v2 -z --branch
    vs "$size" repo.brief "{\"repoPath\":\"$R\"}" git -C "$R" status --porcelain=v2 -z --branch
    vs "$size" repo.history "{\"repoPath\":\"$R\",\"limit\":50}" git -C "$R" log -50
    vs "$size" diff.text "{\"repoPath\":\"$R\",\"base\":\"main~10\",\"head\":\"main\"}" \
        git -C "$R" diff --no-ext-diff --no-textconv main~10 main
    pairs=$BENCH_DIR/rebase-pairs-$size.txt
    git -C "$REBASE" rev-list --reverse --no-merges --right-only --cherry-pick --parents \
        main...topic | awk '{print $1, $2}' >"$pairs"
    vs "$size" repo.conflictPreflight \
        "{\"repoPath\":\"$REBASE\",\"targetRef\":\"main\",\"currentRef\":\"topic\",\"mode\":\"rebase\"}" \
        replay "$REBASE" "$(git -C "$REBASE" rev-parse main)" "$pairs"
done

echo "== growth 20k -> 100k files (median at 100k / median at 20k)"
python3 - "$OUT" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) (\S+)\s+gitward\s+([\d.]+) ms.*git\s+([\d.]+) ms.*ratio ([\d.]+)x", line)
    if m:
        size, tool, ours, git, ratio = m.groups()
        rows.setdefault(tool, {})[size] = (float(ours), float(git), float(ratio))
for tool, r in rows.items():
    (a20, g20, r20), (a100, g100, r100) = r["20k"], r["100k"]
    print(f"{tool:<24} ratio {r20:.2f}x -> {r100:.2f}x   gitward {a20:.1f} -> {a100:.1f} ms "
          f"(x{a100 / a20:.2f})   git {g20:.1f} -> {g100:.1f} ms (x{g100 / g20:.2f})")
PY

echo "== git's untracked cache (core.untrackedCache) on 20,000 files"
# A copy whose index carries the cache, as the user's own `git status` leaves it once the
# setting is on; gitward reads it and never writes it back (no optional locks).
CACHED=$BENCH_DIR/repo-untracked-cache
if [ ! -d "$CACHED/.git" ]; then
    cp -a "$BENCH_DIR/repo" "$CACHED"
    git -C "$CACHED" config core.untrackedCache true
    git -C "$CACHED" update-index --untracked-cache
    git -C "$CACHED" status >/dev/null
fi
hyperfine --warmup 3 --runs "$ROUNDS" --style none --export-json "$BENCH_DIR/untracked-cache.json" \
    "git -C $BENCH_DIR/repo --no-optional-locks status --porcelain=v2 -z --branch" \
    "git -C $CACHED --no-optional-locks status --porcelain=v2 -z --branch" >/dev/null
python3 - "$BENCH_DIR/untracked-cache.json" <<'PY'
import json, sys
off, on = json.load(open(sys.argv[1]))["results"]
print(f"plain git status: without the cache {off['median'] * 1000:.1f} ms, with it "
      f"{on['median'] * 1000:.1f} ms ({on['median'] / off['median']:.2f}x)")
PY
# The part the cache replaces, from git's own trace: the search for untracked files.
for _ in $(seq "$ROUNDS"); do
    for r in "$BENCH_DIR/repo" "$CACHED"; do
        GIT_TRACE2_PERF=1 git -C "$r" --no-optional-locks status --porcelain=v2 -z 2>&1 \
            >/dev/null | awk -F'|' -v r="$r" '/region_leave.*label:untracked/ {print r, $7}'
    done
done | python3 -c '
import statistics, sys
took = {}
for line in sys.stdin:
    repo, seconds = line.split()
    took.setdefault(repo.endswith("-untracked-cache"), []).append(float(seconds) * 1000)
print(f"its untracked-file search: without {statistics.median(took[False]):.1f} ms, "
      f"with {statistics.median(took[True]):.1f} ms (medians from git trace2)")'

vs "20k+uc" repo.status "{\"repoPath\":\"$CACHED\"}" \
    git -C "$BENCH_DIR/repo" status --porcelain=v2 -z --branch
echo "(the last line: repo.status riding the cache vs plain git status without it)"
