#!/usr/bin/env bats
# The test helpers themselves: the fake disks must behave as the models
# say, or every later test proves nothing.

load ../lib/common

setup() { require_guest; }

@test "helpers: null_blk HDD and SSD models are configured as documented" {
	hdd=$(nullb_create hdd0 64 hdd)
	ssd=$(nullb_create ssd0 32 ssd)
	assert_eq $((64 * 2048)) "$(dev_sectors "$hdd")" "HDD size"
	assert_eq $((32 * 2048)) "$(dev_sectors "$ssd")" "SSD size"
	assert_eq 1 "$(cat $NULLB_CFS/hdd0/hw_queue_depth)" "HDD queue depth"
	assert_eq 4000000 "$(cat $NULLB_CFS/hdd0/completion_nsec)" "HDD latency"
	assert_eq 2 "$(cat $NULLB_CFS/hdd0/irqmode)" "HDD irqmode"
	assert_eq 64 "$(cat $NULLB_CFS/ssd0/hw_queue_depth)" "SSD queue depth"
	assert_eq 60000 "$(cat $NULLB_CFS/ssd0/completion_nsec)" "SSD latency"
	assert_eq 1 "$(cat $NULLB_CFS/hdd0/memory_backed)" "memory backed"
}

@test "helpers: null_blk keeps data (memory backed)" {
	dev=$(nullb_create mem0 16 fast)
	head -c 1048576 /dev/urandom >"$BATS_TEST_TMPDIR/pat"
	dd if="$BATS_TEST_TMPDIR/pat" of="$dev" bs=1M oflag=direct status=none
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/pat" | cut -d' ' -f1)" \
		"$(dd if="$dev" bs=1M count=1 iflag=direct status=none | md5sum | cut -d' ' -f1)" \
		"data read back"
}

@test "helpers: power cut drops unflushed writes, keeps flushed ones" {
	dev=$(nullb_create pc0 16 fast 8)
	pat=$BATS_TEST_TMPDIR/pat
	head -c 1048576 /dev/urandom >"$pat"
	want=$(md5sum <"$pat" | cut -d' ' -f1)
	first_mib() { dd if="$dev" bs=1M count=1 iflag=direct status=none | md5sum | cut -d' ' -f1; }

	# Written, not flushed: lost with the volatile cache.
	dd if="$pat" of="$dev" bs=1M oflag=direct status=none
	assert_eq "$want" "$(first_mib)" "before the power cut"
	nullb_power_off pc0
	nullb_power_on pc0
	[ "$(first_mib)" != "$want" ] || fail "unflushed data survived a power cut"

	# Written and flushed (fsync sends REQ_PREFLUSH): kept.
	dd if="$pat" of="$dev" bs=1M oflag=direct conv=fsync status=none
	nullb_power_off pc0
	nullb_power_on pc0
	assert_eq "$want" "$(first_mib)" "flushed data after the power cut"
}

@test "helpers: dm-flakey error_writes fails writes, passes reads" {
	dev=$(nullb_create fl0 16 fast)
	fl=$(dm_flakey_create fl "$dev" 0 100 error_writes)
	run dd if=/dev/zero of="$fl" bs=4k count=1 oflag=direct status=none
	[ "$status" -ne 0 ]
	dd if="$fl" of=/dev/null bs=4k count=1 iflag=direct status=none
}

@test "helpers: dm-delay and dm-linear wrappers map their device" {
	dev=$(nullb_create dl0 16 fast)
	dl=$(dm_delay_create dl "$dev" 1)
	ln=$(dm_linear_create ln "$dev")
	assert_eq "$(dev_sectors "$dev")" "$(dev_sectors "$dl")" "delay size"
	assert_eq "$(dev_sectors "$dev")" "$(dev_sectors "$ln")" "linear size"
	[[ "$(dmsetup table dl)" == *delay* ]]
	dd if=/dev/urandom of="$dl" bs=64k count=4 oflag=direct status=none
	assert_eq "$(dev_sum "$dev")" "$(dev_sum "$ln")" "same data through both"
}

@test "helpers: dm-log-writes records writes and marks" {
	dev=$(nullb_create lw0 16 fast)
	log=$(nullb_create lw1 32 fast)
	lw=$(dm_logwrites_create lw "$dev" "$log")
	dd if=/dev/urandom of="$lw" bs=4k count=8 oflag=direct conv=fsync status=none
	dm_logwrites_mark lw done
	dm_remove lw
	# The log starts with its superblock: magic 0x6a736677736872 ("rhswfsj").
	magic=$(od -A n -t x8 -N 8 "$log" | tr -d ' ')
	assert_eq 006a736677736872 "$magic" "log-writes magic"
	# ... and counts the entries it holds (8 writes, flushes, the mark).
	entries=$(od -A n -t u8 -j 16 -N 8 "$log" | tr -d ' ')
	[ "$entries" -ge 9 ] || fail "only $entries log entries"
}

@test "helpers: replaying a log-writes log to a mark rebuilds that state" {
	dev=$(nullb_create lw0 16 fast)
	log=$(nullb_create lw1 64 fast)
	replay=$(nullb_create lw2 16 fast)
	lw=$(dm_logwrites_create lw "$dev" "$log")
	dd if=/dev/urandom of="$lw" bs=4k count=64 oflag=direct conv=fsync status=none
	dm_logwrites_mark lw one
	at_one=$(dev_sum "$lw")
	dd if=/dev/urandom of="$lw" bs=4k seek=32 count=64 oflag=direct conv=fsync status=none
	dm_logwrites_mark lw two
	at_two=$(dev_sum "$lw")
	dm_remove lw
	lwpy=$SSDCACHE_TOP/tests/lib/logwrites.py
	[ -n "$(python3 -S "$lwpy" points "$log")" ] || fail "no flush points logged"
	python3 -S "$lwpy" replay "$log" "$replay" --to-mark one
	assert_eq "$at_one" "$(dev_sum "$replay")" "state at mark one"
	first=$(( $(python3 -S "$lwpy" list "$log" | grep -n 'mark=one$' | cut -d: -f1) ))
	python3 -S "$lwpy" replay "$log" "$replay" --from "$first" --to-mark two
	assert_eq "$at_two" "$(dev_sum "$replay")" "state at mark two"
}

@test "helpers: scsi_debug disk reads back what was written" {
	dev=$(scsi_debug_create 16)
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/pat" bs=64k count=4 status=none
	dd if="$BATS_TEST_TMPDIR/pat" of="$dev" bs=64k oflag=direct status=none
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/pat" | cut -d' ' -f1)" \
		"$(dd if="$dev" bs=64k count=4 iflag=direct status=none | md5sum | cut -d' ' -f1)"
}

@test "helpers: a failing test leaves no device behind" {
	run bats --tap "$SSDCACHE_TOP/tests/guest/fixtures/leaves-devices.bats"
	[ "$status" -ne 0 ]
	[[ "$output" == *"not ok 1"* ]]
	[ ! -e /dev/mapper/leftover ]
	[ ! -d "$NULLB_CFS/leftover0" ]
	[ ! -e /dev/leftover0 ]
}
