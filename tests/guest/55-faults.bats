#!/usr/bin/env bats
# Device faults that the cache must absorb, and flushes it must pass on.

load ../lib/common

META=$SSDCACHE_TOP/tests/lib/ssdc_meta.py

@test "faults: an SSD data write failure drops the copy; the write succeeds" {
	require_guest
	origin=$(nullb_create fw_o 16 fast)
	ssd=$(nullb_create fw_s 8 fast)
	# Format through a plain mapping, then fail every write to the data
	# area while the metadata area keeps working.
	lin=$(dm_linear_create fw_c "$ssd")
	dm=$(ssdc_create fw "$origin" "$lin" writethrough format)
	dm_remove fw
	ds=$(python3 "$META" get-sb "$lin" data_start)
	total=$(dev_sectors "$ssd")
	dm_reload fw_c "0 $ds linear $ssd 0
$ds $((total - ds)) flakey $ssd $ds 0 100 1 error_writes"
	dm=$(ssdc_create fw "$origin" "$lin" writethrough)
	# Blocks 2500.. are clear of what udev's probe reads (and caches).
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/d" bs=4k count=64 status=none
	dd if="$BATS_TEST_TMPDIR/d" of="$dm" bs=4k seek=2500 oflag=direct status=none
	assert_eq ok "$(ssdc_stat fw state)"
	dmsetup message fw 0 reset_stats
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/d")" \
		"$(dd if="$dm" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" "through the cache"
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/d")" \
		"$(dd if="$origin" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" "origin"
	assert_eq 0 "$(ssdc_stat fw read_hits)" "hits on blocks whose SSD writes failed"
}

@test "faults: an SSD read failure is served from the origin" {
	require_guest
	origin=$(nullb_create fr_o 16 fast)
	ssd=$(nullb_create fr_s 8 fast)
	lin=$(dm_linear_create fr_c "$ssd")
	dm=$(ssdc_create fr "$origin" "$lin" writethrough format)
	dd if=/dev/urandom of="$dm" bs=4k count=64 seek=2500 oflag=direct status=none
	want=$(dd if="$origin" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)
	dm_remove fr
	ds=$(python3 "$META" get-sb "$lin" data_start)
	total=$(dev_sectors "$ssd")
	# dm-flakey's error_reads is newer than 6.1: an error target instead.
	dm_reload fr_c "0 $ds linear $ssd 0
$ds $((total - ds)) error"
	dm=$(ssdc_create fr "$origin" "$lin" writethrough)
	udevadm settle
	dmsetup message fr 0 reset_stats
	assert_eq "$want" "$(dd if="$dm" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" \
		"reads with a failing SSD"
	assert_eq 64 "$(ssdc_stat fr read_hits)" "reads that hit the failing SSD"
	assert_eq "$want" "$(dd if="$dm" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" \
		"again, now from the origin"
}

@test "faults: flushes and FUA writes reach the origin" {
	require_guest
	base=$(nullb_create fl_b 16 fast 4)
	log=$(nullb_create fl_l 64 fast)
	cache=$(nullb_create fl_c 8 fast)
	origin=$(dm_logwrites_create fl_o "$base" "$log")
	dm=$(ssdc_create fl "$origin" "$cache" writethrough format)
	dd if=/dev/urandom of="$dm" bs=4k count=4 oflag=direct conv=fsync status=none
	dd if=/dev/urandom of="$dm" bs=4k count=4 seek=16 oflag=direct,dsync status=none
	dm_remove fl
	dm_remove fl_o
	entries=$(python3 "$SSDCACHE_TOP/tests/lib/logwrites.py" list "$log")
	echo "$entries"
	grep -q FLUSH <<<"$entries" || fail "no flush reached the origin"
	grep -q FUA <<<"$entries" || fail "no FUA write reached the origin"
}
