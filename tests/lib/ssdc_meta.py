#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Reads and edits ssdcache metadata on a cache device, for tests that
need a precise corruption (include/ssdcache_format.h is the reference).

    ssdc_meta.py sb DEV                  print both superblocks (checks csum)
    ssdc_meta.py set-sb DEV FIELD VALUE  set a field in both copies and
                                         recompute their checksums
    ssdc_meta.py flip DEV OFFSET         invert the byte at OFFSET
    ssdc_meta.py get-sb DEV FIELD        print a field of the newest copy
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
    "mode": (176, "<I"), "flags": (180, "<I"),
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


def main(argv):
    cmd, dev = argv[0], argv[1]
    with open(dev, "rb" if cmd == "sb" else "r+b") as f:
        drop_cache(f)
        if cmd == "sb":
            for off in SB_COPIES:
                sb = read_sb(f, off)
                vals = {k: struct.unpack_from(fmt, sb, o)[0] for k, (o, fmt) in SB_FIELDS.items()}
                ok = vals["csum"] == block_csum(sb, 12)
                print(f"copy@{off}: csum_ok={int(ok)} " +
                      " ".join(f"{k}={v}" for k, v in vals.items()))
        elif cmd == "set-sb":
            off, fmt = SB_FIELDS[argv[2]]
            for base in SB_COPIES:
                sb = read_sb(f, base)
                struct.pack_into(fmt, sb, off, int(argv[3], 0))
                struct.pack_into("<I", sb, 12, block_csum(sb, 12))
                f.seek(base)
                f.write(sb)
            drop_cache(f)
        elif cmd == "get-sb":
            best = None
            for base in SB_COPIES:
                sb = read_sb(f, base)
                if struct.unpack_from("<I", sb, 12)[0] != block_csum(sb, 12):
                    continue
                seq = struct.unpack_from("<Q", sb, 16)[0]
                if best is None or seq > best[0]:
                    best = (seq, sb)
            if best is None:
                print("no valid superblock", file=sys.stderr)
                return 1
            off, fmt = SB_FIELDS[argv[2]]
            print(struct.unpack_from(fmt, best[1], off)[0])
        elif cmd == "flip":
            off = int(argv[2], 0)
            f.seek(off)
            b = f.read(1)[0] ^ 0xFF
            f.seek(off)
            f.write(bytes([b]))
            drop_cache(f)
        else:
            print(f"unknown command {cmd}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
