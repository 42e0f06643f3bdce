#!/usr/bin/env bats
# Boot-time assembly and the protection of the origin, through the udev
# rule and the tool as `make install-tool` installs them (tests/lib/
# boot.bash). Devices "appear at boot": the origin is a loop device (so
# that udev gives its filesystem a by-uuid link, as it would a disk's),
# detached and attached again (a kernel "change" event); the cache is a
# null_blk disk, powered off and on (each power-on is an "add" event).

load ../lib/common
load ../lib/boot

setup_file() {
	[ -n "${SSDCACHE_RESULTS:-}" ] || return 0
	boot_install
}

teardown_file() {
	[ -n "${SSDCACHE_RESULTS:-}" ] || return 0
	boot_uninstall
}

setup() {
	require_guest
	export SSDCACHECTL_REGISTRY=/etc/ssdcache/caches
	SSDCACHECTL=/usr/local/sbin/ssdcachectl
	mnt=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$mnt"
}

teardown() {
	umount "$mnt" 2>/dev/null || true
	# The registry first: udev's events for the devices going away must
	# not find them registered (and mark a loop device read-only again).
	rm -f /etc/ssdcache/caches /etc/ssdcache/caches.lock
	udevadm settle
	devices_cleanup
	udevadm settle
}

# A write-back cache "bt" (origin $o, a loop device; cache btc) with an ext4 filesystem
# whose last files are dirty on the cache only; $sum, $dirty, $fsuuid.
dirty_fs_cache() {
	ofile=$BATS_TEST_TMPDIR/origin.img
	o=$(loop_create "$ofile" 64)
	oname=${o#/dev/}
	c=$(nullb_create btc 16 fast)
	# No sequential bypass: the file's blocks must be dirty on the cache.
	run "$SSDCACHECTL" create bt --origin "$o" --cache "$c" --mode wb \
		--writeback-idle-ms 0 --dirty-high 100 --sequential-cutoff 0
	[ "$status" -eq 0 ] || fail "create: $output"
	_devices_register dm bt
	mkfs.ext4 -q -E nodiscard /dev/mapper/bt
	# The origin gets the filesystem's signature (and so, from udev, the
	# same by-uuid link as the cache's device), the file stays dirty.
	"$SSDCACHECTL" flush bt >/dev/null
	mount /dev/mapper/bt "$mnt"
	dd if=/dev/urandom of="$mnt/data" bs=64k count=32 conv=fsync status=none
	umount "$mnt"
	udevadm settle
	fsuuid=$(blkid -p -s UUID -o value /dev/mapper/bt)
	sum=$(dev_sum /dev/mapper/bt)
	dirty=$(ssdc_stat bt dirty)
	[ "$dirty" -gt 0 ] || fail "nothing dirty"
}

# The origin $o is read-only, hidden from systemd, udisks and by-uuid.
assert_protected() {
	udevadm settle
	assert_eq "$fsuuid" "$(blkid -p -s UUID -o value "$o")" "filesystem UUID on the origin"
	assert_eq 1 "$(blockdev --getro "$o")" "read-only flag of $o"
	props=$(udevadm info -q property "$o")
	[[ "$props" == *SSDCACHE_ROLE=origin* ]] || fail "udev: $props"
	[[ "$props" == *SYSTEMD_READY=0* ]] || fail "udev: $props"
	[[ "$props" == *UDISKS_IGNORE=1* ]] || fail "udev: $props"
	[ "$(readlink -f "/dev/disk/by-uuid/$fsuuid")" != "$(readlink -f "$o")" ] ||
		fail "by-uuid link names the origin"
	! dd if=/dev/zero of="$o" bs=4k count=1 oflag=direct status=none 2>/dev/null ||
		fail "a write to the origin went through"
	# mount(8) falls back to read-only, or refuses: never read-write.
	if mount "$o" "$mnt" 2>/dev/null; then
		findmnt -no OPTIONS "$mnt" | grep -qw ro || fail "origin mounted read-write"
		umount "$mnt"
	fi
}

origin_off() { losetup -d "$o"; udevadm settle; }
origin_on() { losetup "$o" "$ofile"; }

# Takes both devices away, then brings them back: "origin" or "cache" first.
replug() {
	origin_off
	nullb_power_off btc
	udevadm settle
	if [ "$1" = origin ]; then origin_on; else nullb_power_on btc; fi
	udevadm settle
	! dmsetup info bt >/dev/null 2>&1 || fail "assembled with only the $1"
	if [ "$1" = origin ]; then nullb_power_on btc; else origin_on; fi
	wait_assembled bt
}

@test "boot: udev assembles a registered cache as its devices appear, in either order, dirty blocks and all" {
	dirty_fs_cache
	udevadm settle
	assert_eq "$(readlink -f /dev/mapper/bt)" "$(readlink -f "/dev/disk/by-uuid/$fsuuid")" \
		"by-uuid link while loaded"
	grep -q "^bt [0-9a-f]\{32\} dev:$oname dev:btc writeback_idle_ms 0 dirty_high 100 sequential_cutoff 0$" \
		/etc/ssdcache/caches || fail "registry: $(cat /etc/ssdcache/caches)"
	run "$SSDCACHECTL" remove bt --keep-dirty
	[ "$status" -eq 0 ] || fail "remove: $output"
	[[ "$output" == *"stays reserved"* ]] || fail "remove: $output"
	assert_protected

	replug origin
	assert_eq "$dirty" "$(ssdc_stat bt dirty)" "dirty blocks after assembly (origin first)"
	assert_eq "$sum" "$(dev_sum /dev/mapper/bt)" "data after assembly (origin first)"
	# The table options given to create came back with the registry.
	[[ "$(dmsetup table bt)" == *"dirty_high 100"*"writeback_idle_ms 0"* ]] ||
		fail "table: $(dmsetup table bt)"
	assert_eq 0 "$(blockdev --getro "$o")" "origin read-only flag while cached"
	udevadm settle
	assert_eq "$(readlink -f /dev/mapper/bt)" "$(readlink -f "/dev/disk/by-uuid/$fsuuid")" \
		"by-uuid link after assembly"

	# set also records a setting in the registry, for later loads.
	"$SSDCACHECTL" set bt writeback_rate 500
	"$SSDCACHECTL" set bt dirty_high 90
	"$SSDCACHECTL" remove bt --keep-dirty >/dev/null
	replug cache
	[[ "$(dmsetup table bt)" == *"dirty_high 90 "*"writeback_rate 500 "* ]] ||
		fail "table after set and reassembly: $(dmsetup table bt)"
	assert_eq "$dirty" "$(ssdc_stat bt dirty)" "dirty blocks after assembly (cache first)"
	assert_eq "$sum" "$(dev_sum /dev/mapper/bt)" "data after assembly (cache first)"
	mount /dev/mapper/bt "$mnt"
	assert_eq 2097152 "$(stat -c %s "$mnt/data")" "file size"
	umount "$mnt"
}

@test "boot: the origin of a missing cache stays protected; nothing else may take it; remove --detach frees it" {
	dirty_fs_cache
	"$SSDCACHECTL" remove bt --keep-dirty >/dev/null
	nullb_power_off btc
	origin_off
	origin_on
	assert_protected
	! dmsetup info bt >/dev/null 2>&1 || fail "assembled without its cache"

	c2=$(nullb_create btx 16 fast)
	run "$SSDCACHECTL" create other --origin "$o" --cache "$c2"
	[ "$status" -eq 1 ] && [[ "$output" == *"is the origin of the cache bt"* ]] ||
		fail "create over a reserved origin: $status $output"
	run "$SSDCACHECTL" forget bt
	[ "$status" -eq 1 ] && [[ "$output" == *"dirty blocks"*"--force"* ]] ||
		fail "forget without --force: $status $output"

	nullb_power_on btc
	wait_assembled bt
	assert_eq "$dirty" "$(ssdc_stat bt dirty)" "dirty blocks"
	run "$SSDCACHECTL" forget bt --force
	[ "$status" -eq 1 ] && [[ "$output" == *"is loaded"*"--detach"* ]] || fail "forget while loaded: $output"
	run "$SSDCACHECTL" remove bt --detach
	[ "$status" -eq 0 ] || fail "remove --detach: $output"
	[[ "$output" == *"detached"* ]] || fail "remove --detach: $output"
	udevadm settle
	assert_eq 0 "$(blockdev --getro "$o")" "origin read-only flag after detach"
	assert_eq "$sum" "$(dev_sum "$o")" "origin after detach"
	assert_eq "$(readlink -f "$o")" "$(readlink -f "/dev/disk/by-uuid/$fsuuid")" \
		"by-uuid link after detach"
	! grep -q "^bt " /etc/ssdcache/caches || fail "still registered"
	run "$SSDCACHECTL" load "$c"
	[ "$status" -eq 1 ] && [[ "$output" == *"no ssdcache superblock"* ]] ||
		fail "load after detach: $output"
	mount "$o" "$mnt"
	assert_eq 2097152 "$(stat -c %s "$mnt/data")" "file on the origin"
	umount "$mnt"
}

@test "boot: forget --force gives up a lost cache: the origin is free, the cache is never loaded again" {
	dirty_fs_cache
	"$SSDCACHECTL" remove bt --keep-dirty >/dev/null
	nullb_power_off btc
	udevadm settle
	run "$SSDCACHECTL" forget bt --force
	[ "$status" -eq 0 ] && [[ "$output" == *"forgotten"* ]] || fail "forget --force: $output"
	udevadm settle
	assert_eq 0 "$(blockdev --getro "$o")" "origin read-only flag after forget"
	props=$(udevadm info -q property "$o")
	[[ "$props" != *SSDCACHE_ROLE* ]] || fail "udev still sees a cache origin: $props"
	dd if=/dev/zero of="$o" bs=4k count=1 seek=4096 oflag=direct status=none ||
		fail "origin not writable after forget"

	# The lost cache comes back: not assembled, and load refuses its stale blocks.
	nullb_power_on btc
	udevadm settle
	sleep 1
	! dmsetup info bt >/dev/null 2>&1 || fail "a forgotten cache was assembled"
	run "$SSDCACHECTL" load "$c" bt
	[ "$status" -eq 1 ] && [[ "$output" == *"was forgotten"* ]] || fail "load of a forgotten cache: $output"
	! dmsetup info bt >/dev/null 2>&1 || fail "a forgotten cache was loaded"
	# Formatting it again is the way back.
	run "$SSDCACHECTL" create bt --origin "$o" --cache "$c" --force
	[ "$status" -eq 0 ] || fail "create --force: $output"
	! grep -q "^- " /etc/ssdcache/caches || fail "tombstone left: $(cat /etc/ssdcache/caches)"
}

@test "boot: the systemd unit's command assembles the cache, for an instance named after either device" {
	# virtme-ng's systemd boot does not finish under TCG here, so the unit
	# runs as systemd would run it: ExecStart, %I = the kernel name udev gives.
	unit=/etc/systemd/system/ssdcache-assemble@.service
	exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
	[ -n "$exec_start" ] || fail "no ExecStart in $unit"
	dirty_fs_cache
	for dev in "$o" "$c"; do
		"$SSDCACHECTL" remove bt --keep-dirty >/dev/null
		udevadm settle
		! dmsetup info bt >/dev/null 2>&1 || fail "reassembled without a device's arrival"
		run ${exec_start//%I/${dev#/dev/}}
		[ "$status" -eq 0 ] || fail "$exec_start for $dev: $output"
		dmsetup info bt >/dev/null 2>&1 || fail "not assembled for $dev: $output"
		assert_eq "$dirty" "$(ssdc_stat bt dirty)" "dirty blocks (instance ${dev#/dev/})"
		assert_eq "$sum" "$(dev_sum /dev/mapper/bt)" "data (instance ${dev#/dev/})"
	done
	# A device of no cache: nothing to do, and success (the unit must not fail).
	nullb_create btz 16 fast >/dev/null
	run ${exec_start//%I/btz}
	[ "$status" -eq 0 ] && [ -z "$output" ] || fail "unit for a foreign device: $status $output"
}
