#!/usr/bin/env bats
# Devices that vanish or fail under load, suspend/resume and removal with
# I/O in flight, and media errors (scsi_debug, null_blk badblocks): no
# hang, no oops (the harness checks the kernel log), no acknowledged data
# lost.

load ../lib/common

META=$SSDCACHE_TOP/tests/lib/ssdc_meta.py
# Write-back without idle cleaning, nor cleaning below 100% dirty.
WB_OPTS="writeback_idle_ms 0 dirty_high 100"

# acked DEV: writes 256 random blocks at block 4096 with an fsync; the
# data is in $BATS_TEST_TMPDIR/acked.
acked() {
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/acked" bs=4k count=256 status=none
	dd if="$BATS_TEST_TMPDIR/acked" of="$1" bs=4k seek=4096 oflag=direct conv=fsync status=none
}

# acked_md5 DEV: the md5 of the acknowledged region as DEV reads it.
acked_md5() { dd if="$1" bs=4k count=256 skip=4096 iflag=direct status=none | md5sum; }

want_md5() { md5sum <"$BATS_TEST_TMPDIR/acked"; }

# load_bg DEV SECONDS: random 4 KiB to 64 KiB reads and writes on the
# first 4 MiB of DEV, in the background (errors allowed); sets load_pid.
# (Small enough that write-back never fills the cache with dirty blocks:
# at dirty_high 100 the cleaner would then write the acknowledged blocks
# back too, and the tests want them dirty.)
load_bg() {
	timeout 300 fio --name=load --filename="$1" --direct=1 --ioengine=libaio \
		--iodepth=16 --rw=randrw --bsrange=4k-64k --size=4M --time_based \
		--runtime="$2" --randrepeat=0 --continue_on_error=all \
		--output-format=terse >/dev/null 2>&1 &
	load_pid=$!
	# Until fio has the device open (it may take a while to start).
	for _ in $(seq 1 300); do
		[ "$(dmsetup info -c --noheadings -o open "$(basename "$1")")" -gt 0 ] && return 0
		sleep 0.1
	done
	fail "fio did not open $1"
}

# wait_load: waits for load_bg; fails if fio hung (timeout's status 124).
wait_load() {
	local rc=0
	wait "$load_pid" || rc=$?
	[ "$rc" != 124 ] || fail "I/O hung"
}

# busy_cache TAG: write-back cache TAG over null_blk disks TAG_o and TAG_s
# (origin, ssd, dm), with acknowledged data, under 10 s of load_bg: it is
# in flight when the tests make a device vanish a second or two in, and
# meets the errors for the rest.
busy_cache() {
	origin=$(nullb_create "${1}_o" 32 fast)
	ssd=$(nullb_create "${1}_s" 16 fast)
	dm=$(ssdc_create "$1" "$origin" "$ssd" writeback format $WB_OPTS)
	acked "$dm"
	load_bg "$dm" 10
}

@test "devices: the SSD vanishes under write-back load: no hang; acknowledged data comes back with it" {
	require_guest
	busy_cache sv
	sleep 2
	nullb_power_off sv_s
	wait_load
	# A flush must not claim durability the SSD cannot give.
	run dd if=/dev/zero of="$dm" bs=4k count=1 seek=5000 oflag=direct conv=fsync status=none
	[ "$status" -ne 0 ] || fail "a flush succeeded with the SSD gone"
	[ "$(ssdc_stat sv state)" != ok ] || fail "state ok with the SSD gone"
	dm_remove sv
	nullb_power_on sv_s
	dm=$(ssdc_create sv "$origin" "$ssd" writeback $WB_OPTS)
	assert_eq "$(want_md5)" "$(acked_md5 "$dm")" "acknowledged data after the SSD came back"
	"$SSDCACHECTL" flush sv
	assert_eq "$(want_md5)" "$(acked_md5 "$origin")" "origin after a flush"
}

@test "devices: the origin vanishes under write-back load: no hang; dirty data waits on the SSD" {
	require_guest
	busy_cache ov
	sleep 2
	nullb_power_off ov_o
	wait_load
	dmsetup message ov 0 flush
	sleep 2
	assert_eq "$(want_md5)" "$(acked_md5 "$dm")" "dirty blocks with the origin gone"
	[ "$(ssdc_stat ov dirty)" -ge 256 ] || fail "dirty blocks lost: $(ssdc_stat ov dirty)"
	dm_remove ov
	nullb_power_on ov_o
	dm=$(ssdc_create ov "$origin" "$ssd" writeback $WB_OPTS)
	"$SSDCACHECTL" flush ov
	assert_eq "$(want_md5)" "$(acked_md5 "$origin")" "origin after it came back and a flush"
}

@test "devices: suspend/resume, mode switches and stats reads with fio verify running" {
	require_guest
	origin=$(nullb_create sr_o 64 fast)
	ssd=$(nullb_create sr_s 16 fast)
	dm=$(ssdc_create sr "$origin" "$ssd" writeback format)
	# verify_backlog: written blocks are verified during the run.
	fio --name=verify --filename="$dm" --direct=1 --ioengine=libaio --iodepth=16 \
		--rw=randwrite --bsrange=4k-64k --size=48M --verify=crc32c --verify_fatal=1 \
		--verify_backlog=256 --time_based --runtime=20 --randrepeat=0 \
		--output-format=terse >"$BATS_TEST_TMPDIR/fio.out" 2>&1 &
	pid=$!
	rounds=0 modes=(writethrough writeback writearound writeback)
	while kill -0 "$pid" 2>/dev/null; do
		dmsetup suspend sr
		sleep 0.2
		dmsetup resume sr
		dmsetup message sr 0 mode "${modes[rounds % 4]}"
		find "$(sysdir sr)" -maxdepth 2 -type f -perm -0444 -exec cat {} + >/dev/null
		dmsetup status sr >/dev/null
		rounds=$((rounds + 1))
		sleep 0.3
	done
	wait "$pid" || { cat "$BATS_TEST_TMPDIR/fio.out"; fail "fio verify failed"; }
	# How many rounds fit depends on the machine (2 on the debug kernel).
	[ "$rounds" -ge 1 ] || fail "no round ran during the workload"
	"$SSDCACHECTL" flush sr
	read_all "$dm"
	assert_eq "$(dev_sum "$origin")" "$(dev_sum "$dm")" "cache vs origin after $rounds rounds"
}

@test "devices: remove while busy is refused; a forced remove fails the I/O and loses nothing acknowledged" {
	require_guest
	busy_cache rb
	sleep 1
	run dmsetup remove rb
	[ "$status" -ne 0 ] || fail "removed while in use"
	run "$SSDCACHECTL" remove rb --keep-dirty
	[ "$status" -ne 0 ] || fail "ssdcachectl removed it while in use"
	assert_eq ok "$(ssdc_stat rb state)"
	# --force swaps in a table that fails all I/O (our table is suspended
	# and destroyed); the device goes once fio lets go of it.
	dmsetup remove --force rb >/dev/null 2>&1 || true
	wait_load
	dmsetup remove --retry rb 2>/dev/null || true
	! dmsetup info rb >/dev/null 2>&1 || fail "rb still exists"
	dm=$(ssdc_create rb "$origin" "$ssd" writeback $WB_OPTS)
	assert_eq "$(want_md5)" "$(acked_md5 "$dm")" "acknowledged data after a forced remove"
	[ "$(ssdc_stat rb dirty)" -ge 256 ] || fail "dirty blocks lost: $(ssdc_stat rb dirty)"
}

# slot_sector CACHE_DEV ORIGIN_BLOCK: the SSD sector where a loaded (or
# removed) cache keeps that origin block, from ssdcachectl dump.
slot_sector() {
	local slot ds
	slot=$("$SSDCACHECTL" dump "$1" | awk -v b="$2" '$2 == b {print $1}')
	[ -n "$slot" ] || { echo "block $2 not cached" >&2; return 1; }
	ds=$(python3 -S "$META" get-sb "$1" data_start)
	echo $((ds + slot * 8))
}

# bad_ssd_cache TAG MODE [OPTS...]: a cache TAG in MODE formatted on a
# 16 MiB null_blk SSD ${TAG}_s over a 32 MiB origin ${TAG}_o, cleaning
# only when told, never degrading. Sets origin, ssd, opts and dm.
bad_ssd_cache() {
	local tag=$1 mode=$2
	shift 2
	origin=$(nullb_create "${tag}_o" 32 fast)
	ssd=$(nullb_create "${tag}_s" 16 fast)
	opts="writeback_idle_ms 0 dirty_high 100 error_limit 0 $*"
	dm=$(ssdc_create "$tag" "$origin" "$ssd" "$mode" format $opts)
}

# flush_until_dirty NAME N: a "flush" message to cache NAME, then up to
# 10 s for its dirty blocks to come down to N; the caller asserts it.
flush_until_dirty() {
	local i
	dmsetup message "$1" 0 flush
	for i in $(seq 1 100); do
		[ "$(ssdc_stat "$1" dirty)" = "$2" ] && return 0
		sleep 0.1
	done
}

# bad_sectors TAG +|- SECTOR: the 4 KiB block at SECTOR of null_blk
# ${TAG}_s made unreadable (+) or readable again (-).
bad_sectors() { echo "$2$3-$(($3 + 7))" >"$NULLB_CFS/${1}_s/badblocks"; }

@test "devices: null_blk bad blocks on the SSD: clean reads fall back to the origin, a dirty block is retried until readable" {
	require_guest
	bad_ssd_cache bb writethrough
	dd if=/dev/urandom of="$dm" bs=4k count=16 seek=3000 oflag=direct status=none
	dmsetup message bb 0 mode writeback
	acked "$dm"
	dm_remove bb
	clean=$(slot_sector "$ssd" 3005)
	dirty=$(slot_sector "$ssd" 4100)
	bad_sectors bb + "$clean"
	bad_sectors bb + "$dirty"
	dm=$(ssdc_create bb "$origin" "$ssd" writeback $opts)
	want=$(dd if="$origin" bs=4k count=16 skip=3000 iflag=direct status=none | md5sum)
	assert_eq "$want" "$(dd if="$dm" bs=4k count=16 skip=3000 iflag=direct status=none | md5sum)" \
		"clean blocks, one on a bad SSD sector"
	run dd if="$dm" of=/dev/null bs=4k count=1 skip=4100 iflag=direct status=none
	[ "$status" -ne 0 ] || fail "a dirty block on a bad SSD sector read without error"
	# The cleaner writes back all but that block, and keeps trying it.
	flush_until_dirty bb 1
	assert_eq 1 "$(ssdc_stat bb dirty)" "dirty blocks left"
	sleep 1
	[ "$(cat "$(sysdir bb)/writeback_backoff_ms")" -gt 0 ] || fail "no backoff"
	bad_sectors bb - "$dirty"
	wait_clean bb 60
	assert_eq "$(want_md5)" "$(acked_md5 "$origin")" "origin once the sector is readable again"
}

@test "devices: a bad SSD block inside a dirty run: the cleaner reads the run again block by block and writes back the rest" {
	require_guest
	bad_ssd_cache br writeback sequential_cutoff 0
	# One 32 KiB write: 8 blocks of one run, in 8 adjacent slots.
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/new" bs=32k count=1 status=none
	dd if="$BATS_TEST_TMPDIR/new" of="$dm" bs=32k count=1 seek=$((3000 / 8)) oflag=direct \
		status=none
	dm_remove br
	first=$(slot_sector "$ssd" 3000)
	bad=$(slot_sector "$ssd" 3003)
	assert_eq $((first + 3 * 8)) "$bad" "block 3003's slot, three after 3000's"
	bad_sectors br + "$bad"
	dm=$(ssdc_create br "$origin" "$ssd" writeback $opts)
	assert_eq 8 "$(ssdc_stat br dirty)" "dirty blocks"
	flush_until_dirty br 1
	assert_eq 1 "$(ssdc_stat br dirty)" "dirty blocks left: the bad one"
	# On the origin: the 7 good blocks new, block 3003 as it was.
	for b in 0 1 2 4 5 6 7; do
		assert_eq "$(dd if="$BATS_TEST_TMPDIR/new" bs=4k skip=$b count=1 status=none | md5sum)" \
			"$(blk "$origin" $((3000 + b)))" "block $((3000 + b)) on the origin"
	done
	assert_eq "$(dd if=/dev/zero bs=4k count=1 status=none | md5sum)" "$(blk "$origin" 3003)" \
		"block 3003 on the origin (never written back)"
	[ "$(cat "$(sysdir br)/stats/ssd_read_errors")" -ge 2 ] ||
		fail "SSD read errors: $(cat "$(sysdir br)/stats/ssd_read_errors"), not the run's and the block's"
	# Readable again: written back, and the origin holds all 8.
	bad_sectors br - "$bad"
	wait_clean br 60
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/new")" \
		"$(dd if="$origin" bs=4k count=8 skip=3000 iflag=direct status=none | md5sum)" "origin"
}

@test "devices: scsi_debug medium errors: on the SSD a cached read falls back; on the origin the caller gets EIO" {
	require_guest
	origin=$(nullb_create me_o 32 fast)
	ssd=$(scsi_debug_create 16 opts=0)
	dm=$(ssdc_create me "$origin" "$ssd" writethrough format)
	dd if=/dev/urandom of="$dm" bs=4k count=16 seek=3000 oflag=direct status=none
	dm_remove me
	sector=$(slot_sector "$ssd" 3007)
	echo "$sector" >/sys/module/scsi_debug/parameters/medium_error_start
	echo 8 >/sys/module/scsi_debug/parameters/medium_error_count
	echo 2 >/sys/bus/pseudo/drivers/scsi_debug/opts
	dm=$(ssdc_create me "$origin" "$ssd" writethrough)
	want=$(dd if="$origin" bs=4k count=16 skip=3000 iflag=direct status=none | md5sum)
	assert_eq "$want" "$(dd if="$dm" bs=4k count=16 skip=3000 iflag=direct status=none | md5sum)" \
		"reads over an SSD medium error"
	[ "$(cat "$(sysdir me)/stats/ssd_read_errors")" -ge 1 ] || fail "no SSD read error counted"
	echo 0 >/sys/bus/pseudo/drivers/scsi_debug/opts
	dm_remove me
	devices_cleanup

	# The origin: a medium error under an uncached block reaches the caller.
	origin=$(scsi_debug_create 32 opts=0)
	ssd=$(nullb_create me_s 16 fast)
	dm=$(ssdc_create me "$origin" "$ssd" writethrough format)
	echo 40000 >/sys/module/scsi_debug/parameters/medium_error_start
	echo 8 >/sys/module/scsi_debug/parameters/medium_error_count
	echo 2 >/sys/bus/pseudo/drivers/scsi_debug/opts
	run dd if="$dm" of=/dev/null bs=4k count=1 skip=5000 iflag=direct status=none
	[ "$status" -ne 0 ] || fail "a read over an origin medium error succeeded"
	[ "$(cat "$(sysdir me)/stats/origin_read_errors")" -ge 1 ] || fail "no origin read error counted"
	echo 0 >/sys/bus/pseudo/drivers/scsi_debug/opts
	dd if="$dm" of=/dev/null bs=4k count=1 skip=5000 iflag=direct status=none
}
