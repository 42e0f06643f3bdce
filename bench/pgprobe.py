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
BENCH_WORKLOADS=sysbench profiles MariaDB's rounds instead.

PROBE_SPLITS=1 also traces the write bios that reach the system's own
device (block_bio_queue, once per bio) and the pieces device-mapper cuts
them into (block_split), and adds per transaction: the writes, the
pieces their runs of RUN_SECTORS force on a cache whose runs share a
set (one SSD request per run at best), the splits made, and the writes
by size.

PROBE_WAITS=1 also counts, per transaction, what ran and what waited:
each work function the kernel's workqueues executed, each timer
function that expired (timer and hrtimer), and the kernel stacks at
which a task went to sleep (sched_switch with a blocked task), written
whole to DIR/waits-<system>.txt: on the timed disk models, what a
transaction sleeps on; under -icount (vm-run --icount, BENCH_MODEL=fast),
where an idle guest skips to its next timer, what its idle time waited
for.
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
SPLITS = os.environ.get("PROBE_SPLITS") == "1"
# 32 KiB runs (SSDCACHE_RUN_BYTES) with blocks of 4 KiB: 64 sectors.
RUN_SECTORS = 64
BLOCK_EVENTS = ("block_bio_queue", "block_split")
WAITS = os.environ.get("PROBE_WAITS") == "1"
# event: hist trigger (and filter) that counts what ran or waited.
WAIT_HISTS = {
    "workqueue/workqueue_execute_start": ("hist:keys=function.sym:size=2048", None),
    "timer/timer_expire_entry": ("hist:keys=function.sym:size=2048", None),
    "timer/hrtimer_expire_entry": ("hist:keys=function.sym:size=2048", None),
    "sched/sched_switch": ("hist:keys=stacktrace:size=8192", "prev_state & 3"),
}


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


def splits_on(dev):
    """Traces DEV's bios as they arrive and as device-mapper cuts them."""
    st = os.stat(os.path.realpath(dev))
    g.put(f"{TR}/tracing_on", 0)
    g.put(f"{TR}/buffer_size_kb", 32768)
    g.put(f"{TR}/trace", "")
    for ev in BLOCK_EVENTS:
        g.put(f"{TR}/events/block/{ev}/filter",
              f"dev == {(os.major(st.st_rdev) << 20) | os.minor(st.st_rdev)}")
        g.put(f"{TR}/events/block/{ev}/enable", 1)
    g.put(f"{TR}/tracing_on", 1)


def splits_off():
    """The writes traced since splits_on(), as counts. Before probes_off():
    removing a kprobe event empties the trace buffer."""
    g.put(f"{TR}/tracing_on", 0)
    for ev in BLOCK_EVENTS:
        g.put(f"{TR}/events/block/{ev}/enable", 0)
        g.put(f"{TR}/events/block/{ev}/filter", 0)
    writes, forced, splits, sizes = 0, 0, 0, {}
    with open(f"{TR}/trace") as f:
        for line in f:
            # ... block_bio_queue: 254,0 WS 2192 + 32 [mariadbd]
            m = re.search(r"block_bio_queue: \d+,\d+ (\S+) (\d+) \+ (\d+)", line)
            if m and "W" in m.group(1) and int(m.group(3)):
                first, nr = int(m.group(2)), int(m.group(3))
                writes += 1
                forced += (first + nr - 1) // RUN_SECTORS - first // RUN_SECTORS + 1
                kib = nr // 2
                sizes[kib] = sizes.get(kib, 0) + 1
            elif re.search(r"block_split: \d+,\d+ \S*W", line):
                splits += 1
    overrun = sum(int(m) for m in re.findall(r"overrun: ([0-9]+)", g.run(
        ["sh", "-c", f"cat {TR}/per_cpu/cpu*/stats"])))
    return {"writes": writes, "pieces_forced_by_runs": forced, "splits": splits,
            "events_lost": overrun, "writes_by_kib": dict(sorted(sizes.items()))}


def waits_on():
    """Puts WAIT_HISTS' triggers on their events; returns the events that
    took one (an event that did not is left without its filter)."""
    on = []
    for ev, (trig, filt) in WAIT_HISTS.items():
        try:
            if filt:
                g.put(f"{TR}/events/{ev}/filter", filt)
            g.put(f"{TR}/events/{ev}/trigger", trig)
            on.append(ev)
        except OSError as e:
            g.log(f"pgprobe: no hist on {ev}: {e}")
            if filt and os.path.exists(f"{TR}/events/{ev}/filter"):
                g.put(f"{TR}/events/{ev}/filter", 0)
    return on


def hist_entries(text):
    """[(count, key)] of a hist file, the largest first; a key that spans
    lines (a stack) joined by spaces, addresses and offsets dropped."""
    out = []
    for m in re.finditer(r"^\{(.*?)\}\s*hitcount:\s*([0-9]+)", text, re.M | re.S):
        key = re.sub(r"\+0x[0-9a-f]+/0x[0-9a-f]+|\[[0-9a-f]+\]", "", m.group(1))
        out.append((int(m.group(2)), re.sub(r"\s+", " ", key).strip()))
    return sorted(out, key=lambda e: (-e[0], e[1]))


def waits_off(on):
    """{event: hist entries}; the triggers removed."""
    out = {}
    for ev in on:
        with open(f"{TR}/events/{ev}/hist") as h:
            out[ev] = hist_entries(h.read())
        trig, filt = WAIT_HISTS[ev]
        g.put(f"{TR}/events/{ev}/trigger", "!" + trig)
        if filt:
            g.put(f"{TR}/events/{ev}/filter", 0)
    return out


def waits_per_txn(waits, name, n):
    """{event: {key: per transaction}} of WAITS' top entries; every entry
    written to OUT/waits-NAME.txt."""
    out = {}
    with open(f"{OUT}/waits-{name}.txt", "w") as f:
        for ev, entries in waits.items():
            f.write(f"== {ev} ({n} transactions)\n")
            for c, key in entries:
                f.write(f"{c / n:10.4f} {key}\n")
            out[ev] = {key[:160]: round(c / n, 4) for c, key in entries[:12]}
    return out


def per_txn(counts, n):
    """COUNTS (splits_off()) per transaction of N."""
    return {k: ({s: round(c / n, 3) for s, c in v.items()} if isinstance(v, dict)
                else v if k == "events_lost" else round(v / n, 3))
            for k, v in counts.items()}


def profiled(s, bench):
    on = probes_on()
    if SPLITS:
        splits_on(s.dev)
    wait_on = waits_on() if WAITS else []
    split = None
    waits = {}
    try:
        r = measured(s, bench)
    finally:
        if wait_on:
            waits = waits_off(wait_on)
        if SPLITS:
            split = splits_off()
        hits = probes_off(on)
    n = max(r["transactions"], 1)
    profiles.append({"system": s.name, "tps": r["tps"], "transactions": n,
                     "io_per_txn": r["io_per_txn"],
                     "per_txn": {f: round(h / n, 3) for f, h in hits.items()}})
    if split:
        profiles[-1]["splits_per_txn"] = per_txn(split, n)
    if waits:
        profiles[-1]["waits_per_txn"] = waits_per_txn(waits, s.name, n)
    return r


def main():
    g.measured_txn = profiled
    rc = g.main()
    with open(f"{OUT}/pgprobe.json", "w") as f:
        json.dump(profiles, f, indent=1)
    for p in profiles:
        print(p["system"], p["tps"], json.dumps(p["io_per_txn"]))
        for fn, v in p["per_txn"].items():
            print(f"  {fn:24s} {v:10.3f} per transaction")
        if "splits_per_txn" in p:
            print("  top device writes:", json.dumps(p["splits_per_txn"]))
    return rc


if __name__ == "__main__":
    sys.exit(main())
