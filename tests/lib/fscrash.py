#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Crash consistency of a filesystem on a write-back cache.

    fscrash.py gen MNT STATE FILES SEED --marker NAME
        A database-like writer on the filesystem mounted at MNT: FILES
        times, a new file of 1..64 KiB (fsync of the file and of its
        directory) and a 4 KiB record appended to a log file (fdatasync).
        After each durable step, the message "mark dK" to NAME records
        the point in the dm-log-writes log, and STATE says what it made
        durable (written before the mark, line by line).

    fscrash.py sweep LOG STATE REPLAY COW OSECT CSECT MNT [--partial N] [--torn N]
                        [--meta-end SECTORS]
        For every FLUSH/FUA entry of LOG after the mark "formatted":
        replays the log up to it onto REPLAY, loads ssdcache on a snapshot
        of it (as crashcheck.py sweep does), mounts the ext4 filesystem
        (its journal is replayed), checks that every file and log record
        durable at the last mark before the entry reads back exactly,
        unmounts, and runs e2fsck -fn, which must find nothing. With
        --partial N, up to N states before each FLUSH entry keep only
        part of the writes it made durable, and with --torn N, up to N
        states tear each of the module's metadata writes (as
        crashcheck.py sweep --partial, --torn and --meta-end). Prints
        the numbers of crash points, partial states and torn writes
        checked.

Exit status 1 on the first violation, with what and where.
"""
import argparse
import os
import random
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crashcheck  # noqa: E402
import dmioctl  # noqa: E402
import logwrites  # noqa: E402

RECORD = 4096


def content(seed, k, size):
    return random.Random(seed * 1000003 + k).randbytes(size)


def record(seed, k):
    return content(seed, -1 - k, RECORD)


def fsync_path(path, flags=os.O_RDONLY):
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def gen(a):
    rnd = random.Random(a.seed)
    logpath = os.path.join(a.mnt, "wal")
    state = open(a.state, "w", buffering=1)
    state.write(f"seed {a.seed}\n")
    wal = os.open(logpath, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    fsync_path(a.mnt)
    for k in range(a.files):
        size = rnd.randint(1, 64) * 1024 - rnd.randint(0, 1000)
        name = os.path.join(a.mnt, f"f{k}")
        data = content(a.seed, k, size)
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
        fsync_path(a.mnt)
        os.write(wal, record(a.seed, k))
        os.fdatasync(wal)
        state.write(f"file f{k} {size} {zlib.crc32(data)}\nwal {k + 1}\n")
        dmioctl.message(a.marker, f"mark d{k}")
        state.write(f"mark d{k}\n")
    os.close(wal)
    state.close()
    return 0


def durable_at(state_path, mark):
    """(seed, files {name: (size, crc)}, wal records) durable at MARK."""
    seed, files, wal, pending = 0, {}, 0, ({}, 0)
    with open(state_path) as f:
        for line in f:
            w = line.split()
            if w[0] == "seed":
                seed = int(w[1])
            elif w[0] == "file":
                pending[0][w[1]] = (int(w[2]), int(w[3]))
            elif w[0] == "wal":
                pending = (pending[0], int(w[1]))
            elif w[0] == "mark":
                files.update(pending[0])
                wal = pending[1]
                pending = ({}, wal)
                if w[1] == mark:
                    break
    return seed, files, wal


def verify(mnt, seed, files, wal):
    for name, (size, crc) in files.items():
        try:
            with open(os.path.join(mnt, name), "rb") as f:
                data = f.read()
        except OSError as e:
            return f"{name}: {e}"
        if len(data) != size or zlib.crc32(data) != crc:
            return f"{name}: {len(data)} bytes, crc {zlib.crc32(data):#x}; fsynced {size}, {crc:#x}"
    try:
        with open(os.path.join(mnt, "wal"), "rb") as f:
            log = f.read()
    except OSError as e:
        return f"wal: {e}" if wal else None
    if len(log) < wal * RECORD:
        return f"wal: {len(log)} bytes, {wal} records were fdatasynced"
    for k in range(wal):
        if log[k * RECORD:(k + 1) * RECORD] != record(seed, k):
            return f"wal: record {k} differs"
    return None


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def check_point(a, mark, dev):
    seed, files, wal = durable_at(a.state, mark) if mark else (0, {}, 0)
    r = run("mount", "-t", "ext4", dev, a.mnt)
    if r.returncode:
        return f"mount failed: {r.stderr.strip()}"
    try:
        bad = verify(a.mnt, seed, files, wal)
    finally:
        u = run("umount", a.mnt)
    if bad:
        return bad
    if u.returncode:
        return f"umount failed: {u.stderr.strip()}"
    r = run("e2fsck", "-fn", dev)
    if r.returncode:
        return f"e2fsck -fn exit {r.returncode}: {r.stdout.strip()[-400:]}"
    return None


def sweep_points(a):
    done = 0
    with open(a.log, "rb") as logf:
        sectorsize, entries = logwrites.read_log(logf)
        parts = crashcheck.PartialStates("fscrash", "fc", a, logf, sectorsize, entries)
        start = logwrites.find_mark(entries, "formatted")
        points = [p for p in logwrites.crash_points(entries) if p > start]
        marks = [(e.index, e.mark) for e in entries if e.flags & logwrites.MARK]
        replayed = -1
        for p in points:
            last = [m for i, m in marks if i < p and m[:1] == "d" and m[1:].isdigit()]
            mark = last[-1] if last else None
            if not parts.ok(p, replayed >= start, mark, lambda dev: check_point(a, mark, dev)):
                return 1
            logwrites.replay(logf, sectorsize, entries, a.replay, replayed + 1, p)
            replayed = p
            try:
                _, o, c = crashcheck.crash_stack("fc", a, a.replay)
                try:
                    dev = crashcheck.load_cache("fc", a, o, c)
                except crashcheck.DMError as e:
                    print(f"fscrash: entry {p}: the cache does not load: {e}", file=sys.stderr)
                    return 1
                bad = check_point(a, mark, dev)
                if bad:
                    print(f"fscrash: crash at log entry {p} (last mark {mark}): {bad}",
                          file=sys.stderr)
                    return 1
                done += 1
            finally:
                crashcheck.dm_remove(*crashcheck.stack_names("fc"))
    print(f"fscrash: {done} crash points checked")
    parts.report()
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("mnt")
    g.add_argument("state")
    g.add_argument("files", type=int)
    g.add_argument("seed", type=int)
    g.add_argument("--marker", required=True)
    s = sub.add_parser("sweep")
    crashcheck.add_sweep_args(s)
    s.add_argument("mnt")
    a = p.parse_args(argv)
    if a.cmd == "gen":
        return gen(a)
    return crashcheck.sweep(a, sweep_points)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
