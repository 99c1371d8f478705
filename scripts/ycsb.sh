#!/usr/bin/env bash
# YCSB's core workloads and the expanding-range read on Strata, RocksDB and LMDB through one
# client loop (`strata bench --engine=E`), in one command:
#
#   scripts/build-engines.sh        # once: target/engines/release/strata with both engines
#   scripts/ycsb.sh                 # 1M records of 1 KiB, 1M operations per workload, 4 threads
#   RECORDS=100000 OPERATIONS=200000 THREADS=2 scripts/ycsb.sh
#   ENGINES=strata,rocksdb EXTRA="--cache_size=67108864 --bloom_bits=10" scripts/ycsb.sh
#
# YCSB's order: ycsb_load, then workloads A, B, C, F and D on the loaded records (D inserts),
# then E (scans; it inserts too). Each step is its own process on the database the earlier
# steps left (--use_existing_db), and the engines take turns step by step, so that a slow
# minute of the machine falls on all of them alike. Then, on a fresh database of NUM db_bench
# keys (fillrandom, flushed and compacted), expandingrange grows its read range from 1% to
# 100% of the keys in 10% steps of EXPAND_INTERVAL seconds, and draws its chart.
#
# PARTS (default ycsb,range) picks the YCSB steps, the expanding range, or both. The expanding
# range is meant to outgrow memory: RANGE_WRAP is a command prefix its read runs go under
# (e.g. one that caps the process's memory, page cache included, and drops the page cache
# first), and RANGE_EXTRA flags only its runs get (e.g. a smaller --cache_size).
#
# Everything goes to OUT (default ycsb-results/): each step's full output in LOG, a chart per
# engine, and, printed at the end, one table: ops/s of every step, and the p99 latency of each
# operation type, per engine. Flags in EXTRA go to every run (engine options: --cache_size,
# --compression_type, --bloom_bits, --transaction_db, ...).
set -euo pipefail
cd "$(dirname "$0")/.."

STRATA=${STRATA:-target/engines/release/strata}
ENGINES=${ENGINES:-strata,rocksdb,lmdb}
RECORDS=${RECORDS:-1000000}
OPERATIONS=${OPERATIONS:-1000000}
THREADS=${THREADS:-4}
NUM=${NUM:-1000000}
EXPAND_INTERVAL=${EXPAND_INTERVAL:-5}
OUT=${OUT:-ycsb-results}
DBS=${DBS:-$(mktemp -d "${TMPDIR:-/tmp}/ycsb-dbs.XXXXXX")}
EXTRA=${EXTRA:-}
PARTS=${PARTS:-ycsb,range}
RANGE_WRAP=${RANGE_WRAP:-}
RANGE_EXTRA=${RANGE_EXTRA:-}
LOG=$OUT/log.txt

if [ ! -x "$STRATA" ]; then
    echo "no $STRATA: build it with scripts/build-engines.sh (or set STRATA)" >&2
    exit 2
fi
mkdir -p "$OUT"
: >"$LOG"
IFS=, read -r -a engines <<<"$ENGINES"
trap 'rm -rf "$DBS"' EXIT

# run ENGINE DB FLAGS...: one strata bench process, its output appended to the log and kept
# in $OUT/ENGINE.out for the table. WRAP, when set, is the command prefix it runs under.
run() {
    local engine=$1 db=$2
    shift 2
    local wrap=()
    # shellcheck disable=SC2206 # WRAP is a command line
    [ -n "${WRAP:-}" ] && wrap=($WRAP)
    # shellcheck disable=SC2086 # EXTRA is a list of flags
    local cmd=("${wrap[@]}" "$STRATA" bench "--engine=$engine" "--db=$db" "--threads=$THREADS" "$@" $EXTRA)
    echo "== ${cmd[*]}" | tee -a "$LOG" >&2
    "${cmd[@]}" 2>&1 | tee -a "$LOG" >>"$OUT/$engine.out"
}

for engine in "${engines[@]}"; do
    : >"$OUT/$engine.out"
done

ycsb=("--ycsb_records=$RECORDS" "--ycsb_operations=$OPERATIONS")
if [[ ,$PARTS, == *,ycsb,* ]]; then
    for step in ycsb_load ycsb_a ycsb_b ycsb_c ycsb_f ycsb_d ycsb_e; do
        for engine in "${engines[@]}"; do
            existing=()
            [ "$step" = ycsb_load ] || existing=(--use_existing_db)
            run "$engine" "$DBS/ycsb-$engine" "--benchmarks=$step" "${existing[@]}" "${ycsb[@]}"
        done
    done
fi

if [[ ,$PARTS, == *,range,* ]]; then
    for engine in "${engines[@]}"; do
        run "$engine" "$DBS/range-$engine" --benchmarks=fillrandom,flush,waitforcompaction \
            "--num=$NUM" --threads=1
    done
    for engine in "${engines[@]}"; do
        # shellcheck disable=SC2086 # RANGE_EXTRA is a list of flags
        WRAP=$RANGE_WRAP run "$engine" "$DBS/range-$engine" --benchmarks=expandingrange \
            --use_existing_db "--num=$NUM" "--expand_interval=$EXPAND_INTERVAL" \
            "--plot=$OUT/$engine.svg" $RANGE_EXTRA
    done
fi

# The table: a row per step (ops/s) and per operation type of a step (p99 us), a column
# per engine.
python3 - "$OUT" "${engines[@]}" <<'EOF'
import re, sys
out, engines = sys.argv[1], sys.argv[2:]
rows, cells = [], {}
for engine in engines:
    step = None
    for line in open(f"{out}/{engine}.out"):
        m = re.match(r"^(\S+)\s+:\s+[\d.]+ micros/op (\d+) ops/sec", line)
        if m:
            step = m.group(1)
            key = (step, "ops/s")
            rows.append(key) if key not in rows else None
            cells[key, engine] = m.group(2)
            continue
        m = re.match(r"^\s+:\s+([A-Z][A-Z-]*)\s+(\d+)\s+[\d.]+%\s+\d+\s+[\d.]+\s+([\d.]+)", line)
        if m and step:
            key = (step, m.group(1) + " p99 us")
            rows.append(key) if key not in rows else None
            cells[key, engine] = m.group(3)
        m = re.match(r"^\S+\s+: interval (\d+): keys 0\.\.\d+ \(([\d.]+)% of --num\), .* = (\d+) reads/s", line)
        if m:
            key = ("expandingrange", f"{float(m.group(2)):5.1f}% reads/s")
            rows.append(key) if key not in rows else None
            cells[key, engine] = m.group(3)
print(f"{'step':<16}{'figure':<26}" + "".join(f"{e:>12}" for e in engines))
for step, figure in rows:
    print(f"{step:<16}{figure:<26}" + "".join(f"{cells.get(((step, figure), e), '-'):>12}" for e in engines))
EOF
echo "full output: $LOG; expanding-range charts: $OUT/<engine>-expandingrange.svg" >&2
