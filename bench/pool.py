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
import math
import statistics
import sys

WORKLOADS = (("hit", "hits", 0.95), ("write", "writes", 0.9))


def paired_ratios(sysres, w):
    """Each round's ratio of workload W to its dm-linear round, or []."""
    r = sysres.get(w, {})
    mine, ref = r.get("rounds_iops", []), r.get("ref_rounds_iops", [])
    if not ref or len(ref) != len(mine) or not all(ref):
        return []
    return [a / b for a, b in zip(mine, ref)]


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
            each = paired_ratios(s, w)
            if each:
                out.setdefault(name, (s.get("label", name), []))[1].extend(each)
    return out


def table(kernel, nruns, w, title, bar, per_system):
    lines = [f"### {title}, paired rounds of {nruns} run(s), {kernel}", "",
             "| system | rounds | median | geometric mean | rounds at or above "
             f"{bar}x | min | max |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, each in per_system.values():
        gm = math.exp(sum(math.log(x) for x in each) / len(each))
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
            lines += table(kernel, len(runs), w, title, bar, per_system)
    if not lines:
        raise SystemExit("pool: no paired rounds in these runs")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
