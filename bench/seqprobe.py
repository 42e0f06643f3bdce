#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Workload 4's sequential reads after workloads 2 and 3, traced: when
fio started, when its first bio reached the system's device, when the
HDD model served its first read, and what else the HDD did meanwhile
(a cleaner's writes), with fio's latency of every read.

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -o DIR -- env BENCH_SECS=10 SYSTEMS="raw_hdd ssdcache_wb" IDLE_S=2.5 \
      /usr/bin/python3 bench/seqprobe.py DIR
writes DIR/probe.json. IDLE_S: seconds to wait before the reads (an
idle-started cleaner batch begins after writeback_idle_ms, 2 s).
SKIP_WRITE=1: no workload 2 first, so the dirty blocks the cleaner
meets are the skewed mix's scattered ones. WITH_HIT=1: workload 1
first too, as in a full run. The SSD is traced as well: what it served
before the HDD's first read ("ssd_before_first_read").
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
TR = "/sys/kernel/tracing"
IDLE_S = float(os.environ.get("IDLE_S", "0"))
SKIP_WRITE = os.environ.get("SKIP_WRITE") == "1"
WITH_HIT = os.environ.get("WITH_HIT") == "1"
EVENTS = ("block_bio_queue", "block_rq_issue", "block_rq_complete")


def trace_start(devs):
    g.put(f"{TR}/tracing_on", 0)
    g.put(f"{TR}/trace", "")
    g.put(f"{TR}/buffer_size_kb", 65536)
    filt = " || ".join(f"dev == {g.devt(d)[0]}" for d in devs)
    for e in EVENTS:
        g.put(f"{TR}/events/block/{e}/filter", filt)
        g.put(f"{TR}/events/block/{e}/enable", 1)
    g.put(f"{TR}/tracing_on", 1)


def trace_stop():
    g.put(f"{TR}/tracing_on", 0)
    for e in EVENTS:
        g.put(f"{TR}/events/block/{e}/enable", 0)
    out = []
    with open(f"{TR}/trace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            if "tracing_mark_write" in line:
                ts = float(line.split(": tracing_mark_write")[0].split()[-1])
                out.append((ts, "mark", line.split("tracing_mark_write:")[1].strip(), ""))
                continue
            for e in EVENTS:
                key = f" {e}: "
                if key in line:
                    ts = float(line.split(key)[0].split()[-1].rstrip(":"))
                    rest = line.split(key)[1].split()
                    out.append((ts, e, rest[0], rest[1]))
    return out


def mark(text):
    with open(f"{TR}/trace_marker", "w") as f:
        f.write(text)


def summary(events, top, hdd, ssd):
    """The times (s, from the mark) of fio's first bio on TOP, of the
    HDD's first read issued and completed, the HDD's writes issued
    before that first read completed, and the SSD's requests meanwhile."""
    t0 = next(ts for ts, e, _, _ in events if e == "mark")
    first_bio = next((ts for ts, e, d, _ in events if e == "block_bio_queue" and d == top), None)
    rd_issue = next((ts for ts, e, d, rw in events
                     if e == "block_rq_issue" and d == hdd and "R" in rw and ts > t0), None)
    rd_done = next((ts for ts, e, d, rw in events
                    if e == "block_rq_complete" and d == hdd and "R" in rw and ts > t0), None)
    w_before = sum(1 for ts, e, d, rw in events
                   if e == "block_rq_issue" and d == hdd and "W" in rw and t0 < ts < (rd_done or 1e9))
    w_after_bio = sum(1 for ts, e, d, rw in events
                      if e == "block_rq_issue" and d == hdd and "W" in rw and first_bio and
                      first_bio < ts < (rd_done or 1e9))
    w_total = sum(1 for ts, e, d, rw in events
                  if e == "block_rq_issue" and d == hdd and "W" in rw and ts > t0)

    ssd_before = {}
    for ts, e, d, rw in events:
        if e == "block_rq_issue" and d == ssd and t0 < ts < (rd_done or 1e9):
            k = "reads" if "R" in rw else "writes" if "W" in rw else "other"
            ssd_before[k] = ssd_before.get(k, 0) + 1

    def rel(t):
        return round(t - t0, 3) if t is not None else None

    return {"first_bio_s": rel(first_bio), "hdd_first_read_issued_s": rel(rd_issue),
            "hdd_first_read_done_s": rel(rd_done),
            "hdd_writes_before_first_read_done": w_before,
            "hdd_writes_after_first_bio_before_first_read_done": w_after_bio,
            "hdd_writes_in_run": w_total, "ssd_before_first_read": ssd_before}


def main():
    os.makedirs(OUT, exist_ok=True)
    g.run(["modprobe", "null_blk", "nr_devices=0"])
    if not os.path.exists(f"{TR}/trace"):
        g.run(["mount", "-t", "tracefs", "none", TR])
    g.udev_nowatch()
    devs = {}
    for key, mb, model in (("hdd", g.ORIGIN_MB, "hdd"), ("ssd", g.CACHE_MB, "ssd")):
        devs[key] = g.nullb_create(f"bench_{key}", mb, model)
    res = {}
    names = os.environ.get("SYSTEMS", "raw_hdd ssdcache_wb").split()
    systems = {"ssdcache_wb": g.Ssdcache(devs, "writeback"),
               "ssdcache_wt": g.Ssdcache(devs, "writethrough"), "raw_hdd": g.RawHdd(devs)}
    for name in names:
        s = systems[name]
        s.create()
        if WITH_HIT:
            g.w_hit(s)
        if not SKIP_WRITE:
            g.w_write(s)
        g.w_mixed(s)
        if s.caches:
            g.read_settled(s)
            g.fio(s.dev, "probe", g.MIXED_SET, g.HOT_PROBE, secs=max(g.SECS // 2, 2))
            g.read_settled(s)
        top, hdd, ssd = (g.devt(d)[1] for d in (s.dev, devs["hdd"], devs["ssd"]))
        trace_start([s.dev, devs["hdd"], devs["ssd"]])
        # Long enough for an idle-started cleaner batch to begin.
        time.sleep(IDLE_S)
        mark("fio start")
        r = g.fio_hdd(s, "seqread", g.SEQ_SET, ["--rw=read", "--bs=1M", "--iodepth=4"],
                      g.SECS, keep=None)
        ev = trace_stop()
        lat = r.pop("first_ios")
        out = {"fio": r, "trace": summary(ev, top, hdd, ssd), "first_lat_ms": lat[:12],
               "max_lat_ms": max((x[1] for x in lat), default=None), "reads": len(lat)}
        if s.caches:
            out["status"] = " ".join(s.status())
        res[name] = out
        print(name, json.dumps(out), flush=True)
        s.destroy()
        time.sleep(1)
    with open(f"{OUT}/probe.json", "w") as f:
        json.dump(res, f, indent=1)
    for key in devs:
        g.nullb_remove(f"bench_{key}")


main()
