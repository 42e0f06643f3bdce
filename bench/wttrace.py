#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Sums up a trace of bench/wtprobe.py (TRACE=1): per commit_fn() call its
duration; the HDD's idle gaps (from a request's completion, with none
left in flight, to the next one's issue), by the task that issued the
next request and whether a journal write started in the gap; and the
stages of each write through the cache: mapped (the bio queued on the
dm device) to its submission to the HDD, then to the HDD's completion,
then to the bio's end.

  bench/wttrace.py DIR/trace-<n>.txt [HDD_DEV [DM_DEV]]

The devices as major,minor (default 253,0 for the HDD, 254,0 for the
cache: the probe's null_blk HDD and first device-mapper device).
"""
import re
import statistics
import sys

LINE = re.compile(r"\s*([\d.]+) \|\s+(\d)\)\s+(\S+)\s+\|[^|]*\|(.*)$")
BIO = re.compile(r"block_(bio_queue|bio_complete|rq_complete): (\d+,\d+) W\S* (?:\(\) )?(\d+) \+")


def ms(x):
    return f"{x * 1000:.2f} ms"


def main():
    path = sys.argv[1]
    hdd = sys.argv[2] if len(sys.argv) > 2 else "253,0"
    dm = sys.argv[3] if len(sys.argv) > 3 else "254,0"
    commits, opened = [], {}
    gaps = {}
    inflight, last_done, journal = 0, None, False
    mapped, submitted, done, stages = {}, {}, {}, []
    first = last = None
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        t, cpu, task, rest = float(m.group(1)), m.group(2), m.group(3), m.group(4)
        body = rest.strip()
        first = first if first is not None else t
        last = t
        # A top-level call (two spaces in) opens or closes on its CPU.
        if rest.startswith("  ") and not rest.startswith("   "):
            if body.endswith("{"):
                opened[cpu] = (body.split()[0], t)
            elif body.startswith("}") and cpu in opened:
                name, t0 = opened.pop(cpu)
                if name == "commit_fn":
                    commits.append(t - t0)
        if "ssdc_journal_write" in rest:
            journal = True
        elif f"block_rq_issue: {hdd} " in rest:
            if inflight == 0 and last_done is not None:
                key = (task, journal)
                n, s = gaps.get(key, (0, 0.0))
                gaps[key] = (n + 1, s + t - last_done)
            inflight += 1
        if f"block_rq_complete: {hdd} " in rest:
            inflight = max(0, inflight - 1)
            last_done, journal = t, False
        b = BIO.search(rest)
        if b:
            ev, dev, sector = b.group(1), b.group(2), int(b.group(3))
            if dev == dm and ev == "bio_queue":
                mapped[sector] = t
            elif dev == hdd and ev == "bio_queue":
                submitted[sector] = t
            elif dev == hdd and ev == "rq_complete":
                done[sector] = t
            elif dev == dm and ev == "bio_complete" and sector in mapped \
                    and sector in submitted and sector in done:
                stages.append((submitted[sector] - mapped[sector],
                               done[sector] - submitted[sector], t - done[sector]))
    span = (last or 0) - (first or 0)
    if commits:
        c = sorted(commits)
        print(f"commits: {len(c)}, {len(c) / span:.1f}/s; duration median {ms(c[len(c) // 2])},"
              f" max {ms(c[-1])}")
    for (task, j), (n, s) in sorted(gaps.items(), key=lambda x: -x[1][1]):
        print(f"HDD idle before a request from {task}{' after a journal write' if j else ''}:"
              f" {n} gaps, mean {ms(s / n)}, {100 * s / span:.1f}% of {span:.1f} s")
    for i, name in enumerate(("mapped to HDD submission", "HDD submission to completion",
                              "HDD completion to the bio's end")):
        v = [x[i] for x in stages]
        if v:
            print(f"{name}: median {ms(statistics.median(v))}, mean {ms(statistics.mean(v))}")


if __name__ == "__main__":
    main()
