#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Workload 5 (pgbench) with kprobes on the module's entry points: how
many times each ran per transaction in the measured rounds (a bio
mapped, requeued, deferred to a commit; commits, journal writes). The
kernels here have no function profiler (CONFIG_FUNCTION_PROFILER), so
each probe counts its hits in a hist trigger.

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -m 7G -o DIR -- env BENCH_SYSTEMS=ssdcache_wb BENCH_WORKLOADS=pgbench \\
      BENCH_PG_ROUNDS=1 /usr/bin/python3 bench/pgprobe.py DIR
writes DIR/pgprobe.json (and guest.py's results.json). The profiled
rounds run slower than unprofiled ones: their TPS is not a result.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
TR = "/sys/kernel/tracing"
GROUP = "ssdc_probe"
MODULE = "dm_ssdcache"
FUNCS = os.environ.get("PROBE_FUNCS", "ssdc_map map_bio map_read map_block_write map_range_write "
                       "ssdc_requeue requeue_fn ssdc_meta_defer ssdc_meta_wait ssdc_meta_kick "
                       "run_commit ssdc_journal_write ssdc_issue_write ssdc_seq_bypass "
                       "ssdc_read_ahead fill_fn wb_fn ssdc_evict_one ssdc_end_io").split()
measured = g.measured_txn
profiles = []


def kprobe_event(line):
    """Adds or removes one kprobe event (Python's append mode seeks,
    which kprobe_events refuses)."""
    fd = os.open(f"{TR}/kprobe_events", os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def probes_on():
    """Puts a counting probe on each of FUNCS that takes one; returns
    those that did."""
    if not os.path.exists(f"{TR}/kprobe_events"):
        g.run(["mount", "-t", "tracefs", "none", TR])
    on = []
    for fn in FUNCS:
        try:
            kprobe_event(f"p:{GROUP}/{fn} {MODULE}:{fn}")
            g.put(f"{TR}/events/{GROUP}/{fn}/trigger", "hist:keys=cpu")
            on.append(fn)
        except OSError as e:
            g.log(f"pgprobe: no probe on {fn}: {e}")
    g.put(f"{TR}/events/{GROUP}/enable", 1)
    return on


def probes_off(on):
    """{function: hits}; the probes removed."""
    g.put(f"{TR}/events/{GROUP}/enable", 0)
    out = {}
    for fn in on:
        with open(f"{TR}/events/{GROUP}/{fn}/hist") as f:
            m = re.search(r"Hits: ([0-9]+)", f.read().split("Totals:")[-1])
        out[fn] = int(m.group(1)) if m else 0
        g.put(f"{TR}/events/{GROUP}/{fn}/trigger", "!hist:keys=cpu")
        kprobe_event(f"-:{GROUP}/{fn}")
    return out


def profiled(s, bench):
    on = probes_on()
    try:
        r = measured(s, bench)
    finally:
        hits = probes_off(on)
    n = max(r["transactions"], 1)
    profiles.append({"system": s.name, "tps": r["tps"], "transactions": n,
                     "io_per_txn": r["io_per_txn"],
                     "per_txn": {f: round(h / n, 3) for f, h in hits.items()}})
    return r


g.measured_txn = profiled
rc = g.main()
with open(f"{OUT}/pgprobe.json", "w") as f:
    json.dump(profiles, f, indent=1)
for p in profiles:
    print(p["system"], p["tps"], json.dumps(p["io_per_txn"]))
    for fn, v in p["per_txn"].items():
        print(f"  {fn:24s} {v:10.3f} per transaction")
sys.exit(rc)
