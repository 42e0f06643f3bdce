#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""How noisy is a paired measurement of the hit path, alternated or run
at once? Workload 1's reads on a system and on a dm-linear reference over
the raw SSD model, measured in one boot in the ways METHODS names
(default "alt conc"):

  alt:       PAIRS pairs of SLICE-second rounds, one device after the
             other (the order swapped every pair), as make bench pairs
             its rounds;
  alt_pin:   the same with fio on CPU 1 only (does it matter which vCPU
             fio runs on?);
  conc:      PAIRS runs of SLICE seconds with both devices read at the
             same time by one fio (a job each), with each job's CPU time
             per I/O;
  conc_swap: the same with the jobs on CPUs 0 and 1, then swapped; a
             pair's ratio is the geometric mean of the two CPUs' ratios.

First dm-linear against the reference (both dm-linear over the same
device: the method's own noise, which should be 1.00x), then ssdcache
write-through and write-back (or the modes MODES names, in its order,
repeats allowed), each warmed as workload 1 is. Each pair's
ratio of IOPS, and per method the median and spread (max - min) of the
ratios, go to DIR/concprobe.json.

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -o DIR -- env PAIRS=5 SLICE=10 METHODS="alt conc" \\
      /usr/bin/python3 bench/concprobe.py DIR
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
PAIRS = int(os.environ.get("PAIRS", "5"))
SLICE = int(os.environ.get("SLICE", "10"))
METHODS = os.environ.get("METHODS", "alt conc").split()
MODES = os.environ.get("MODES", "writethrough writeback").split()
if set(MODES) - {"writethrough", "writeback"}:
    sys.exit(f"concprobe: MODES: writethrough or writeback, not {MODES}")
if not METHODS or set(METHODS) - {"alt", "alt_pin", "conc", "conc_swap"}:
    sys.exit(f"concprobe: METHODS: one or more of alt alt_pin conc conc_swap, not {METHODS}")
FIO_OPTS = ["--direct=1", "--ioengine=libaio", "--randrepeat=1", "--time_based",
            f"--runtime={SLICE}", f"--ramp_time={g.RAMP_S}", "--output-format=json",
            f"--offset={g.HIT_SET[0]}M", f"--size={g.HIT_SET[1]}M"] + g.HIT_FIO


def alt(dev, ref, ref_first, pin=None):
    """One pair of rounds, one device after the other, fio on CPU PIN
    if given: (dev, ref) IOPS."""
    iops = {}
    order = [("ref", ref), ("dev", dev)] if ref_first else [("dev", dev), ("ref", ref)]
    extra = [f"--cpus_allowed={pin}"] if pin is not None else []
    for key, d in order:
        iops[key] = g.hit_fio(d, SLICE, extra)["read"]["iops"]
    return iops["dev"], iops["ref"]


def conc(dev, ref, pins=None):
    """One run with both devices read at once, their jobs on CPUs PINS if
    given: (dev, ref) IOPS and each job's CPU time (user + system) per
    I/O in microseconds."""
    cmd = ["fio"] + FIO_OPTS
    for i, (k, d) in enumerate((("dev", dev), ("ref", ref))):
        cmd += [f"--name={k}", f"--filename={os.path.realpath(d)}"]
        if pins:
            cmd += [f"--cpus_allowed={pins[i]}"]
    jobs = {j["jobname"]: j for j in json.loads(g.run(cmd))["jobs"]}
    out = []
    for k in ("dev", "ref"):
        j = jobs[k]
        ios = j["read"]["total_ios"] or 1
        cpu_us = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1000 / ios
        out.append((j["read"]["iops"], round(cpu_us, 2)))
    return out


def pair(a, b):
    return {"dev": round(a), "ref": round(b), "ratio": round(a / b, 3)}


def measure(name, dev, ref):
    res = {"system": name, "alt": [], "conc": [], "alt_pin": [], "conc_swap": []}
    for i in range(PAIRS):
        if "alt" in METHODS:
            res["alt"].append(pair(*alt(dev, ref, i % 2 == 0)))
        if "alt_pin" in METHODS:
            res["alt_pin"].append(pair(*alt(dev, ref, i % 2 == 0, pin=1)))
        if "conc" in METHODS:
            (a, ca), (b, cb) = conc(dev, ref)
            res["conc"].append(dict(pair(a, b), dev_cpu_us=ca, ref_cpu_us=cb))
        if "conc_swap" in METHODS:
            (a0, _), (b1, _) = conc(dev, ref, (0, 1))
            (a1, _), (b0, _) = conc(dev, ref, (1, 0))
            res["conc_swap"].append({"cpu0": pair(a0, b0), "cpu1": pair(a1, b1),
                                     "ratio": round(((a0 / b0) * (a1 / b1)) ** 0.5, 3)})
    for k in METHODS:
        ratios = [x["ratio"] for x in res[k]]
        res[f"{k}_median"] = statistics.median(ratios)
        res[f"{k}_spread"] = round(max(ratios) - min(ratios), 3)
    g.log(json.dumps(res))
    return res


def main():
    os.makedirs(OUT, exist_ok=True)
    devs = g.probe_devices()
    big = devs["ssdbig"]
    ref = g.dm_create("bench_ref", f"0 {g.sectors(big)} linear {big} 0")
    res = []

    def save(r):
        res.append(r)
        with open(f"{OUT}/concprobe.json", "w") as f:
            json.dump(res, f, indent=1)

    lin = g.LinearSsd(devs)
    lin.create()
    save(measure(lin.name, lin.dev, ref))
    lin.destroy()
    for mode in MODES:
        s = g.Ssdcache(devs, mode)
        s.create()
        s.random_mode()
        g.warm_hit(s)
        save(measure(s.name, s.dev, ref))
        s.destroy()
    g.dm_remove("bench_ref")
    g.remove_devices(devs)


if __name__ == "__main__":
    main()
