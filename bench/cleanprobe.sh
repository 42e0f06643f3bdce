#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The cleaner on a large cache: how long a "flush" message takes to write
# back DIRTY_MB of 4 KiB blocks scattered over a cache of SSD_GB, for
# builds of dm-ssdcache.ko side by side in one boot (their order reversed
# every round). The disks are null_blk without memory (fast model): the
# data is not kept, only the time the cleaner takes, which is then mostly
# the time it spends choosing blocks.
#
# Inside the guest, from the top of the tree, with the builds copied out
# of build/<KVER>/ first:
#   scripts/vm-run --no-module -k KVER -o DIR -- env \
#       VARIANTS="old=/tmp/old.ko new=/tmp/new.ko" ROUNDS=2 \
#       bench/cleanprobe.sh DIR
# Writes DIR/cleanprobe.txt: one line per flush (build, round, seconds,
# blocks cleaned).
set -euo pipefail

out=${1:?usage: cleanprobe.sh OUTDIR}
ssd_gb=${SSD_GB:-32}
dirty_mb=${DIRTY_MB:-64}
rounds=${ROUNDS:-2}
read -ra variants <<<"${VARIANTS:?VARIANTS=\"name=ko ...\"}"
# The test suites' helpers: null_blk models, ssdc_create, ssdc_stat.
# shellcheck source=tests/lib/common.bash
source "$(dirname "$0")/../tests/lib/common.bash"
export SSDC_REGISTRY=$out/devices

modprobe dm_mod
modprobe libcrc32c 2>/dev/null || true
_nullb_ready

# disk NAME: SSD_GB of null_blk without memory, the fast model.
disk() {
	local d=$NULLB_CFS/$1
	mkdir "$d"
	echo $((ssd_gb * 1024)) >"$d/size"
	echo 512 >"$d/blocksize"
	nullb_model "$d" fast
	echo 1 >"$d/power"
	udevadm settle
}
disk cp_o
disk cp_s

one() {
	local name=$1 ko=$2 rnd=$3 t0 t1 c0
	if grep -q '^dm_ssdcache ' /proc/modules; then rmmod dm_ssdcache; fi
	insmod "$ko"
	ssdc_create cp /dev/cp_o /dev/cp_s writeback format dirty_high 100 writeback_idle_ms 0 >/dev/null
	udevadm settle
	fio --name=dirty --filename=/dev/mapper/cp --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k --iodepth=16 --size=$((ssd_gb / 2))G \
		--io_size=${dirty_mb}M --randseed=$rnd --end_fsync=1 \
		--output=/dev/null
	c0=$(ssdc_stat cp cleaned)
	echo "cleanprobe: $name round $rnd: $(ssdc_stat cp dirty) dirty of $(ssdc_stat cp blocks) blocks"
	t0=$(date +%s.%N)
	dmsetup message cp 0 flush
	wait_clean cp 600
	t1=$(date +%s.%N)
	echo "$name $rnd $(echo "$t1 - $t0" | bc) $(( $(ssdc_stat cp cleaned) - c0 ))" | tee -a "$out/cleanprobe.txt"
	dmsetup remove --retry cp
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
for d in cp_o cp_s; do
	echo 0 >"$NULLB_CFS/$d/power"
	rmdir "$NULLB_CFS/$d"
done
