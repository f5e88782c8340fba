#!/usr/bin/env bash
# repo.brief's economy on repositories shaped like real ones, generated here with plain
# git (no network): the brief's bytes beside the raw commands it replaces
# (scripts/bench/economy.py brief). Target: at most 0.40x on every shape.
#
#   scripts/bench-brief-shapes.sh [BIN]     (BIN: default $CARGO_TARGET_DIR/release/gitward)
#
# Shapes:
#   terse      short free-form subjects, no bodies (a small JavaScript library)
#   convent    Conventional Commit subjects with long bodies and trailers (a large CLI)
#   busy       dirty tree, untracked directory, two stashes, a linked worktree, local
#              branches with upstreams, a nested submodule that drifted, a stopped merge
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
BIN=${1:-$TARGET/release/gitward}
DIR=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$DIR"' EXIT
export GIT_CONFIG_GLOBAL=$DIR/gitconfig GIT_CONFIG_NOSYSTEM=1
git config --global user.name "Sam Example"
git config --global user.email sam@example.com
git config --global init.defaultBranch main
git config --global protocol.file.allow always
n=0
tick() { n=$((n + 1)); export GIT_AUTHOR_DATE="$((1700000000 + n * 3600)) +0000" GIT_COMMITTER_DATE="$((1700000000 + n * 3600)) +0000"; }
commit() { # repo file message [body]
    mkdir -p "$(dirname "$1/$2")"
    echo "$n" >>"$1/$2"
    git -C "$1" add -A
    tick
    if [ -n "${4:-}" ]; then git -C "$1" commit -q -m "$3" -m "$4"; else git -C "$1" commit -q -m "$3"; fi
}
with_origin() { # repo: a bare origin, main pushed, origin/HEAD set
    git clone -q --bare "$1" "$1.origin.git"
    git -C "$1" remote add origin "$1.origin.git"
    git -C "$1" fetch -q origin
    git -C "$1" branch -q --set-upstream-to origin/main main
    git -C "$1" remote set-head origin main >/dev/null
}

terse=$DIR/terse
git init -q "$terse"
for s in "Fix CI" "Tweaks" "2.0.2" "Fix docs typo (#870)" "Add QUERY method support (#873)" \
    "Fix handling of Safari errors with domains" "Improve \`Retry-After\` handling (#874)" \
    "Fix flaky totalTimeout retry test" "Fix init hook URLSearchParams deletions" \
    "Fix \`extend()\` dropping numeric \`retry\` limit when merging with an object (#867)" \
    "Meta tweaks" "Readme tweaks"; do
    commit "$terse" source.ts "$s"
done
with_origin "$terse"

convent=$DIR/convent
git init -q "$convent"
body="This changes how the operation descriptions are formatted so that every command
prints them the same way, and moves the shared helper into the cli crate.

Co-authored-by: Another Person <another@example.com>"
for i in $(seq 1 30); do
    for t in "cli: git-push: consolidate formatting of operation descriptions" \
        "lib: find_divergent_changes returns commits in a definite order" \
        "docs: mention converge in docs/guides/divergence.md"; do
        commit "$convent" "f$i.rs" "$t ($i)" "$body"
    done
done
with_origin "$convent"
git -C "$convent" branch -q feat/one && git -C "$convent" branch -q fix/two

busy=$DIR/busy
inner=$DIR/inner
git init -q "$inner" && commit "$inner" i.txt "inner one" && commit "$inner" i.txt "inner two"
mid=$DIR/mid
git init -q "$mid" && commit "$mid" m.txt "mid"
git -C "$mid" submodule add -q "$inner" inner && tick && git -C "$mid" commit -q -m "mid adds inner"
git init -q "$busy"
for i in $(seq 1 12); do commit "$busy" "src/a$i.txt" "feat: change $i" "Body of change $i."; done
git -C "$busy" submodule add -q "$mid" mid && tick && git -C "$busy" commit -q -m "chore: add mid"
git -C "$busy" submodule update -q --init --recursive
with_origin "$busy"
git -C "$busy" checkout -q -b topic
commit "$busy" src/a1.txt "feat: topic side"
git -C "$busy" checkout -q main
commit "$busy" src/a1.txt "fix: main side"
git -C "$busy" worktree add -q "$DIR/busy-wt" -b wt-branch
for s in one two; do echo "$s" >>"$busy/src/a2.txt"; git -C "$busy" stash -q; done
git -C "$busy/mid/inner" checkout -q HEAD~1
mkdir -p "$busy/newdir" && echo x >"$busy/newdir/a" && echo y >"$busy/newdir/b"
echo dirty >>"$busy/src/a3.txt"
git -C "$busy" merge -q topic >/dev/null 2>&1 || true

for shape in terse convent busy; do
    printf '%-8s ' "$shape"
    python3 scripts/bench/economy.py brief "$BIN" "$DIR/$shape"
done
