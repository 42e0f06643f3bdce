#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Probe, not a test: where write-back's requests come from under pgbench.

One system (SYS, default ssdcache_wb) set up as bench/pgswap.py does
(the golden image copied, prewarmed), one turn to warm it, then a second
turn, its measured run with three kprobes on, through tracefs:

  cut     dm_accept_partial_bio(): dm cuts a bio the target took only the
          start of, and maps the rest again (one more request below);
          with its stack, so the caller in the module is named
  fresh   ssdc_take_free_for(): a write (or fill) takes fresh slots, the
          first of a row, for an origin block
  jwrite  ssdc_journal_write(): a commit with records writes the journal

(bench/pgprobe.py's PROBE_SPLITS=1 counts the pieces of make bench's
pgbench rounds from the block layer's tracepoints; this one sees the
caller, and the journal.) Writes DIR/cutprobe.json: the turns (as pgswap records them) and
summary() of the trace: cuts by direction and calling function, write
cuts that end where a run ends (its blocks share a set, the next run's
lie in another) and the rest, the mean size of a cut write; journal
writes, fresh rows taken, and the journal writes each of whose rows
followed a block that had taken fresh slots before (a stream's next
block, as a log's). Inside the guest, from the top of the tree:

  scripts/vm-run -k KVER -c 1 -m 8G -o DIR -- /usr/bin/python3 bench/cutprobe.py DIR
"""
import collections
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest as g  # noqa: E402  (reads its results directory from argv[1])
import pgswap as p  # noqa: E402

TRACING = "/sys/kernel/tracing"
# struct bio on x86-64 (6.1 and 6.12): bi_opf at 16, bi_iter.bi_sector at
# 32, bi_iter.bi_size at 40.
PROBES = ("p:cut dm_accept_partial_bio n=%si:u32 sector=+32(%di):u64 size=+40(%di):u32 "
          "opf=+16(%di):u32\n"
          "p:fresh ssdc_take_free_for oblock=%dx:u64 want=%cx:u32\n"
          "p:jwrite ssdc_journal_write blocks=%si:u32 nrec=%dx:u32\n")
EVENT = re.compile(r"\s(\d+\.\d+): (cut|fresh|jwrite): \([^)]*\)((?: \w+=\d+)*)")
FRAME = re.compile(r"\s*=> (\S+)")
SKIP = ("kprobe", "ftrace", "dm_accept_partial_bio", "0x")


def parse(lines):
    """The events of a tracefs trace: (kind, {field: int}, caller), the
    caller (a cut's first frame outside the probe and dm's cut) or None."""
    events = []
    for line in lines:
        m = EVENT.search(line)
        if m:
            fields = dict((k, int(v)) for k, v in
                          (f.split("=") for f in m.group(3).split()))
            events.append([m.group(2), fields, None])
            continue
        m = FRAME.match(line)
        if m and events and events[-1][0] == "cut" and events[-1][2] is None \
                and not m.group(1).startswith(SKIP):
            events[-1][2] = m.group(1).split("+")[0]
    return [tuple(e) for e in events]


def is_write(f):
    """Whether a cut's bio (its fields) is a write: REQ_OP_WRITE is 1."""
    return f["opf"] & 0xff == 1


def summary(events, block_sectors=8, run_blocks=8):
    """What parse()'s EVENTS add up to (see the module's docstring)."""
    cuts = [(f, c) for k, f, c in events if k == "cut"]
    writes = [f for f, _ in cuts if is_write(f)]
    run_sectors = block_sectors * run_blocks
    at_end = sum(1 for f in writes if (f["sector"] % run_sectors) + f["n"] == run_sectors)
    out = {"cuts": len(cuts),
           "cuts_by_caller": dict(collections.Counter(
               f"{'write' if is_write(f) else 'read'} {c}" for f, c in cuts)),
           "write_cuts": len(writes), "write_cuts_at_run_end": at_end,
           "write_cut_mean_kib": round(statistics.fmean(f["size"] for f in writes) / 1024, 1)
           if writes else None}
    seen, rows, fresh, jwrites, stream_only = set(), [], 0, 0, 0
    for kind, f, _ in events:
        if kind == "fresh":
            fresh += 1
            rows.append(f["oblock"] - 1 in seen)
            seen.update(range(f["oblock"], f["oblock"] + max(f["want"], 1)))
        elif kind == "jwrite":
            jwrites += 1
            stream_only += bool(rows) and all(rows)
            rows = []
    out.update(journal_writes=jwrites, fresh_rows=fresh, journal_writes_stream_only=stream_only)
    return out


def tracefs(path, text):
    g.put(f"{TRACING}/{path}", text)


def main():
    out_dir = sys.argv[1]
    name = os.environ.get("SYS", "ssdcache_wb")
    if not os.path.exists(f"{TRACING}/kprobe_events"):
        g.run(["mount", "-t", "tracefs", "nodev", TRACING])
    g.load_modules()
    g.cgroup_setup()
    golden, _ = g.DATABASES["pgbench"].golden("ext4")
    s = next(x for x in p.systems_of(p.devices(name, "a")) if x.name == name)
    out = {"kernel": os.uname().release, "system": name, "turns": []}
    try:
        p.prepare(s, golden)
        out["turns"].append(p.turn(s, 0))
        tracefs("kprobe_events", PROBES)
        tracefs("events/kprobes/cut/trigger", "stacktrace")
        tracefs("buffer_size_kb", "65536")
        tracefs("trace", "")
        # The probes on for the second turn's measured run alone: pgswap
        # marks its start and end for bench/tbprof.sh (TBMARK).
        p.TBMARK = True
        g.tb_mark = lambda label, txns: tracefs("events/kprobes/enable",
                                                "1" if label.startswith("before-") else "0")
        try:
            out["turns"].append(p.turn(s, 1))
        finally:
            tracefs("events/kprobes/enable", "0")
        with open(f"{TRACING}/trace") as f:
            out["trace"] = summary(parse(f), s.block_bytes // 512)
        txns = out["turns"][-1]["transactions"]
        out["trace"]["per_txn"] = {k: round(out["trace"][k] / txns, 3) for k in
                                   ("write_cuts", "write_cuts_at_run_end", "journal_writes")}
        g.log(f"{name}: {out['trace']}")
    finally:
        p.suspend(s, False, check=False)
        s.destroy()
        with open(f"{out_dir}/cutprobe.json", "w") as f:
            json.dump(out, f, indent=1)
    for key in ("hdd", "ssdpg"):
        g.nullb_remove(f"bench_{key}a")
    g.nullb_remove(os.path.basename(golden))


if __name__ == "__main__":
    main()
