#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Guest instructions per I/O by function, from a bench/tbprof.sh run.

  bench/tbreport.py DIR LABEL [LABEL...]       functions side by side
  bench/tbreport.py --all N DIR LABEL [...]    the N largest of every function
  bench/tbreport.py --blocks KO FUNC DIR LABEL  FUNC's blocks, with source lines
  bench/tbreport.py --execs [--all N] DIR LABEL [...]
      the same tables in translation blocks run instead of instructions:
      under TCG each block run is a jump the emulator takes, and those
      that cannot be chained (returns, indirect calls) a lookup too

LABELs are windows of DIR/windows.json ("v2-wt-hit-0", "linear-write-0").
Without --all, only the module's functions, device-mapper's, the locks'
and the clocks' are listed, and the sums: the module, and everything
(fio, the kernel, the module) per I/O. A function's figure is every
block that starts in it; the last column is the last label's minus the
first's.
"""
import bisect
import json
import os
import subprocess
import sys

MODULE = "[dm_ssdcache]"


def load_windows(d):
    with open(f"{d}/windows.json") as f:
        return [tuple(w) for w in json.load(f)]


def load_syms(d, label):
    """Sorted (address, name) of the text symbols of the build LABEL ran."""
    path = f"{d}/kallsyms-{label.split('-')[0]}"
    if not os.path.exists(path):
        path = f"{d}/kallsyms-linear"
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in "tTwW":
                syms.append((int(p[0], 16), p[2] + (f" {p[3]}" if len(p) > 3 else "")))
    syms.sort()
    return syms


# --execs: count the blocks run, not their instructions.
EXECS = False


def window(d, label):
    """{function: instructions} of window LABEL (blocks run with --execs),
    and its I/Os."""
    wins = load_windows(d)
    idx = [w[0] for w in wins].index(label)
    syms = load_syms(d, label)
    addrs = [a for a, _ in syms]
    counts = {}
    with open(f"{d}/snap.{idx}") as f:
        for line in f:
            pc, insns, execs = line.split()
            pc = int(pc, 16)
            if pc < 1 << 63:
                name = "[user]"
            else:
                i = bisect.bisect_right(addrs, pc) - 1
                name = syms[i][1] if i >= 0 else "[unknown]"
            n = int(execs) if EXECS else int(insns) * int(execs)
            counts[name] = counts.get(name, 0) + n
    return counts, wins[idx][1]


def listed(name):
    return (MODULE in name or "[dm_mod]" in name or "[dm_writecache]" in name or
            "spin_lock" in name or "mutex" in name or
            "spin_unlock" in name or "clock" in name)


def table(d, labels, top=None):
    wins = [window(d, lab) for lab in labels]
    per = [{k: v / ios for k, v in c.items()} for c, ios in wins]
    names = set().union(*per)
    if top is None:
        names = {k for k in names if listed(k) and max(p.get(k, 0) for p in per) >= 0.5}
    rows = sorted(names, key=lambda k: -max(p.get(k, 0) for p in per))
    if top is not None:
        rows = rows[:top]
    print(" ".join(f"{lab:>16.16s}" for lab in labels), "  change  function")
    for k in rows:
        v = [p.get(k, 0) for p in per]
        print(" ".join(f"{x:16.1f}" for x in v), f"{v[-1] - v[0]:+8.1f} ", k)
    for what, pick in (("module", lambda k: MODULE in k), ("all", lambda k: True)):
        v = [sum(x for k, x in p.items() if pick(k)) for p in per]
        print(" ".join(f"{x:16.1f}" for x in v), f"{v[-1] - v[0]:+8.1f} ", f"= {what}")
    print(" ".join(f"{ios:16d}" for _, ios in wins), "          I/Os")


def blocks(ko, func, d, label):
    """FUNC's blocks in window LABEL, each with its source line."""
    syms = load_syms(d, label)
    start = next(a for a, n in syms if n == f"{func} {MODULE}")
    nm = subprocess.run(["nm", ko], capture_output=True, text=True, check=True).stdout
    off = next(int(p[0], 16) for p in (line.split() for line in nm.splitlines())
               if len(p) == 3 and p[2] == func)
    end = min(a for a, _ in syms if a > start)
    idx = [w[0] for w in load_windows(d)].index(label)
    ios = load_windows(d)[idx][1]
    rows = []
    with open(f"{d}/snap.{idx}") as f:
        for line in f:
            pc, insns, execs = (int(x, 16) if i == 0 else int(x)
                                for i, x in enumerate(line.split()))
            if start <= pc < end:
                rows.append((pc - start + off, insns, execs))
    rows.sort()
    src = subprocess.run(["addr2line", "-e", ko] + [hex(r[0]) for r in rows],
                         capture_output=True, text=True, check=True).stdout.split()
    for (o, insns, execs), s in zip(rows, src):
        print(f"{o:#8x} {insns:4d} insns {execs / ios:6.2f}/IO {insns * execs / ios:7.1f}/IO"
              f"  {s.rsplit('/', 1)[-1]}")


def main(argv):
    global EXECS
    if len(argv) >= 2 and argv[1] == "--execs":
        EXECS = True
        argv = argv[:1] + argv[2:]
    if len(argv) >= 5 and argv[1] == "--blocks":
        blocks(argv[2], argv[3], argv[4], argv[5])
    elif len(argv) >= 4 and argv[1] == "--all":
        table(argv[3], argv[4:], top=int(argv[2]))
    elif len(argv) >= 3:
        table(argv[1], argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
