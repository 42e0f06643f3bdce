#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read and replay a dm-log-writes log (the format of
drivers/md/dm-log-writes.c, version 1).

    logwrites.py list LOG                 every entry, one a line
    logwrites.py points LOG               entry numbers of FLUSH/FUA entries
    logwrites.py replay LOG DEV --to N    apply entries [--from M, default 0]
                                          .. N inclusive to DEV
    logwrites.py replay LOG DEV --to-mark NAME

Entries are numbered from 0 in log order. Replaying entry N writes its
data (a discard writes zeros) at its sector of DEV. Replaying a prefix of
the log onto a copy of the device's initial contents gives a state the
device could have had after a crash at that point.
"""
import argparse
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


def find_mark(entries, name):
    for e in entries:
        if e.flags & MARK and e.mark == name:
            return e.index
    raise LogError(f"no mark '{name}' in the log")


def replay(f, sectorsize, entries, dev, first, last):
    fd = os.open(dev, os.O_WRONLY)
    try:
        for e in entries[first:last + 1]:
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
