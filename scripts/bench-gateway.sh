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

. scripts/bench/gateway-rig.sh
rig_binaries
rig_repo
rig_gateway

args="{\"repoPath\":\"$repo\",\"reason\":\"benchmark\",\"message\":\"bench\",\"paths\":[\"d000/f00000.txt\"]}"
echo "gateway at $handshake; repository: $(git -C "$repo" ls-files | wc -l) files"
FLUXGIT_MCP_AGENT_DETECTION_DISABLED=1 "$bench" latency "$bin" "$calls" operation.preview.commit "$args"
"$bench" latency "$bin" "$calls" operation.preview.commit "$args"
