#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Differential test of the two metadata loaders: the module's and
`ssdcachectl check`'s. Each round writes a seed image (tests/fuzz/corpus)
onto the cache device with random damage in its superblocks, journal and
block map (bit flips, fields set to edge values, zeroed blocks), checksums
mostly recomputed so that the damage reaches the rules behind them. Then
`ssdcachectl check` judges it and the kernel tries to load it; they must
agree: check clean exactly when the load succeeds (the load also checks
the origin, which check cannot see: the expectation accounts for that),
and then with the same number of cached and dirty blocks.

    corrupt_diff.py TOOL CACHE ORIGIN SEED_DIR ROUNDS RNG_SEED OUT_DIR

Prints a summary; exits 1 at the first disagreement, with the image saved
in OUT_DIR.
"""
import errno
import os
import random
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import dmioctl  # noqa: E402
from ssdc_meta import block_csum, sb_field  # noqa: E402

MAGIC = 0x4548434143445353
ORIGIN_ID = b"by-id:wwn-0x5000c500a1b2c3d4"
OPTS = "6 origin_id by-id:wwn-0x5000c500a1b2c3d4 writeback_idle_ms 0 dirty_high 100"
META_BYTES = 32768
# (offset, csum offset) of every metadata block of the seeds' geometry.
BLOCKS = [(0, 12), (4096, 12)] + [(8192 + 4096 * i, 4) for i in range(6)]
EDGES = [0, 1, 2, 3, 4, 55, 56, 503, 504, 505, 4096, 0xFFFF, 1 << 31, 1 << 32,
         (1 << 48) - 1, 1 << 48, (1 << 63), (1 << 64) - 1]


def damage(img, rng):
    off, csum_off = rng.choice(BLOCKS)
    blk = bytearray(img[off:off + 4096])
    kind = rng.random()
    if kind < 0.45:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(0, 256 if rng.random() < 0.8 else 4096)
            blk[i] ^= 1 << rng.randrange(8)
    elif kind < 0.9:
        i = rng.randrange(0, 256 if rng.random() < 0.7 else 4088) & ~7
        width = rng.choice([2, 4, 8])
        v = rng.choice(EDGES) & ((1 << (8 * width)) - 1)
        blk[i:i + width] = v.to_bytes(width, "little")
    else:
        blk = bytearray(4096)
    if rng.random() < 0.85 and any(blk):
        struct.pack_into("<I", blk, csum_off, block_csum(blk, csum_off))
    img[off:off + 4096] = blk
    return f"block@{off} kind={kind:.2f}"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kw)


def write_image(dev, img):
    fd = os.open(dev, os.O_WRONLY)
    try:
        os.pwrite(fd, bytes(img), 0)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def kernel_log_since(fd):
    """The messages of the kernel log records after FD's position (FD is
    /dev/kmsg, opened non-blocking): one line each."""
    lines = []
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            return "\n".join(lines)
        except OSError as e:
            # EPIPE: records were overwritten before we read them; the
            # next read goes on from the oldest left.
            if e.errno != errno.EPIPE:
                raise
            continue
        lines.append(rec.decode(errors="replace").split(";", 1)[-1].split("\n", 1)[0])


def load(table, kmsg):
    """Tries to load TABLE as device cdiff, and removes it; returns
    whether it loaded and what the kernel logged meanwhile. Through the
    ioctls: a dmsetup process costs about 0.2 s under TCG."""
    os.lseek(kmsg, 0, os.SEEK_END)
    try:
        dmioctl.create("cdiff", table)
        ok = True
    except dmioctl.DMError:
        ok = False
    log = kernel_log_since(kmsg)
    if ok:
        dmioctl.remove("cdiff")
    return ok, log


def best_copy(img):
    """The superblock copy both loaders take: magic and checksum right,
    the higher seq (the version is checked afterwards, on that copy)."""
    best = None
    for off in (0, 4096):
        sb = bytes(img[off:off + 4096])
        if struct.unpack_from("<Q", sb, 0)[0] != MAGIC or \
                struct.unpack_from("<I", sb, 12)[0] != block_csum(sb, 12):
            continue
        if best is None or sb_field(sb, "seq") > sb_field(best, "seq"):
            best = sb
    return best


def expected_origin_ok(img, origin_sectors):
    """The part of the load that check cannot see: the origin."""
    sb = best_copy(img)
    if sb is None:
        return True
    oid = sb[40:104].split(b"\0")[0]   # NUL-terminated, as strncmp reads it
    return sb_field(sb, "origin_sectors") == origin_sectors and oid == ORIGIN_ID


def main(argv):
    tool, cache, origin, seed_dir, rounds, rseed, out = argv
    rng = random.Random(int(rseed))
    seeds = {n: open(os.path.join(seed_dir, n), "rb").read()
             for n in sorted(os.listdir(seed_dir)) if not n.startswith("regress")}
    osz = int(run(["blockdev", "--getsz", origin]).stdout)
    table = f"0 {osz} ssdcache {origin} {cache} writeback {OPTS}"
    loaded = refused = 0
    kmsg = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    for r in range(int(rounds)):
        name = rng.choice(sorted(seeds))
        img = bytearray(seeds[name][:META_BYTES].ljust(META_BYTES, b"\0"))
        what = [damage(img, rng) for _ in range(rng.randint(1, 3))]
        write_image(cache, img)
        chk = run([tool, "check", cache])
        ok, log = load(table, kmsg)
        if ok:
            loaded += 1
        else:
            refused += 1
        expect = chk.returncode == 0 and expected_origin_ok(img, osz)
        why = None
        if chk.returncode not in (0, 4):
            why = f"check exited {chk.returncode}"
        elif ok != expect:
            why = f"kernel {'loaded' if ok else 'refused'} it, check exited {chk.returncode}"
        elif ok:
            m = re.search(r"(\d+) in use, (\d+) dirty", chk.stdout)
            k = re.search(r"loaded (\d+) cached blocks of \d+, (\d+) dirty", log)
            if not m or not k or m.groups() != k.groups():
                why = f"check counts {m and m.groups()}, kernel {k and k.groups()}"
        if why:
            path = os.path.join(out, f"corrupt-diff-{r}.img")
            with open(path, "wb") as f:
                f.write(img)
            print(f"round {r}: seed {name}, damage {what}: {why}\n"
                  f"check said:\n{chk.stdout}{chk.stderr}kernel said:\n{log}\nimage: {path}")
            return 1
    print(f"corrupt_diff: {rounds} rounds agree: {loaded} loaded, {refused} refused")
    if loaded < int(rounds) // 10 or refused < int(rounds) // 10:
        print("corrupt_diff: too one-sided to mean much")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
