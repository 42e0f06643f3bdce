#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Guest side of bench/tbprof.sh: workloads 1 and 2 (4 KiB random reads of
a cached set, 4 KiB random writes, the latter twice: blocks new to the
cache, then the same blocks rewritten) on dm-linear and on each build of
the module, each between two calls of the marker (the obsolete sysfs(2)
system call), so that the tbprof plugin counts the guest instructions of
that workload alone. Fast disks: nothing waits on a timer.

  bench/tbprof.sh -k KVER -o DIR -- env VARIANTS="a=/tmp/a.ko b=/tmp/b.ko" \\
      /usr/bin/python3 bench/tbprof.py DIR

MODES ("wt wb") picks the cache modes; DEFAULT=1 measures with the
cache's default sequential_cutoff (4 MiB) instead of make bench's random
mode (no cutoff), after a warm-up without it. PEERS="writecache" adds
dm-writecache's hits and writes (its warm-up a write pass alone: it
caches what is written), after dm-linear's.
Each fio run covers its set once in random order (fio's random map), so
every block is read or written exactly once: a window's I/Os are its
set's blocks. Writes DIR/windows.json ([label, I/Os] in marker order,
"start" first: what ran before the first workload) and DIR/kallsyms-<build>
(the guest's symbols with that build loaded); bench/tbreport.py reads
them with the plugin's snapshots.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
VARIANTS = [v.split("=", 1) for v in os.environ["VARIANTS"].split()]
MODES = os.environ.get("MODES", "wt wb").split()


def window(dev, label, rw, region):
    """One pass of RW over REGION in 4 KiB I/Os, queue depth 16."""
    off, size = region
    if os.path.lexists(g.FIO_DEV):
        os.unlink(g.FIO_DEV)
    os.symlink(os.path.realpath(dev), g.FIO_DEV)
    cmd = ["fio", "--name=w", f"--filename={g.FIO_DEV}", "--direct=1",
           "--ioengine=libaio", f"--offset={off}M", f"--size={size}M",
           "--randrepeat=1", f"--rw={rw}", "--bs=4k", "--iodepth=16",
           "--output-format=json"]
    g.tb_mark(f"before-{label}", 0)
    res = json.loads(g.run(cmd))
    job = res["jobs"][0]
    g.tb_mark(label, job["read"]["total_ios"] + job["write"]["total_ios"])


def writes(dev, prefix, rnd):
    """Workload 2's two windows on DEV: blocks new to it, then rewritten."""
    window(dev, f"{prefix}-write-{rnd}", "randwrite", g.WRITE_SET)
    window(dev, f"{prefix}-rewrite-{rnd}", "randwrite", g.WRITE_SET)


def one_build(devs, name, rnd):
    for mode in MODES:
        s = g.Ssdcache(devs, "writeback" if mode == "wb" else "writethrough")
        s.create()
        s.random_mode()
        g.fio(s.dev, "warm_w", g.HIT_SET, ["--rw=write", "--bs=128k", "--iodepth=4"])
        g.fio(s.dev, "warm_r", g.HIT_SET, ["--rw=read", "--bs=128k", "--iodepth=4"])
        if mode == "wb":
            s.settle_writeback()
        if os.environ.get("DEFAULT") == "1":
            s.default_mode()
        window(s.dev, f"{name}-{mode}-hit-{rnd}", "randread", g.HIT_SET)
        if mode == "wb":
            writes(s.dev, f"{name}-{mode}", rnd)
        s.destroy()
    g.tb_symbols(OUT, name)


def peer_writecache(devs, rnd):
    s = g.DmWritecache(devs)
    s.create()
    g.fio(s.dev, "warm_w", g.HIT_SET, ["--rw=write", "--bs=128k", "--iodepth=4"])
    window(s.dev, f"writecache-hit-{rnd}", "randread", g.HIT_SET)
    writes(s.dev, "writecache", rnd)
    s.destroy()


# Each peer: the function that measures it, and the module it needs.
PEERS = {"writecache": (peer_writecache, "dm-writecache")}


def main():
    peers = [PEERS[p] for p in os.environ.get("PEERS", "").split()]
    for m in ("null_blk nr_devices=0", "dm_mod", "libcrc32c", *(m for _, m in peers)):
        g.run(["modprobe"] + m.split())
    g.udev_nowatch()
    g.settle()
    devs = {key: g.nullb_create(f"bench_{key}", mb, "fast")
            for key, mb in (("hdd", 1024), ("ssd", 144), ("ssdbig", 1024))}
    g.tb_mark("start", 0)
    for rnd in range(int(os.environ.get("ROUNDS", "1"))):
        lin = g.LinearSsd(devs)
        lin.create()
        window(lin.dev, f"linear-hit-{rnd}", "randread", g.HIT_SET)
        writes(lin.dev, "linear", rnd)
        lin.destroy()
        for measure, _ in peers:
            measure(devs, rnd)
        for name in g.builds_in_turn(VARIANTS, rnd):
            one_build(devs, name, rnd)
    g.tb_symbols(OUT, "linear")
    g.tb_save(OUT)
    g.load_build(None)
    g.remove_devices(devs)


if __name__ == "__main__":
    main()
