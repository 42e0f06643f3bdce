#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# How long a "flush" message takes to clean BLOCKS dirty 4 KiB blocks
# written just before it (O_DIRECT, scattered over the cache device's
# size), for builds of dm-ssdcache.ko side by side in one boot (their
# order reversed every round). With FSYNC=0 (the default) the blocks are
# not synced when the message comes (no flush or FUA since they were
# written); FSYNC=1 fsyncs them first. The cleaner takes only synced
# blocks, so the first case also times how soon the flush gets them
# synced. The time runs from the message to the writeback state in sysfs
# reading "clean", polled every 5 ms. MODEL is the null_blk model of
# both disks (default fast: the time is then mostly the module's waits).
#
# Inside the guest, from the top of the tree, with the builds copied out
# of build/<KVER>/ first:
#   scripts/vm-run --no-module -k KVER -o DIR -- env \
#       VARIANTS="old=/tmp/old.ko new=/tmp/new.ko" ROUNDS=4 \
#       bench/flushprobe.sh DIR
# Writes DIR/flushprobe.txt: one line per flush (build, round, fsync,
# seconds).
set -euo pipefail

out=${1:?usage: flushprobe.sh OUTDIR}
blocks=${BLOCKS:-256}
rounds=${ROUNDS:-4}
fsync=${FSYNC:-0}
model=${MODEL:-fast}
read -ra variants <<<"${VARIANTS:?VARIANTS=\"name=ko ...\"}"
# The test suites' helpers: null_blk models, ssdc_create.
# shellcheck source=tests/lib/common.bash
source "$(dirname "$0")/../tests/lib/common.bash"
export SSDC_REGISTRY=$out/devices

modprobe dm_mod
modprobe libcrc32c 2>/dev/null || true
_nullb_ready

# disk NAME MB: memory-backed null_blk of the chosen model.
disk() {
	local d=$NULLB_CFS/$1
	mkdir "$d"
	echo "$2" >"$d/size"
	echo 512 >"$d/blocksize"
	echo 1 >"$d/memory_backed"
	nullb_model "$d" "$model"
	echo 1 >"$d/power"
	udevadm settle
}
disk fp_o 512
disk fp_s 256

one() {
	local name=$1 ko=$2 rnd=$3 secs
	if grep -q '^dm_ssdcache ' /proc/modules; then rmmod dm_ssdcache; fi
	insmod "$ko"
	ssdc_create fp /dev/fp_o /dev/fp_s writeback format force dirty_high 100 writeback_idle_ms 0 >/dev/null
	udevadm settle
	secs=$(python3 - /dev/mapper/fp "$blocks" "$rnd" "$fsync" <<'PY'
import mmap, os, random, subprocess, sys, time
dev, n, seed, sync = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
state = f"/sys/block/{os.path.basename(os.path.realpath(dev))}/ssdcache/writeback"
fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
buf[:] = os.urandom(4096)
# Within the cache device's 256 MiB: no block is refused for room.
for b in random.Random(seed).sample(range(256 * 256 - 4096), n):
    os.pwritev(fd, [buf], b * 4096)
if sync:
    os.fsync(fd)
t0 = time.monotonic()
subprocess.run(["dmsetup", "message", "fp", "0", "flush"], check=True)
while open(state).read().strip() != "clean":
    time.sleep(0.005)
print(f"{time.monotonic() - t0:.3f}")
os.close(fd)
PY
)
	echo "$name $rnd $fsync $secs" | tee -a "$out/flushprobe.txt"
	dmsetup remove --retry fp
}

for ((r = 0; r < rounds; r++)); do
	if ((r % 2)); then
		order=$(printf '%s\n' "${variants[@]}" | tac)
	else
		order=$(printf '%s\n' "${variants[@]}")
	fi
	for v in $order; do
		one "${v%%=*}" "${v#*=}" "$r"
	done
done
rmmod dm_ssdcache
for d in fp_o fp_s; do
	echo 0 >"$NULLB_CFS/$d/power"
	rmdir "$NULLB_CFS/$d"
done
