#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Reads and edits ssdcache metadata on a cache device, for tests that
need a precise corruption (include/ssdcache_format.h is the reference).

    ssdc_meta.py sb DEV                  print both superblocks (checks csum)
    ssdc_meta.py set-sb DEV FIELD VALUE  set a field in both copies and
                                         recompute their checksums
    ssdc_meta.py flip DEV OFFSET         invert the byte at OFFSET
    ssdc_meta.py get-sb DEV FIELD        print a field of the newest copy
    ssdc_meta.py flip-map DEV PAGE       invert a byte in both copies of a
                                         block map page
    ssdc_meta.py bad-jrec DEV            write, where replay starts, a sound
                                         journal commit (valid checksum)
                                         whose record names a cache block
                                         past the end
    ssdc_meta.py bad-jrec-empty DEV      the same with an empty entry (0) for
                                         that block: no block may be set,
                                         not even to empty, past the end
    ssdc_meta.py dup-map DEV [A B]       map one origin block twice in set 0,
                                         in cache blocks A and B (default 0
                                         and 1; map page 0, checksums
                                         recomputed)
    ssdc_meta.py tag-twins DEV A B       map two origin blocks of set 0 that
                                         share a lookup tag in cache blocks
                                         A and B, a sound map; prints them
                                         (set 0's other slots emptied, by
                                         dup-map too)
"""
import os
import struct
import sys

SB_COPIES = (0, 4096)
# name: (offset, struct format)
SB_FIELDS = {
    "magic": (0, "<Q"), "version": (8, "<I"), "csum": (12, "<I"),
    "seq": (16, "<Q"), "origin_sectors": (104, "<Q"), "cache_sectors": (112, "<Q"),
    "block_sectors": (120, "<I"), "assoc": (124, "<I"), "nr_blocks": (128, "<Q"),
    "journal_start": (136, "<Q"), "journal_blocks": (144, "<Q"),
    "map_start": (152, "<Q"), "map_pages": (160, "<Q"), "data_start": (168, "<Q"),
    "mode": (176, "<I"), "flags": (180, "<I"), "journal_tail": (184, "<Q"),
    "journal_seq": (192, "<Q"), "ckpt_seq": (200, "<Q"), "set_shift": (208, "<I"),
}


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    return t


_T = _table()


def crc32c(data, crc=0xFFFFFFFF):
    """crc32c as the format uses it: seed ~0, no final inversion."""
    for b in data:
        crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def block_csum(block, csum_off):
    b = bytearray(block)
    b[csum_off:csum_off + 4] = b"\0\0\0\0"
    return crc32c(bytes(b))


def read_sb(f, off):
    f.seek(off)
    return bytearray(f.read(4096))


def drop_cache(f):
    """Block devices read through the page cache: write out, drop."""
    f.flush()
    os.fsync(f.fileno())
    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


def best_sb(f):
    best = None
    for base in SB_COPIES:
        sb = read_sb(f, base)
        if struct.unpack_from("<I", sb, 12)[0] != block_csum(sb, 12):
            continue
        seq = struct.unpack_from("<Q", sb, 16)[0]
        if best is None or seq > best[0]:
            best = (seq, sb)
    return best[1] if best else None


def sb_field(sb, name):
    off, fmt = SB_FIELDS[name]
    return struct.unpack_from(fmt, sb, off)[0]


def flip_map(f, page):
    sb = best_sb(f)
    start, pages = sb_field(sb, "map_start"), sb_field(sb, "map_pages")
    for copy in (0, 1):
        off = (start + (copy * pages + page) * 8) * 512 + 100
        f.seek(off)
        b = f.read(1)[0] ^ 0xFF
        f.seek(off)
        f.write(bytes([b]))


def bad_jrec(f, entry=(1 << 63) | 5):
    sb = best_sb(f)
    blk = bytearray(4096)
    struct.pack_into("<I", blk, 0, 0x4c4a4353)
    struct.pack_into("<Q", blk, 8, sb_field(sb, "journal_seq"))
    blk[16:32] = sb[24:40]                       # cache_uuid
    struct.pack_into("<IHH", blk, 32, 1, 0, 1)   # nr_records, index, count
    struct.pack_into("<QQ", blk, 64, 0xFFFFFFFF, entry)
    struct.pack_into("<I", blk, 4, block_csum(blk, 4))
    f.seek((sb_field(sb, "journal_start") + sb_field(sb, "journal_tail") * 8) * 512)
    f.write(blk)


def set_of(oblock, nr_sets, shift):
    """The module's set of an origin block, for runs of 2^shift blocks
    (ssdcache_set_of() in include/ssdcache_format.h)."""
    h = (((oblock >> shift) * 0x61C8864680B583EB) & (2**64 - 1)) >> 32
    return (h * nr_sets) >> 32


def tag_of(oblock):
    """The module's lookup tag of an origin block (ssdc_tag_of())."""
    return ((oblock * 0xc2b2ae3d27d4eb4f) & (2**64 - 1)) >> 56


def set0_blocks(sb):
    """Set 0's origin blocks, in order, within the origin."""
    nr_sets = sb_field(sb, "nr_blocks") // 56
    shift = sb_field(sb, "set_shift")
    origin = sb_field(sb, "origin_sectors") // sb_field(sb, "block_sectors")
    return [b for b in range(origin) if set_of(b, nr_sets, shift) == 0]


def map_entries(f, entries):
    """Makes set 0 hold just {cache block: origin block} (VALID, clean;
    its other slots empty), in both copies of map page 0, checksums
    right."""
    sb = best_sb(f)
    start, pages = sb_field(sb, "map_start"), sb_field(sb, "map_pages")
    for copy in (0, 1):
        off = (start + copy * pages * 8) * 512
        f.seek(off)
        page = bytearray(f.read(4096))
        if struct.unpack_from("<I", page, 0)[0] != 0x504d4353:
            continue
        for slot in range(56):
            e = (1 << 63) | entries[slot] if slot in entries else 0
            struct.pack_into("<Q", page, 64 + 8 * slot, e)
        struct.pack_into("<I", page, 4, block_csum(page, 4))
        f.seek(off)
        f.write(page)


def dup_map(f, a=0, b=1):
    """Maps one origin block in cache blocks a and b (set 0)."""
    oblock = set0_blocks(best_sb(f))[0]
    map_entries(f, {a: oblock, b: oblock})


def tag_twins(f, a, b):
    """Maps two origin blocks of set 0 that share a lookup tag in cache
    blocks a and b, a sound map; prints the two origin blocks."""
    seen = {}
    for oblock in set0_blocks(best_sb(f)):
        if tag_of(oblock) in seen:
            map_entries(f, {a: seen[tag_of(oblock)], b: oblock})
            print(seen[tag_of(oblock)], oblock)
            return
        seen[tag_of(oblock)] = oblock
    raise SystemExit("tag-twins: no two blocks of set 0 share a tag")


def set_sb(f, name, value):
    """Sets field NAME of every superblock copy, checksums right."""
    off, fmt = SB_FIELDS[name]
    for base in SB_COPIES:
        sb = read_sb(f, base)
        struct.pack_into(fmt, sb, off, value)
        struct.pack_into("<I", sb, 12, block_csum(sb, 12))
        f.seek(base)
        f.write(sb)


def flip(f, off):
    f.seek(off)
    b = f.read(1)[0] ^ 0xFF
    f.seek(off)
    f.write(bytes([b]))


def print_sbs(f):
    for off in SB_COPIES:
        sb = read_sb(f, off)
        vals = {k: struct.unpack_from(fmt, sb, o)[0] for k, (o, fmt) in SB_FIELDS.items()}
        ok = vals["csum"] == block_csum(sb, 12)
        print(f"copy@{off}: csum_ok={int(ok)} " +
              " ".join(f"{k}={v}" for k, v in vals.items()))


def print_sb_field(f, name):
    sb = best_sb(f)
    if sb is None:
        print("no valid superblock", file=sys.stderr)
        return 1
    print(sb_field(sb, name))
    return 0


# The commands that write: main() writes their changes out and drops the
# page cache after each, so that the disk has them when this exits (the
# loads and write counters that follow look at the disk, not at this
# process's page cache).
WRITERS = {
    "set-sb": lambda f, a: set_sb(f, a[0], int(a[1], 0)),
    "flip-map": lambda f, a: flip_map(f, int(a[0])),
    "dup-map": lambda f, a: dup_map(f, *map(int, a)),
    "tag-twins": lambda f, a: tag_twins(f, int(a[0]), int(a[1])),
    "bad-jrec": lambda f, a: bad_jrec(f),
    "bad-jrec-empty": lambda f, a: bad_jrec(f, 0),
    "flip": lambda f, a: flip(f, int(a[0], 0)),
}
READERS = {
    "sb": lambda f, a: print_sbs(f),
    "get-sb": lambda f, a: print_sb_field(f, a[0]),
}


def main(argv):
    cmd, dev, args = argv[0], argv[1], argv[2:]
    if cmd not in WRITERS and cmd not in READERS:
        print(f"unknown command {cmd}", file=sys.stderr)
        return 2
    with open(dev, "r+b" if cmd in WRITERS else "rb") as f:
        drop_cache(f)
        if cmd in READERS:
            return READERS[cmd](f, args) or 0
        WRITERS[cmd](f, args)
        drop_cache(f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
