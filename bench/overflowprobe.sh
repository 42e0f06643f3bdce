#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Writes larger than the cache under fsyncs (a database's bulk load, or
# a write set past the cache): for the raw HDD model, dm-writecache and
# ssdcache in write-back mode (each with its defaults, on disks of its
# own: the HDD and SSD models, a 64 MiB SSD), 3/4 of the cache written
# first, then ROUNDS fio rounds of ROUND_SECS each: 4 KiB random writes
# over four times the cache (256 MiB of the origin), one at a time,
# an fsync after every 16. After each round: its IOPS, and the cache's
# status (dm-writecache: free blocks, blocks under writeback, writes
# sent around it; ssdcache: dirty blocks, blocks cleaned, write misses).
#
# Inside the guest, from the top of the tree:
#   scripts/vm-run -k KVER -o DIR -- bench/overflowprobe.sh DIR
# Writes DIR/overflowprobe.txt: one line per round.
set -euo pipefail

out=${1:?usage: overflowprobe.sh OUTDIR}
rounds=${ROUNDS:-4}
round_secs=${ROUND_SECS:-20}
# shellcheck source=bench/peerprobe.bash
source "$(dirname "$0")/peerprobe.bash"
peerprobe_init "$out" overflowprobe

# fio_iops DEV ARGS...: one fio job on DEV, its write IOPS.
fio_iops() {
	local dev=$1
	shift
	fio --name=ov --filename="$dev" --direct=1 --ioengine=psync --bs=4k \
		--output-format=json "$@" | python3 -c '
import json, sys
print(round(json.load(sys.stdin)["jobs"][0]["write"]["iops"], 1))'
}

# one SYSTEM DEV: the fill, then the rounds.
one() {
	local sys=$1 dev=$2 name=${2#/dev/mapper/} r
	udevadm settle
	fill "$dev"
	echo "$sys fill $(cache_figures "$name")" | tee -a "$log"
	for ((r = 0; r < rounds; r++)); do
		echo "$sys round $r iops $(fio_iops "$dev" --rw=randwrite \
			--size=$((cache_mb * 4))M --fsync=16 --time_based \
			--runtime="$round_secs" --randseed=$((r + 1))) $(cache_figures "$name")" |
			tee -a "$log"
	done
}

# dm_one SYSTEM NAME TABLE: one() on device-mapper device NAME, created
# from TABLE and removed after.
dm_one() {
	dmsetup create "$2" --table "$3"
	one "$1" "/dev/mapper/$2"
	dmsetup remove --retry "$2"
}

one raw_hdd "$(nullb_create pp_o0 512 hdd)"
dm_one dm_writecache ov_wc "$(wc_table 1)"
dm_one ssdcache_wb ov_sc "$(ssdcache_table 2)"
