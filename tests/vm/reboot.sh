#!/usr/bin/env bash
# Warm restart across a reboot, in two boots of the VM (check.sh runs
# them), through ssdcachectl and the udev rule: the devices are loop
# devices over files in DIR, which the host shares with both boots, and so
# is the tool's registry (DIR/caches, /etc/ssdcache/caches in the second
# boot, as /etc persists on a real machine).
#
#   reboot.sh write DIR    ssdcachectl create a write-back cache, write a
#                          verified workload with fsyncs, ssdcachectl
#                          remove --keep-dirty, record what it served
#   reboot.sh verify DIR   (the next boot) install the udev rule, attach
#                          the loop devices: udev assembles the cache, with
#                          the same dirty and cached blocks, the same data,
#                          every durability point kept; then remove
#                          --detach: the origin alone reads the same
set -euo pipefail
phase=$1 dir=$2
SSDC_REGISTRY=$(mktemp)
# shellcheck source=tests/lib/devices.bash
source "$SSDCACHE_TOP/tests/lib/devices.bash"
# shellcheck source=tests/lib/boot.bash
source "$SSDCACHE_TOP/tests/lib/boot.bash"
CC=$SSDCACHE_TOP/tests/lib/crashcheck.py
TOOL=$SSDCACHE_TOP/build/userspace/ssdcachectl

modprobe loop
loop() { losetup --find --show "$1"; }
stat_field() { dmsetup status rb | awk -v f="$1" '{print $f}'; }

if [ "$phase" = write ]; then
	truncate -s 16M "$dir/origin.img"
	truncate -s 8M "$dir/cache.img"
fi
if [ "$phase" = verify ]; then
	boot_install
	mkdir -p /etc/ssdcache
	cp "$dir/caches" /etc/ssdcache/caches
	TOOL=/usr/local/sbin/ssdcachectl
	export SSDCACHECTL_REGISTRY=/etc/ssdcache/caches
else
	export SSDCACHECTL_REGISTRY=$dir/caches
fi
origin=$(loop "$dir/origin.img")
cache=$(loop "$dir/cache.img")
trap 'dmsetup remove --retry rb 2>/dev/null || true; losetup -d "$origin" "$cache"; [ "$phase" = write ] || boot_uninstall' EXIT

case $phase in
write)
	"$TOOL" create rb --origin "$origin" --cache "$cache" --mode wb \
		--writeback-idle-ms 0 --dirty-high 100
	udevadm settle
	python3 "$CC" gen /dev/mapper/rb "$dir/state" 600 7
	python3 "$CC" check /dev/mapper/rb "$dir/state" --mark last >"$dir/md5"
	# The reads above installed blocks in the background: let them land.
	sleep 1
	stat_field 7 >"$dir/used"
	stat_field 8 >"$dir/dirty"
	[ "$(cat "$dir/dirty")" -gt 0 ]
	"$TOOL" remove rb --keep-dirty
	echo "reboot: wrote, $(cat "$dir/dirty") dirty of $(cat "$dir/used") cached; removed with --keep-dirty"
	;;
verify)
	# Nothing but udev (69-ssdcache.rules) loads the cache here.
	wait_assembled rb
	echo "reboot: udev assembled rb"
	udevadm settle
	# What recovery found, before udev's probe of the new device read
	# (and so cached) anything.
	loaded=$(dmesg | sed -n 's/.*ssdcache: .*: loaded \([0-9]*\) cached blocks of \([0-9]*\), \([0-9]*\) dirty$/\1\/\2 \3/p' | tail -n 1)
	[ "$loaded" = "$(cat "$dir/used") $(cat "$dir/dirty")" ] ||
		{ echo "recovered '$loaded' (cached/total dirty), before: $(cat "$dir/used") $(cat "$dir/dirty")"; exit 1; }
	[ "$(stat_field 8)" = "$(cat "$dir/dirty")" ]
	[ "$(python3 "$CC" check /dev/mapper/rb "$dir/state" --mark last)" = "$(cat "$dir/md5")" ]
	"$TOOL" remove rb --detach
	[ "$(blockdev --getro "$origin")" = 0 ]
	[ "$(python3 "$CC" check "$origin" "$dir/state" --mark last)" = "$(cat "$dir/md5")" ]
	echo "reboot: after the reboot, same blocks cached and dirty, same data; after remove --detach the origin alone is complete"
	;;
esac
