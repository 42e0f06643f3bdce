#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Builds of dm-ssdcache.ko side by side in one boot: workloads 1 and 2
(hits, random writes) on dm-linear and on each build in turn, the builds'
order reversed every round, so that drift in the run hits them alike.

Inside the guest, from the top of the tree, with the builds copied out of
build/<KVER>/ first (vm-run must not load its own):
  scripts/vm-run --no-module [--icount 0] -k KVER -o DIR -- env \\
      VARIANTS="old=/tmp/old.ko new=/tmp/new.ko" ROUNDS=2 PSECS=4 \\
      /usr/bin/python3 bench/abprobe.py DIR
MODES ("wt wb") picks the cache modes; MODEL the disks' model ("fast",
as BENCH_MODEL=fast). Write-back: the warm-up leaves the hit set dirty
(45% of the cache), which the write rounds would take over dirty_high,
so that the cleaner wrote back during them; the warm-up is written back
(a "flush" message) before the rounds, as make bench's write workload
starts clean. KEEP_DIRTY=1 skips that. Writes DIR/probe.json: [label,
IOPS] pairs.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
SECS = int(os.environ.get("PSECS", "10"))
MODEL = os.environ.get("MODEL", "fast")
VARIANTS = [v.split("=", 1) for v in os.environ["VARIANTS"].split()]
MODES = os.environ.get("MODES", "wt wb").split()
results = []


def measure(dev, label, rw, region):
    r = g.fio(dev, rw, region, [f"--rw={rw}", "--bs=4k", "--iodepth=16"], secs=SECS)
    d = r["read" if "read" in rw else "write"]
    g.log(f"{label}: {d['iops']:.0f} IOPS lat {d['lat_mean_us']:.0f}us")
    results.append((label, d["iops"]))


def write_back_all(s):
    """Writes every dirty block of S back ("flush" message), waits for it."""
    if not s.settle_writeback():
        raise RuntimeError(f"{s.dm_names[0]}: still dirty after the flush message")


def one_build(devs, name, rnd):
    for mode in MODES:
        s = g.Ssdcache(devs, "writeback" if mode == "wb" else "writethrough")
        s.create()
        s.random_mode()
        g.fio(s.dev, "warm_w", g.HIT_SET, ["--rw=write", "--bs=128k", "--iodepth=4"])
        g.fio(s.dev, "warm_r", g.HIT_SET, ["--rw=read", "--bs=128k", "--iodepth=4"])
        if mode == "wb" and os.environ.get("KEEP_DIRTY") != "1":
            write_back_all(s)
        measure(s.dev, f"{name}-{mode}-hit-{rnd}", "randread", g.HIT_SET)
        if mode == "wb":
            measure(s.dev, f"{name}-{mode}-write-{rnd}", "randwrite", g.WRITE_SET)
        g.log(f"{name} {mode} status: {g.dm_status('bench_ssdc')}")
        s.destroy()


def main():
    for m in ("null_blk nr_devices=0", "dm_mod", "libcrc32c"):
        g.run(["modprobe"] + m.split())
    g.udev_nowatch()
    g.settle()
    devs = {key: g.nullb_create(f"bench_{key}", mb, MODEL)
            for key, mb in (("hdd", 1024), ("ssd", 144), ("ssdbig", 1024))}
    for rnd in range(int(os.environ.get("ROUNDS", "3"))):
        lin = g.LinearSsd(devs)
        lin.create()
        measure(lin.dev, f"linear-hit-{rnd}", "randread", g.HIT_SET)
        measure(lin.dev, f"linear-write-{rnd}", "randwrite", g.WRITE_SET)
        lin.destroy()
        for name in g.builds_in_turn(VARIANTS, rnd):
            one_build(devs, name, rnd)
    with open(f"{OUT}/probe.json", "w") as f:
        json.dump(results, f)
    g.load_build(None)
    g.remove_devices(devs)


if __name__ == "__main__":
    main()
