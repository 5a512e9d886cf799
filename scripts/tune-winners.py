#!/usr/bin/env python3
"""Each size's winner in several `gemmtune tune` text reports (scripts/gpu-check.sh fresh):
the fastest family row per size per run, and how far the runs' winning times spread.

Usage: scripts/tune-winners.py REPORT.txt...
"""
import re
import sys

size_re = re.compile(r"^size (\S+)\s+cuBLAS")
row_re = re.compile(r"^  (\S+)\s+(\S+)\s+([0-9.]+)\s+(?:[0-9]+ %|-)")


def winners(path):
    best = {}
    size = None
    for line in open(path, errors="replace"):
        m = size_re.match(line)
        if m:
            size = m.group(1)
            continue
        m = row_re.match(line)
        if m and size and m.group(1) != "family":
            tflops = float(m.group(3))
            if size not in best or tflops > best[size][1]:
                best[size] = (m.group(2), tflops)
    return best


def main(paths):
    runs = [winners(p) for p in paths]
    sizes = [s for s in runs[0]] if runs else []
    print(f"{'size':<8} {'same winner':<11} {'spread of best TFLOP/s':<22} winners (run order)")
    for s in sizes:
        picks = [r.get(s) for r in runs]
        names = {p[0] for p in picks if p}
        speeds = [p[1] for p in picks if p]
        spread = (max(speeds) - min(speeds)) / max(speeds) * 100 if speeds else 0
        cells = ", ".join(f"{p[0]} {p[1]:.1f}" if p else "-" for p in picks)
        print(f"{s:<8} {'yes' if len(names) == 1 else 'no':<11} {spread:>6.1f} %{'':<14} {cells}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
