#!/usr/bin/env bash
# A load at scale on Strata and RocksDB, one after the other, with the same flags: a
# fillrandom of NUM keys with the WAL on, then the settle (flush and waitforcompaction), with
# a sample every second drawn as two pictures (throughput and p99 in load-E.svg; pending
# compaction bytes and stalled time in load-E-compaction.svg); the process's peak memory
# (RSS); the time to reopen after a clean close; and the time to reopen after a kill -9 in
# the middle of a second load.
# `strata bench` from target/engines/release/strata (scripts/build-engines.sh builds it with
# the rocksdb feature).
#
#   scripts/scale.sh [EXTRA FLAGS...]
#
# From the environment (defaults in brackets):
#   NUM [50000000]      keys; with VALUE_SIZE [100] and 16-byte keys, about 5.8 GB of data
#   CACHE [1073741824]  block cache bytes; BUFFER [67108864] write buffer bytes
#   KILL_AFTER [half the clean load's seconds]  when the second load is killed
#   ENGINES ["strata rocksdb"]; DB_ROOT [a new temporary directory]
#   STRATA [target/engines/release/strata] the binary
# Any further flag goes to every run (e.g. --enable_blob_files --min_blob_size=512).
# Each engine's outputs are kept in DB_ROOT: load-E.txt (the bench output), load-E.svg (the
# picture), load-E.csv (the samples), load-E.time (peak RSS and times from GNU time),
# reopen-E.txt and killed-E.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

strata="${STRATA:-target/engines/release/strata}"
if [ ! -x "$strata" ]; then
    echo "$strata is missing: build it with scripts/build-engines.sh" >&2
    exit 1
fi
if [ ! -x /usr/bin/time ]; then
    echo "/usr/bin/time (GNU time) is missing: apt-get install time" >&2
    exit 1
fi
root="${DB_ROOT:-$(mktemp -d)}"
mkdir -p "$root"
num="${NUM:-50000000}"
common=(--num="$num" --value_size="${VALUE_SIZE:-100}" --cache_size="${CACHE:-1073741824}"
    --write_buffer_size="${BUFFER:-67108864}" --disable_wal=0 --compression_type=none "$@")

for engine in ${ENGINES:-strata rocksdb}; do
    db="$root/db-$engine"
    rm -rf "$db"
    echo "== load on $engine ($root/load-$engine.txt)"
    started=$(date +%s)
    /usr/bin/time -v -o "$root/load-$engine.time" \
        "$strata" bench --engine="$engine" --db="$db" \
        --benchmarks=fillrandom,flush,waitforcompaction,stats \
        --report_interval_seconds=1 --report_file="$root/load-$engine.csv" \
        --plot="$root/load-$engine.svg" "${common[@]}" | tee "$root/load-$engine.txt"
    load_secs=$(($(date +%s) - started))
    grep -E "Maximum resident set size|Elapsed" "$root/load-$engine.time"
    du -sb "$db" | tee -a "$root/load-$engine.txt"

    echo "== reopen of $engine after a clean close ($root/reopen-$engine.txt)"
    "$strata" bench --engine="$engine" --db="$db" --use_existing_db=1 \
        --benchmarks=readrandom --reads=100000 "${common[@]}" | tee "$root/reopen-$engine.txt"
    rm -rf "$db"

    kill_after="${KILL_AFTER:-$((load_secs / 2))}"
    echo "== load on $engine killed after ${kill_after}s, then reopened ($root/killed-$engine.txt)"
    "$strata" bench --engine="$engine" --db="$db" --benchmarks=fillrandom \
        "${common[@]}" >/dev/null &
    pid=$!
    sleep "$kill_after"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    "$strata" bench --engine="$engine" --db="$db" --use_existing_db=1 \
        --benchmarks=readrandom --reads=100000 "${common[@]}" | tee "$root/killed-$engine.txt"
    rm -rf "$db"
done
echo "outputs in $root"
