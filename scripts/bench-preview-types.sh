#!/usr/bin/env bash
# Times the preview tool call of every operation type (POST with the gateway's pinning,
# one status read) on the 20,000-file synthetic repository, prepared so that each type
# has something to propose: a branch to merge, one to rebase, a bare remote one commit
# behind, a submodule whose checkout moved, modified files to commit or discard.
#
# Usage: scripts/bench-preview-types.sh [CALLS] [ROUNDS] [TYPE...]
#   GITWARD_BIN / MCP_BENCH_BIN: the binaries (default: release builds of this checkout).
#   GITWARD_BIN_A: a second gitward to compare with; each round then runs A and B one
#   after the other per type, alternating which goes first, each against its own gateway.
#   MCP_BENCH_GAP_MS: an untimed pause between calls (default: none, back to back).
#
# Besides each call's latency, each run reports card-ready: from the proposal's creation
# (stored just before its 202) to its card arriving with the preview on the approval
# page's event stream, as a person watching the page sees it. After each run the script
# waits for that run's cards, so a run's card work never spills into the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-50}
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
types=("$@")

. scripts/bench/gateway-rig.sh
rig_binaries
rig_repo
gw_pids=()
trap 'for p in "${gw_pids[@]}"; do kill "$p" 2>/dev/null || true; done; rig_cleanup' EXIT

g() { git -C "$repo" "$@"; }
# A commit of `base` plus one new file, made without touching the worktree or the index.
side_commit() { # base file message
    local idx="$work/side.index" blob tree
    GIT_INDEX_FILE="$idx" g read-tree "$1"
    blob=$(printf '%s\n' "$3" | g hash-object -w --stdin)
    GIT_INDEX_FILE="$idx" g update-index --add --cacheinfo "100644,$blob,$2"
    tree=$(GIT_INDEX_FILE="$idx" g write-tree)
    rm -f "$idx"
    g commit-tree "$tree" -p "$1" -m "$3"
}
g branch -f feature "$(side_commit main feature.txt feature)"
g branch -f topic "$(side_commit main~1 topic.txt topic)"
g branch -f gone main~2
git init -q --bare "$work/remote.git"
g remote add origin "$work/remote.git"
g push -q origin main~1:refs/heads/main
g fetch -q origin
sub="$work/sub"
git init -q -b main "$sub"
git -C "$sub" commit -q --allow-empty -m one
g -c protocol.file.allow=always submodule --quiet add "$sub" sub
g commit -q -m "add sub"
git -C "$sub" commit -q --allow-empty -m two
git -C "$repo/sub" -c protocol.file.allow=always pull -q origin main
g push -q origin main~2:refs/heads/main
g fetch -q origin
modified=$(g diff --name-only | head -1)

patch=$'diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n'
declare -A args=(
    [commit]="{\"message\":\"bench\",\"paths\":[\"$modified\"]}"
    [branch]='{"name":"bench-new","checkout":false}'
    [worktree]='{"branch":"feature"}'
    [branchDelete]="{\"targets\":[{\"repoPath\":\"$repo\",\"branches\":[\"gone\"]}]}"
    [merge]='{"sourceRef":"feature","targetRef":"main"}'
    [discard]="{\"paths\":[\"$modified\"]}"
    [reset]='{"targetRef":"HEAD~1","mode":"mixed"}'
    [resetHard]='{"targetRef":"HEAD~1","mode":"hard"}'
    [plan]='{"steps":[{"operationType":"merge","sourceRef":"feature","targetRef":"main"},{"operationType":"reset","targetRef":"HEAD~1","mode":"mixed"}]}'
    [rebase]='{"ontoRef":"main","currentRef":"topic"}'
    [patch]=$(jq -cn --arg p "$patch" '{patchContent:$p}')
    [push]='{"remote":"origin","branch":"main"}'
    [submodulePointer]='{"action":"record","relativePath":"sub","message":"bump"}'
)
order=(commit branch worktree branchDelete merge discard reset resetHard plan rebase patch push submodulePointer)
[ ${#types[@]} -gt 0 ] && order=("${types[@]}")

# One gateway per binary, each with its own store.
start_gateway() { # bin name; sets addr[name]
    mkfifo "$work/started.$2"
    FLUXGIT_RUN_DIR="$work/run.$2" "$1" gateway --addr 127.0.0.1:0 --ui-addr 127.0.0.1:0 \
        --allowed-root "$work" --max-pending-per-agent 1000000 \
        >"$work/started.$2" 2>"$work/gateway.$2.err" &
    gw_pids+=($!)
    local line ui token
    read -r line <"$work/started.$2"
    addr[$2]=$(printf '%s' "$line" | sed -E 's/.*"handshake":"([^"]+)".*/\1/')
    ui=$(printf '%s' "$line" | sed -E 's/.*"ui":"http:\/\/([^"\/]+)\/".*/\1/')
    token=$(printf '%s' "$line" | sed -E 's/.*"login":"[^"#]*#([^"]+)".*/\1/')
    watch_cards "$ui" "$token" "$2"
}
# Follows the approval page's event stream, one line per event with the time it arrived.
watch_cards() { # ui-authority token name
    curl -sf -c "$work/cookie.$3" -H "Origin: http://$1" -H 'Content-Type: application/json' \
        -d "{\"token\":\"$2\"}" "http://$1/api/login" >/dev/null
    : >"$work/cards.$3"
    curl -sfN -b "$work/cookie.$3" "http://$1/api/events" |
        while IFS= read -r ev; do
            case $ev in data:*) printf '%s\t%s\n' "$EPOCHREALTIME" "${ev#data:}" ;; esac
        done >>"$work/cards.$3" &
    gw_pids+=($!)
}
# "id ms" for every card whose preview arrived (its first arrival): ms since its creation.
cards_ready() { # name
    jq -rR 'capture("^(?<t>[0-9.]+)\t ?(?<j>.*)$") | (.j | fromjson) as $c
        | select($c.preview != null)
        | ($c.createdAt | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) as $s
        | ($c.createdAt | capture("\\.(?<ms>[0-9]+)Z$").ms | tonumber / 1000) as $frac
        | "\($c.previewId) \(((.t | tonumber) - $s - $frac) * 1000)"' "$work/cards.$1" |
        awk '!seen[$1]++'
}
ready_count() { # name
    grep -v '"preview":null' "$work/cards.$1" | grep -o '"previewId":"[^"]*"' | sort -u | wc -l
}
declare -A bins=([B]="$bin") addr=() done_cards=()
[ -n "${GITWARD_BIN_A:-}" ] && bins[A]="$GITWARD_BIN_A"
# Not in a subshell: the gateways' ids must reach the exit trap.
for side in "${!bins[@]}"; do start_gateway "${bins[$side]}" "$side"; done

run() { # side type
    local tool=${2%Hard} json
    json=$(jq -cn --arg r "$repo" --argjson own "${args[$2]}" '{repoPath:$r,reason:"benchmark"} + $own')
    FLUXGIT_RUN_DIR="$work/run.$1" FLUXGIT_MCP_HANDSHAKE_ADDR="${addr[$1]}" \
        FLUXGIT_MCP_AGENT_DETECTION_DISABLED=1 \
        "$bench" latency "${bins[$1]}" "$calls" "operation.preview.$tool" "$json" |
        sed -E "s/^/$1 $2 /"
    report_cards "$1" "$2"
}
# Waits for the run's cards, then prints their card-ready times.
report_cards() { # side type
    local want=$((${done_cards[$1]:-0} + calls)) waited=0
    while (($(ready_count "$1") < want)); do
        sleep 0.2
        if ((++waited > 600)); then
            echo "$1 $2 card-ready: only $(ready_count "$1") of $want cards arrived" >&2
            break
        fi
    done
    done_cards[$1]=$want
    cards_ready "$1" | tail -n +"$((want - calls + 1))" | head -n "$calls" | sort -k2 -g |
        awk -v what="$1 $2 card-ready ($calls cards)" '{ v[NR] = $2 }
            END { if (NR) printf "%s: min %.2f ms, median %.2f ms, p95 %.2f ms, max %.2f ms\n",
                what, v[1], v[int((NR - 1) * 0.5 + 1.5)], v[int((NR - 1) * 0.95 + 1.5)], v[NR] }'
}
echo "repository: $(g ls-files | wc -l) files, $calls calls x $rounds rounds per type"
for ((r = 0; r < rounds; r++)); do
    for t in "${order[@]}"; do
        if [ -n "${bins[A]:-}" ]; then
            if ((r % 2)); then run B "$t"; run A "$t"; else run A "$t"; run B "$t"; fi
        else
            run B "$t"
        fi
    done
done
