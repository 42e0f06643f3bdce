#!/usr/bin/env bash
# Warm restart across a reboot, in two boots of the VM (check.sh runs
# them): the devices are loop devices over files in DIR, which the host
# shares with both boots.
#
#   reboot.sh write DIR    format a write-back cache, write a verified
#                          workload with fsyncs, remove it with its dirty
#                          blocks, record what it served
#   reboot.sh verify DIR   (the next boot) load it: same dirty and cached
#                          blocks, same data, every durability point kept;
#                          then write back and detach: the origin alone
#                          reads the same
set -euo pipefail
phase=$1 dir=$2
SSDC_REGISTRY=$(mktemp)
# shellcheck source=tests/lib/devices.bash
source "$SSDCACHE_TOP/tests/lib/devices.bash"
CC=$SSDCACHE_TOP/tests/lib/crashcheck.py

modprobe loop
loop() { losetup --find --show "$1"; }
stat_field() { dmsetup status rb | awk -v f="$1" '{print $f}'; }

if [ "$phase" = write ]; then
	truncate -s 16M "$dir/origin.img"
	truncate -s 8M "$dir/cache.img"
fi
origin=$(loop "$dir/origin.img")
cache=$(loop "$dir/cache.img")
trap 'dmsetup remove --retry rb 2>/dev/null || true; losetup -d "$origin" "$cache"' EXIT
table="0 $(blockdev --getsz "$origin") ssdcache $origin $cache writeback"
opts="writeback_idle_ms 0 dirty_high 100"

case $phase in
write)
	dmsetup create rb --table "$table 5 format $opts"
	udevadm settle
	python3 "$CC" gen /dev/mapper/rb "$dir/state" 600 7
	python3 "$CC" check /dev/mapper/rb "$dir/state" --mark last >"$dir/md5"
	# The reads above installed blocks in the background: let them land.
	sleep 1
	stat_field 7 >"$dir/used"
	stat_field 8 >"$dir/dirty"
	[ "$(cat "$dir/dirty")" -gt 0 ]
	echo "reboot: wrote, $(cat "$dir/dirty") dirty of $(cat "$dir/used") cached"
	;;
verify)
	dmsetup create rb --table "$table 4 $opts"
	udevadm settle
	# What recovery found, before udev's probe of the new device read
	# (and so cached) anything.
	loaded=$(dmesg | sed -n 's/.*ssdcache: .*: loaded \([0-9]*\) cached blocks of \([0-9]*\), \([0-9]*\) dirty$/\1\/\2 \3/p' | tail -n 1)
	[ "$loaded" = "$(cat "$dir/used") $(cat "$dir/dirty")" ] ||
		{ echo "recovered '$loaded' (cached/total dirty), before: $(cat "$dir/used") $(cat "$dir/dirty")"; exit 1; }
	[ "$(stat_field 8)" = "$(cat "$dir/dirty")" ]
	[ "$(python3 "$CC" check /dev/mapper/rb "$dir/state" --mark last)" = "$(cat "$dir/md5")" ]
	dmsetup message rb 0 flush
	for _ in $(seq 600); do
		[ "$(stat_field 8)" = 0 ] && break
		sleep 0.1
	done
	[ "$(stat_field 8)" = 0 ]
	dmsetup remove --retry rb
	[ "$(python3 "$CC" check "$origin" "$dir/state" --mark last)" = "$(cat "$dir/md5")" ]
	echo "reboot: after the reboot, same blocks cached and dirty, same data, origin complete"
	;;
esac
