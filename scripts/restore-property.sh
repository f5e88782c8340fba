#!/usr/bin/env bash
# Runs the restore property (tests/it/restore_property.rs) with many more cases than CI:
# random repository states × random approved writes, each restored and compared with the
# state before, byte for byte.
#
#   scripts/restore-property.sh [CASES]     (per test, two tests; default 2000)
#
# Prints the count and the time taken. A failure prints the smallest case found.
set -euo pipefail
cd "$(dirname "$0")/.."

cases="${1:-2000}"
start=$(date +%s)
GITWARD_RESTORE_CASES="$cases" cargo test --quiet --test it restore_property -- --nocapture
end=$(date +%s)
echo "restore property: $((cases * 2)) cases in $((end - start)) s"
