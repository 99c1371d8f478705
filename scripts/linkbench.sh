#!/usr/bin/env bash
# Linkbench and the insert benchmark on Strata and RocksDB, one after the other, with the
# same flags: `strata bench` from target/engines/release/strata (scripts/build-engines.sh
# builds it with the rocksdb feature).
#
#   scripts/linkbench.sh [linkbench|insertbench|both] [EXTRA FLAGS...]
#
# Sizes and times come from the environment (defaults in brackets):
#   NODES [10000000]  Linkbench's nodes (LinkBench's maxid1 is 10,000,001)
#   ROWS [5000000]    rows each thread inserts in insertbench_l_i0
#   WRITES [2000000]  rows each thread inserts in insertbench_l_i1 and _l_i2
#   BATCH [1000]      rows per write batch of the insert steps (iibench's rows_per_commit)
#   THREADS [4]       client threads; DURATION [600] seconds of each timed step
#   ENGINES ["strata rocksdb"]; DB_ROOT [a new temporary directory]
#   STRATA [target/engines/release/strata] the binary
#   WRAP [none]       a command prefix every run goes under (e.g. one that caps the
#                     process's memory, page cache included, so the database is read from disk)
# Any further flag goes to every run, e.g. --transaction_db --cache_size=1073741824.
# Each run's output is printed and kept in DB_ROOT/<workload>-<engine>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

what="${1:-both}"
[ $# -gt 0 ] && shift
strata="${STRATA:-target/engines/release/strata}"
if [ ! -x "$strata" ]; then
    echo "$strata is missing: build it with scripts/build-engines.sh" >&2
    exit 1
fi
root="${DB_ROOT:-$(mktemp -d)}"
mkdir -p "$root"
threads="${THREADS:-4}"
wrap=()
# shellcheck disable=SC2206 # WRAP is a command line
[ -n "${WRAP:-}" ] && wrap=($WRAP)
seconds="${DURATION:-600}"

run() { # workload engine flags...
    local workload="$1" engine="$2"
    shift 2
    local out="$root/$workload-$engine.txt"
    echo "== $workload on $engine ($out)"
    "${wrap[@]}" "$strata" bench --engine="$engine" --db="$root/$workload-$engine" \
        --threads="$threads" --histogram=1 "$@" | tee "$out"
    rm -rf "${root:?}/$workload-$engine"
}

# The requests start on a tree whose load compactions are done, except with RocksDB's
# TransactionDB, which the rocksdb crate gives no WaitForCompact.
settle=waitforcompaction,
case " $* " in *" --transaction_db "* | *" --transaction_db=1 "* | *" --transaction_db=true "*) settle= ;; esac

for engine in ${ENGINES:-strata rocksdb}; do
    if [ "$what" = linkbench ] || [ "$what" = both ]; then
        run linkbench "$engine" \
            --benchmarks="linkbench_load,${settle}linkbench" \
            --linkbench_nodes="${NODES:-10000000}" --duration="$seconds" "$@"
    fi
    if [ "$what" = insertbench ] || [ "$what" = both ]; then
        # l_i0 and create_index run to their end; --duration applies to the steps after
        # them, which therefore run in a second invocation on the same database.
        run_insert() {
            local engine="$1"
            shift
            local db="$root/insertbench-$engine" out="$root/insertbench-$engine.txt"
            echo "== insertbench on $engine ($out)"
            {
                "${wrap[@]}" "$strata" bench --engine="$engine" --db="$db" --threads="$threads" \
                    --histogram=1 --batch_size="${BATCH:-1000}" --num="${ROWS:-5000000}" \
                    --writes="${WRITES:-2000000}" \
                    --benchmarks=insertbench_l_i0,insertbench_create_index,insertbench_l_i1,insertbench_l_i2 \
                    "$@"
                "${wrap[@]}" "$strata" bench --engine="$engine" --db="$db" --use_existing_db \
                    --threads="$threads" --histogram=1 --batch_size=10 \
                    --duration="$seconds" \
                    --benchmarks=insertbench_qr100,insertbench_qr500,insertbench_qr1000 \
                    "$@"
            } | tee "$out"
            rm -rf "$db"
        }
        run_insert "$engine" "$@"
    fi
done
echo "outputs in $root"
