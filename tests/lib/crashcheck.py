#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Crash-consistency workload and checker for a block device.

    crashcheck.py gen DEV STATE OPS SEED [--marker NAME] [--fill] [--dsync N] [--append]
        OPS single-threaded O_DIRECT writes of 1..64 sectors; every sector
        written carries a stamp (its own number, the write's generation,
        a crc). Every few writes an fsync, sometimes an O_DSYNC write;
        once each returns, the message "mark sN" to NAME (with --marker,
        a dm-log-writes device) records a durability point.
        STATE keeps every write (logged before it is issued) and every
        mark, line by line as the run goes, so a run cut short by a power
        cut leaves a usable STATE. --fill first writes every sector of
        DEV (the final fsync and mark make it durable); --dsync N then
        writes N distinct blocks of 8 sectors, each with O_DSYNC and a
        mark (on a write-back cache, N commits: its journal wraps once N
        passes its size); --append goes on from STATE (another device of
        the same size may hold the same sectors: the origin, then the
        cache over it).

    crashcheck.py check DEV STATE [--mark M|last]
        Reads DEV whole and checks every sector of it:
          - it holds zeros (never written) or a sound stamp of that
            sector, from a write that was actually made to it;
          - with --mark, it is not older than what was durable at mark M
            (every write acknowledged before that fsync or O_DSYNC write).
        Prints the md5 of what it read (for stability checks).

    crashcheck.py sweep LOG STATE REPLAY COW OSECT CSECT [--every K] [--load-log DEV]
                        [--partial N] [--torn N] [--meta-end SECTORS]
        For every FLUSH/FUA entry of the dm-log-writes LOG after the mark
        "formatted": replays the log up to it onto REPLAY, puts a
        non-persistent dm-snapshot (COW on COW) over it, loads ssdcache
        on two slices of the snapshot (origin OSECT sectors, then cache
        CSECT sectors; formatted with origin_id "crashcheck"), and
        checks contract points 1 and 2 through it against the last mark
        before the entry. Every K-th point also writes everything back
        ("flush"), detaches, and checks that the origin alone reads the
        same (point 3).
        With --load-log DEV, at two crash states the writes of recovery
        itself are logged on DEV and the cache is loaded again after
        every prefix of them (a crash during recovery), and with --torn,
        with each of its metadata writes (map pages, superblocks) torn.
        With --partial N, before every FLUSH entry that made two or more
        writes durable, up to N crash states that keep part of those
        writes (neither none nor all: the last alone, all but the last,
        then random parts) are checked too: a power cut can leave any
        subset of unflushed writes on the media.
        With --torn N, before every FLUSH or FUA entry that writes two or
        more sectors of the module's metadata (a journal commit, a
        superblock; data goes to the cache slice without FUA), up to N
        states where that write is torn (its first sector alone, all but
        it, its first half, then random sets of its sectors) are checked
        too, and before every FLUSH entry, up to N states where one of
        the metadata writes it made durable (a map page) is torn, the
        others kept. --meta-end SECTORS says where the metadata ends in
        the cache slice (the superblock's data_start): data is not torn.
        Prints the numbers of crash points, partial states and torn
        writes checked.

Exit status 1 on the first violation, with what and where.
"""
import argparse
import hashlib
import mmap
import os
import random
import signal
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dmioctl  # noqa: E402
import logwrites  # noqa: E402

SECTOR = 512
MAGIC = b"SSDCRASH"


def stamp(sector, gen):
    head = MAGIC + sector.to_bytes(8, "little") + gen.to_bytes(8, "little")
    rnd = random.Random(sector * 1000003 + gen).randbytes(SECTOR - len(head) - 4)
    body = head + rnd
    return body + zlib.crc32(body).to_bytes(4, "little")


def parse(sector, data):
    """The generation in a sector's data: 0 for zeros, None if unsound."""
    if data == bytes(SECTOR):
        return 0
    if data[:8] != MAGIC or zlib.crc32(data[:-4]).to_bytes(4, "little") != data[-4:]:
        return None
    if int.from_bytes(data[8:16], "little") != sector:
        return None
    return int.from_bytes(data[16:24], "little")


def dev_size(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def state_tail(path, nsect):
    """The last generation and the number of marks of the STATE file at
    PATH, which must be of a device of NSECT sectors."""
    last = marks = 0
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[:1] == ["S"] and int(w[1]) != nsect:
                raise ValueError(f"{path} is of a device of {w[1]} sectors, not {nsect}")
            if w[:1] == ["W"]:
                last = max(last, int(w[1]))
            elif w[:1] == ["M"]:
                marks += 1
    return last, marks


def gen(a):
    rng = random.Random(a.seed)
    fd = os.open(a.dev, os.O_RDWR | os.O_DIRECT)
    nsect = dev_size(a.dev) // SECTOR
    # Most I/O in a hot 2 MiB so that blocks are rewritten, some anywhere.
    hot = min(nsect, 4096)
    buf = mmap.mmap(-1, 64 * SECTOR)
    if a.append:
        g0, nmark = state_tail(a.state, nsect)
        st = open(a.state, "a")
    else:
        g0 = nmark = 0
        st = open(a.state, "w")
        st.write(f"S {nsect}\n")

    def mark():
        nonlocal nmark
        name = f"s{nmark}"
        nmark += 1
        if a.marker:
            dmioctl.message(a.marker, f"mark {name}")
        st.write(f"M {name}\n")
        st.flush()

    def write_stamped(g, start, n, flags=0):
        """Write G: sectors START..START+N-1 stamped, logged first."""
        for i in range(n):
            buf[i * SECTOR:(i + 1) * SECTOR] = stamp(start + i, g)
        st.write(f"W {g} {start} {n}\n")
        st.flush()
        if os.pwritev(fd, [memoryview(buf)[:n * SECTOR]], start * SECTOR, flags) != n * SECTOR:
            raise OSError(f"short write at sector {start}")

    if a.fill:
        # Every sector stamped, 64 at a time: a block that reads back as
        # another's data or as zeros is then seen.
        for g, start in enumerate(range(0, nsect, 64), g0 + 1):
            write_stamped(g, start, min(64, nsect - start))
            g0 = g
    if a.dsync:
        # One block each, O_DSYNC, at distinct places: each a commit of
        # its own on a write-back cache, so that its journal wraps.
        blocks = random.Random(-1 - a.seed).sample(range(nsect // 8), min(a.dsync, nsect // 8))
        for g, b in enumerate(blocks, g0 + 1):
            write_stamped(g, b * 8, 8, os.RWF_DSYNC)
            mark()
            g0 = g
    for g in range(g0 + 1, g0 + a.ops + 1):
        n = rng.choice([8, 8, 8, 16, 32, 64, 1, 3])
        span = hot if rng.random() < 0.8 else nsect
        if n % 8 == 0:
            start = rng.randrange(0, (span - n) // 8 + 1) * 8
        else:
            start = rng.randrange(0, span - n + 1)
        flags = os.RWF_DSYNC if rng.random() < 0.05 else 0
        write_stamped(g, start, n, flags)
        if flags:
            mark()
        elif rng.random() < 0.25:
            os.fsync(fd)
            mark()
    os.fsync(fd)
    mark()
    os.close(fd)
    st.close()
    print(f"crashcheck: {g0 + a.ops} writes, {nmark} durability marks")
    return 0


class Model:
    """The writes and marks of a STATE file."""

    def __init__(self, path):
        self.nsect = 0
        self.ops = []
        self.marks = {}
        self.last_mark = None
        with open(path) as f:
            for line in f:
                w = line.split()
                if not w:
                    continue
                if w[0] == "S":
                    self.nsect = int(w[1])
                elif w[0] == "W" and len(w) == 4:
                    self.ops.append((int(w[1]), int(w[2]), int(w[3])))
                elif w[0] == "M" and len(w) == 2:
                    # Every write logged before the mark had returned.
                    self.marks[w[1]] = len(self.ops)
                    self.last_mark = w[1]
        self.written = {}
        for g, start, n in self.ops:
            for s in range(start, start + n):
                self.written.setdefault(s, set()).add(g)
        self._durable = {}
        # verify() checks the written sectors one by one, the never-written
        # ones run by run, and remembers what each sector content it has
        # seen parses to.
        self.sectors = sorted(self.written)
        self.blank_runs = []
        lo = 0
        for s in self.sectors + [self.nsect]:
            if s > lo:
                self.blank_runs.append((lo, s))
            lo = s + 1
        self.parsed = {}

    def durable(self, mark):
        if mark is None:
            return {}
        if mark not in self._durable:
            d = {}
            for g, start, n in self.ops[:self.marks[mark]]:
                for s in range(start, start + n):
                    d[s] = g
            self._durable = {mark: d}
        return self._durable[mark]


def read_image(path, nsect):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, 1 << 20)
    out = bytearray()
    try:
        for off in range(0, nsect * SECTOR, 1 << 20):
            n = min(1 << 20, nsect * SECTOR - off)
            view = memoryview(buf)[:n]
            if os.preadv(fd, [view], off) != n:
                raise OSError(f"short read at {off}")
            out += view
    finally:
        os.close(fd)
    return bytes(out)


def verify(image, model, mark):
    """None if the image keeps the contract, else what breaks it."""
    blank = all(image.count(0, lo * SECTOR, hi * SECTOR) == (hi - lo) * SECTOR
                for lo, hi in model.blank_runs)
    durable = model.durable(mark)
    zero = bytes(SECTOR)
    for s in model.sectors if blank else range(model.nsect):
        data = image[s * SECTOR:(s + 1) * SECTOR]
        if data == zero and s not in durable:
            continue
        key = (s, data)
        if key not in model.parsed:
            model.parsed[key] = parse(s, data)
        g = model.parsed[key]
        if g is None:
            return f"sector {s}: garbage (not zeros, not a sound stamp of this sector)"
        if g and g not in model.written.get(s, ()):
            return f"sector {s}: generation {g} was never written there"
        if g < durable.get(s, 0):
            return (f"sector {s}: generation {g} is older than {durable[s]}, "
                    f"durable since mark {mark}")
    return None


def check(a):
    model = Model(a.state)
    mark = model.last_mark if a.mark == "last" else a.mark
    image = read_image(a.dev, model.nsect)
    bad = verify(image, model, mark)
    if bad:
        print(f"crashcheck: {a.dev}: {bad}", file=sys.stderr)
        return 1
    print(hashlib.md5(image).hexdigest())
    return 0


# udevd is stopped during a sweep: its probes of every new device cost
# more than the checks under TCG, and events queued while it was paused
# would keep it busy long after. Devices are made with the ioctls
# (dmioctl.py): a dmsetup process costs about 0.2 s under TCG.
DMError = dmioctl.DMError


def dm_create_many(devs):
    """Creates DEVS, a list of (name, minor, table); a table may refer to
    an earlier device as MAJOR:MINOR. Returns their nodes."""
    return [dmioctl.create(n, t, minor=m) for n, m, t in devs]


# The minors of the crash-state stacks: fixed, so that a stack's upper
# tables can name the lower devices before they exist.
STACK_MINORS = {"cc": 4000, "lc": 4010, "fc": 4020}


def crash_stack(name, a, base):
    """NAME_snap, a non-persistent snapshot of BASE (COW on a.cow), and on
    it NAME_o and NAME_c, the origin and cache slices. Returns (snapshot,
    origin, cache) nodes. The snapshot keeps BASE as it is, whatever
    loading the cache writes."""
    m = STACK_MINORS[name]
    snap = f"{dmioctl.dm_major()}:{m}"
    return dm_create_many([
        (f"{name}_snap", m, f"0 {a.osect + a.csect} snapshot {base} {a.cow} N 8"),
        (f"{name}_o", m + 1, f"0 {a.osect} linear {snap} 0"),
        (f"{name}_c", m + 2, f"0 {a.csect} linear {snap} {a.osect}")])


def stack_names(name):
    """The devices of crash_stack(NAME) with the cache on top, top first."""
    return [f"{name}_cache", f"{name}_c", f"{name}_o", f"{name}_snap"]


def load_cache(name, a, o, c):
    """Loads the write-back cache NAME_cache on O and C; its node."""
    return dmioctl.create(f"{name}_cache",
                          f"0 {a.osect} ssdcache {o} {c} writeback 2 origin_id crashcheck")


def dm_remove(*names):
    """Removes those of NAMES that exist, in that order."""
    for n in names:
        if dmioctl.exists(n):
            dmioctl.remove(n)


def status_field(name, idx):
    return dmioctl.status(name).split()[idx]


def udevd_pids():
    r = subprocess.run(["pgrep", "-x", "systemd-udevd"], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def udevd_gone(secs):
    for _ in range(int(secs * 20)):
        if not udevd_pids():
            return True
        time.sleep(0.05)
    return False


def udevd_stop():
    """Stops every udevd; returns their command lines, to start them again."""
    subprocess.run(["udevadm", "settle"], check=False)
    cmdlines = []
    for pid in udevd_pids():
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdlines.append([w.decode() for w in f.read().split(b"\0") if w])
        os.kill(pid, signal.SIGTERM)
    if udevd_gone(10):
        return cmdlines
    for pid in udevd_pids():
        os.kill(pid, signal.SIGKILL)
    if udevd_gone(5):
        return cmdlines
    raise RuntimeError("udevd does not stop")


def udevd_start(cmdlines):
    """Starts udevd again, detached from the test (no inherited
    descriptors), and waits until it answers on its control socket: a
    dmsetup that waits for udev would otherwise wait for ever."""
    for cmd in cmdlines:
        if "--daemon" not in cmd:
            cmd.append("--daemon")
        subprocess.run(cmd, check=False, close_fds=True, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not cmdlines:
        return
    for _ in range(100):
        if subprocess.run(["udevadm", "control", "--ping", "-t", "5"],
                          check=False, capture_output=True).returncode == 0:
            subprocess.run(["udevadm", "control", "--start-exec-queue"], check=False)
            subprocess.run(["udevadm", "settle"], check=False)
            return
        time.sleep(0.1)
    raise RuntimeError("udevd restarted but does not answer")


def sweep(a, points=None):
    """Runs POINTS(a) (default: sweep_points) with udevd stopped: its
    probes of every new device would pile up for minutes."""
    cmdlines = udevd_stop()
    try:
        return (points or sweep_points)(a)
    finally:
        udevd_start(cmdlines)


def load_at(name, a, base, check, writes=None):
    """Loads the cache on a snapshot of BASE (after writing WRITES, a
    (log file, sectorsize, [entry]), onto the snapshot) and runs
    CHECK(cache node) on it; returns None or what is wrong."""
    try:
        snap, o, c = crash_stack(name, a, base)
        if writes:
            f, ss, chosen = writes
            logwrites.apply(f, ss, chosen, snap)
        try:
            dev = load_cache(name, a, o, c)
        except DMError as e:
            return f"the cache does not load: {e}"
        return check(dev)
    finally:
        dm_remove(*stack_names(name))


def on_ssd(a, ss, e):
    """Does log entry E (sector size SS) write two sectors or more of the
    module's metadata (the SSD slice's first a.meta_end sectors, or all
    of it), so that a crash can tear it? Data is not torn: what a torn
    block of its means is the filesystem's business (ext4 refuses a
    superblock torn in two), not the cache's."""
    first = e.sector * ss // SECTOR - a.osect
    end = a.meta_end or a.csect
    return 0 <= first and first + e.nr_sectors * ss // SECTOR <= end and \
        e.nr_sectors > 1 and not e.flags & (logwrites.DISCARD | logwrites.MARK)


def sectors(e, pieces):
    """Which of write E's sectors PIECES (logwrites.torn_parts) hold."""
    have = " ".join(f"{p.sector - e.sector}+{p.nr_sectors}" for p in pieces)
    return f"{have} of {e.nr_sectors}"


class PartialStates:
    """Crash states just before a FLUSH or FUA entry P, built on a.replay
    (the state of the crash point before P, READY): with up to a.partial
    parts of the writes a FLUSH entry made durable
    (logwrites.partial_subsets); with all of them but up to a.torn of
    those to the module's metadata (on_ssd()) each torn in turn (a
    checkpoint's map page: logwrites.torn_parts); and, for a metadata
    write of P's own (a journal commit, a superblock), with all of those
    writes and up to a.torn parts of P's sectors. TOOL names the caller
    in what it prints; NAME, the crash stack (crash_stack)."""

    def __init__(self, tool, name, a, logf, ss, entries):
        self.tool, self.name, self.a = tool, name, a
        self.logf, self.ss, self.entries = logf, ss, entries
        self.checked = {"partial": 0, "torn": 0}

    def states(self, p):
        """(what is lost, entries to write, kind) for each such state of P."""
        e = self.entries[p]
        writes = logwrites.unflushed(self.entries, p) if e.flags & logwrites.FLUSH else []
        rng = random.Random(p)
        for keep in logwrites.partial_subsets(writes, self.a.partial, rng):
            lost = " ".join(str(w.index) for w in writes if w not in keep)
            yield f"with the unflushed writes {lost} lost (and {len(keep)} kept)", keep, "partial"
        # An unflushed metadata write (a checkpoint's map page) torn, the
        # others kept.
        ssd = [w for w in writes if on_ssd(self.a, self.ss, w)]
        for w in rng.sample(ssd, min(self.a.torn, len(ssd))):
            pieces = rng.choice(logwrites.torn_parts(w, self.ss, 3, rng))
            chosen = [x for v in writes for x in (pieces if v is w else [v])]
            yield (f"with its unflushed write {w.index} torn: only its sectors "
                   f"{sectors(w, pieces)} written", chosen, "torn")
        if not on_ssd(self.a, self.ss, e):
            return
        for pieces in logwrites.torn_parts(e, self.ss, self.a.torn, rng):
            yield (f"with its write torn: only its sectors {sectors(e, pieces)} written",
                   writes + pieces, "torn")

    def ok(self, p, ready, mark, check):
        """Runs CHECK(cache node) on each such state of entry P; prints
        the first that fails and returns False, else True."""
        if not ready:
            return True
        for what, chosen, kind in self.states(p):
            bad = load_at(self.name, self.a, self.a.replay, check, (self.logf, self.ss, chosen))
            if bad:
                print(f"{self.tool}: crash before entry {p}, {what} (last mark {mark}): {bad}",
                      file=sys.stderr)
                return False
            self.checked[kind] += 1
        return True

    def report(self):
        """Prints how many states of each kind were checked."""
        print(f"{self.tool}: {self.checked['partial']} partial crash states checked")
        print(f"{self.tool}: {self.checked['torn']} torn writes checked")


def load_crash(a, model, mark):
    """A crash during recovery: logs the writes of loading (and removing)
    the cache on the crash state now on a.replay, then loads it again on
    that state plus every prefix of those writes. Returns the number of
    states checked, or -1."""
    total = a.osect + a.csect
    names = ["lc_cache", "lc_c", "lc_o", "lc_lw", "lc_snap"]
    try:
        snap = dmioctl.create("lc_snap", f"0 {total} snapshot {a.replay} {a.cow} N 8")
        lw = dmioctl.create("lc_lw", f"0 {total} log-writes {snap} {a.load_log}")
        o = dmioctl.create("lc_o", f"0 {a.osect} linear {lw} 0")
        c = dmioctl.create("lc_c", f"0 {a.csect} linear {lw} {a.osect}")
        load_cache("lc", a, o, c)
    finally:
        dm_remove(*names)
    n = 0
    with open(a.load_log, "rb") as f:
        ss, entries = logwrites.read_log(f)
        writes = [e.index for e in entries if e.nr_sectors and not e.flags & logwrites.MARK]
        states = [("before any of its writes", None)]
        states += [(f"after its write {w}", entries[:w + 1]) for w in writes]
        for w in writes:
            e = entries[w]
            if on_ssd(a, ss, e):
                for pieces in logwrites.torn_parts(e, ss, a.torn, random.Random(w)):
                    states.append((f"with its write {w} torn (only its sectors "
                                   f"{sectors(e, pieces)})", entries[:w] + pieces))
        for what, chosen in states:
            bad = load_at("lc", a, a.replay,
                          lambda dev: verify(read_image(dev, model.nsect), model, mark),
                          None if chosen is None else (f, ss, chosen))
            if bad:
                print(f"crashcheck: crash during recovery, {what}: {bad}", file=sys.stderr)
                return -1
            n += 1
    return n


def sweep_points(a):
    model = Model(a.state)
    with open(a.log, "rb") as logf:
        sectorsize, entries = logwrites.read_log(logf)
        start = logwrites.find_mark(entries, "formatted")
        points = [p for p in logwrites.crash_points(entries) if p > start]
        marks = [(e.index, e.mark) for e in entries if e.flags & logwrites.MARK]
        done = 0
        parts = PartialStates("crashcheck", "cc", a, logf, sectorsize, entries)
        replayed = -1
        load_points = {len(points) // 2, len(points) - 1} if a.load_log else set()
        for k, p in enumerate(points):
            last = [m for i, m in marks if i < p and m in model.marks]
            mark = last[-1] if last else None
            if not parts.ok(p, replayed >= start, mark,
                            lambda dev: verify(read_image(dev, model.nsect), model, mark)):
                return 1
            logwrites.replay(logf, sectorsize, entries, a.replay, replayed + 1, p)
            replayed = p
            try:
                _, o, c = crash_stack("cc", a, a.replay)
                try:
                    dev = load_cache("cc", a, o, c)
                except DMError as e:
                    print(f"crashcheck: entry {p}: the cache does not load: {e}",
                          file=sys.stderr)
                    return 1
                image = read_image(dev, model.nsect)
                bad = verify(image, model, mark)
                if bad:
                    print(f"crashcheck: crash at log entry {p} (last mark {mark}): {bad}",
                          file=sys.stderr)
                    return 1
                if read_image(dev, model.nsect) != image:
                    print(f"crashcheck: entry {p}: two reads differ", file=sys.stderr)
                    return 1
                if a.every and k % a.every == 0:
                    dmioctl.message("cc_cache", "flush")
                    for _ in range(6000):
                        if status_field("cc_cache", 7) == "0":
                            break
                        time.sleep(0.05)
                    else:
                        print(f"crashcheck: entry {p}: flush did not finish", file=sys.stderr)
                        return 1
                    dm_remove("cc_cache")
                    if read_image(o, model.nsect) != image:
                        print(f"crashcheck: entry {p}: the origin after writeback differs "
                              "from what the cache served", file=sys.stderr)
                        return 1
                done += 1
            finally:
                dm_remove(*stack_names("cc"))
            if k in load_points:
                n = load_crash(a, model, mark)
                if n < 0:
                    return 1
                print(f"crashcheck: crash state {p}: {n} crash states during recovery checked")
    print(f"crashcheck: {done} crash points checked")
    parts.report()
    return 0


def add_sweep_args(parser):
    """The arguments every sweep takes: the log, the state, the replay and
    COW devices, and the two slices' sizes in sectors."""
    for n in ("log", "state", "replay", "cow"):
        parser.add_argument(n)
    parser.add_argument("osect", type=int)
    parser.add_argument("csect", type=int)
    parser.add_argument("--partial", type=int, default=0,
                        help="crash states with part of a flush's writes, per flush")
    parser.add_argument("--torn", type=int, default=0,
                        help="crash states with part of a metadata write, per write")
    parser.add_argument("--meta-end", type=int, default=0, metavar="SECTORS",
                        help="where the SSD slice's metadata ends (its data_start)")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dev")
    g.add_argument("state")
    g.add_argument("ops", type=int)
    g.add_argument("seed", type=int)
    g.add_argument("--marker")
    g.add_argument("--fill", action="store_true",
                   help="first write every sector of DEV once")
    g.add_argument("--dsync", type=int, default=0, metavar="N",
                   help="first N one-block O_DSYNC writes to distinct blocks")
    g.add_argument("--append", action="store_true",
                   help="go on from the writes and marks STATE holds")
    c = sub.add_parser("check")
    c.add_argument("dev")
    c.add_argument("state")
    c.add_argument("--mark")
    s = sub.add_parser("sweep")
    add_sweep_args(s)
    s.add_argument("--every", type=int, default=0)
    s.add_argument("--load-log", help="a log device: also crash during recovery")
    a = p.parse_args(argv)
    return {"gen": gen, "check": check, "sweep": sweep}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
