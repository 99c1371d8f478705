#!/usr/bin/env bash
# The SQL benchmark: the same sysbench-like workload through GlueSQL over Strata, over
# GlueSQL's redb storage and over its sled storage, one after the other in one process.
#
#   scripts/sql-bench.sh [--rows N] [--ops N] [--dir DIR] [--storages strata,redb,sled]
#
# Defaults: 100,000 rows, 10,000 operations of each kind, in $TMPDIR/strata-sql-bench.
# Run it on a quiet machine; every figure comes from the same sitting.
set -euo pipefail
cd "$(dirname "$0")/.."
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
  args=(--rows 100000 --ops 10000)
fi
cargo build --release -q -p strata-gluesql --features bench --example sql_bench
exec target/release/examples/sql_bench "${args[@]}"
