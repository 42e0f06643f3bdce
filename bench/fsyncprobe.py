#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Builds of dm-ssdcache.ko side by side in one boot: small writes each
followed by an fsync, on write-back, while busy loops keep the guest's
CPUs loaded as a CPU-bound database does. Each fsync waits for a
metadata commit, which runs in the module's workqueue: what the commit
costs the writer, and how soon the workqueue runs under load, is what
this compares. The builds' order is reversed every round.

Inside the guest, from the top of the tree, with the builds copied out of
build/<KVER>/ first (vm-run must not load its own):
  scripts/vm-run --no-module -k KVER -o DIR -- env \\
      VARIANTS="old=/tmp/old.ko new=/tmp/new.ko" ROUNDS=4 PSECS=15 \\
      /usr/bin/python3 bench/fsyncprobe.py DIR
HOGS (default 2) is the number of busy loops; JOBS (4) the writers.
Writes DIR/fsyncprobe.json: one record per round and build.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])
from abprobe import load  # noqa: E402  (rmmod the module, insmod a build)

OUT = sys.argv[1]
SECS = int(os.environ.get("PSECS", "15"))
HOGS = int(os.environ.get("HOGS", "2"))
JOBS = int(os.environ.get("JOBS", "4"))
VARIANTS = [v.split("=", 1) for v in os.environ["VARIANTS"].split()]


def fsync_writes(dev):
    """JOBS writers of 8 KiB at random, an fsync after each, for SECS."""
    if os.path.lexists(g.FIO_DEV):
        os.unlink(g.FIO_DEV)
    os.symlink(os.path.realpath(dev), g.FIO_DEV)
    off, size = g.WRITE_SET
    res = json.loads(g.run(["fio", "--name=fsync", f"--filename={g.FIO_DEV}", "--direct=1",
                            "--ioengine=psync", "--rw=randwrite", "--bs=8k", "--fsync=1",
                            f"--numjobs={JOBS}", f"--offset={off}M", f"--size={size}M",
                            "--randrepeat=1", "--time_based", f"--runtime={SECS}",
                            "--output-format=json", "--group_reporting"]))
    job = res["jobs"][0]
    return {"write_iops": job["write"]["iops"],
            "write_lat_us": job["write"]["lat_ns"]["mean"] / 1000,
            "fsync_lat_us": job["sync"]["lat_ns"]["mean"] / 1000,
            "fsync_p99_us": job["sync"]["lat_ns"].get("percentile", {}).get(
                "99.000000", 0) / 1000}


def one_build(devs, name, rnd):
    s = g.Ssdcache(devs, "writeback")
    s.create()
    s.random_mode()
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(HOGS)]
    try:
        before = g.dm_status("bench_ssdc")
        r = fsync_writes(s.dev)
        after = g.dm_status("bench_ssdc")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    r.update({"build": name, "round": rnd, "status_before": before, "status_after": after})
    g.log(f"{name} round {rnd}: {r['write_iops']:.0f} writes/s, fsync "
          f"{r['fsync_lat_us']:.0f} us (p99 {r['fsync_p99_us']:.0f})")
    s.destroy()
    return r


def main():
    for m in ("null_blk nr_devices=0", "dm_mod", "libcrc32c"):
        g.run(["modprobe"] + m.split())
    g.udev_nowatch()
    g.settle()
    devs = {key: g.nullb_create(f"bench_{key}", mb, g.disk_model(model))
            for key, mb, model in g.DEVICES}
    results = []
    for rnd in range(int(os.environ.get("ROUNDS", "4"))):
        for name, ko in (VARIANTS if rnd % 2 == 0 else VARIANTS[::-1]):
            load(ko)
            results.append(one_build(devs, name, rnd))
    with open(f"{OUT}/fsyncprobe.json", "w") as f:
        json.dump(results, f, indent=1)
    load(None)
    for key in devs:
        g.nullb_remove(f"bench_{key}")


if __name__ == "__main__":
    main()
