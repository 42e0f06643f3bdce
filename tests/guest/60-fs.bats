#!/usr/bin/env bats
# Filesystems on the cache, as users run them: a file workload with
# fsync, a clean fsck, a remount with the data verified, and the origin
# alone still holding a clean filesystem once the cache is detached.

load ../lib/common

setup() {
	require_guest
	mnt=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$mnt"
}

teardown() {
	umount "$mnt" 2>/dev/null || true
	devices_cleanup
}

# fio_files ARGS...: the same file workload for writing and verifying.
fio_files() {
	fio --name=fs --directory="$mnt" --nrfiles=4 --size=24M --rw=randwrite \
		--bsrange=4k-64k --fsync=16 --verify=crc32c --verify_fatal=1 \
		--randrepeat=1 --output-format=terse "$@" >"$BATS_TEST_TMPDIR/fio.out" 2>&1 ||
		{ cat "$BATS_TEST_TMPDIR/fio.out"; return 1; }
}

# fs_cycle FS MODE ORIGIN_MB
fs_cycle() {
	local fs=$1 mode=$2 size=$3 check
	origin=$(nullb_create fs_o "$size" fast)
	cache=$(nullb_create fs_c 16 fast)
	dm=$(ssdc_create fsc "$origin" "$cache" "$mode" format writeback_idle_ms 0 dirty_high 100)
	case $fs in
	ext4) mkfs.ext4 -q -F "$dm"; check=(e2fsck -fn) ;;
	xfs) mkfs.xfs -q -f "$dm"; check=(xfs_repair -n) ;;
	esac
	mount "$dm" "$mnt"
	fio_files
	umount "$mnt"
	"${check[@]}" "$dm"
	mount "$dm" "$mnt"
	fio_files --verify_only
	umount "$mnt"
	if [ "$mode" = writeback ]; then
		# Dirty blocks come back with a reload; then write them back.
		[ "$(ssdc_stat fsc dirty)" -gt 0 ] || fail "no dirty block"
		dm_remove fsc
		dm=$(ssdc_create fsc "$origin" "$cache" "$mode")
		"${check[@]}" "$dm"
		dmsetup message fsc 0 flush
		wait_clean fsc
	fi
	dm_remove fsc
	# The origin alone: a clean filesystem with the same files.
	"${check[@]}" "$origin"
	mount "$origin" "$mnt"
	fio_files --verify_only
	umount "$mnt"
	devices_cleanup
}

@test "fs: ext4 on writethrough" {
	fs_cycle ext4 writethrough 128
}

@test "fs: ext4 on writearound" {
	fs_cycle ext4 writearound 128
}

@test "fs: ext4 on writeback" {
	fs_cycle ext4 writeback 128
}

@test "fs: xfs on writeback" {
	fs_cycle xfs writeback 320
}

@test "fs: xfs on writethrough" {
	fs_cycle xfs writethrough 320
}

