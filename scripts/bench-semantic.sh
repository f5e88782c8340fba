#!/bin/sh
# The semantic diff engine against `git diff`, per commit, on the offline corpus
# (scripts/gen-semantic-corpus): one line per default language.
#   scripts/bench-semantic.sh [CORPUS_DIR [A_DRIVER [ROUNDS]]]
# With A_DRIVER (the semantic_bench example of another build), every language runs that
# build (A) and this one (B) back to back, ROUNDS times (default 2), the order swapped
# each round so both see the same machine load; each line is a ratio to its own
# interleaved `git diff`, so A and B lines compare directly.
set -eu
corpus=${1:-target/semantic-corpus}
base=${2:-}
rounds=${3:-2}
here=$(dirname "$0")
[ -d "$corpus/rs" ] || "$here/gen-semantic-corpus" "$corpus"
cargo build --release --locked --example semantic_bench
this=target/release/examples/semantic_bench
if [ -z "$base" ]; then
    for lang in rs py js ts go java; do
        "$this" "$corpus/$lang"
    done
    exit 0
fi
round=0
while [ "$round" -lt "$rounds" ]; do
    for lang in rs py js ts go java; do
        if [ $((round % 2)) -eq 0 ]; then order="A B"; else order="B A"; fi
        for side in $order; do
            if [ "$side" = A ]; then driver=$base; else driver=$this; fi
            printf '%s %s\n' "$side" "$("$driver" "$corpus/$lang")"
        done
    done
    round=$((round + 1))
done
