#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Is the cache's SSD model as fast as the raw SSD model that workload 1's
dm-linear reference reads? Workload 1's reads on dm-linear over the raw
SSD model (1 GiB, "big"), on dm-linear over the 144 MiB SSD model every
cache gets ("small"), and on that model itself ("rawsmall"), CYCLES
times, the order reversed every other cycle. Each one's IOPS in all, as
a ratio to "big"'s, and the median of "small"'s ratios, go to
DIR/ref.json.

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -o DIR -- env CYCLES=8 SLICE=10 \\
      /usr/bin/python3 bench/refprobe.py DIR
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402

OUT = sys.argv[1]
CYCLES = int(os.environ.get("CYCLES", "8"))
SLICE = int(os.environ.get("SLICE", "10"))


def main():
    os.makedirs(OUT, exist_ok=True)
    devs = g.probe_devices()
    for k in ("ssd", "ssdbig"):
        g.log(f"{k} {g.nullb_model_params('bench_' + k)}")
    big, small = devs["ssdbig"], devs["ssd"]
    ref = g.dm_create("bench_ref", f"0 {g.sectors(big)} linear {big} 0")
    ref2 = g.dm_create("bench_ref2", f"0 {g.sectors(small)} linear {small} 0")
    res = {"big": [], "small": [], "rawsmall": []}
    for c in range(CYCLES):
        order = [("big", ref), ("small", ref2), ("rawsmall", small)]
        if c % 2:
            order = order[::-1]
        for k, d in order:
            res[k].append(g.hit_fio(d, SLICE)["read"]["iops"])
        g.log(json.dumps({k: round(v[-1]) for k, v in res.items()}))
    summ = {k: round(sum(res[k]) / sum(res["big"]), 3) for k in res}
    summ["median_small"] = round(statistics.median(a / b for a, b in zip(res["small"], res["big"])), 3)
    g.log("summary " + json.dumps(summ))
    with open(f"{OUT}/ref.json", "w") as f:
        json.dump({"rounds": res, "summary": summ}, f)
    g.dm_remove("bench_ref")
    g.dm_remove("bench_ref2")
    g.remove_devices(devs)


if __name__ == "__main__":
    main()
