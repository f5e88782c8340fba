#!/usr/bin/env bash
# Times fleet.digest and fleet.radar over 100 small generated repositories through the
# release binary (`gitward call`). Uses hyperfine, installing it with apt when missing;
# falls back to a plain timing loop when it cannot be installed.
#
#   scripts/bench-fleet.sh [REPOS]      (default 100)
#
# FLEET_JSON=FILE also writes hyperfine's results there.
set -euo pipefail
cd "$(dirname "$0")/.."

count="${1:-100}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet
bin="$(cd "$target/release" && pwd)/gitward"

if ! command -v hyperfine >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        apt-get install -y -qq hyperfine >/dev/null || true
    elif command -v apt-get >/dev/null && command -v sudo >/dev/null; then
        sudo apt-get install -y -qq hyperfine >/dev/null || true
    fi
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/gitward-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
work="$(cd "$work" && pwd -P)"

# Hermetic git: no user or system configuration, fixed identity.
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/home/.gitconfig"
export GIT_AUTHOR_NAME="Bench" GIT_AUTHOR_EMAIL="bench@example.com"
export GIT_COMMITTER_NAME="Bench" GIT_COMMITTER_EMAIL="bench@example.com"
export FLUXGIT_RUN_DIR="$work/run"
mkdir -p "$HOME" "$FLUXGIT_RUN_DIR/repos"
git config --global init.defaultBranch main
git config --global advice.detachedHead false

echo "generating $count repositories in $work ..." >&2
git init -q --bare "$work/origin.git"
git init -q "$work/seed"
(
    cd "$work/seed"
    for i in 1 2 3; do echo "$i" >"file$i.txt"; git add -A; git commit -q -m "seed $i"; done
    git push -q "$work/origin.git" main
)
paths=()
for n in $(seq -w 1 "$count"); do
    repo="$work/repos/r$n"
    if (( 10#$n % 3 == 0 )); then
        git clone -q "$work/origin.git" "$repo"
    else
        git init -q "$repo"
    fi
    (
        cd "$repo"
        for i in 1 2 3 4 5; do echo "$n $i" >"own$i.txt"; git add -A; git commit -q -m "work $i"; done
        git commit -q --amend -m "work 5, amended"
        git checkout -q -b topic
        echo topic >topic.txt; git add -A; git commit -q -m "topic"
        git reset -q --hard HEAD~1
        git checkout -q main
        if (( 10#$n % 4 == 0 )); then echo dirty >>own1.txt; fi
    )
    printf '%s\n' "$repo" >"$FLUXGIT_RUN_DIR/repos/r$n.path"
    paths+=("\"$repo\"")
done
list="$(IFS=,; echo "${paths[*]}")"
digest="{\"since\":0,\"repoPaths\":[$list]}"
radar="{\"repoPaths\":[$list]}"

# One run of each first, to show the result sizes and check both succeed.
"$bin" call fleet.digest "$digest" |
    grep -E '^    "(eventCount|eventsTotal|rewroteUnchecked)"' >&2
"$bin" call fleet.radar "$radar" |
    grep -E '^    "(requestedCount|scannedCount|failedCount|dirtyCount|conflictCount)"' >&2

if command -v hyperfine >/dev/null; then
    hyperfine --warmup 2 --runs 10 -N ${FLEET_JSON:+--export-json "$FLEET_JSON"} \
        -n "fleet.digest ($count repos)" "$bin call fleet.digest '$digest'" \
        -n "fleet.digest registered ($count repos)" "$bin call fleet.digest '{\"since\":0}'" \
        -n "fleet.radar ($count repos)" "$bin call fleet.radar '$radar'"
else
    echo "hyperfine not available; timing 5 runs each" >&2
    for tool in digest radar; do
        args="$digest"; [ "$tool" = radar ] && args="$radar"
        start=$(date +%s%N)
        for _ in 1 2 3 4 5; do "$bin" call "fleet.$tool" "$args" >/dev/null; done
        end=$(date +%s%N)
        echo "fleet.$tool ($count repos): $(( (end - start) / 5000000 )) ms per call"
    done
fi
