#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The skewed mix (workload 3) for a fixed number of I/Os on each system,
with every read the HDD model serves traced (block_rq_issue): which
blocks each system had to read from the HDD for the same I/Os.

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -m 6G -o DIR -- env NIOS=20000 SYSTEMS="ssdcache_wb bcache" \
      /usr/bin/python3 bench/mixprobe.py DIR
writes DIR/probe.json and DIR/<system>.reads (one "RWBS SECTOR" a request).
bcache's backing device starts 16 sectors into the HDD.
"""
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
NIOS = int(os.environ.get("NIOS", "20000"))
TR = "/sys/kernel/tracing"


def trace_start(dev):
    devt = g.devt(dev)[0]
    g.put(f"{TR}/tracing_on", 0)
    g.put(f"{TR}/trace", "")
    g.put(f"{TR}/buffer_size_kb", 65536)
    g.put(f"{TR}/events/block/block_rq_issue/filter", f"dev == {devt}")
    g.put(f"{TR}/events/block/block_rq_issue/enable", 1)
    g.put(f"{TR}/tracing_on", 1)


def trace_stop():
    g.put(f"{TR}/tracing_on", 0)
    g.put(f"{TR}/events/block/block_rq_issue/enable", 0)
    reads = []
    with open(f"{TR}/trace") as f:
        for line in f:
            if "block_rq_issue" not in line:
                continue
            # ... block_rq_issue: 252,0 R 4096 () 123456 + 8 [fio]
            rest = line.split("block_rq_issue:")[1].split()
            rwbs, sector = rest[1], rest[4] if rest[3] == "()" else rest[3]
            try:
                sec = int(sector)
            except ValueError:
                continue
            reads.append((rwbs, sec))
    return reads


def main():
    os.makedirs(OUT, exist_ok=True)
    g.run(["modprobe", "null_blk", "nr_devices=0"])
    g.run(["modprobe", "bcache"])
    if not os.path.exists(f"{TR}/trace"):
        g.run(["mount", "-t", "tracefs", "none", TR])
    devs = {}
    for key, mb, model in (("hdd", g.ORIGIN_MB, "hdd"), ("ssd", g.CACHE_MB, "ssd")):
        devs[key] = g.nullb_create(f"bench_{key}", mb, model)
    res = {}
    names = os.environ.get("SYSTEMS", "ssdcache_wb bcache").split()
    systems = {"ssdcache_wb": g.Ssdcache(devs, "writeback"), "bcache": g.Bcache(devs),
               "raw_hdd": g.RawHdd(devs)}
    for name in names:
        s = systems[name]
        s.create()
        s.random_mode()
        before = g.read_settled(s)
        h0, t0 = g.disk_stat(devs["hdd"]), time.monotonic()
        trace_start(devs["hdd"])
        r = g.fio(s.dev, "mixed", g.MIXED_SET, g.MIXED_FIO + [f"--number_ios={NIOS}"])
        secs = time.monotonic() - t0
        tr = trace_stop()
        h1 = g.disk_stat(devs["hdd"])
        after = g.read_settled(s)
        rd = [sec for rwbs, sec in tr if "R" in rwbs]
        c = collections.Counter(rd)
        out = {"secs": round(secs, 1), "fio": r,
               "hdd_reads_stat": h1[0] - h0[0], "hdd_writes_stat": h1[1] - h0[1],
               "traced_reads": len(rd), "unique_read_sectors": len(c),
               "dup_reads": len(rd) - len(c),
               "top_dups": c.most_common(10),
               "traced_other": collections.Counter(rwbs for rwbs, _ in tr if "R" not in rwbs),
               "hit_ratio": g.hit_ratio(before, after) if before else None}
        if name.startswith("ssdcache"):
            out["status"] = " ".join(s.status())
            out["stats"] = {k: s.stat(k) for k in
                            ("promotions", "evictions", "readaheads", "write_misses",
                             "bypassed_writes", "cleaned_blocks", "journal_commits")}
        res[name] = out
        print(name, json.dumps(out), flush=True)
        with open(f"{OUT}/{name}.reads", "w") as f:
            f.write("\n".join(f"{rwbs} {sec}" for rwbs, sec in tr))
        s.default_mode()
        s.destroy()
    with open(f"{OUT}/probe.json", "w") as f:
        json.dump(res, f, indent=1)
    for key in devs:
        g.nullb_remove(f"bench_{key}")


main()
