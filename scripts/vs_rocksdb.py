#!/usr/bin/env python3
"""Run one workload on RocksDB's db_bench and on `strata bench`, side by side, and print ratios.

Both tools get the same db_bench flags, each step is a separate process, the two engines
alternate step by step, and every process is measured from outside the same way
(CPU seconds, peak RSS, bytes it dirtied on disk via getrusage, database size via du).

    cargo build --release -p strata-tools                                # from the repository root
    scripts/vs_rocksdb.py --strata target/release/strata                 # standard suite, 1M keys
    scripts/vs_rocksdb.py --strata target/release/strata --num 200000 --suite quick
    scripts/vs_rocksdb.py --strata ... --extra=--compaction_style=1        # add flags to both

RocksDB's db_bench is the one on PATH, else Debian's package rocksdb-tools, installed on first
use with apt-get (which needs root). Debian's build has assertions enabled (db_bench warns about
it) and runs writes 1.2-1.5x slower than a release build of RocksDB; reads are about equal.
Treat a write ratio here as an upper bound, and confirm it against a release build
(strata bench --engine=rocksdb, see scripts/build-engines.sh and scripts/engines_table.py).
Exit status: 0 when every step ran on both engines, 1 when a step failed, 2 on bad usage.
With --min-ratio R it also exits 1 when any throughput ratio (strata/rocksdb) is below R.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

LINE = re.compile(r"^(\w+)\s*:\s*([\d.]+) micros/op\s+(\d+) ops/sec")

COMMON = [
    "--key_size=16",
    "--compression_type=none",
    "--bloom_bits=10",
    "--cache_size=1073741824",
    "--write_buffer_size=67108864",
    "--target_file_size_base=67108864",
    "--max_bytes_for_level_base=268435456",
    "--max_background_jobs=2",
    "--disable_wal=1",
    "--seed=1",
]


def suites(num, value_size):
    """Each step: (label, db name, fresh?, benchmarks, extra flags, ops reported by the step)."""
    w = 1000 * (16 + value_size)  # the writer in *whilewriting steps does about 1000 puts/s
    n10 = max(num // 10, 1)
    quick = [
        ("fillrandom", "r", True, "fillrandom", [], None),
        ("fillseq", "s", True, "fillseq", [], None),
        ("readrandom", "s", False, "flush,waitforcompaction,readrandom", [], None),
        ("seekrandom", "s", False, "seekrandom", [f"--reads={n10}", "--seek_nexts=10"], None),
    ]
    standard = quick[:2] + [
        ("overwrite", "s", False, "overwrite", [], None),
        ("readrandom", "s", False, "flush,waitforcompaction,readrandom", [], None),
        ("readrandom_t2", "s", False, "readrandom", ["--threads=2"], "readrandom"),
        ("seekrandom", "s", False, "seekrandom", [f"--reads={n10}", "--seek_nexts=10"], None),
        ("readseq", "s", False, "readseq", [], None),
        ("readwhilewriting", "s", False, "readwhilewriting",
         [f"--benchmark_write_rate_limit={w}", f"--reads={num}"], None),
        ("fillsync_t4", "y", True, "fillrandom",
         ["--disable_wal=0", "--sync=1", f"--num={max(num // 100, 100)}", "--threads=4"], "fillrandom"),
    ]
    return {"quick": quick, "standard": standard}


def run(cmd, log):
    """Run cmd, return (exit code, seconds, rusage) measured by wait4."""
    t0 = time.monotonic()
    with open(log, "ab") as out:
        out.write(("\n$ " + " ".join(cmd) + "\n").encode())
        out.flush()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru


def ops_from(log, name, start):
    with open(log, "rb") as f:
        f.seek(start)
        text = f.read().decode(errors="replace")
    best = None
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if m and m.group(1) == name:
            best = float(m.group(3))
    return best


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def ensure_db_bench():
    if shutil.which("db_bench"):
        return "db_bench"
    print("installing Debian's rocksdb-tools for db_bench ...", file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    subprocess.run(["apt-get", "install", "-y", "rocksdb-tools"], stdout=subprocess.DEVNULL, env=env, check=True)
    return "db_bench"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata", required=True, help="path of the strata binary (its 'bench' subcommand is used)")
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--suite", choices=["quick", "standard"], default="standard")
    ap.add_argument("--dir", default=None, help="where the databases go (default: a new temp dir)")
    ap.add_argument("--extra", action="append", default=[], help="one more db_bench flag for both engines")
    ap.add_argument("--min-ratio", type=float, default=None)
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--keep", action="store_true", help="keep databases and logs")
    a = ap.parse_args()

    strata = os.path.abspath(a.strata)
    if not os.access(strata, os.X_OK):
        print(f"not an executable: {a.strata}", file=sys.stderr)
        return 2
    engines = {"rocksdb": [ensure_db_bench()], "strata": [strata, "bench"]}
    work = a.dir or tempfile.mkdtemp(prefix="vs_rocksdb.")
    os.makedirs(work, exist_ok=True)
    flags = COMMON + [f"--value_size={a.value_size}", f"--num={a.num}"] + a.extra
    rows, failed = [], False
    for label, db, fresh, benches, extra, name in suites(a.num, a.value_size)[a.suite]:
        name = name or benches.split(",")[-1]
        row = {"step": label}
        for eng, base in engines.items():
            path = os.path.join(work, f"{eng}.{db}")
            log = os.path.join(work, f"{eng}.log")
            if fresh and os.path.exists(path):
                shutil.rmtree(path)
            cmd = base + flags + extra + [f"--db={path}", f"--benchmarks={benches}",
                                          f"--use_existing_db={0 if fresh else 1}"]
            start = os.path.getsize(log) if os.path.exists(log) else 0
            code, secs, ru = run(cmd, log)
            ops = ops_from(log, name, start) if code == 0 else None
            if ops is None:
                failed = True
                print(f"{eng} {label}: failed (exit {code}); see {log}", file=sys.stderr)
            row[eng] = {"ops": ops, "secs": round(secs, 2), "cpu": round(ru.ru_utime + ru.ru_stime, 2),
                        "rss_mb": round(ru.ru_maxrss / 1024, 1), "wrote_mb": round(ru.ru_oublock * 512 / 2**20, 1),
                        "read_mb": round(ru.ru_inblock * 512 / 2**20, 1), "size_mb": round(du(path) / 2**20, 1)}
        rows.append(row)
        print(fmt_row(row), flush=True)

    ratios = [r["strata"]["ops"] / r["rocksdb"]["ops"] for r in rows
              if r["rocksdb"]["ops"] and r["strata"]["ops"]]
    gm = 0.0
    if ratios:
        prod = 1.0
        for x in ratios:
            prod *= x
        gm = prod ** (1 / len(ratios))
    print(f"geomean throughput ratio strata/rocksdb over {len(ratios)} steps: {gm:.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"flags": flags, "suite": a.suite, "rows": rows, "geomean": gm}, f, indent=1)
    if not a.keep and not a.dir:
        shutil.rmtree(work, ignore_errors=True)
    elif a.keep:
        print(f"databases and logs kept in {work}", file=sys.stderr)
    if failed:
        return 1
    if a.min_ratio is not None and (not ratios or min(ratios) < a.min_ratio):
        return 1
    return 0


HEADER = False


def fmt_row(r):
    global HEADER
    out = []
    if not HEADER:
        HEADER = True
        out.append(f"{'step':<18}{'rocksdb ops/s':>14}{'strata ops/s':>14}{'ratio':>7}"
                   f"{'r wrote MB':>11}{'s wrote MB':>11}{'r size MB':>10}{'s size MB':>10}"
                   f"{'r cpu s':>8}{'s cpu s':>8}{'r rss MB':>9}{'s rss MB':>9}")
    rk, st = r["rocksdb"], r["strata"]
    ratio = f"{st['ops'] / rk['ops']:.2f}" if rk["ops"] and st["ops"] else "-"
    out.append(f"{r['step']:<18}{rk['ops'] or '-':>14}{st['ops'] or '-':>14}{ratio:>7}"
               f"{rk['wrote_mb']:>11}{st['wrote_mb']:>11}{rk['size_mb']:>10}{st['size_mb']:>10}"
               f"{rk['cpu']:>8}{st['cpu']:>8}{rk['rss_mb']:>9}{st['rss_mb']:>9}")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
