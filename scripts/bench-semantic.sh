#!/bin/sh
# The semantic diff engine against `git diff`, per commit, on the offline corpus
# (scripts/gen-semantic-corpus): one line per default language.
#   scripts/bench-semantic.sh [CORPUS_DIR]
set -eu
corpus=${1:-target/semantic-corpus}
here=$(dirname "$0")
[ -d "$corpus/rs" ] || "$here/gen-semantic-corpus" "$corpus"
cargo build --release --locked --example semantic_bench
for lang in rs py js ts go java; do
    target/release/examples/semantic_bench "$corpus/$lang"
done
