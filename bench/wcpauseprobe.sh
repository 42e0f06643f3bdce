#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Does a cache write back while the device keeps taking flushes (as under
# a database's fsyncs) and nothing else? For dm-writecache (its defaults,
# then pause_writeback 0) and ssdcache (its defaults, then
# writeback_idle_ms 0: the watermarks alone), each on disks of its own
# (the HDD and SSD models): 3/4 of the cache written (4 KiB blocks,
# O_DIRECT), then FLUSH_SECS with an fsync of the device every 0.5 s and
# no other I/O, then QUIET_SECS with none at all. The status is sampled
# every 2 s throughout (cache_figures in bench/peerprobe.bash):
# dm-writecache's free blocks and blocks under writeback, ssdcache's
# dirty and cleaned blocks.
#
# Inside the guest, from the top of the tree:
#   scripts/vm-run -k KVER -o DIR -- bench/wcpauseprobe.sh DIR
# Writes DIR/wcpauseprobe.txt: one line per sample (system, phase,
# seconds into the phase, the figures).
set -euo pipefail

out=${1:?usage: wcpauseprobe.sh OUTDIR}
flush_secs=${FLUSH_SECS:-30}
quiet_secs=${QUIET_SECS:-16}
# shellcheck source=bench/peerprobe.bash
source "$(dirname "$0")/peerprobe.bash"
peerprobe_init "$out" wcpauseprobe

# phase NAME SYSTEM PHASE SECS FLUSH: SECS of samples, with an fsync of
# /dev/mapper/NAME every 0.5 s when FLUSH is 1.
phase() {
	local name=$1 sys=$2 ph=$3 secs=$4 flush=$5 t0 now pid=
	if [ "$flush" = 1 ]; then
		python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
while True:
    os.fsync(fd)
    time.sleep(0.5)' "/dev/mapper/$name" &
		pid=$!
	fi
	t0=$(date +%s)
	while :; do
		now=$(($(date +%s) - t0))
		echo "$sys $ph $now $(cache_figures "$name")" | tee -a "$log"
		((now < secs)) || break
		sleep 2
	done
	if [ -n "$pid" ]; then
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	fi
}

one() {
	local sys=$1 name=$2 table=$3
	dmsetup create "$name" --table "$table"
	udevadm settle
	fill "/dev/mapper/$name"
	echo "$sys filled $(cache_figures "$name")" | tee -a "$log"
	phase "$name" "$sys" flushes "$flush_secs" 1
	phase "$name" "$sys" quiet "$quiet_secs" 0
	dmsetup remove --retry "$name"
}

one dm_writecache wp1 "$(wc_table 1)"
one dm_writecache_pause0 wp2 "$(wc_table 2 pause_writeback 0)"
one ssdcache wp3 "$(ssdcache_table 3)"
# Idleness off: what the watermarks alone write back (to dirty_low).
one ssdcache_idle0 wp4 "$(ssdcache_table 4 writeback_idle_ms 0)"
