# SPDX-License-Identifier: GPL-2.0
# Shared by bench/wcpauseprobe.sh and bench/overflowprobe.sh: the test
# suites' helpers (null_blk models, ssdc_stat), the modules, and each
# cache's figures from its status line. Sourced with OUTDIR and the
# probe's name: peerprobe_init OUTDIR NAME sets $log (OUTDIR/NAME.txt,
# emptied).

# shellcheck source=tests/lib/common.bash
source "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/common.bash"

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
