#!/usr/bin/env bash
# Times the preview tool call (one POST with the gateway's pinning, one status read) of
# `merge`, `discard`, `reset` (mixed and hard), `plan`, `rebase`, `patch` and `push` against
# a real `gitward gateway` on the 20,000-file synthetic repository (scripts/gen-bench-repo),
# agent detection off. The card previews (merge-tree preflight and replay, apply --check,
# the commits to push, what is lost) are computed after the gateway answered and are not in
# these times. The target is a median of 10 ms or less per call.
#
# Usage: scripts/bench-gateway-history.sh [CALLS]   (GITWARD_BIN and MCP_BENCH_BIN
#                                                    override the binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-200}

. scripts/bench/gateway-rig.sh
rig_binaries
rig_repo
# A branch to merge: one commit on top of main.
side=$(git -C "$repo" commit-tree -p HEAD -m side "HEAD^{tree}")
git -C "$repo" update-ref refs/heads/side "$side"
modified=$(git -C "$repo" diff --name-only | head -n 1)
# A branch behind main to rebase, a remote whose main was last seen one commit back.
git -C "$repo" branch topic main~1
git init -q --bare "$work/remote.git"
git -C "$repo" remote add origin "$work/remote.git"
git -C "$repo" update-ref refs/remotes/origin/main main~1

rig_gateway
export FLUXGIT_MCP_AGENT_DETECTION_DISABLED=1

patch='--- a/d000/f00001.txt\n+++ b/d000/f00001.txt\n@@ -1 +1,2 @@\n x\n+y\n'
common="\"repoPath\":\"$repo\",\"reason\":\"benchmark\""
echo "gateway at $handshake; repository: $(git -C "$repo" ls-files | wc -l) files"
run() {
    echo "== $1"
    "$bench" latency "$bin" "$calls" "operation.preview.$2" "{$common,$3}"
}
run merge merge '"sourceRef":"side","targetRef":"main"'
run discard discard "\"paths\":[\"$modified\"]"
run "reset (mixed)" reset '"targetRef":"HEAD~1"'
run "reset (hard)" reset '"targetRef":"HEAD~1","mode":"hard"'
run plan plan "\"steps\":[{\"operationType\":\"discard\",\"paths\":[\"$modified\"]},{\"operationType\":\"reset\",\"targetRef\":\"HEAD~1\"}]"
run rebase rebase '"ontoRef":"main","currentRef":"topic"'
run patch patch "\"patchContent\":\"$patch\""
run push push '"branch":"main"'
