#!/usr/bin/env bash
# The Streamable HTTP transport against stdio (release build), on the 20k-file benchmark
# repository of scripts/gen-bench-repo: repo.status latency over each (target: HTTP adds
# at most 1 ms at the median), and 1,000 concurrent HTTP calls answered with the git
# children bounded (GITWARD_MAX_CHILDREN, default the machine's share).
#
#   scripts/bench-http.sh [ROUNDS] [CONCURRENT]     (defaults 200, 1000)
#
# BENCH_DIR=... where the generated repository lives (kept between runs).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-200}
CONCURRENT=${2:-1000}
TARGET=${CARGO_TARGET_DIR:-target}
BENCH_DIR=${BENCH_DIR:-$TARGET/bench}

cargo build --quiet --release --bin gitward --example http_bench
BIN=$(realpath "$TARGET/release/gitward")
DRIVER=$(realpath "$TARGET/release/examples/http_bench")
mkdir -p "$BENCH_DIR"
REPO=$(realpath "$BENCH_DIR")/repo
if [ ! -d "$REPO/.git" ]; then
    echo "== generating $REPO (5,000 commits, 20,000 files, 100 modified)"
    scripts/gen-bench-repo "$REPO"
fi
# 1,000 clients each hold a connection: leave room for them.
ulimit -n 4096 2>/dev/null || true
export FLUXGIT_MCP_AUDIT_DISABLED=1 FLUXGIT_MCP_PRESENCE_DISABLED=1
"$DRIVER" vs "$BIN" "$ROUNDS" "$REPO"
"$DRIVER" burst "$BIN" "$CONCURRENT" "$REPO"
