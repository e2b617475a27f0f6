#!/usr/bin/env python3
"""The table of benches/ab-device-run.sh: for every benchmark id of every bench, the median time
of the base build and of this one (each the median over the alternated rounds), their ratio,
each bench's geomean ratio, and the ids past the limit. Criterion benches give criterion's
middle estimate per id; the benches that print markdown tables (gpu-spmv's, gpu-csrc's,
gpu-svd's) give every timing cell, the id being the row's leading cells and the column's header
(build and conversion columns left out: one-off costs timed once). Usage: ``python3
benches/ab_compare.py [--limit PERCENT] DIR`` (DIR holds ``<bench>-<base|new>-<round>.txt``)."""
import argparse
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

UNITS = {"ps": 1e-12, "ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# criterion: "<id>   time:   [1.2345 ms 1.2400 ms 1.2500 ms]" (the id may be on the line before).
TIME = re.compile(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]")


def parse(path):
    """``{benchmark id: middle estimate in seconds}`` of one criterion run's output."""
    out, last_id = {}, None
    for line in path.read_text(errors="replace").splitlines():
        m = TIME.search(line)
        head = line.split("time:")[0].strip()
        if head and not line.startswith(" "):
            last_id = head
        if m and last_id:
            out[last_id] = float(m.group(1)) * UNITS.get(m.group(2), float("nan"))
        elif line and not line.startswith(" ") and "time:" not in line:
            last_id = line.strip()
    return out


# A timing column of a markdown table: "ms" or "seconds" in its header, not a one-off build.
TIMED = re.compile(r"\bms\b|seconds|ms \(median")
ONE_OFF = re.compile(r"build|conversion|transpose ms|pays off")


def parse_tables(path):
    """``{row id · column: seconds}`` of the markdown tables of one run's output: a row's id is
    its leading cells up to the first timing column."""
    out, header = {}, None
    for line in path.read_text(errors="replace").splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set(line.strip()) <= set("|-: "):
            continue
        if header is None:
            header = cells
            continue
        timed = [i for i, h in enumerate(header) if TIMED.search(h) and not ONE_OFF.search(h)]
        if not timed:
            continue
        key = " · ".join(cells[: timed[0]])
        for i in timed:
            if i >= len(cells):
                continue
            try:
                v = float(cells[i])
            except ValueError:
                continue
            if v > 0:
                out[f"{key} · {header[i]}"] = v * (1.0 if "seconds" in header[i] else 1e-3)
    return out


def table(directory, limit):
    runs = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for f in sorted(Path(directory).glob("*-*-*.txt")):
        m = re.fullmatch(r"(.+)-(base|new)-(\d+)\.txt", f.name)
        if not m:
            continue
        bench, side = m.group(1), m.group(2)
        found = parse(f) or parse_tables(f)
        for bid, t in found.items():
            runs[bench][bid][side].append(t)
    lines, past = [], []
    lines.append(f"| bench | ids | geomean new ÷ base | worst id (new ÷ base) | past {limit}% |")
    lines.append("|---|---|---|---|---|")
    for bench in sorted(runs):
        ratios = {}
        for bid, sides in runs[bench].items():
            if sides["base"] and sides["new"]:
                ratios[bid] = statistics.median(sides["new"]) / statistics.median(sides["base"])
        if not ratios:
            lines.append(f"| {bench} | 0 | – | – | – |")
            continue
        geo = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
        worst = max(ratios, key=ratios.get)
        over = [b for b, r in ratios.items() if r > 1 + limit / 100]
        past += [(bench, b, ratios[b]) for b in over]
        lines.append(f"| {bench} | {len(ratios)} | {geo:.3f} | {worst} ({ratios[worst]:.3f}) | {len(over)} |")
    if past:
        lines.append("")
        lines.append(f"Past {limit}% (new ÷ base):")
        lines += [f"- {bench} `{bid}`: {r:.3f}" for bench, bid, r in sorted(past, key=lambda p: -p[2])]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir")
    ap.add_argument("--limit", type=float, default=2.0)
    a = ap.parse_args()
    print(table(a.dir, a.limit))


if __name__ == "__main__":
    sys.exit(main())
