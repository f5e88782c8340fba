#!/usr/bin/env bash
# Benchmarks gitward against plain git on a generated repository and prints ratios.
# Not a test: figures depend on the machine. Whole run: a few minutes.
#
#   scripts/bench.sh
#
# Environment:
#   CALLS=20          tool calls per measured run (one warm server) / git runs per loop
#   RUNS=5            hyperfine runs per command
#   STARTS=200        process starts for the start-up figure
#   BIG_DIFF_MIB=256  size of the changed file behind the diff.text memory figure
#   BENCH_DIR=...     where the generated repositories live (kept between runs)
#   DIFF_TEXT_ARGS    diff.text arguments after repoPath (default: base main~1, head main)
set -euo pipefail
cd "$(dirname "$0")/.."

CALLS=${CALLS:-20}
RUNS=${RUNS:-5}
STARTS=${STARTS:-200}
BIG_DIFF_MIB=${BIG_DIFF_MIB:-256}
TARGET=${CARGO_TARGET_DIR:-target}
BENCH_DIR=${BENCH_DIR:-$TARGET/bench}

if ! command -v hyperfine >/dev/null; then
    if ! apt-cache policy hyperfine 2>/dev/null | grep -q 'Candidate: [0-9]'; then
        apt-get update -qq
    fi
    apt-get install -y -qq hyperfine >/dev/null
fi
command -v /usr/bin/time >/dev/null || apt-get install -y -qq time >/dev/null

cargo build --quiet --release --bin gitward --example mcp_bench
BIN=$(realpath "$TARGET/release/gitward")
DRIVER=$(realpath "$TARGET/release/examples/mcp_bench")
mkdir -p "$BENCH_DIR"
BENCH_DIR=$(realpath "$BENCH_DIR")
REPO=$BENCH_DIR/repo
if [ ! -d "$REPO/.git" ]; then
    echo "== generating $REPO (5,000 commits, 20,000 files, 100 modified)"
    scripts/gen-bench-repo "$REPO"
fi
TOOLS=$("$BIN" tools | awk '{print $1}')
listed() { grep -qx "$1" <<<"$TOOLS"; }

# Compares N calls on one warm server with N direct git runs; prints per-call times.
compare() {
    local name=$1 args=$2 git_cmd=$3 json=$BENCH_DIR/$1.json
    hyperfine --style basic --warmup 1 --runs "$RUNS" -N --export-json "$json" \
        -n "gitward $name x$CALLS" "$DRIVER calls $BIN $CALLS $name '$args'" \
        -n "git x$CALLS" "bash -c 'for i in \$(seq $CALLS); do $git_cmd >/dev/null; done'" \
        >/dev/null
    python3 - "$json" "$name" "$CALLS" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
name, calls = sys.argv[2], int(sys.argv[3])
ours, git = (r["mean"] * 1000 / calls for r in results)
print(f"{name:<12} gitward {ours:7.2f} ms/call   git {git:7.2f} ms/run   ratio {ours / git:.2f}x")
PY
}

echo "== warm server vs direct git ($CALLS calls, $RUNS runs each; ratio = gitward / git)"
compare repo.status "{\"repoPath\":\"$REPO\"}" \
    "git -C $REPO status --porcelain=v2 -z --branch"
if listed repo.history; then
    compare repo.history "{\"repoPath\":\"$REPO\",\"limit\":50}" "git -C $REPO log -50"
else
    echo "repo.history not served by this build: skipped"
fi

echo "== start-up (target < 3 ms)"
"$DRIVER" startup "$BIN" "$STARTS"

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
    "$DRIVER" peak "$BIN" diff.text "{\"repoPath\":\"$BIG\",$ARGS}"
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
