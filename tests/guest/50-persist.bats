#!/usr/bin/env bats
# What survives: a reference model through reloads, a warm restart, races
# between fills and writes, and power cuts in the middle of a workload.

load ../lib/common

REF=$SSDCACHE_TOP/tests/lib/refmodel.py

@test "persist: reference model through I/O, reload and detach, both modes" {
	require_guest
	origin=$(nullb_create rm_o 32 fast)
	cache=$(nullb_create rm_c 4 fast)
	shadow=$BATS_TEST_TMPDIR/shadow
	seed=1
	for mode in writethrough writearound; do
		dm=$(ssdc_create rm "$origin" "$cache" $mode format force)
		python3 "$REF" run "$dm" "$shadow" 1500 $seed
		dm_remove rm
		dm=$(ssdc_create rm "$origin" "$cache" $mode)
		[ "$(ssdc_used rm)" -gt 0 ] || fail "$mode: nothing stayed cached"
		python3 "$REF" compare "$dm" "$shadow"
		python3 "$REF" run "$dm" "$shadow" 500 $((seed + 100))
		dm_remove rm
		python3 "$REF" compare "$origin" "$shadow"
		seed=$((seed + 1))
	done
}

@test "persist: warm restart keeps the hit ratio" {
	require_guest
	origin=$(nullb_create wr_o 64 fast)
	cache=$(nullb_create wr_c 16 fast)
	dm=$(ssdc_create wr "$origin" "$cache" writethrough format)
	pass() { dd if="$dm" of=/dev/null bs=4k count=512 skip=1024 iflag=direct status=none; }
	pass
	sleep 1
	dmsetup message wr 0 reset_stats
	pass
	before=$(ssdc_stat wr read_hits)
	assert_eq 512 "$before" "hits before the restart"
	dm_remove wr
	dm=$(ssdc_create wr "$origin" "$cache" writethrough)
	dmsetup message wr 0 reset_stats
	pass
	assert_eq "$before" "$(ssdc_stat wr read_hits)" "hits after the restart"
}

@test "persist: concurrent readers and writers on the same blocks never install stale data" {
	require_guest
	origin=$(nullb_create rc_o 16 fast)
	cache=$(nullb_create rc_c 8 fast)
	dm=$(ssdc_create rc "$origin" "$cache" writethrough format)
	fio --output-format=terse \
		--name=writer --filename="$dm" --direct=1 --ioengine=libaio --iodepth=4 \
		--rw=randwrite --bs=4k --size=1M --loops=20 --verify=crc32c \
		--verify_backlog=32 --verify_fatal=1 --randrepeat=0 \
		--name=reader1 --filename="$dm" --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randread --bs=4k --size=1M --loops=60 --randrepeat=0 \
		--name=reader2 --filename="$dm" --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randread --bs=16k --size=1M --loops=30 --randrepeat=0 >"$BATS_TEST_TMPDIR/fio.out" ||
		{ cat "$BATS_TEST_TMPDIR/fio.out"; false; }
	[ "$(ssdc_stat rc read_hits)" -gt 0 ]
	sleep 1
	assert_eq "$(dev_md5 "$origin")" "$(dev_md5 "$dm")" "cache vs origin"
	dm_remove rc
	dm=$(ssdc_create rc "$origin" "$cache" writethrough)
	assert_eq "$(dev_md5 "$origin")" "$(dev_md5 "$dm")" "after reload"
}

# power_cut MODE SECONDS: a workload on a cache over two null_blk disks with
# volatile write caches, cut off after SECONDS; then every block read
# through the reloaded cache must equal the origin's.
power_cut() {
	local mode=$1 secs=$2
	origin=$(nullb_create pc_o 32 fast 4)
	cache=$(nullb_create pc_c 8 fast 4)
	dm=$(ssdc_create pc "$origin" "$cache" $mode format)
	fio --name=load --filename="$dm" --direct=1 --ioengine=libaio --iodepth=16 \
		--rw=randrw --bsrange=4k-64k --size=32M --time_based --runtime=60 \
		--fsync=32 --randrepeat=0 --output-format=terse >/dev/null 2>&1 &
	fio_pid=$!
	sleep "$secs"
	nullb_power_off pc_c
	nullb_power_off pc_o
	wait "$fio_pid" || true
	dmsetup remove --retry pc
	nullb_power_on pc_o
	nullb_power_on pc_c
	dm=$(ssdc_create pc "$origin" "$cache" $mode)
	# Warm after the crash: blocks committed before the cut are still cached.
	[ "$(ssdc_used pc)" -gt 0 ] || fail "$mode, cut after ${secs}s: the cache came back cold"
	read_all "$dm"
	assert_eq "$(dev_md5 "$origin")" "$(dev_md5 "$dm")" "$mode, cut after ${secs}s"
	dm_remove pc
	devices_cleanup
}

@test "persist: power cut in writethrough: every block reads as the origin's" {
	require_guest
	for secs in 2 4 7; do
		power_cut writethrough $secs
	done
}

@test "persist: power cut in writearound: every block reads as the origin's" {
	require_guest
	for secs in 3 6; do
		power_cut writearound $secs
	done
}
