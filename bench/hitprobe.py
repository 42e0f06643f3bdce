#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Workload 1 (the hit path) as make bench runs it, warm-up and paired
dm-linear rounds included, on write-through and write-back ssdcache in
turn, ROUNDS times, the modes' order reversed every round: does one mode
serve hits slower than the other, beside the same reference? For each
measured stretch it also records the cache's counters that background
work moves (commits, fills, evictions, SSD and origin bytes) and how busy
the guest's CPUs were.

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -o DIR -- env BENCH_SECS=10 ROUNDS=2 \\
      /usr/bin/python3 bench/hitprobe.py DIR
Writes DIR/hitprobe.json.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
ROUNDS = int(os.environ.get("ROUNDS", "2"))
COUNTERS = ("journal_commits", "promotions", "evictions", "cleaned_blocks", "journal_blocks",
            "checkpoints", "read_misses",
            "ssd_read_bytes", "ssd_write_bytes", "origin_read_bytes", "origin_write_bytes")


def counters(s):
    d = f"{g.sys_block(s.dev)}/ssdcache/stats"
    return {k: int(g.get(f"{d}/{k}")) for k in COUNTERS if os.path.exists(f"{d}/{k}")}


def one(devs, mode, rnd):
    s = g.Ssdcache(devs, mode)
    s.create()
    try:
        c0, cpu0 = counters(s), g.cpu_stat()
        r = g.w_hit(s)
        c1, cpu1 = counters(s), g.cpu_stat()
    finally:
        s.destroy()
    out = {"mode": mode, "round": rnd, "rounds_iops": r["rounds_iops"],
           "ref_rounds_iops": r.get("ref_rounds_iops"),
           "ratios": [round(a / b, 3) for a, b in zip(r["rounds_iops"],
                                                      r.get("ref_rounds_iops") or [])],
           "hit_ratio": r["hit_ratio"], "cpu_busy": g.cpu_busy(cpu0, cpu1),
           "counters": {k: c1[k] - c0[k] for k in c0}}
    g.log(json.dumps(out))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    devs = g.probe_devices()
    res = []
    for rnd in range(ROUNDS):
        modes = ["writethrough", "writeback"]
        for mode in (modes if rnd % 2 == 0 else modes[::-1]):
            res.append(one(devs, mode, rnd))
            with open(f"{OUT}/hitprobe.json", "w") as f:
                json.dump(res, f, indent=1)
    g.remove_devices(devs)


if __name__ == "__main__":
    main()
