#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read and replay a dm-log-writes log (the format of
drivers/md/dm-log-writes.c, version 1).

    logwrites.py list LOG                 every entry, one a line
    logwrites.py points LOG               entry numbers of FLUSH/FUA entries
    logwrites.py replay LOG DEV --to N    apply entries [--from M, default 0]
                                          .. N inclusive to DEV
    logwrites.py replay LOG DEV --to-mark NAME
    logwrites.py unflushed LOG N          entry numbers of the writes that
                                          FLUSH entry N made durable

Entries are numbered from 0 in log order. Replaying entry N writes its
data (a discard writes zeros) at its sector of DEV. Replaying a prefix of
the log onto a copy of the device's initial contents gives a state the
device could have had after a crash at that point.

dm-log-writes logs a FUA write when it completes, and a plain write (or
discard) only when a flush that was issued after it completes: just
before that FLUSH entry. Until then such a write may or may not be on
the media, so a crash just before a FLUSH entry can leave any subset of
its unflushed writes (partial_subsets picks some). A write that had not
completed may also be on the media in part, sector by sector
(torn_parts picks some such parts).
"""
import argparse
import itertools
import os
import struct
import sys

MAGIC = 0x6A736677736872
VERSION = 1
FLUSH, FUA, DISCARD, MARK, METADATA = 1, 2, 4, 8, 16
SUPER = struct.Struct("<QQQI")
ENTRY = struct.Struct("<QQQQ")


class LogError(Exception):
    pass


class Entry:
    def __init__(self, index, sector, nr_sectors, flags, data_len, mark, data_off):
        self.index = index
        self.sector = sector          # in log sectors (sectorsize bytes)
        self.nr_sectors = nr_sectors
        self.flags = flags
        self.data_len = data_len
        self.mark = mark
        self.data_off = data_off      # byte offset of the data in the log

    def describe(self):
        names = [n for n, f in (("FLUSH", FLUSH), ("FUA", FUA), ("DISCARD", DISCARD),
                                ("MARK", MARK), ("META", METADATA)) if self.flags & f]
        kind = "|".join(names) or "WRITE"
        extra = f" mark={self.mark}" if self.flags & MARK else ""
        return f"{self.index} {kind} sector={self.sector} nr={self.nr_sectors}{extra}"


def read_log(f):
    """Returns (sectorsize, [Entry]) for the log open in file f."""
    f.seek(0)
    raw = f.read(SUPER.size)
    if len(raw) < SUPER.size:
        raise LogError("log too short for its superblock")
    magic, version, nr_entries, sectorsize = SUPER.unpack(raw)
    if magic != MAGIC:
        raise LogError(f"bad magic {magic:#x}: not a dm-log-writes log")
    if version != VERSION:
        raise LogError(f"unknown log version {version}")
    if sectorsize < 512 or sectorsize & (sectorsize - 1):
        raise LogError(f"bad sector size {sectorsize}")
    entries = []
    pos = sectorsize
    for i in range(nr_entries):
        f.seek(pos)
        raw = f.read(sectorsize)
        if len(raw) < sectorsize:
            raise LogError(f"entry {i} is past the end of the log")
        sector, nr, flags, data_len = ENTRY.unpack_from(raw)
        mark = ""
        if flags & MARK:
            mark = raw[ENTRY.size:ENTRY.size + data_len].decode(errors="replace")
        pos += sectorsize
        entries.append(Entry(i, sector, nr, flags, data_len, mark, pos))
        if not flags & DISCARD:
            pos += nr * sectorsize
    return sectorsize, entries


def crash_points(entries):
    return [e.index for e in entries if e.flags & (FLUSH | FUA)]


def unflushed(entries, p):
    """The plain writes and discards logged just before FLUSH entry P:
    those that completed before that flush was issued, durable only once
    it completes."""
    if not 0 <= p < len(entries) or not entries[p].flags & FLUSH:
        raise LogError(f"entry {p} is not a FLUSH entry")
    out = []
    for e in reversed(entries[:p]):
        if e.flags & MARK:
            continue
        if e.flags & (FLUSH | FUA):
            break
        if e.nr_sectors:
            out.append(e)
    return out[::-1]


def partial_subsets(writes, n, rng):
    """Up to N distinct subsets of WRITES (each in log order), none empty
    or whole (those are crash points already): the last write alone
    (what completed last, often a commit, without what came before it),
    all but the last, then random ones, each write kept with probability
    1/2. None for fewer than two writes; never more than there are."""
    count = len(writes)
    if count < 2:
        return []
    room = min(n, 2 ** count - 2)
    out = [writes[-1:], writes[:-1]][:room]
    seen = {tuple(e.index for e in k) for k in out}
    while len(out) < room:
        keep = [e for e in writes if rng.random() < 0.5]
        key = tuple(e.index for e in keep)
        if 0 < len(keep) < count and key not in seen:
            seen.add(key)
            out.append(keep)
    return out


def pieces(e, kept, sectorsize):
    """The runs of write E's sectors that KEPT (a bool per sector) keeps,
    each as an entry of its own."""
    out, first = [], 0
    for keep, run in itertools.groupby(kept):
        count = len(list(run))
        if keep:
            out.append(Entry(e.index, e.sector + first, count, e.flags, 0, "",
                             e.data_off + first * sectorsize))
        first += count
    return out


def torn_parts(e, sectorsize, n, rng):
    """Up to N distinct torn versions of write E, a power cut during it:
    each a list of pieces of E (pieces()), with neither none nor all of
    its sectors. Its first sector alone (a block's header without most
    of what it heads), all but its first sector, its first half (a write
    cut off in order), then random sets of sectors, each kept with
    probability 1/2. None for a write of one sector or a discard; never
    more than there are."""
    count = e.nr_sectors
    if count < 2 or e.flags & (DISCARD | MARK):
        return []
    room = min(n, 2 ** min(count, 20) - 2)
    kept = []

    def keep(k):
        if len(kept) < room and any(k) and not all(k) and k not in kept:
            kept.append(k)

    for k in (tuple(s == 0 for s in range(count)), tuple(s > 0 for s in range(count)),
              tuple(s < count // 2 for s in range(count))):
        keep(k)
    while len(kept) < room:
        keep(tuple(rng.random() < 0.5 for _ in range(count)))
    return [pieces(e, k, sectorsize) for k in kept]


def find_mark(entries, name):
    for e in entries:
        if e.flags & MARK and e.mark == name:
            return e.index
    raise LogError(f"no mark '{name}' in the log")


def replay(f, sectorsize, entries, dev, first, last):
    apply(f, sectorsize, entries[first:last + 1], dev)


def apply(f, sectorsize, chosen, dev):
    """Writes the entries CHOSEN (a list, in log order) to DEV."""
    fd = os.open(dev, os.O_WRONLY)
    try:
        for e in chosen:
            if e.flags & MARK or e.nr_sectors == 0:
                continue
            length = e.nr_sectors * sectorsize
            if e.flags & DISCARD:
                data = bytes(length)
            else:
                f.seek(e.data_off)
                data = f.read(length)
                if len(data) != length:
                    raise LogError(f"entry {e.index}: data past the end of the log")
            os.pwrite(fd, data, e.sector * sectorsize)
        os.fsync(fd)
    finally:
        os.close(fd)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("list", "points"):
        sub.add_parser(name).add_argument("log")
    u = sub.add_parser("unflushed")
    u.add_argument("log")
    u.add_argument("entry", type=int)
    r = sub.add_parser("replay")
    r.add_argument("log")
    r.add_argument("dev")
    r.add_argument("--from", dest="first", type=int, default=0)
    g = r.add_mutually_exclusive_group(required=True)
    g.add_argument("--to", type=int)
    g.add_argument("--to-mark")
    a = p.parse_args(argv)
    try:
        with open(a.log, "rb") as f:
            sectorsize, entries = read_log(f)
            if a.cmd == "list":
                for e in entries:
                    print(e.describe())
            elif a.cmd == "points":
                print(" ".join(str(i) for i in crash_points(entries)))
            elif a.cmd == "unflushed":
                print(" ".join(str(e.index) for e in unflushed(entries, a.entry)))
            else:
                last = find_mark(entries, a.to_mark) if a.to_mark else a.to
                if not 0 <= a.first <= last < len(entries):
                    raise LogError(f"entries {a.first}..{last} not in 0..{len(entries) - 1}")
                replay(f, sectorsize, entries, a.dev, a.first, last)
    except (LogError, OSError) as e:
        print(f"logwrites: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
