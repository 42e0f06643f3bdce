#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Workload 5 (pgbench) on systems in blocks ordered A B B A (ORDER), in
one boot: each block is make bench's whole database workload (a fresh
system, the golden image copied, prewarmed, a warm-up run, then
BENCH_PG_ROUNDS measured runs). make bench measures each system once,
one after the other, minutes apart; a machine whose speed drifts over
that time favours one of them. Mirrored blocks put each system as early
and as late in the boot as the other, so that a steady drift hits both
alike, and repeated blocks show how far one block of a system differs
from the next.

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -m 7G -o DIR -- env ORDER="ssdcache_wb dm_cache dm_cache ssdcache_wb" \\
      /usr/bin/python3 bench/pgabba.py DIR
writes DIR/pgabba.json: one entry per block (system, its rounds' TPS,
the median round's figures) and each system's rounds pooled (their
median), which it also logs. An unknown name in ORDER is refused before
anything is set up.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
ORDER = os.environ.get("ORDER", "ssdcache_wb dm_cache dm_cache ssdcache_wb").split()


def pg_devices():
    """The disks workload 5 uses: the HDD model, the raw SSD model (the
    raw SSD's own disk) and the cache device."""
    return {"hdd": g.nullb_create("bench_hdd", g.ORIGIN_MB, g.disk_model("hdd")),
            "ssdbig": g.nullb_create("bench_ssdbig", g.ORIGIN_MB, g.disk_model("ssd")),
            "ssd": g.nullb_create("bench_ssdpg", g.PG_CACHE_MB, g.disk_model("ssd"))}


def one_block(systems, name, golden, i):
    s = systems[name]
    s.create()
    try:
        r = g.w_database(s, golden, g.DATABASES["pgbench"])
    finally:
        s.destroy()
    g.log(f"block {i} {name}: median {r['tps']:.1f} TPS, rounds {r['rounds_tps']}")
    return {"block": i, "system": name, "rounds_tps": r["rounds_tps"], "tps": r["tps"],
            "latency_ms": r["latency_ms"], "guest_cpu_busy": r["guest_cpu_busy"],
            "io_per_txn": r["io_per_txn"], "hit_ratio": r["hit_ratio"],
            "phase_secs": r["phase_secs"]}


def pooled(blocks):
    """Each system's rounds over all its blocks: {system: {"rounds": how
    many, "median": their median TPS}}, in the order of first block."""
    out = {}
    for name in dict.fromkeys(b["system"] for b in blocks):
        tps = [t for b in blocks if b["system"] == name for t in b["rounds_tps"]]
        out[name] = {"rounds": len(tps), "median": round(statistics.median(tps), 1)}
    return out


def main():
    known = [s.name for s in g.all_systems({})]
    unknown = [n for n in ORDER if n not in known]
    if unknown:
        raise SystemExit(f"ORDER: no such system: {' '.join(unknown)} "
                         f"(known: {' '.join(known)})")
    g.load_modules()
    devs = pg_devices()
    g.cgroup_setup()
    golden, used = g.DATABASES["pgbench"].golden("ext4")
    systems = {s.name: s for s in g.all_systems(devs)}
    out = {"kernel": os.uname().release, "order": ORDER, "db_mb": used,
           "rounds": g.PG_ROUNDS, "secs": g.SECS, "blocks": []}
    for i, name in enumerate(ORDER):
        out["blocks"].append(one_block(systems, name, golden, i))
        out["pooled"] = pooled(out["blocks"])
        with open(f"{OUT}/pgabba.json", "w") as f:
            json.dump(out, f, indent=1)
    for name, p in out["pooled"].items():
        g.log(f"{name}: median of {p['rounds']} rounds {p['median']:.1f} TPS")
    for name in ("bench_hdd", "bench_ssdbig", "bench_ssdpg", os.path.basename(golden)):
        g.nullb_remove(name)


if __name__ == "__main__":
    main()
