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
cache_mb=64
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
	local sys=$1 dev=$2 r
	udevadm settle
	fio_iops "$dev" --rw=randwrite --size=$((cache_mb * 3 / 4))M --randrepeat=1 >/dev/null
	echo "$sys fill $(cache_figures "${dev#/dev/mapper/}")" | tee -a "$log"
	for ((r = 0; r < rounds; r++)); do
		echo "$sys round $r iops $(fio_iops "$dev" --rw=randwrite \
			--size=$((cache_mb * 4))M --fsync=16 --time_based \
			--runtime="$round_secs" --randseed=$((r + 1))) $(cache_figures "${dev#/dev/mapper/}")" |
			tee -a "$log"
	done
}

o=$(nullb_create ov_o1 512 hdd)
one raw_hdd "$o"

o=$(nullb_create ov_o2 512 hdd)
s=$(nullb_create ov_s2 "$cache_mb" ssd)
dd if=/dev/zero of="$s" bs=4k count=1 oflag=direct status=none
dmsetup create ov_wc --table "0 $(dev_sectors "$o") writecache s $o $s 4096 0"
one dm_writecache /dev/mapper/ov_wc
dmsetup remove --retry ov_wc

o=$(nullb_create ov_o3 512 hdd)
s=$(nullb_create ov_s3 "$cache_mb" ssd)
dmsetup create ov_sc --table "0 $(dev_sectors "$o") ssdcache $o $s writeback 1 format"
one ssdcache_wb /dev/mapper/ov_sc
dmsetup remove --retry ov_sc
