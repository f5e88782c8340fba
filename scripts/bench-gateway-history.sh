#!/usr/bin/env bash
# Times the preview tool call of the rebase, patch and push proposals (one POST with the
# gateway's pinning, one status read) against a real `gitward gateway`, on the
# 20,000-file synthetic repository, agent detection off. The card previews (merge-tree
# replay, apply --check, the commits to push) run after the 202 and are not timed here.
# The target is a median of 10 ms or less per type.
#
# Usage: scripts/bench-gateway-history.sh [CALLS]   (GITWARD_BIN and MCP_BENCH_BIN override
#                                                     the binaries; default: release builds)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-200}

bin=${GITWARD_BIN:-}
if [ -z "$bin" ]; then
    cargo build --quiet --release
    bin="${CARGO_TARGET_DIR:-target}/release/gitward"
fi
bench=${MCP_BENCH_BIN:-}
if [ -z "$bench" ]; then
    cargo build --quiet --release --example mcp_bench
    bench="${CARGO_TARGET_DIR:-target}/release/examples/mcp_bench"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gitward-bench.XXXXXX")
gateway_pid=""
cleanup() {
    if [ -n "$gateway_pid" ]; then kill "$gateway_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig" FLUXGIT_RUN_DIR="$work/run"
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
scripts/gen-bench-repo "$work/repo" >/dev/null
repo="$work/repo"
# A branch behind main to rebase, a remote whose main was last seen one commit back.
git -C "$repo" branch topic main~1
git init -q --bare "$work/remote.git"
git -C "$repo" remote add origin "$work/remote.git"
git -C "$repo" update-ref refs/remotes/origin/main main~1

mkfifo "$work/started"
"$bin" gateway --addr 127.0.0.1:0 --ui-addr 127.0.0.1:0 --allowed-root "$work" \
    --max-pending-per-agent 1000000 >"$work/started" 2>"$work/gateway.err" &
gateway_pid=$!
read -r line <"$work/started"
handshake=$(printf '%s' "$line" | sed -E 's/.*"handshake":"([^"]+)".*/\1/')
export FLUXGIT_MCP_HANDSHAKE_ADDR="$handshake" FLUXGIT_MCP_AGENT_DETECTION_DISABLED=1

patch='--- a/d000/f00001.txt\n+++ b/d000/f00001.txt\n@@ -1 +1,2 @@\n x\n+y\n'
common="\"repoPath\":\"$repo\",\"reason\":\"benchmark\""
echo "gateway at $handshake; repository: $(git -C "$repo" ls-files | wc -l) files"
"$bench" latency "$bin" "$calls" operation.preview.rebase "{$common,\"ontoRef\":\"main\",\"currentRef\":\"topic\"}"
"$bench" latency "$bin" "$calls" operation.preview.patch "{$common,\"patchContent\":\"$patch\"}"
"$bench" latency "$bin" "$calls" operation.preview.push "{$common,\"branch\":\"main\"}"
