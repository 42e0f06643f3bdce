# SPDX-License-Identifier: GPL-2.0
# Shared by bench/wcpauseprobe.sh and bench/overflowprobe.sh: the test
# suites' helpers (null_blk models, ssdc_stat), the modules, and each
# cache's figures from its status line, and the tables of caches on
# disks of their own (the HDD and SSD models, a cache_mb SSD).
# peerprobe_init OUTDIR NAME sets $log (OUTDIR/NAME.txt, emptied).

# shellcheck source=tests/lib/common.bash
source "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/common.bash"

cache_mb=64

peerprobe_init() {
	export SSDC_REGISTRY=$1/devices
	log=$1/$2.txt
	: >"$log"
	modprobe dm_mod
	modprobe dm_writecache
	modprobe libcrc32c 2>/dev/null || true
}

# cache_figures NAME: dm-writecache's free blocks of all, blocks under
# writeback and writes sent around it; ssdcache's dirty blocks of all,
# blocks cleaned and write misses. Nothing for a name that is no
# device-mapper device (a raw disk).
cache_figures() {
	local f
	dmsetup info "$1" >/dev/null 2>&1 || return 0
	read -ra f <<<"$(dmsetup status "$1")"
	if [ "${f[2]}" = writecache ]; then
		echo "free ${f[5]}/${f[4]} writeback ${f[6]} writes_around ${f[12]}"
	else
		echo "dirty $(ssdc_stat "$1" dirty)/$(ssdc_stat "$1" blocks | cut -d/ -f2)" \
			"cleaned $(ssdc_stat "$1" cleaned) write_misses $(ssdc_stat "$1" write_misses)"
	fi
}

# fill DEV: 3/4 of the cache's nominal size written to DEV, 4 KiB
# random writes, one at a time, the same blocks for every system.
fill() {
	fio --name=fill --filename="$1" --rw=randwrite --bs=4k --direct=1 \
		--ioengine=psync --size=$((cache_mb * 3 / 4))M --randrepeat=1 \
		--output=/dev/null
}

# wc_table N [OPTION VALUE...]: a dm-writecache table (SSD mode, 4 KiB
# blocks) on disks of its own, pp_oN and pp_sN, the SSD's first block
# zeroed so that it starts empty.
wc_table() {
	local n=$1 o s
	shift
	o=$(nullb_create "pp_o$n" 512 hdd)
	s=$(nullb_create "pp_s$n" "$cache_mb" ssd)
	dd if=/dev/zero of="$s" bs=4k count=1 oflag=direct status=none
	echo "0 $(dev_sectors "$o") writecache s $o $s 4096 $#${*:+ $*}"
}

# ssdcache_table N [OPTION VALUE...]: a write-back ssdcache table,
# formatted, on disks of its own likewise.
ssdcache_table() {
	local n=$1 o s
	shift
	o=$(nullb_create "pp_o$n" 512 hdd)
	s=$(nullb_create "pp_s$n" "$cache_mb" ssd)
	echo "0 $(dev_sectors "$o") ssdcache $o $s writeback $(($# + 1)) format${*:+ $*}"
}
