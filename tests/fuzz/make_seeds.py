#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the fuzzer's seed corpus (tests/fuzz/corpus/): small cache
images, valid by the rules of include/ssdcache_format.h, from offset 0 up
to the end of the block map (the data area is not needed). A tiny
geometry (4 journal blocks, one map page) keeps them at 32 KiB, so that
mutations reach every structure.

    make_seeds.py DIR
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from ssdc_meta import block_csum, set_of  # noqa: E402

MAGIC = 0x4548434143445353
# Format 3 with runs of 8 blocks per set; the "v2-clean" seed is format 2
# (set_shift 0), which loads too.
VERSION, SET_SHIFT = 3, 3
MAP_MAGIC, JMAGIC = 0x504D4353, 0x4C4A4353
UUID = bytes(range(0x10, 0x20))
BS, NR, JBLOCKS = 8, 504, 4           # 4 KiB blocks, 9 sets, 4 journal blocks
MAP_START = 16 + JBLOCKS * 8          # sectors
DATA_START = MAP_START + 2 * 8        # two copies of one page
CACHE_SECTORS = DATA_START + NR * BS
ORIGIN_SECTORS = 1 << 20
IMAGE = DATA_START * 512


def superblock(seq, jtail=0, jseq=1, ckpt=1, version=VERSION, shift=SET_SHIFT):
    sb = bytearray(4096)
    struct.pack_into("<QII Q", sb, 0, MAGIC, version, 0, seq)
    sb[24:40] = UUID
    oid = b"by-id:wwn-0x5000c500a1b2c3d4"
    sb[40:40 + len(oid)] = oid
    struct.pack_into("<QQIIQQQQQQIIQQQ", sb, 104, ORIGIN_SECTORS, CACHE_SECTORS, BS, 56, NR,
                     16, JBLOCKS, MAP_START, 1, DATA_START, 2, 0, jtail, jseq, ckpt)
    struct.pack_into("<I", sb, 208, shift)
    struct.pack_into("<I", sb, 12, block_csum(sb, 12))
    return sb


def entry(oblock, dirty=False):
    return (1 << 63) | (int(dirty) << 62) | oblock


def slot_for(oblock, used, shift=SET_SHIFT):
    s = set_of(oblock, NR // 56, shift) * 56
    while s in used:
        s += 1
    used.add(s)
    return s


def map_page(entries, seq):
    pg = bytearray(4096)
    struct.pack_into("<IIQQ", pg, 0, MAP_MAGIC, 0, 0, seq)
    pg[24:40] = UUID
    for slot, e in entries.items():
        struct.pack_into("<Q", pg, 64 + 8 * slot, e)
    struct.pack_into("<I", pg, 4, block_csum(pg, 4))
    return pg


def jblock(seq, index, count, records):
    b = bytearray(4096)
    struct.pack_into("<IIQ", b, 0, JMAGIC, 0, seq)
    b[16:32] = UUID
    struct.pack_into("<IHH", b, 32, len(records), index, count)
    for i, (slot, e) in enumerate(records):
        struct.pack_into("<QQ", b, 64 + 16 * i, slot, e)
    struct.pack_into("<I", b, 4, block_csum(b, 4))
    return b


def image(sb_a, sb_b, journal, page_a, page_b):
    img = bytearray(IMAGE)
    img[0:4096] = sb_a
    img[4096:8192] = sb_b
    for i, blk in enumerate(journal):
        img[8192 + 4096 * i:8192 + 4096 * (i + 1)] = blk
    img[MAP_START * 512:MAP_START * 512 + 4096] = page_a
    img[(MAP_START + 8) * 512:(MAP_START + 16) * 512] = page_b
    return bytes(img)


def main(out):
    os.makedirs(out, exist_ok=True)
    used = set()
    clean = {slot_for(b, used): entry(b) for b in range(0, 4000, 97)}
    dirty = dict(clean)
    for b in range(5, 3000, 211):
        dirty[slot_for(b, used)] = entry(b, True)
    empty = map_page({}, 0)
    used2 = set()
    clean2 = {slot_for(b, used2, 0): entry(b) for b in range(0, 4000, 97)}
    seeds = {
        "clean": image(superblock(1), superblock(2), [], map_page(clean, 1), empty),
        "dirty": image(superblock(3), superblock(2), [], map_page(dirty, 3),
                       map_page(clean, 2)),
        "one-superblock-damaged": image(superblock(4), bytearray(4096), [],
                                        map_page(clean, 1), empty),
        "v2-clean": image(superblock(1, version=2, shift=0), superblock(2, version=2, shift=0),
                          [], map_page(clean2, 1), empty),
    }
    # A journal of two commits, the first two blocks long, wrapping
    # the ring (tail at block 3): records add, dirty and drop blocks.
    recs = []
    for b in range(7, 900, 61):
        recs.append((slot_for(b, used), entry(b, b % 2 == 0)))
    first, second = recs[:6], recs[6:]
    j = [bytearray(4096)] * JBLOCKS
    j = list(j)
    j[3] = jblock(5, 0, 2, first[:3])
    j[0] = jblock(5, 1, 2, first[3:])
    j[1] = jblock(6, 0, 1, second + [(first[0][0], 0)])
    seeds["journal"] = image(superblock(7, jtail=3, jseq=5), superblock(6, jtail=3, jseq=5), j,
                             map_page(clean, 1), empty)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
