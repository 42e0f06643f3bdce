#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Workload 1 (hits) in slices: each system against a dm-linear reference
over the raw SSD model, in PAIRS pairs of SECS-second slices of one fio
run (guest.fio_slices(): ref-dev, dev-ref, ...), so that the emulator's
drift, which moves 20 s rounds minutes apart by 10-30%, hits both slices
of a pair alike. dm-linear against a second dm-linear is the control:
its ratios show what the method itself cannot tell apart.

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -o DIR -- env PAIRS=20 SECS=3 \\
      /usr/bin/python3 bench/sliceprobe.py DIR
SYSTEMS picks the systems ("linear_ssd ssdcache_wt ssdcache_wb
dm_writecache" by default); WORKLOADS "hit" (default) and/or "write"
(workload 2: dm-linear and the write-back caches; their writeback
settled once before, not between slices); BENCH_MODEL the disks' model,
as make bench's; VARIANTS
"name=/path.ko ..." measures each build of the module in turn (vm-run
--no-module); FIO_OPTS "name=--opt=v,--opt=v ..." measures each system
once per named set of extra fio options (say "cpu0=--cpus_allowed=0
any=" to pin fio or not), in turn; INSTANCES (default 1) repeats it
all that many times, each system created (and each build loaded) anew
each time, and pools each label's instances (pool()): in a one-vCPU
guest (vm-run -c 1) a cache's slices agree within about 2%, but the
level moved by about 3% from one instance to the next (2026-12-06), so
a build is measured over several. RELOAD=0 loads a build only when
another one is loaded (with one build in VARIANTS: once for the whole
boot), so that instances that reload the module and instances that do
not can be told apart. CHURN=N and CHURN_FROM=I (default 1): before
each instance from the I-th (counted from 0), the first build of
VARIANTS unloaded and loaded again N times, no cache created, so that
whether reloads alone move the other systems' level shows inside one
boot. Writes DIR/slices.json.
"""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
PAIRS = int(os.environ.get("PAIRS", "20"))
SECS = int(os.environ.get("SECS", "3"))
SYSTEMS = os.environ.get("SYSTEMS",
                         "linear_ssd ssdcache_wt ssdcache_wb dm_writecache").split()
WORKLOADS = os.environ.get("WORKLOADS", "hit").split()
VARIANTS = [v.split("=", 1) for v in os.environ.get("VARIANTS", "").split()]
FIO_OPTS = [(n, [o for o in opts.split(",") if o]) for n, opts in
            (v.split("=", 1) for v in os.environ.get("FIO_OPTS", "").split())] or [("", [])]
INSTANCES = int(os.environ.get("INSTANCES", "1"))
RELOAD = os.environ.get("RELOAD", "1") != "0"
CHURN = int(os.environ.get("CHURN", "0"))
CHURN_FROM = int(os.environ.get("CHURN_FROM", "1"))
LOADED = []  # the build loaded last by load(), if any


def make(devs, name):
    if name == "linear_ssd":
        return g.LinearSsd(devs)
    if name == "dm_writecache":
        return g.DmWritecache(devs)
    mode = {"ssdcache_wt": "writethrough", "ssdcache_wb": "writeback"}[name]
    return g.Ssdcache(devs, mode)


def measure(ref, s, label, results):
    for w in WORKLOADS:
        if w == "write" and s.name not in ("ssdcache_wb", "dm_writecache", "linear_ssd"):
            continue
        fset, fio = (g.HIT_SET, g.HIT_FIO) if w == "hit" else (g.WRITE_SET, g.WRITE_FIO)
        for oname, opts in FIO_OPTS:
            olabel = f"{label}-{oname}" if oname else label
            summ = g.slices(ref, s.dev, olabel, w, fset, fio + opts, PAIRS, SECS)
            results.append({"system": olabel, "workload": w, "fio_opts": opts, **summ})
        if s.caches:
            g.log(f"{label} status: {' '.join(g.dm_status(s.dm_names[0]))}")


def spread(rs):
    """Of one label's instances RS: the standard deviation of their
    geometric means' logarithms, and what the pairs' own scatter inside
    each instance would give it if the pairs were independent draws
    (both in percent, to 0.1). Instances that differ by more than the
    second moved between instances; ABBA pairs that cancel each other's
    drift make the first the smaller."""
    logs = [math.log(r["geomean"]) for r in rs]
    within = [statistics.variance([math.log(x) for x in r["ratios"]]) / len(r["ratios"])
              for r in rs if len(r.get("ratios", [])) > 1]
    return (round(100 * statistics.stdev(logs), 1),
            round(100 * math.sqrt(statistics.mean(within)), 1) if within else None)


def pool(results):
    """Per label and workload of RESULTS measured in more than one
    instance: ratio_summary() of the instances' geometric means (its
    interval: Student's t over the instances), with their number and
    spread()."""
    by = {}
    for r in results:
        if "geomean" in r:
            by.setdefault((r["system"], r["workload"]), []).append(r)
    out = []
    for (label, w), rs in by.items():
        if len(rs) < 2:
            continue
        summ = g.ratio_summary([(1.0, r["geomean"]) for r in rs])
        sd, pairs_sd = spread(rs)
        g.log(f"{label}: {w} over {len(rs)} instances: {summ.get('geomean')} "
              f"{summ.get('ci95')} median {summ.get('median')}; "
              f"instances' sd {sd}% (pairs alone: {pairs_sd}%)")
        out.append({"system": label, "workload": w, "instances": len(rs), **summ,
                    "sd_pct": sd, "pairs_sd_pct": pairs_sd})
    return out


def load(ko):
    """KO loaded for the next system: each time, or with RELOAD=0 only
    when it is not the build loaded last."""
    if RELOAD or LOADED != [ko]:
        g.load_build(ko)
        LOADED[:] = [ko]


def one_system(devs, ref, name, label, results):
    s = make(devs, name)
    s.create()
    try:
        s.random_mode()
        if s.caches:
            g.warm_hit(s)
            g.settle_writeback(s)
        measure(ref, s, label, results)
    finally:
        s.destroy()


def instances(devs, ref, results):
    """INSTANCES times: every system (each ssdcache one once per build of
    VARIANTS) measured into RESULTS, each result tagged with its instance."""
    for i in range(INSTANCES):
        start = len(results)
        if CHURN and VARIANTS and i >= CHURN_FROM:
            # load_build() unloads the loaded build first.
            for _ in range(CHURN):
                g.load_build(VARIANTS[0][1])
            LOADED[:] = [VARIANTS[0][1]]
            g.log(f"instance {i}: {VARIANTS[0][0]} reloaded {CHURN} times")
        for name in SYSTEMS:
            if name.startswith("ssdcache") and VARIANTS:
                for build, ko in VARIANTS:
                    load(ko)
                    one_system(devs, ref, name, f"{name}-{build}", results)
            else:
                one_system(devs, ref, name, name, results)
        for r in results[start:]:
            r["instance"] = i


def main():
    for m in ("dm_mod", "dm-writecache", "libcrc32c"):
        g.run(["modprobe", m])
    devs = g.probe_devices()
    results = []
    with g.reference(devs) as ref:
        instances(devs, ref, results)
    with open(f"{OUT}/slices.json", "w") as f:
        json.dump(results + pool(results), f, indent=1)


if __name__ == "__main__":
    main()
