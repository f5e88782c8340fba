#!/usr/bin/env bash
# repo.brief's economy on repositories shaped like real ones, generated here with plain
# git (no network): the brief's bytes beside the raw commands it replaces
# (scripts/bench/economy.py brief). Target: at most 0.40x on every shape. Histories
# without bodies (flask, ky) stay above it: there `git log -10` is about 140 bytes a
# commit plus its subject, while a recent commit as an object with its short id, subject
# and time is about 50 plus the subject, before any of the brief's other sections.
#
#   scripts/bench-brief-shapes.sh [BIN]     (BIN: default $CARGO_TARGET_DIR/release/gitward)
#
# Shapes, each after a public repository's recent history (its subjects, bodies, authors
# and default branch), cloned from a local bare origin:
#   ripgrep    release subjects, one long body with a benchmark, one author (master)
#   termcolor  short `area: change` subjects and version bumps, short bodies (master)
#   express    dependabot bumps with generated bodies, squashed pull requests (master)
#   gson       dependabot bumps with bodies, fixes with a paragraph each
#   jj         `area: change` subjects with long bodies and trailers
#   rust-sdk   Conventional Commits with pull request numbers, release bots, squash bodies
#   flask      merges of a stable branch and short fixes, no bodies
#   ky         short free-form subjects, no bodies
#   cobra      mixed subjects with pull request numbers, a different author on each
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


# Bodies as the tools and people behind those histories write them.
DEP="Bumps [dep](https://github.com/example/dep) from 1.2.0 to 1.2.1.
- [Release notes](https://github.com/example/dep/releases)
- [Changelog](https://github.com/example/dep/blob/main/CHANGELOG.md)
- [Commits](https://github.com/example/dep/compare/v1.2.0...v1.2.1)

---
updated-dependencies:
- dependency-name: dep
  dependency-version: 1.2.1
  dependency-type: direct:development
  update-type: version-update:semver-patch
...

Signed-off-by: dependabot[bot] <support@github.com>"
SQUASH="* fix: the change itself

The previous code validated only the common case, so the other one never matched
even when it should have; include it in the check.

* docs: include history

---------

Co-authored-by: Another Person <another@example.com>"
PARA="This changes how the operation descriptions are formatted so that every command
prints them the same way, and moves the shared helper into the cli crate.

Co-authored-by: Another Person <another@example.com>"
LONG="When matching we sometimes need a reusable mutable scratch space. To do this,
we use a pool abstraction to do the heavy lifting for us.

It turns out that this can be a limiting factor in some scenarios when matching
dominates. For example, in a large checkout:

    Benchmark 1: before -j32 --files
      Time (mean ± σ):     156.3 ms ±   5.5 ms    [User: 2356.4 ms, System: 380.8 ms]
      Range (min … max):   147.6 ms … 164.5 ms    19 runs
    Benchmark 2: after -j32 --files
      Time (mean ± σ):     131.6 ms ±   2.1 ms    [User: 1628.2 ms, System: 310.1 ms]
      Range (min … max):   128.8 ms … 136.3 ms    22 runs

So we increase the pool's capacity, which is enough for the common case.

Fixes #3100"
NOTE="There's no reason not to have these. They were left out at first because some
of the types involved do not implement it, but that is not true of all of them.

PR #85"
TRAILER="Co-authored-by: github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"

shape() { # name branch: commits from stdin, oldest first, "author|subject|body" (body: a
    # variable above, or empty), "merge|subject" merges a side commit with that subject
    local repo=$DIR/$1
    git init -q -b "$2" "$repo"
    while IFS='|' read -r who subject body; do
        if [ "$who" = merge ]; then
            git -C "$repo" checkout -q -b side
            commit "$repo" side.txt "$subject"
            git -C "$repo" checkout -q "$2"
            commit "$repo" main.txt "touch"
            tick
            git -C "$repo" merge -q --no-ff -m "Merge branch 'stable'" side
            git -C "$repo" branch -q -D side
            continue
        fi
        GIT_AUTHOR_NAME=$who GIT_AUTHOR_EMAIL="$(echo "$who" | tr -cd 'a-z')@example.com" \
            commit "$repo" "f$n.txt" "$subject" "${body:+${!body}}"
    done
    git clone -q --bare "$repo" "$repo.origin.git"
    git -C "$repo" remote add origin "$repo.origin.git"
    git -C "$repo" fetch -q origin
    git -C "$repo" branch -q --set-upstream-to "origin/$2" "$2"
    git -C "$repo" remote set-head origin "$2" >/dev/null
}
repeat() { for _ in $(seq 1 "$1"); do cat "$2"; done; }
list=$DIR/list

cat >"$list" <<'END'
Andrew Gallant|ignore: fix a path matching bug|LONG
Andrew Gallant|ignore,globset: increase pool capacity|LONG
Andrew Gallant|globset-0.4.20|
Andrew Gallant|ignore-0.4.33|
END
repeat 3 "$list" | shape ripgrep master

cat >"$list" <<'END'
Alex Touchet|doc: various polish|
Alex Touchet|doc: a few more touchups|NOTE
Andrew Gallant|ci: bump MSRV to Rust 1.60|LONG
Andrew Gallant|api: add Clone impls|NOTE
Andrew Gallant|1.4.0|
Chines Wang|impl: switch to relaxed memory ordering|NOTE
Andrew Gallant|1.4.1|
Andrew Gallant|github: add FUNDING|
Andrew Carson|msrv: bump to Rust 1.72|NOTE
END
repeat 2 "$list" | shape termcolor master

cat >"$list" <<'END'
Nitin Mohapatra|Improve error logging by logging full error object (#6464)|
TEJ|fix: replace deprecated trimRight() with trimEnd() (#7265)|SQUASH
dependabot[bot]|build(deps): bump github/codeql-action from 4.35.2 to 4.36.0 (#7297)|DEP
Blake Embrey|Upgrade `content-disposition` (#7233)|
Yury Shkoda|fix(res.send): add Content-Length header only if Transfer-Encoding is not present (#4893)|SQUASH
Sebastian Beltran|docs: use the new logo (#7316)|
dependabot[bot]|build(deps): bump actions/checkout from 6.0.2 to 7.0.0 (#7345)|DEP
dependabot[bot]|build(deps-dev): bump morgan from 1.10.1 to 1.11.0 (#7353)|DEP
James Ross|feat: allow conditional revalidation for QUERY requests (#7366)|SQUASH
dependabot[bot]|build(deps-dev): bump hbs from 4.2.0 to 4.2.1 (#7152)|DEP
END
repeat 2 "$list" | shape express master

cat >"$list" <<'END'
Marcono1234|Fix `JsonReader.skipValue()` on an empty array (#2701)|SQUASH
dependabot[bot]|Bump com.google.guava:guava from 33.0.0-jre to 33.1.0-jre (#2650)|DEP
dependabot[bot]|Bump org.apache.maven.plugins:maven-surefire-plugin from 3.2.3 to 3.2.5 (#2651)|DEP
Éamonn McManus|Use `assertThrows` instead of `try`/`fail` in tests (#2690)|
dependabot[bot]|Bump the github-actions group with 2 updates (#2692)|DEP
Marcono1234|Improve the error message for a duplicate key (#2699)|SQUASH
END
repeat 3 "$list" | shape gson main

cat >"$list" <<'END'
Martin von Zweigbergk|cli: git-push: consolidate formatting of operation descriptions|PARA
Yuya Nishihara|lib: find_divergent_changes returns commits in a definite order|PARA
Ilya Grigoriev|docs: mention converge in docs/guides/divergence.md|PARA
END
repeat 6 "$list" | shape jj main

cat >"$list" <<'END'
stevenlee-oai|fix(auth): ignore query parameters when matching resources (#1177)|SQUASH
Alex Hancock|docs: make ROADMAP status version-agnostic (#1181)|
github-actions[bot]|chore: release v3.1.3 (#1159)|TRAILER
dependabot[bot]|chore(deps): bump github/codeql-action from 4.37.6 to 4.37.7 (#1182)|DEP
dependabot[bot]|chore(deps): bump taiki-e/install-action from 2.85.11 to 2.85.13 (#1183)|DEP
Dale Seo|fix: handle declined MRTR elicitation (#1151)|SQUASH
Dale Seo|fix: report pre-init metadata errors (#1160)|
Dale Seo|fix: harden signing key handling (#1166)|SQUASH
Recoordinate|fix(rmcp): preserve elicitation requestedSchema $schema dialect (#1176)|SQUASH
github-actions[bot]|chore: release v3.1.4 (#1185)|TRAILER
END
repeat 2 "$list" | shape rust-sdk main

cat >"$list" <<'END'
David Lord|remove unicode host test (#5962)|
merge|remove unicode host test
David Lord|update dev dependencies|
merge|reduce venv size
merge|remove werkzeug host tests
merge|fix typo
END
repeat 3 "$list" | GIT_AUTHOR_NAME="David Lord" GIT_AUTHOR_EMAIL=davidism@example.com shape flask main

cat >"$list" <<'END'
Sindre Sorhus|Meta tweaks|
Sindre Sorhus|Tweaks|
Sindre Sorhus|Fix init hook URLSearchParams deletions|
Sindre Sorhus|2.0.2|
Sindre Sorhus|Fix CI|
Sindre Sorhus|Fix handling of Safari errors with domains|
Sara Anderson|Fix docs typo (#870)|
Sindre Sorhus|Fix flaky totalTimeout retry test|
Sindre Sorhus|Add QUERY method support (#873)|
Alexander Kireyev|Fix `extend()` dropping numeric `retry` limit when merging with an object (#867)|
Sindre Sorhus|Improve `Retry-After` handling (#874)|
END
repeat 2 "$list" | shape ky main

cat >"$list" <<'END'
SamareshSingh|refactor: change minUsagePadding from var to const (#2325)|
John McBride|fix: actions/setup-go v6 (#2337)|
Davanum Srinivas|chore: Migrate from gopkg.in/yaml.v3 to go.yaml.in/yaml/v3 (#2336)|SQUASH
Jeffrey Faer|perf: Loop over the bash variable directly instead of starting subprocesses. (#2333)|
Niklas Vogel|fix: quote args in fish shell completion (#2285)|SQUASH
Artur Aronov|projects_using_cobra: add Ollama (#2389)|
Marc Khouzam|Ignore the linter error (#2390)|
Varun Chawla|fix: prevent completions from mutating os.Args via append side effect (#2356)|SQUASH
takanuva15|Add cobra unique args validator (#2397)|
Shudhanshu Singh|fix: resolve macOS test link failure and update lint rules (#2429)|SQUASH
END
repeat 2 "$list" | shape cobra main

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

for shape in ripgrep termcolor express gson jj rust-sdk flask ky cobra busy; do
    printf '%-8s ' "$shape"
    python3 scripts/bench/economy.py brief "$BIN" "$DIR/$shape"
done
