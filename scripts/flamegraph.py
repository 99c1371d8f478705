#!/usr/bin/env python3
"""Draws a flame graph (SVG) of a command's CPU time, from `perf record --call-graph dwarf`.

    scripts/flamegraph.py OUT.svg [--from PCT] [--to PCT] [--title T] -- COMMAND [ARGS...]
    scripts/flamegraph.py OUT.svg --perf-data FILE [--from PCT] [--to PCT]

`--from`/`--to` keep the samples of a slice of the run by time (percent of the recording;
e.g. `--from 60` for a last step that takes the final 40%). Each box is a function, as wide as
the share of samples with it on the stack; the boxes above it are what it called. Needs
`perf` (Debian's linux-perf) and permission to profile (root, or perf_event_paranoid <= 1).
No other dependency: the stacks are folded and drawn here.
"""

import argparse
import collections
import html
import os
import re
import subprocess
import sys
import tempfile


def fold(perf_script_lines):
    """Folds `perf script` output into {stack (root first, ';'-joined): samples}."""
    stacks = collections.Counter()
    frames = []
    for line in perf_script_lines:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                stacks[";".join(reversed(frames))] += 1
            frames = []
            continue
        if line[0] in " \t":
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                name = re.sub(r"\+0x[0-9a-f]+$", "", parts[1].split(" (")[0])
                frames.append(clean(name))
        else:
            frames = []  # a sample's header line; its frames follow
    if frames:
        stacks[";".join(reversed(frames))] += 1
    return stacks


def clean(name):
    """Shortens Rust symbols: drops hashes and generic arguments."""
    name = re.sub(r"::h[0-9a-f]{16}$", "", name)
    depth, out = 0, []
    for ch in name:
        if ch == "<":
            depth += 1
            if depth == 1:
                out.append("<..>")
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out).replace(";", ",") or name


def color(name):
    h = sum(map(ord, name)) % 60
    if name.startswith("strata::"):
        return f"rgb({230},{120 + h},{40})"
    return f"rgb({200 + h // 3},{160 + h},{120})"


def draw(stacks, title, width=1200, row=16):
    total = sum(stacks.values())
    tree = {}
    for stack, n in stacks.items():
        node = tree
        for frame in stack.split(";"):
            entry = node.setdefault(frame, [0, {}])
            entry[0] += n
            node = entry[1]

    def depth(node):
        return 1 + max((depth(c[1]) for c in node.values()), default=0)

    height = (depth(tree) + 2) * row + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="monospace" font-size="11">',
        f'<text x="8" y="16" font-size="14">{html.escape(title)} ({total} samples)</text>',
    ]

    def walk(node, x, level):
        for name, (n, children) in sorted(node.items()):
            w = n / total * (width - 16)
            y = height - (level + 1) * row
            if w >= 0.3:
                tip = f"{name} ({n} samples, {100 * n / total:.1f}%)"
                out.append(
                    f'<g><title>{html.escape(tip)}</title><rect x="{x:.1f}" y="{y}" '
                    f'width="{w:.1f}" height="{row - 1}" fill="{color(name)}"/>'
                )
                chars = int(w / 7)
                if chars >= 3:
                    label = name if len(name) <= chars else name[: chars - 2] + ".."
                    out.append(
                        f'<text x="{x + 2:.1f}" y="{y + row - 4}">{html.escape(label)}</text>'
                    )
                out.append("</g>")
                walk(children, x, level + 1)
            x += w

    walk(tree, 8, 0)
    out.append("</svg>")
    return "\n".join(out)


def main():
    argv = sys.argv[1:]
    command = []
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1 :]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--perf-data")
    p.add_argument("--from", dest="start", type=float, default=0)
    p.add_argument("--to", dest="end", type=float, default=100)
    p.add_argument("--title")
    p.add_argument("--frequency", type=int, default=299)
    args = p.parse_args(argv)
    if bool(command) == bool(args.perf_data):
        p.error("give either a command after -- or --perf-data")
    data = args.perf_data
    if command:
        data = os.path.join(tempfile.mkdtemp(), "perf.data")
        subprocess.run(
            ["perf", "record", "-q", "-F", str(args.frequency), "--call-graph", "dwarf,16384",
             "-o", data, "--"] + command,
            check=True,
        )
    script = subprocess.run(
        ["perf", "script", "-i", data, "--time", f"{args.start}%-{args.end}%", "-F",
         "comm,tid,time,ip,sym"],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    stacks = fold(script)
    if not stacks:
        sys.exit("flamegraph: no samples in that slice")
    title = args.title or " ".join(command) or data
    with open(args.out, "w") as f:
        f.write(draw(stacks, title))
    total = sum(stacks.values())
    print(f"{args.out}: {total} samples; most time in (self):")
    leaves = collections.Counter()
    for stack, n in stacks.items():
        leaves[stack.rsplit(";", 1)[-1]] += n
    for name, n in leaves.most_common(8):
        print(f"  {100 * n / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
