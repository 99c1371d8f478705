#!/usr/bin/env python3
"""The shared budgets held, on each engine: the rate limiter's bytes per second and the write
buffer manager's memory across column families.

    scripts/budgets.py --strata target/engines/release/strata [--engines strata,rocksdb]

Rate limiter: a compaction-heavy fill (`fillrandom,waitforcompaction` with the WAL off, so
that every byte written is a flush's or a compaction's, small memtables and levels) once
without a limit and once with `--rate_limiter_bytes_per_sec=RATE`. The process's written
bytes (`write_bytes` of /proc/PID/io) are sampled every `--interval` seconds; the table gives
the mean rate over the run and the median, 90th percentile and largest rate of the windows
of one second.

Write buffer manager: `fillrandom` over `--num_column_families=4` with 64 MiB memtables,
without and with `--db_write_buffer_size=BYTES`; the table gives the process's peak RSS
(`wait4`) and the largest RSS sampled, with the block cache kept small so that memtables
are what the process holds.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

RESULT = re.compile(r"^(\w+)\s*:\s*[\d.]+ micros/op (\d+) ops/sec", re.M)


def sample_run(cmd, interval):
    """Runs cmd, sampling its written bytes and RSS; returns (output, samples, peak RSS KiB).

    Each sample is (seconds since start, write_bytes, RSS in KiB)."""
    out = tempfile.TemporaryFile(mode="w+")
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    samples = []
    while True:
        try:
            with open(f"/proc/{p.pid}/io") as f:
                written = int(re.search(r"^write_bytes: (\d+)", f.read(), re.M).group(1))
            with open(f"/proc/{p.pid}/status") as f:
                rss = int(re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M).group(1))
            samples.append((time.monotonic() - start, written, rss))
        except (OSError, AttributeError):
            pass  # the process is ending (a zombie has no io or VmRSS)
        try:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            break
        time.sleep(interval)
    p.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    text = out.read()
    if p.returncode != 0:
        sys.exit(f"failed (exit {p.returncode}): {' '.join(cmd)}\n{text[-2000:]}")
    return text, samples, usage.ru_maxrss


def window_rates(samples, window=1.0):
    """Bytes per second over consecutive windows of `window` seconds."""
    rates, (t0, w0, _) = [], samples[0]
    for t, w, _ in samples[1:]:
        if t - t0 >= window:
            rates.append((w - w0) / (t - t0))
            t0, w0 = t, w
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata", required=True, help="a strata binary built with the engines' features")
    ap.add_argument("--engines", default="strata,rocksdb")
    ap.add_argument("--dir", default=None, help="where the databases go (default: a temporary directory)")
    ap.add_argument("--num", type=int, default=2_000_000, help="keys of the rate limiter's fill")
    ap.add_argument("--rate", type=int, default=16 << 20, help="the rate limit, bytes per second")
    ap.add_argument("--cf_num", type=int, default=1_000_000, help="keys of the four-family fill")
    ap.add_argument("--db_write_buffer_size", type=int, default=32 << 20)
    ap.add_argument("--interval", type=float, default=0.1)
    a = ap.parse_args()
    root = a.dir or tempfile.mkdtemp(prefix="budgets-")
    mib = 1 << 20

    print(f"\nRate limiter: fillrandom,waitforcompaction of {a.num:,} keys, WAL off, 4 MiB "
          f"memtables; written MB/s (/proc/PID/io write_bytes)\n")
    print("| engine | limit MB/s | seconds | mean | median of 1 s windows | p90 | largest |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for engine in a.engines.split(","):
        for limit in (0, a.rate):
            db = os.path.join(root, f"rate-{engine}")
            subprocess.run(["rm", "-rf", db], check=True)
            cmd = [a.strata, "bench", f"--engine={engine}", f"--db={db}",
                   "--benchmarks=fillrandom,waitforcompaction", f"--num={a.num}",
                   "--value_size=100", "--key_size=16", "--compression_type=none",
                   "--disable_wal=1", "--write_buffer_size=4194304",
                   "--target_file_size_base=4194304", "--max_bytes_for_level_base=16777216",
                   "--max_background_jobs=2", "--seed=1"]
            if limit:
                cmd.append(f"--rate_limiter_bytes_per_sec={limit}")
            _, samples, _ = sample_run(cmd, a.interval)
            rates = sorted(window_rates(samples))
            seconds = samples[-1][0] - samples[0][0]
            mean = (samples[-1][1] - samples[0][1]) / seconds
            p90 = rates[int(0.9 * (len(rates) - 1))]
            print(f"| {engine} | {limit / mib if limit else 'none'} | {seconds:.1f} | "
                  f"{mean / mib:.1f} | {statistics.median(rates) / mib:.1f} | {p90 / mib:.1f} | "
                  f"{rates[-1] / mib:.1f} |", flush=True)
            subprocess.run(["rm", "-rf", db], check=True)

    print(f"\nWrite buffer manager: fillrandom of {a.cf_num:,} keys per family over 4 families, "
          f"64 MiB memtables (2 per family), 8 MiB block cache\n")
    print("| engine | db_write_buffer_size MiB | fill ops/s | peak RSS MiB | largest RSS sampled MiB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for engine in a.engines.split(","):
        for budget in (0, a.db_write_buffer_size):
            db = os.path.join(root, f"wbm-{engine}")
            subprocess.run(["rm", "-rf", db], check=True)
            cmd = [a.strata, "bench", f"--engine={engine}", f"--db={db}",
                   "--benchmarks=fillrandom", f"--num={a.cf_num * 4}",
                   "--num_column_families=4", "--value_size=100", "--key_size=16",
                   "--compression_type=none", "--disable_wal=1",
                   "--write_buffer_size=67108864", "--max_write_buffer_number=2",
                   "--cache_size=8388608", "--seed=1"]
            if budget:
                cmd.append(f"--db_write_buffer_size={budget}")
            text, samples, peak = sample_run(cmd, a.interval)
            ops = dict((m.group(1), int(m.group(2))) for m in RESULT.finditer(text))
            largest = max(s[2] for s in samples) if samples else 0
            print(f"| {engine} | {budget / mib if budget else 'none'} | {ops.get('fillrandom', 0):,} | "
                  f"{peak / 1024:.0f} | {largest / 1024:.0f} |", flush=True)
            subprocess.run(["rm", "-rf", db], check=True)
    if not a.dir:
        subprocess.run(["rm", "-rf", root])
    return 0


if __name__ == "__main__":
    sys.exit(main())
