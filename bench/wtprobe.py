#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Write-through random writes against the raw HDD, traced: workload 2's
fio command (4 KiB random writes, QD16, the 32 MiB write set) in ROUNDS
rounds on the raw HDD model, then on a new write-through cache. The
first cache round writes blocks the cache does not hold; the later ones
mostly blocks it does (each write to one invalidates its copy, then
waits for the commit that journals that). Per round: IOPS, the HDD's
writes and flushes per second and its busy share, the share of 10 ms
samples in which the HDD had nothing in flight and its mean number of
requests in flight (/sys/block/*/inflight), the guest's CPU busy
share, and the cache's counters (write hits, commits, journal blocks,
checkpoints).

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -o DIR -- env ROUNDS=3 PSECS=20 \\
      /usr/bin/python3 bench/wtprobe.py DIR
Writes DIR/probe.json. With TRACE=1 in the environment, each cache
round is also traced (function_graph on the commit's functions, the
block layer's request and bio events) into DIR/trace-<n>.txt.
"""
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
SECS = int(os.environ.get("PSECS", "20"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
COUNTERS = ("write_hits", "write_misses", "journal_commits", "journal_blocks",
            "checkpoints", "flushes", "promotions", "evictions")


class Idle:
    """Samples the HDD's in-flight requests every 10 ms: the share of
    samples with none."""
    def __init__(self, dev):
        self.path = f"{g.sys_block(dev)}/inflight"
        self.n = self.idle = self.total = 0
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.stop.wait(0.01):
            r, w = (int(x) for x in g.get(self.path).split())
            self.n += 1
            self.idle += not (r or w)
            self.total += r + w

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.t.join()

    def share(self):
        return round(self.idle / max(1, self.n), 3)

    def mean(self):
        return round(self.total / max(1, self.n), 2)


def counters(s):
    if not s.caches:
        return {}
    return {c: s.stat(c) for c in COUNTERS}


TRACING = "/sys/kernel/tracing"
# TRACE=1: each cache round's commits, deferrals and the HDD's requests,
# traced (function_graph on the functions below, block events) into
# DIR/trace-<n>.txt.
TRACE_FUNCS = ("commit_fn", "ssdc_meta_defer", "ssdc_journal_write",
               "ssdc_checkpoint", "issue_fn")
TRACE_EVENTS = ("block/block_rq_issue", "block/block_rq_complete", "block/block_rq_insert",
                "block/block_bio_queue", "block/block_bio_complete")


def trace_start():
    if not os.path.isdir(f"{TRACING}/events"):
        g.run(["mount", "-t", "tracefs", "nodev", TRACING], check=False)
    g.put(f"{TRACING}/tracing_on", "0")
    g.put(f"{TRACING}/current_tracer", "nop")
    g.put(f"{TRACING}/buffer_size_kb", "16384")
    g.put(f"{TRACING}/set_ftrace_filter", "\n".join(TRACE_FUNCS))
    g.put(f"{TRACING}/current_tracer", "function_graph")
    g.put(f"{TRACING}/trace_options", "funcgraph-abstime")
    g.put(f"{TRACING}/trace_options", "funcgraph-proc")
    for ev in TRACE_EVENTS:
        g.put(f"{TRACING}/events/{ev}/enable", "1")
    g.put(f"{TRACING}/trace", "")
    g.put(f"{TRACING}/tracing_on", "1")


def trace_stop(n):
    g.put(f"{TRACING}/tracing_on", "0")
    with open(f"{TRACING}/trace") as f, open(f"{OUT}/trace-{n}.txt", "w") as o:
        o.write(f.read())
    g.put(f"{TRACING}/current_tracer", "nop")
    for ev in TRACE_EVENTS:
        g.put(f"{TRACING}/events/{ev}/enable", "0")


ROUND_NO = [0]


def one_round(s, hdd):
    ROUND_NO[0] += 1
    trace = os.environ.get("TRACE") == "1" and s.caches
    if trace:
        trace_start()
    c0, d0, cpu0, t0 = counters(s), g.disk_stat(hdd), g.cpu_stat(), time.monotonic()
    with Idle(hdd) as idle:
        r = g.fio(s.dev, "write", g.WRITE_SET, g.WRITE_FIO + [f"--ramp_time={g.RAMP_S}"],
                  secs=SECS)
    secs = time.monotonic() - t0
    if trace:
        trace_stop(ROUND_NO[0])
    out = {"iops": round(r["write"]["iops"], 1),
           "lat_mean_ms": round(r["write"]["lat_mean_us"] / 1000, 1),
           "lat_p99_ms": round(r["write"]["lat_p99_us"] / 1000, 1),
           "hdd": g.disk_rates(d0, g.disk_stat(hdd), secs),
           "hdd_idle_share": idle.share(), "hdd_inflight_mean": idle.mean(),
           "guest_cpu_busy": g.cpu_busy(cpu0, g.cpu_stat())}
    c1 = counters(s)
    if c1:
        out["per_s"] = {k: round((c1[k] - c0[k]) / secs, 1) for k in c1}
    g.log(f"{s.label}: {json.dumps(out)}")
    return out


def main():
    devs = g.probe_devices()
    results = {}
    for s in (g.RawHdd(devs), g.Ssdcache(devs, "writethrough")):
        s.create()
        s.random_mode()
        results[s.name] = [one_round(s, devs["hdd"]) for _ in range(ROUNDS)]
        s.destroy()
    with open(f"{OUT}/probe.json", "w") as f:
        json.dump(results, f, indent=1)
    g.remove_devices(devs)


if __name__ == "__main__":
    main()
