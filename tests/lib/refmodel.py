#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Reference-model test for a block device.

    refmodel.py run DEV SHADOW OPS SEED   random reads and writes of random
                                          sizes and offsets (512-byte
                                          granularity, O_DIRECT); every read
                                          is compared with the shadow copy,
                                          which is then saved to SHADOW
    refmodel.py compare DEV SHADOW        the whole device equals SHADOW

Exit status 1 with the first differing offset on any mismatch.
"""
import mmap
import os
import random
import sys

SECTOR = 512
MAX_IO = 128 * 1024


def open_direct(dev, write):
    return os.open(dev, (os.O_RDWR if write else os.O_RDONLY) | os.O_DIRECT)


def read_at(fd, buf, off, n):
    view = memoryview(buf)[:n]
    got = os.preadv(fd, [view], off)
    if got != n:
        raise OSError(f"short read at {off}: {got} of {n}")
    return bytes(view)


def device_size(fd):
    return os.lseek(fd, 0, os.SEEK_END)


def whole(fd, size):
    buf = mmap.mmap(-1, 1 << 20)
    out = bytearray()
    for off in range(0, size, 1 << 20):
        n = min(1 << 20, size - off)
        out += read_at(fd, buf, off, n)
    return out


def first_diff(a, b):
    for i in range(0, len(a), SECTOR):
        if a[i:i + SECTOR] != b[i:i + SECTOR]:
            return i
    return -1


def run(dev, shadow_path, ops, seed):
    rng = random.Random(seed)
    fd = open_direct(dev, True)
    size = device_size(fd)
    shadow = whole(fd, size)
    buf = mmap.mmap(-1, MAX_IO)
    for i in range(ops):
        n = rng.randint(1, MAX_IO // SECTOR) * SECTOR
        # Favour a small hot region so that reads hit what was written.
        span = size if rng.random() < 0.3 else min(size, 4 << 20)
        off = rng.randrange(0, (span - n) // SECTOR + 1) * SECTOR
        if rng.random() < 0.5:
            data = rng.randbytes(n)
            buf[:n] = data
            if os.pwritev(fd, [memoryview(buf)[:n]], off) != n:
                raise OSError(f"short write at {off}")
            shadow[off:off + n] = data
        else:
            got = read_at(fd, buf, off, n)
            if got != shadow[off:off + n]:
                d = first_diff(got, shadow[off:off + n])
                print(f"refmodel: op {i}: read of {n} at {off} differs at byte {off + d}",
                      file=sys.stderr)
                return 1
    os.close(fd)
    with open(shadow_path, "wb") as f:
        f.write(shadow)
    print(f"refmodel: {ops} operations matched the shadow copy")
    return 0


def compare(dev, shadow_path):
    fd = open_direct(dev, False)
    got = whole(fd, device_size(fd))
    os.close(fd)
    with open(shadow_path, "rb") as f:
        want = f.read()
    if got != want:
        print(f"refmodel: {dev} differs from {shadow_path} at byte {first_diff(got, want)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "run" and len(a) == 5:
        sys.exit(run(a[1], a[2], int(a[3]), int(a[4])))
    if a and a[0] == "compare" and len(a) == 3:
        sys.exit(compare(a[1], a[2]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
