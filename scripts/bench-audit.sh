#!/usr/bin/env bash
# Audit ledger throughput and verify time (release build).
# Usage: scripts/bench-audit.sh [DIR] [ENTRIES]
#   DIR: where the ledgers are written (default: a temporary directory). fsync cost
#        depends on the filesystem, so run it where real ledgers live.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --quiet --release --example audit_bench -- "$@"
