#!/usr/bin/env python3
"""Charts and a summary table from the CSV of io.strata.bench.Bench (Python 3 standard library).

    bench/chart.py --out docs/charts [--prefix java-] FILE[=LABEL] ...

Each FILE is what run.sh printed (the CSV lines, then the Markdown summary, which is
skipped); FILE=LABEL names every engine of that file LABEL (two runs of one engine with
different versions, say). Writes one SVG per test into --out: throughput per interval (y,
ops/s) along the run (x: the intervals one after another, the range growing at each marked
step, labelled with its number of keys), one line per engine and thread count, as the
published comparison's charts. Prints a Markdown table to stdout: per test, range and thread
count, the mean ops/s of each engine, Strata's ratio to each other engine and the mean load
average during the measurements.
"""

import argparse
import csv
import os
import sys
from collections import defaultdict

# One colour per engine, a dash pattern per thread count.
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
DASHES = ["", "6,3", "2,2", "8,3,2,3", "1,3"]
WIDTH, HEIGHT = 900, 420
LEFT, RIGHT, TOP, BOTTOM = 80, 170, 40, 60


def read_rows(spec):
    """The CSV rows of one run's output, as dicts, engines relabelled if asked."""
    path, _, label = spec.partition("=")
    rows = []
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip() and not line.startswith(("|", "#"))]
    for row in csv.DictReader(lines):
        if not row.get("ops_per_sec"):
            continue
        if label:
            row["engine"] = label
        rows.append(row)
    return rows


def human(n):
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            value = n / size
            return f"{value:.0f}{unit}" if value >= 10 or value == int(value) else f"{value:.1f}{unit}"
    return f"{n:.0f}"


def nice_top(value):
    """A round number at or above value, for the y axis."""
    if value <= 0:
        return 1
    magnitude = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 2.5, 5, 10):
        if step * magnitude >= value:
            return step * magnitude
    return 10 * magnitude


def svg_chart(test, series, steps, title_note):
    """series: {(engine, threads): [(keys, ops), ...]} in run order; steps: ordered keys."""
    count = max(len(points) for points in series.values())
    top = nice_top(max(ops for points in series.values() for _, ops in points))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x_of(i):
        return LEFT + plot_w * (i + 0.5) / count

    def y_of(ops):
        return TOP + plot_h * (1 - ops / top)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15">{test}: '
        f"throughput per interval{title_note}</text>",
    ]
    for k in range(6):
        ops = top * k / 5
        y = y_of(ops)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{human(ops)}</text>')
    out.append(f'<text x="18" y="{TOP + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {TOP + plot_h / 2})">ops/s</text>')
    # Step boundaries, from the first series that has every step (they share a schedule).
    reference = max(series.values(), key=len)
    previous = None
    for i, (keys, _) in enumerate(reference):
        if keys != previous:
            x = LEFT + plot_w * i / count
            out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + plot_h}" '
                       f'stroke="#bbb" stroke-dasharray="3,3"/>')
            out.append(f'<text x="{x + 3:.1f}" y="{TOP + plot_h + 16}">{human(keys)}</text>')
            previous = keys
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 14}" text-anchor="middle">'
               "intervals in run order; the range (keys) grows at each dashed line</text>")
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
               'stroke="#444"/>')
    engines = sorted({engine for engine, _ in series})
    threads = sorted({t for _, t in series})
    for n, ((engine, t), points) in enumerate(sorted(series.items())):
        colour = COLOURS[engines.index(engine) % len(COLOURS)]
        dash = DASHES[threads.index(t) % len(DASHES)]
        path = " ".join(f"{x_of(i):.1f},{y_of(ops):.1f}" for i, (_, ops) in enumerate(points))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                   f'stroke-width="1.6"{dash_attr}/>')
        y = TOP + 14 + 18 * n
        x = LEFT + plot_w + 12
        out.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 28}" y2="{y - 4}" stroke="{colour}" '
                   f'stroke-width="2"{dash_attr}/>')
        label = f"{engine}, {t} thread{'s' if t != 1 else ''}"
        out.append(f'<text x="{x + 34}" y="{y}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="directory of the SVG files")
    parser.add_argument("--prefix", default="", help="prefix of the SVG file names")
    parser.add_argument("--note", default="", help="added to each chart's title")
    parser.add_argument("files", nargs="+", help="FILE[=LABEL]: run.sh output")
    args = parser.parse_args()

    rows = [row for spec in args.files for row in read_rows(spec)]
    if not rows:
        sys.exit("chart.py: no CSV rows in " + " ".join(args.files))
    tests = list(dict.fromkeys(row["test"] for row in rows))
    engines = list(dict.fromkeys(row["engine"] for row in rows))
    # (test, engine, threads) -> [(keys, ops)] in run order; (test, keys, threads, engine) ->
    # the interval rates and load averages.
    series = defaultdict(list)
    cells = defaultdict(list)
    loads = defaultdict(list)
    for row in rows:
        keys, threads, ops = int(row["keys"]), int(row["threads"]), float(row["ops_per_sec"])
        series[(row["test"], row["engine"], threads)].append((keys, ops))
        cells[(row["test"], keys, threads, row["engine"])].append(ops)
        if row.get("load1") not in (None, "", "?"):
            loads[(row["test"], keys, threads)].append(float(row["load1"]))

    os.makedirs(args.out, exist_ok=True)
    for test in tests:
        per_test = {(e, t): pts for (tt, e, t), pts in series.items() if tt == test}
        steps = sorted({k for pts in per_test.values() for k, _ in pts})
        note = f" ({args.note})" if args.note else ""
        path = os.path.join(args.out, f"{args.prefix}{test}.svg")
        with open(path, "w") as f:
            f.write(svg_chart(test, per_test, steps, note))
        print(f"wrote {path}", file=sys.stderr)

    strata = next((e for e in engines if e.startswith("strata")), None)
    others = [e for e in engines if e != strata]
    header = ["test", "keys", "threads"] + [f"{e} ops/s" for e in engines]
    if strata:
        header += [f"{strata}/{e}" for e in others]
    header.append("load")
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |")
    for test in tests:
        keys_threads = sorted({(k, t) for (tt, k, t, _) in cells if tt == test})
        for keys, threads in keys_threads:
            mean = {}
            for e in engines:
                values = cells.get((test, keys, threads, e))
                mean[e] = sum(values) / len(values) if values else None
            line = [test, human(keys), str(threads)]
            line += [f"{mean[e]:,.0f}" if mean[e] is not None else "" for e in engines]
            if strata:
                for e in others:
                    ok = mean[strata] is not None and mean[e]
                    line.append(f"{mean[strata] / mean[e]:.2f}" if ok else "")
            load = loads.get((test, keys, threads))
            line.append(f"{sum(load) / len(load):.1f}" if load else "")
            print("| " + " | ".join(line) + " |")


if __name__ == "__main__":
    main()
