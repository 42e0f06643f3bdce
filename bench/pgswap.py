#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Workload 5 (pgbench, or sysbench) on two systems set up side by side,
their rounds interleaved: each system on disks of its own, the golden
image copied and prewarmed once; then PAIRS times, each system in turn
(the order reversed every pair) is resumed, mounted, the database
server started, one warm-up run of BENCH_SECS and one measured run of
twice that, then the server stopped, the filesystem unmounted and the
system suspended (bcache, which cannot be, has its writeback stopped),
so that none of its background work (write-back, commits) runs while
the other is measured (SETTLE=1: its writeback ended first). The two
measured runs of a pair are about a minute apart, so a machine whose
speed drifts over minutes (make bench measures each system minutes
after the other; bench/pgabba.py's blocks last five to ten) moves both
alike: each pair gives one ratio.

Inside the guest, from the top of the tree:
  scripts/vm-run -k KVER -m 8G -o DIR -- env PAIR="ssdcache_wb dm_cache" PAIRS=8 \\
      /usr/bin/python3 bench/pgswap.py DIR
DB=sysbench runs MariaDB with sysbench's OLTP read/write instead (as
make bench's BENCH_WORKLOADS=sysbench). Writes DIR/pgswap.json: every
measured run, each pair's ratio (the first system's TPS over the
second's), their median and geometric mean, and
how many pairs the first system won; each run of a cache also has
dirty_share, the share of its blocks dirty at the warm-up's start, the
measured run's start and its end (a run that crossed a high watermark
shows it falling), and each run of ssdcache its own counters per
transaction (counters_per_txn: journal commits and blocks, flushes,
write hits and misses, ...). A system named twice, and two
that share device-mapper names (the ssdcache ones), are refused before
anything is set up.

Under the tbprof plugin, guest instructions per transaction by function:
  bench/tbprof.sh -k KVER -o DIR -m 8G -- env TBMARK=1 PAIR="ssdcache_wb dm_writecache" \
      PAIRS=1 /usr/bin/python3 bench/pgswap.py DIR
  bench/tbreport.py --all 40 DIR ssdcache_wb-0 dm_writecache-0
"""
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])

OUT = sys.argv[1]
PAIR = os.environ.get("PAIR", "ssdcache_wb dm_cache").split()
PAIRS = int(os.environ.get("PAIRS", "8"))
# SETTLE=1: after each turn, before it is suspended, the system's
# writeback is ended as make bench ends the warm-up's (settle_writeback():
# ssdcache writes every dirty block back, dm-cache waits until it has,
# dm-writecache until it is under its high watermark), so that no turn
# inherits the write-back debt of the turns before it.
SETTLE = os.environ.get("SETTLE", "0") == "1"
# TBMARK=1, under bench/tbprof.sh: each measured run between two calls of
# the plugin's marker, labelled "<system>-<pair>" with its transactions
# (DIR/windows.json, DIR/kallsyms-<system>), so that bench/tbreport.py
# gives guest instructions per transaction by function, on the timed
# disk models: with the work a cache does per second (commits,
# writeback, timers) at the rate pgbench really runs.
TBMARK = os.environ.get("TBMARK", "0") == "1"
# DB: the database workload, one of make bench's (guest.DATABASES).
DB = os.environ.get("DB", "pgbench")


def systems_of(devs):
    """Every system a pair may name on disks DEVS: make bench's, and
    those it runs only when named (guest.extra_systems())."""
    return g.all_systems(devs) + g.extra_systems(devs)


def check_pair(pair):
    """None if PAIR names two systems that can be set up side by side (each
    can be paused between its turns: see suspend()), else why not."""
    known = {s.name: s for s in systems_of({})}
    if len(pair) != 2:
        return f"PAIR: two systems, not {len(pair)}"
    unknown = [n for n in pair if n not in known]
    if unknown:
        return f"PAIR: no such system: {' '.join(unknown)} (known: {' '.join(known)})"
    if pair[0] == pair[1]:
        return f"PAIR: two different systems, not {pair[0]} twice"
    a, b = (known[n] for n in pair)
    if set(getattr(a, "dm_names", ())) & set(getattr(b, "dm_names", ())):
        return f"PAIR: {a.name} and {b.name} use the same device-mapper names"
    return None


def devices(name, tag):
    """System NAME's disks, named bench_<key><tag>: the HDD model and the
    cache's SSD model, or the raw SSD model for raw_ssd and linear_ssd."""
    d = {"hdd": g.nullb_create(f"bench_hdd{tag}", g.ORIGIN_MB, g.disk_model("hdd"))}
    if name in ("raw_ssd", "linear_ssd"):
        d["ssdbig"] = g.nullb_create(f"bench_ssdbig{tag}", g.ORIGIN_MB, g.disk_model("ssd"))
    else:
        d["ssd"] = g.nullb_create(f"bench_ssdpg{tag}", g.PG_CACHE_MB, g.disk_model("ssd"))
    return d


def suspend(s, on, check=True):
    """Stops system S's background work between its turns: a device-mapper
    system is suspended; bcache, which cannot be, has its writeback
    stopped (writeback_running 0), what it would do unmounted besides."""
    if isinstance(s, g.Bcache):
        if s.dev is not None and os.path.exists(s.sysfs("writeback_running")):
            try:
                g.put(s.sysfs("writeback_running"), 0 if on else 1)
            except OSError:
                if check:
                    raise
        return
    if isinstance(s, g.DmSystem) and os.path.exists(f"/dev/mapper/{s.dm_names[0]}"):
        g.run(["dmsetup", "suspend" if on else "resume", s.dm_names[0]], check=check)


def prepare(s, golden):
    """The system created, the golden image copied onto it, its files
    prewarmed (as w_database()), left suspended in its random mode."""
    s.create()
    g.load_golden(s, golden)
    g.run(["mount", s.dev, g.MNT])
    try:
        g.prewarm(s, g.DATABASES[DB].datadir)
    finally:
        g.run(["umount", g.MNT], check=False)
    suspend(s, True)


def dirty_share(s):
    """The share of system S's cache blocks that are dirty, or None (no
    cache, or it does not tell)."""
    n = s.dirty() if s.cache_blocks else None
    return None if n is None else round(n / s.cache_blocks, 4)


def turn(s, pair):
    """One turn of system S in pair PAIR: a warm-up run and a measured one."""
    suspend(s, False)
    g.run(["mount", s.dev, g.MNT])
    try:
        db = g.DATABASES[DB]
        db.start()
        try:
            dirty = [dirty_share(s)]
            db.run(g.SECS)
            before = g.read_settled(s)
            dirty.append(dirty_share(s))
            if TBMARK:
                g.tb_mark(f"before-{s.name}-{pair}", 0)
            r = g.measured_txn(s, lambda: db.run(2 * g.SECS))
            if TBMARK:
                g.tb_mark(f"{s.name}-{pair}", r["transactions"])
            r["hit_ratio"] = g.hit_ratio(before, g.read_settled(s))
            dirty.append(dirty_share(s))
            if None not in dirty:
                r["dirty_share"] = dirty
        finally:
            db.stop()
    finally:
        g.run(["umount", g.MNT], check=False)
    if SETTLE:
        t = time.monotonic()
        r["settled"] = s.settle_writeback()
        r["settle_secs"] = round(time.monotonic() - t, 1)
    suspend(s, True)
    return r


def summary(runs, a, b):
    """Each pair's ratio of A's TPS to B's, and what they add up to: their
    median, geometric mean and its 95% interval (guest.ratio_summary())."""
    ratios, tps_pairs = [], []
    for i in sorted({r["pair"] for r in runs}):
        tps = {r["system"]: r["tps"] for r in runs if r["pair"] == i}
        if a in tps and b in tps and tps[b] > 0:
            ratios.append(round(tps[a] / tps[b], 3))
            tps_pairs.append((tps[b], tps[a]))
    out = {"ratios": ratios}
    if ratios:
        out["median_ratio"] = round(statistics.median(ratios), 3)
        out["geomean_ratio"] = round(math.exp(statistics.fmean(math.log(x) for x in ratios)), 3)
        out["first_won"] = sum(x > 1 for x in ratios)
        ci = g.ratio_summary(tps_pairs).get("ci95")
        if ci:
            out["ci95"] = [round(x, 3) for x in ci]
    for n in (a, b):
        tps = [r["tps"] for r in runs if r["system"] == n]
        if tps:
            out[f"{n}_median_tps"] = round(statistics.median(tps), 1)
    return out


def main():
    why = check_pair(PAIR)
    if DB not in g.DATABASES:
        why = f"DB: {DB}? ({' or '.join(g.DATABASES)})"
    if why:
        raise SystemExit(why)
    a, b = PAIR
    g.load_modules()
    g.cgroup_setup()
    golden, used = g.DATABASES[DB].golden("ext4")
    systems = {}
    for tag, name in (("a", a), ("b", b)):
        systems[name] = next(s for s in systems_of(devices(name, tag)) if s.name == name)
    out = {"kernel": os.uname().release, "db": DB, "pair": PAIR, "pairs": PAIRS, "secs": g.SECS,
           "settle": SETTLE, "db_mb": used, "runs": []}
    try:
        for s in systems.values():
            prepare(s, golden)
        for i in range(PAIRS):
            for name in (PAIR if i % 2 == 0 else PAIR[::-1]):
                r = turn(systems[name], i)
                g.log(f"pair {i} {name}: {r['tps']:.1f} TPS")
                out["runs"].append({"pair": i, "system": name, **r})
                out.update(summary(out["runs"], a, b))
                with open(f"{OUT}/pgswap.json", "w") as f:
                    json.dump(out, f, indent=1)
    finally:
        for s in systems.values():
            suspend(s, False, check=False)
            if TBMARK:
                g.tb_symbols(OUT, s.name)
            s.destroy()
        if TBMARK:
            g.tb_save(OUT)
    g.log(f"{a} / {b}: ratios {out.get('ratios')}, median {out.get('median_ratio')}, "
          f"geometric mean {out.get('geomean_ratio')}, {a} won {out.get('first_won')} "
          f"of {len(out.get('ratios', []))}")
    for tag in "ab":
        for key in ("hdd", "ssdpg", "ssdbig"):
            g.nullb_remove(f"bench_{key}{tag}")
    g.nullb_remove(os.path.basename(golden))


if __name__ == "__main__":
    main()
