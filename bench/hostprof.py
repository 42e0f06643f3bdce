#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Where the host's CPU goes while a guest runs fio rounds: the QEMU
process under the host's perf (bench/hostprof.sh), its samples cut into
the rounds that the guest's log names, per I/O.

  bench/hostprof.py stamp LOG STAMPS
      copies each new line of LOG (a guest's output.log) to STAMPS,
      prefixed with the host's CLOCK_MONOTONIC in seconds (perf record
      -k mono stamps its samples with the same clock), until killed.
  bench/hostprof.py report DIR SECS [LABEL...]
      reads DIR/host-stamps.txt and DIR/host-perf.txt (perf script -F
      tid,time,ip,sym,dso): a round is a "LABEL: N IOPS" line of the
      log, its window the SECS seconds of fio before that line (1.5 s
      off the start, 1 s off the end). For each round: the QEMU main
      thread's and the other threads' (the vCPU's) share of a host CPU,
      and host microseconds per I/O by thread and by code (JIT: the
      guest's translated code; qemu; kernel; the rest by library). With
      LABELs (prefixes of round names, as linear-hit), the top symbols
      of each, summed over its rounds, side by side.

Under TCG one guest instruction is not one unit of host time: this is
what a round cost the host, beside -icount's guest instructions.
"""
import collections
import os
import re
import sys
import time

ROUND = re.compile(r"(\S+): (\d+) IOPS")
SAMPLE = re.compile(r"^\s*(\d+)\s+(\d+\.\d+):\s+\S+\s+(.*?)\s+\((.*)\)\s*$")
RATE = 499          # perf record -F in bench/hostprof.sh


def stamp(log, stamps):
    while not os.path.exists(log):
        time.sleep(0.1)
    buf = ""
    with open(log) as f, open(stamps, "a", buffering=1) as out:
        while True:
            chunk = f.read()
            if not chunk:
                time.sleep(0.05)
                continue
            buf += chunk
            *lines, buf = buf.split("\n")
            for line in lines:
                out.write(f"{time.monotonic():.3f} {line}\n")


def rounds_of(stamps, secs):
    """[(label, start, end, iops)] of the "LABEL: N IOPS" lines."""
    out = []
    for line in stamps:
        t, _, rest = line.partition(" ")
        m = ROUND.search(rest)
        if m:
            end = float(t)
            out.append((m.group(1), end - secs + 1.5, end - 1.0, int(m.group(2))))
    return out


def code_of(dso):
    if dso.startswith("/tmp/perf-") and dso.endswith(".map"):
        return "JIT"
    if "kallsyms" in dso:
        return "kernel"
    if "qemu-system" in dso:
        return "qemu"
    return os.path.basename(dso).split(".so")[0]


def samples_by_round(rounds, samples, pid):
    """{label: Counter((thread, code, symbol): samples)} of the samples in
    each round's window; thread is "main" (the process's own tid) or
    "other"."""
    by = {r[0]: collections.Counter() for r in rounds}
    for line in samples:
        m = SAMPLE.match(line)
        if not m:
            continue
        tid, t, sym, dso = m.group(1), float(m.group(2)), m.group(3), m.group(4)
        code = code_of(dso)
        for label, a, b, _ in rounds:
            if a <= t <= b:
                thread = "main" if tid == pid else "other"
                by[label][(thread, code, "JIT" if code == "JIT" else sym)] += 1
                break
    return by


def ios_of(r):
    """The I/Os of round R's window."""
    _, a, b, iops = r
    return iops * (b - a)


def host_us(n, ios):
    """N samples as host microseconds per I/O, over IOS I/Os."""
    return n / RATE / ios * 1e6


def us_per_io(n, r):
    """N samples of round R as host microseconds per I/O."""
    return host_us(n, ios_of(r))


def round_table(rounds, by):
    lines = []
    for r in rounds:
        label, a, b, iops = r
        c = by[label]
        share = collections.Counter()
        code = collections.Counter()
        for (thread, kind, _), n in c.items():
            share[thread] += n
            code[(thread, kind)] += n
        busy = " ".join(f"{t} {share[t] / RATE / (b - a):4.0%}" for t in ("main", "other"))
        cells = " ".join(f"{t}/{k} {us_per_io(n, r):.1f}" for (t, k), n in sorted(code.items())
                         if us_per_io(n, r) >= 0.1)
        lines.append(f"{label}: {iops} IOPS, {1e6 / iops:.1f} us/IO wall, host CPU {busy}; "
                     f"host us/IO {us_per_io(sum(c.values()), r):.1f}: {cells}")
    return lines


def symbol_table(rounds, by, prefixes, top=30):
    """The top symbols of the rounds named by each prefix, side by side,
    in host microseconds per I/O over those rounds."""
    sums = {p: collections.Counter() for p in prefixes}
    ios = collections.Counter()
    for r in rounds:
        for p in prefixes:
            if r[0].startswith(p + "-"):
                sums[p].update(by[r[0]])
                ios[p] += ios_of(r)
    per = {p: {k: host_us(n, ios[p]) for k, n in sums[p].items()} for p in prefixes if ios[p]}
    keys = collections.Counter()
    for p in per:
        for k, v in per[p].items():
            keys[k] += v
    lines = ["host us per I/O".ljust(56) + "".join(f"{p:>14s}" for p in per)]
    for k, _ in keys.most_common(top):
        name = f"{k[0]} {k[1]} {k[2]}"[:55]
        lines.append(name.ljust(56) + "".join(f"{per[p].get(k, 0):14.2f}" for p in per))
    lines.append("total".ljust(56) + "".join(f"{sum(per[p].values()):14.2f}" for p in per))
    return lines


def report(d, secs, prefixes):
    with open(f"{d}/host-stamps.txt") as f:
        rounds = rounds_of(f, secs)
    with open(f"{d}/host-pid") as f:
        pid = f.read().strip()
    with open(f"{d}/host-perf.txt") as f:
        by = samples_by_round(rounds, f, pid)
    if not rounds or not any(by.values()):
        sys.exit(f"hostprof: no samples in any round of {d} "
                 f"({len(rounds)} rounds in host-stamps.txt)")
    lines = round_table(rounds, by)
    if prefixes:
        lines += [""] + symbol_table(rounds, by, prefixes)
    print("\n".join(lines))


def main(argv):
    if len(argv) == 4 and argv[1] == "stamp":
        stamp(argv[2], argv[3])
    elif len(argv) >= 4 and argv[1] == "report":
        report(argv[2], float(argv[3]), argv[4:])
    else:
        sys.exit("usage: bench/hostprof.py stamp LOG STAMPS | report DIR SECS [LABEL...]")


if __name__ == "__main__":
    main(sys.argv)
