#!/usr/bin/env bash
# Times `explore` over a workspace of 16 git folders holding 200 active changes (a quarter
# of them in linked worktrees under .worktrees/), the largest workspace the descriptor
# allows. The target is an answer in under one second.
#
# Usage: scripts/bench-specs.sh [RUNS]   (GITWARD_BIN overrides the binary; default: a
#                                         debug build from this checkout)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
folders=16
changes=200

bin=${GITWARD_BIN:-}
if [ -z "$bin" ]; then
    cargo build --quiet
    bin="${CARGO_TARGET_DIR:-target}/debug/gitward"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gitward-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig"
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"

json_folders=""
n=0
for f in $(seq 1 $folders); do
    repo="$work/p$f"
    git init -q "$repo"
    echo "# p$f" >"$repo/README.md"
    git -C "$repo" add README.md
    git -C "$repo" commit -q -m init
    mkdir -p "$repo/openspec/specs" "$repo/openspec/changes/archive"
    printf 'schema: spec-driven\n' >"$repo/openspec/config.yaml"
    # Two linked worktrees per folder hold some of the changes.
    for w in 1 2; do
        git -C "$repo" worktree add -q -b "proposal/w$w" "$repo/.worktrees/w$w"
        mkdir -p "$repo/.worktrees/w$w/openspec/changes/archive"
    done
    per=$(( changes / folders + (f <= changes % folders ? 1 : 0) ))
    for c in $(seq 1 $per); do
        n=$((n + 1))
        case $((c % 4)) in
            0) dir="$repo/.worktrees/w$(( (c / 4) % 2 + 1 ))" ;;
            *) dir="$repo" ;;
        esac
        change="$dir/openspec/changes/change-$n"
        mkdir -p "$change/specs/cap-$n"
        printf 'schema: spec-driven\ncreated: 2026-01-01\nstatus: draft\n' >"$change/.openspec.yaml"
        printf '## Why\nBench.\n' >"$change/proposal.md"
        printf '## 1. Work\n- [x] 1.1 one\n- [ ] 1.2 two\n- [ ] 1.3 three\n' >"$change/tasks.md"
        printf '## ADDED Requirements\n### Requirement: R\nThe system SHALL work.\n#### Scenario: s\n- **WHEN** a\n- **THEN** b\n' >"$change/specs/cap-$n/spec.md"
    done
    sep=$([ -n "$json_folders" ] && echo , || true)
    json_folders="$json_folders$sep{\"folderId\":\"p$f\",\"folderName\":\"p$f\",\"folderPath\":\"$repo\"}"
done
mkdir -p "$work/data"
export FYLLO_WORKSPACE_JSON="{\"version\":2,\"workspaceId\":\"bench\",\"workspaceKind\":\"collection\",\"primaryFolderId\":\"p1\",\"folders\":[$json_folders],\"workspaceDataDir\":\"$work/data\",\"sessionId\":\"bench\"}"

best=""
for r in $(seq 1 "$runs"); do
    start=$(date +%s%N)
    out=$("$bin" call explore '{"includeInstruction":false}')
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000000 ))
    count=$(printf '%s' "$out" | grep -c '"changeId"' || true)
    echo "run $r: ${ms} ms, $count active changes"
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
done
if [ "$count" -ne "$changes" ]; then
    echo "bench-specs: expected $changes changes, got $count" >&2
    exit 1
fi
echo "explore over $folders folders / $changes changes: best ${best} ms"
if [ "$best" -ge 1000 ]; then
    echo "bench-specs: slower than 1 s" >&2
    exit 1
fi
