"""Device-mapper through its ioctls (include/uapi/linux/dm-ioctl.h), for
the tests that create and remove devices hundreds of times (the crash
sweeps, the corrupted-metadata rounds): under TCG a dmsetup process
costs about 0.2 s, far more than its ioctls. No udev cookie is sent and
nothing waits for udev: the callers stop udevd or pause its queue, and
devtmpfs makes the /dev/dm-N nodes."""

import errno
import fcntl
import os
import struct
import time

# struct dm_ioctl: version[3], data_size, data_start, target_count,
# open_count, flags, event_nr, padding, dev, name[128], uuid[129], data[7].
HDR = struct.Struct("=3IIIIiIIIQ128s129s7s")
# struct dm_target_spec: sector_start, length, status, next, target_type[16].
SPEC = struct.Struct("=QQiI16s")
MSG = struct.Struct("=Q")
assert HDR.size == 312 and SPEC.size == 40

CMD = {"create": 3, "remove": 4, "suspend": 6, "status": 7,
       "load": 9, "table_status": 12, "message": 14}
PERSISTENT_DEV, BUFFER_FULL = 1 << 3, 1 << 8


def _nr(cmd):
    # _IOWR(0xfd, cmd, struct dm_ioctl)
    return (3 << 30) | (HDR.size << 16) | (0xfd << 8) | CMD[cmd]


class DMError(OSError):
    pass


_ctl = None


def _control():
    global _ctl
    if _ctl is None:
        _ctl = os.open("/dev/mapper/control", os.O_RDWR)
    return _ctl


def ioctl(cmd, name, flags=0, dev=0, payload=b"", out=0, targets=0):
    """One ioctl on device NAME; returns (flags, dev, data) of the reply,
    data being the bytes after the header. OUT is how much room to give
    the kernel for its answer."""
    size = HDR.size + max(len(payload), out)
    size = (size + 7) & ~7
    hdr = HDR.pack(4, 0, 0, size, HDR.size, targets, 0, flags, 0, 0, dev,
                   name.encode(), b"", b"")
    buf = bytearray(hdr + payload + bytes(size - HDR.size - len(payload)))
    try:
        fcntl.ioctl(_control(), _nr(cmd), buf, True)
    except OSError as e:
        raise DMError(e.errno, f"{cmd} {name}: {os.strerror(e.errno)}"
                      " (the kernel log says why)") from None
    f = HDR.unpack_from(buf)
    return f[7], f[10], bytes(buf[f[4]:f[3]])


def _table(lines):
    """The payload of a table load: LINES is a list of
    (start, length, type, params)."""
    out = b""
    for i, (start, length, ttype, params) in enumerate(lines):
        p = params.encode() + b"\0"
        n = SPEC.size + len(p)
        n = (n + 7) & ~7
        nxt = n if i + 1 < len(lines) else 0
        out += SPEC.pack(start, length, 0, nxt, ttype.encode()) + p
        out += bytes(n - SPEC.size - len(p))
    return out


def parse_table(table):
    """'START LEN TYPE PARAMS...' lines, as dmsetup takes them."""
    lines = []
    for line in table.strip().split("\n"):
        start, length, ttype, *rest = line.split(None, 3)
        lines.append((int(start), int(length), ttype, rest[0] if rest else ""))
    return lines


def wait_node(path):
    for _ in range(500):
        if os.path.exists(path):
            return path
        time.sleep(0.01)
    raise DMError(errno.ENOENT, f"{path}: no device node")


def create(name, table, minor=None):
    """Creates and resumes device NAME with TABLE (dmsetup's text); with
    MINOR, as /dev/dm-MINOR. Returns its node. If the table does not
    load, the device is removed again and DMError raised."""
    flags, dev = 0, 0
    if minor is not None:
        flags, dev = PERSISTENT_DEV, os.makedev(dm_major(), minor)
    _, dev, _ = ioctl("create", name, flags, dev)
    try:
        lines = parse_table(table)
        ioctl("load", name, payload=_table(lines), targets=len(lines))
        ioctl("suspend", name)  # without DM_SUSPEND_FLAG: a resume
    except DMError:
        remove(name)
        raise
    return wait_node(f"/dev/dm-{os.minor(dev)}")


def remove(name, retries=100):
    """Removes device NAME; retries while it is busy (a closing opener)."""
    for i in range(retries):
        try:
            ioctl("remove", name)
            return
        except DMError as e:
            if e.errno != errno.EBUSY or i == retries - 1:
                raise
            time.sleep(0.05)


def exists(name):
    try:
        ioctl("status", name)
        return True
    except DMError as e:
        if e.errno == errno.ENXIO:
            return False
        raise


def status(name):
    """The status line of NAME's first target, as dmsetup prints it:
    'START LENGTH TYPE ...'."""
    flags, _, data = ioctl("table_status", name, out=16384)
    if flags & BUFFER_FULL:
        raise DMError(errno.ENOSPC, f"status {name}: longer than 16 KiB")
    start, length, _, _, ttype = SPEC.unpack_from(data)
    text = data[SPEC.size:].split(b"\0", 1)[0].decode()
    return f"{start} {length} {ttype.split(bytes(1))[0].decode()} {text}"


def message(name, msg, sector=0):
    ioctl("message", name, payload=MSG.pack(sector) + msg.encode() + b"\0")


_major = None


def dm_major():
    global _major
    if _major is None:
        with open("/proc/devices") as f:
            for line in f:
                w = line.split()
                if len(w) == 2 and w[1] == "device-mapper":
                    _major = int(w[0])
        if _major is None:
            raise DMError(errno.ENODEV, "no device-mapper major in /proc/devices")
    return _major
