#!/usr/bin/env python3
"""Run the standard suite with `strata bench --engine=E` for several engines and print one table.

The steps and flags are those of scripts/vs_rocksdb.py's standard suite (each step a
separate process on a database the earlier steps left), so the only difference between two
columns is the engine under the same client loop. The engines alternate step by step, so that
the machine's slow minutes fall on all of them alike.

    scripts/engines_table.py --strata target/engines/release/strata --num 2000000
    scripts/engines_table.py --strata ... --engines strata,lmdb --extra=--compaction_style=1
    scripts/engines_table.py --strata ... --engines strata,rocksdb --suite leveldb --num 10000000

`--suite leveldb` is the LevelDB-against-RocksDB pattern instead: 800-byte values that
compress to half (snappy), fillseq to load the keys, overwrite from one thread, readwhilewriting
with 1 and with 16 readers while one writer is held to 1,000 puts a second, readrandom with 1
and 16 threads (each read step reads `--reads`, default a tenth of the keys, per thread).

For each step and engine it prints ops/s and CPU microseconds per operation (from the step's
report), write-amp and space-amp. A step that writes runs as `STEP,flush,waitforcompaction`, and
its write-amp is the process's "run total" line: the bytes the engine wrote for the step's
writes including the flush and compactions they set off, over the user bytes (a step's own line
counts only the work done before it ends, which favours whichever engine defers more). Space-amp
is size on disk over live user bytes after that: the bench's figure where it knows the live
keys, else size over num x entry size, right for the steps after fillseq, where every key is
live. The full output of every process goes to the log file (--log).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# The suite's flags and result line are vs_rocksdb.py's (this script's directory is on
# sys.path when it runs).
from vs_rocksdb import COMMON, LINE as RESULT  # noqa: E402

WRITE_AMP = re.compile(r"write-amp ([\d.]+)")
RUN_TOTAL = re.compile(r"^run total\s*:.*$", re.M)
SPACE_AMP = re.compile(r"space-amp ([\d.]+)")
CPU = re.compile(r"cpu ([\d.]+) us/op")


def suite(num, value_size):
    """(label, db, fresh?, benchmarks, extra flags, step whose line is reported)."""
    w = 1000 * (16 + value_size)
    n10 = max(num // 10, 1)
    return [
        ("fillrandom", "r", True, "fillrandom", [], "fillrandom"),
        ("fillseq", "s", True, "fillseq", [], "fillseq"),
        ("overwrite", "s", False, "overwrite", [], "overwrite"),
        ("readrandom", "s", False, "flush,waitforcompaction,readrandom", [], "readrandom"),
        ("readrandom_t2", "s", False, "readrandom", ["--threads=2"], "readrandom"),
        ("seekrandom", "s", False, "seekrandom", [f"--reads={n10}", "--seek_nexts=10"], "seekrandom"),
        ("readseq", "s", False, "readseq", [], "readseq"),
        ("readwhilewriting", "s", False, "readwhilewriting",
         [f"--benchmark_write_rate_limit={w}", f"--reads={num}"], "readwhilewriting"),
        ("fillsync_t4", "y", True, "fillrandom",
         ["--disable_wal=0", "--sync=1", f"--num={max(num // 100, 100)}", "--threads=4"], "fillrandom"),
    ]


def leveldb_suite(num, value_size, reads):
    """The LevelDB-against-RocksDB pattern, in suite()'s form; every step on one database."""
    w = 1000 * (16 + value_size)
    r = [f"--reads={reads}"]
    return [
        ("fillseq", "l", True, "fillseq", [], "fillseq"),
        ("overwrite", "l", False, "overwrite", [], "overwrite"),
        ("readwhilewriting_t1", "l", False, "readwhilewriting",
         [f"--benchmark_write_rate_limit={w}", "--threads=1", *r], "readwhilewriting"),
        ("readwhilewriting_t16", "l", False, "readwhilewriting",
         [f"--benchmark_write_rate_limit={w}", "--threads=16", *r], "readwhilewriting"),
        ("readrandom_t1", "l", False, "readrandom", ["--threads=1", *r], "readrandom"),
        ("readrandom_t16", "l", False, "readrandom", ["--threads=16", *r], "readrandom"),
    ]


# The LevelDB pattern's data: values that compress to half, compressed as LevelDB does.
LEVELDB_FLAGS = ["--compression_type=snappy", "--compression_ratio=0.5"]


def run_measured(cmd):
    """Runs cmd; returns (exit status, output, peak RSS in KiB of that process alone)."""
    with tempfile.TemporaryFile(mode="w+") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return p.returncode, out.read(), usage.ru_maxrss


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def step_figures(text, step):
    """ops/s, write-amp, space-amp, cpu us/op from the report of `step` in `text`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = RESULT.match(line.strip())
        if not m or m.group(1) != step:
            continue
        block = [line]
        for follow in lines[i + 1:]:
            if not follow.startswith(" " * 13 + ":"):
                break
            block.append(follow)
        find = lambda r, t: (lambda x: float(x.group(1)) if x else None)(r.search(t))
        total = RUN_TOTAL.search(text)
        total = total.group(0) if total else ""
        return int(m.group(3)), find(WRITE_AMP, total), find(SPACE_AMP, total), find(CPU, "\n".join(block))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata", required=True, help="a strata binary built with the engines' features")
    ap.add_argument("--engines", default="strata,rocksdb,lmdb")
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--value_size", type=int, default=100)
    ap.add_argument("--extra", action="append", default=[], help="more flags for every step")
    ap.add_argument("--dir", help="where the databases go (default: a temporary directory)")
    ap.add_argument("--log", default="engines_table.log")
    ap.add_argument("--suite", choices=["standard", "leveldb"], default="standard")
    ap.add_argument("--reads", type=int, help="reads per thread of the leveldb suite's read steps")
    a = ap.parse_args()
    engines = a.engines.split(",")
    root = a.dir or tempfile.mkdtemp(prefix="engines-")
    if a.suite == "leveldb":
        if a.value_size == 100:
            a.value_size = 800
        steps = leveldb_suite(a.num, a.value_size, a.reads or max(a.num // 10, 1))
        flags = COMMON + LEVELDB_FLAGS + [f"--num={a.num}", f"--value_size={a.value_size}"] + a.extra
    else:
        steps = suite(a.num, a.value_size)
        flags = COMMON + [f"--num={a.num}", f"--value_size={a.value_size}"] + a.extra
    entry = 16 + a.value_size
    open(a.log, "w").close()
    rows = []
    failed = False
    for label, db, fresh, benches, extra, step in steps:
        if step.startswith(("fill", "overwrite")) or step == "readwhilewriting":
            benches += ",flush,waitforcompaction"
        row = {}
        for engine in engines:
            path = os.path.join(root, f"{engine}-{db}")
            cmd = [a.strata, "bench", f"--engine={engine}", *flags, *extra, f"--db={path}",
                   f"--benchmarks={benches}", f"--use_existing_db={0 if fresh else 1}"]
            status, output, peak_kib = run_measured(cmd)
            with open(a.log, "a") as log:
                log.write("\n$ " + " ".join(cmd) + "\n" + output + f"peak RSS: {peak_kib} KiB\n")
            figures = step_figures(output, step) if status == 0 else None
            if figures is None:
                print(f"{label} on {engine} failed (exit {status}); see {a.log}", file=sys.stderr)
                failed = True
                row[engine] = None
                continue
            ops, wamp, samp, cpu = figures
            if samp is None and db in ("s", "l"):
                samp = du(path) / (a.num * entry)
            row[engine] = (ops, wamp, samp, cpu, peak_kib / 1024)
            print(f"{label:<20} {engine:<8} {ops:>9} ops/s", file=sys.stderr)
        rows.append((label, row))

    fmt = lambda v, spec: "-" if v is None else format(v, spec)
    print(f"\nstrata bench --num={a.num} {' '.join(flags[len(COMMON):])}: "
          "ops/s | write-amp | space-amp | CPU us/op | peak RSS MiB\n")
    print("| step | " + " | ".join(engines) + " |")
    print("| --- |" + " --- |" * len(engines))
    for label, row in rows:
        cells = []
        for engine in engines:
            r = row.get(engine)
            if r is None:
                cells.append("failed")
            else:
                ops, wamp, samp, cpu, rss = r
                cells.append(f"{ops:,} / {fmt(wamp, '.2f')} / {fmt(samp, '.2f')} / {fmt(cpu, '.2f')}"
                             f" / {rss:,.0f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    if not a.dir:
        subprocess.run(["rm", "-rf", root])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
