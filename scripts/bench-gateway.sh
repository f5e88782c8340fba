#!/usr/bin/env bash
# Times a preview tool call (one POST with the gateway's pinning, one status read) against
# a real `gitward gateway`, on the 20,000-file synthetic repository of scripts/bench.sh,
# with agent detection off and on (the otherAgents hint is detected beside the gateway
# call). The target is a median of 10 ms or less.
#
# Usage: scripts/bench-gateway.sh [CALLS]   (GITWARD_BIN and MCP_BENCH_BIN override the
#                                            binaries; default: release builds of this checkout)
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

# Every call is a new pending proposal: lift the per-agent cap out of the way.
mkfifo "$work/started"
"$bin" gateway --addr 127.0.0.1:0 --ui-addr 127.0.0.1:0 --allowed-root "$work" \
    --max-pending-per-agent 1000000 >"$work/started" 2>"$work/gateway.err" &
gateway_pid=$!
read -r line <"$work/started"
handshake=$(printf '%s' "$line" | sed -E 's/.*"handshake":"([^"]+)".*/\1/')
export FLUXGIT_MCP_HANDSHAKE_ADDR="$handshake"

args="{\"repoPath\":\"$repo\",\"reason\":\"benchmark\",\"message\":\"bench\",\"paths\":[\"d000/f00000.txt\"]}"
echo "gateway at $handshake; repository: $(git -C "$repo" ls-files | wc -l) files"
FLUXGIT_MCP_AGENT_DETECTION_DISABLED=1 "$bench" latency "$bin" "$calls" operation.preview.commit "$args"
"$bench" latency "$bin" "$calls" operation.preview.commit "$args"
