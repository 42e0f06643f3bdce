#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Pools the paired rounds of workloads 1 and 2 (hits, random writes) of
several make bench runs of one kernel: each round's ratio to the
dm-linear round beside it, over every run given, per system, with the
median, the geometric mean and how many rounds reached the target's bar
(0.95x for hits, 0.9x for writes). One run's five rounds say little
where dm-linear moves by 10% to 40% against itself; runs of the same
module together say more.

    bench/pool.py RESULTS.json [RESULTS.json ...]

Every file must be of the same kernel (refused otherwise). Prints a
Markdown table per workload to stdout.
"""

import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import paired  # noqa: E402  (the same ratios as results.md's)

WORKLOADS = (("hit", "hits", 0.95), ("write", "writes", 0.9))


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            runs.append(json.load(f))
    kernels = sorted({r.get("kernel", "?") for r in runs})
    if len(kernels) != 1:
        raise SystemExit(f"pool: runs of more than one kernel ({', '.join(kernels)}): "
                         "pool one kernel's runs at a time")
    return kernels[0], runs


def pooled(runs, w):
    """{system: (label, [ratios over every run])}, in the first run's order."""
    out = {}
    for run in runs:
        for name, s in run.get("systems", {}).items():
            p = paired(s, w)
            if p:
                out.setdefault(name, (s.get("label", name), []))[1].extend(p[1])
    return out


def table(kernel, nruns, title, bar, per_system):
    lines = [f"### {title}, paired rounds of {nruns} run(s), {kernel}", "",
             "| system | rounds | median | geometric mean | rounds at or above "
             f"{bar}x | min | max |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, each in per_system.values():
        gm = statistics.geometric_mean(each)
        lines.append(f"| {label} | {len(each)} | {statistics.median(each):.3f}x | "
                     f"{gm:.3f}x | {sum(x >= bar for x in each)} of {len(each)} | "
                     f"{min(each):.3f}x | {max(each):.3f}x |")
    return lines + [""]


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: bench/pool.py RESULTS.json [RESULTS.json ...]")
    kernel, runs = load(sys.argv[1:])
    lines = []
    for w, title, bar in WORKLOADS:
        per_system = pooled(runs, w)
        if per_system:
            lines += table(kernel, len(runs), title, bar, per_system)
    if not lines:
        raise SystemExit("pool: no paired rounds in these runs")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
