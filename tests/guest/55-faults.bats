#!/usr/bin/env bats
# Device faults that the cache must absorb, and flushes it must pass on.

load ../lib/common

META=$SSDCACHE_TOP/tests/lib/ssdc_meta.py

# faulty_cache TAG DATA_TABLE: origin ${TAG}_o and a cache device ${TAG}_c
# (a dm table over null_blk ${TAG}_s) formatted by ssdcache ${TAG}, whose
# data area is then remapped to DATA_TABLE ("error", or a flakey table
# taking the SSD and the data area's offset, appended by this function)
# while the metadata area keeps working. Sets origin, ssd and lin.
faulty_cache() {
	local tag=$1 data=$2 ds total
	origin=$(nullb_create "${tag}_o" 16 fast)
	ssd=$(nullb_create "${tag}_s" 8 fast)
	lin=$(dm_linear_create "${tag}_c" "$ssd")
	ssdc_create "$tag" "$origin" "$lin" writethrough format >/dev/null
	# Blocks 2500.. are clear of what udev's probe reads (and caches).
	dd if=/dev/urandom of="/dev/mapper/$tag" bs=4k count=64 seek=2500 oflag=direct status=none
	dm_remove "$tag"
	ds=$(python3 -S "$META" get-sb "$lin" data_start)
	total=$(dev_sectors "$ssd")
	case $data in
	error) data="error" ;;
	*) data="$data $ssd $ds $FLAKEY_ARGS" ;;
	esac
	dm_reload "${tag}_c" "0 $ds linear $ssd 0
$ds $((total - ds)) $data"
}

@test "faults: an SSD data write failure drops the copy; the write succeeds" {
	require_guest
	FLAKEY_ARGS="0 100 1 error_writes" faulty_cache fw flakey
	# Each error on its own (error_limit 0: the cache never degrades).
	dm=$(ssdc_create fw "$origin" "$lin" writethrough error_limit 0)
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/d" bs=4k count=64 status=none
	dd if="$BATS_TEST_TMPDIR/d" of="$dm" bs=4k count=32 seek=2500 oflag=direct status=none
	# The other half as two writes of 16 blocks: each a run, copied in one
	# clone per set's adjacent slots; each clone fails, and every block
	# it carried must be dropped.
	dd if="$BATS_TEST_TMPDIR/d" of="$dm" bs=64k count=2 iflag=skip_bytes skip=$((32 * 4096)) \
		oflag=direct,seek_bytes seek=$((2532 * 4096)) status=none
	assert_eq ok "$(ssdc_stat fw state)"
	# Closing a device opened for writing makes udev probe it again: let
	# the event arrive and the probe finish before counting hits.
	sleep 1
	udevadm settle
	dmsetup message fw 0 reset_stats
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/d")" \
		"$(dd if="$dm" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" "through the cache"
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/d")" \
		"$(dd if="$origin" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" "origin"
	assert_eq 0 "$(ssdc_stat fw read_hits)" "hits on blocks whose SSD writes failed"
}

@test "faults: an SSD read failure is served from the origin" {
	require_guest
	# dm-flakey's error_reads is newer than 6.1: an error target instead.
	faulty_cache fr error
	want=$(dd if="$origin" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)
	dm=$(ssdc_create fr "$origin" "$lin" writethrough error_limit 0)
	dmsetup message fr 0 reset_stats
	assert_eq "$want" "$(dd if="$dm" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" \
		"reads with a failing SSD"
	assert_eq 64 "$(ssdc_stat fr read_hits)" "reads that hit the failing SSD"
	assert_eq "$want" "$(dd if="$dm" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" \
		"again, now from the origin"
}

@test "faults: an SSD read failure on a dirty block is an error, never the origin's older data" {
	require_guest
	faulty_cache fd error
	# Back to a working data area, to make blocks 2600.. dirty on it.
	ds=$(python3 -S "$META" get-sb "$lin" data_start)
	dm_reload fd_c "0 $(dev_sectors "$ssd") linear $ssd 0"
	opts="writeback_idle_ms 0 dirty_high 100"
	dm=$(ssdc_create fd "$origin" "$lin" writeback $opts)
	old=$(dd if="$origin" bs=4k count=16 skip=2600 iflag=direct status=none | md5sum)
	dd if=/dev/urandom of="$dm" bs=4k count=16 seek=2600 oflag=direct status=none
	[ "$(ssdc_stat fd dirty)" -ge 16 ] || fail "not dirty: $(ssdc_stat fd dirty)"
	dm_remove fd
	dm_reload fd_c "0 $ds linear $ssd 0
$ds $(($(dev_sectors "$ssd") - ds)) error"
	dm=$(ssdc_create fd "$origin" "$lin" writeback $opts)
	for b in 2600 2607 2615; do
		run dd if="$dm" of="$BATS_TEST_TMPDIR/got" bs=4k count=1 skip=$b iflag=direct status=none
		[ "$status" -ne 0 ] || fail "block $b read without error: $(md5sum <"$BATS_TEST_TMPDIR/got")"
	done
	[ "$(ssdc_stat fd dirty)" -ge 16 ] || fail "dirty blocks lost: $(ssdc_stat fd dirty)"
	assert_eq "$old" "$(dd if="$origin" bs=4k count=16 skip=2600 iflag=direct status=none | md5sum)" \
		"origin (the failed reads must not have changed it)"
	# A clean block on the failing SSD is still served, from the origin.
	want=$(dd if="$origin" bs=4k count=1 skip=2500 iflag=direct status=none | md5sum)
	assert_eq "$want" "$(dd if="$dm" bs=4k count=1 skip=2500 iflag=direct status=none | md5sum)" \
		"a clean block"
}

@test "faults: metadata corrupted on its way from the SSD (dm-flakey corrupt_bio_byte) is refused, and nothing is written" {
	require_guest
	faulty_cache fc linear
	ds=$(python3 -S "$META" get-sb "$ssd" data_start)
	total=$(dev_sectors "$ssd")
	want=$(dd if="$origin" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)
	# Byte 25 of every read of the metadata area (in the superblock, the
	# cache's UUID) comes back changed: the value is its complement.
	b=$(dd if="$ssd" bs=4k count=1 iflag=direct status=none | od -An -tu1 -j24 -N1 | tr -d ' ')
	dm_reload fc_c "0 $ds flakey $ssd 0 0 1 5 corrupt_bio_byte 25 r $((255 - b)) 0
$ds $((total - ds)) linear $ssd $ds"
	# 6.1's dm-flakey looks for the byte after the read has completed,
	# when the bio's iterator is spent, and corrupts nothing (fixed later).
	got=$(dd if=/dev/mapper/fc_c bs=4k count=1 iflag=direct status=none | od -An -tu1 -j24 -N1 | tr -d ' ')
	[ "$got" != "$b" ] || skip "dm-flakey on $(uname -r) does not corrupt reads"
	assert_eq $((255 - b)) "$got" "the byte dm-flakey corrupts"
	before=$(dev_writes "$ssd" "$origin")
	dmesg_mark
	run dmsetup create fc --table "0 $(dev_sectors "$origin") ssdcache $origin /dev/mapper/fc_c writethrough"
	[ "$status" -ne 0 ] || fail "a cache whose metadata reads are corrupted was loaded"
	dmesg_since | grep -F 'superblocks are corrupted' || fail "no word of the corruption in the kernel log: $(dmesg_since)"
	assert_eq "$before" "$(dev_writes "$ssd" "$origin")" "writes to either device"
	# The same SSD without the fault loads, with its blocks cached.
	dm_reload fc_c "0 $total linear $ssd 0"
	dm=$(ssdc_create fc "$origin" /dev/mapper/fc_c writethrough)
	dmsetup message fc 0 reset_stats
	assert_eq "$want" "$(dd if="$dm" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" data
	assert_eq 64 "$(ssdc_stat fc read_hits)" "blocks still cached"
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
	entries=$(python3 -S "$SSDCACHE_TOP/tests/lib/logwrites.py" list "$log")
	echo "$entries"
	grep -q FLUSH <<<"$entries" || fail "no flush reached the origin"
	grep -q FUA <<<"$entries" || fail "no FUA write reached the origin"
}

@test "faults: past error_limit a clean cache degrades to pass-through, and stays so across a reload until cleared" {
	require_guest
	faulty_cache dg error
	want=$(dd if="$origin" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)
	dmesg_mark
	dm=$(ssdc_create dg "$origin" "$lin" writethrough error_limit 4)
	assert_eq "$want" "$(dd if="$dm" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" \
		"reads with a failing SSD"
	assert_eq degraded "$(ssdc_stat dg state)"
	assert_eq degraded "$(cat "$(sysdir dg)/health")" "sysfs health"
	dmesg_since | grep -q "errors on cache device.*degraded" || fail "no message: $(dmesg_since)"
	# Pass-through: neither misses nor writes put anything on the SSD.
	sleep 1
	used=$(ssdc_used dg)
	dd if="$dm" of=/dev/null bs=4k count=32 skip=3000 iflag=direct status=none
	dd if=/dev/urandom of="$dm" bs=4k count=16 seek=3100 oflag=direct status=none
	sleep 1
	assert_eq "$used" "$(ssdc_used dg)" "blocks in use after misses and writes"
	errors=$(cat "$(sysdir dg)/stats/ssd_read_errors")
	assert_eq "$want" "$(dd if="$dm" bs=4k count=64 skip=2500 iflag=direct status=none | md5sum)" "again"
	assert_eq "$errors" "$(cat "$(sysdir dg)/stats/ssd_read_errors")" "SSD reads once degraded"

	# Latched: recorded in the superblock, kept across a reload.
	dm_remove dg
	assert_eq 1 "$(python3 -S "$META" get-sb "$lin" flags)" "superblock flags"
	run "$SSDCACHECTL" check "$lin"
	[ "$status" -eq 0 ] || fail "check: $output"
	[[ "$output" == *degraded* ]] || fail "check does not say degraded: $output"
	dm_reload dg_c "0 $(dev_sectors "$ssd") linear $ssd 0"
	dm=$(ssdc_create dg "$origin" "$lin" writethrough error_limit 4)
	assert_eq degraded "$(ssdc_stat dg state)" "after a reload"

	# Only the operator clears it; then caching resumes.
	run "$SSDCACHECTL" clear-degraded dg
	[ "$status" -eq 0 ] || fail "clear-degraded: $output"
	assert_eq ok "$(ssdc_stat dg state)" "after clear-degraded"
	assert_eq 0 "$(python3 -S "$META" get-sb "$lin" flags)" "superblock flags after clear"
	dd if="$dm" of=/dev/null bs=4k count=16 skip=4000 iflag=direct status=none
	sleep 1
	dmsetup message dg 0 reset_stats
	want=$(dd if="$origin" bs=4k count=16 skip=4000 iflag=direct status=none | md5sum)
	assert_eq "$want" "$(dd if="$dm" bs=4k count=16 skip=4000 iflag=direct status=none | md5sum)" "re-read"
	assert_eq 16 "$(ssdc_stat dg read_hits)" "hits once cleared"
}

@test "faults: write-back on a failing SSD and origin: errors reach the caller, dirty blocks stay, the cache degrades and drains with backoff" {
	require_guest
	base=$(nullb_create wd_b 16 fast)
	origin=$(dm_linear_create wd_o "$base")
	ssd=$(nullb_create wd_s 8 fast)
	lin=$(dm_linear_create wd_c "$ssd")
	opts="writeback_idle_ms 0 dirty_high 100 error_limit 0"
	dm=$(ssdc_create wd "$origin" "$lin" writeback format $opts)
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/d" bs=4k count=16 status=none
	dd if="$BATS_TEST_TMPDIR/d" of="$dm" bs=4k seek=2600 oflag=direct status=none
	assert_eq 16 "$(ssdc_stat wd dirty)"
	dm_remove wd
	ds=$(python3 -S "$META" get-sb "$lin" data_start)
	total=$(dev_sectors "$ssd")
	dm_reload wd_c "0 $ds linear $ssd 0
$ds $((total - ds)) flakey $ssd $ds 0 100 1 error_writes"
	dm=$(ssdc_create wd "$origin" "$lin" writeback $opts)

	# A write-back write the SSD fails returns the error; nothing else is lost.
	for b in 2700 2701 2702; do
		run dd if=/dev/urandom of="$dm" bs=4k count=1 seek=$b oflag=direct status=none
		[ "$status" -ne 0 ] || fail "write-back write to block $b succeeded on a failing SSD"
	done
	assert_eq ok "$(ssdc_stat wd state)" "with error_limit 0"
	assert_eq 16 "$(ssdc_stat wd dirty)"
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/d")" \
		"$(dd if="$dm" bs=4k count=16 skip=2600 iflag=direct status=none | md5sum)" "dirty blocks"

	# The origin fails writes too (before the cache degrades and its
	# cleaner starts): then, with a limit, the next error degrades.
	dm_reload wd_o "0 $(dev_sectors "$base") flakey $base 0 0 100 1 error_writes"
	dmsetup message wd 0 error_limit 4
	run dd if=/dev/urandom of="$dm" bs=4k count=1 seek=2703 oflag=direct status=none
	assert_eq degraded "$(ssdc_stat wd state)"
	# New writes go to the origin, whose errors reach the caller.
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/n" bs=4k count=1 status=none
	run dd if="$BATS_TEST_TMPDIR/n" of="$dm" bs=4k seek=2800 oflag=direct status=none
	[ "$status" -ne 0 ] || fail "a write to a failing origin succeeded"
	sleep 2
	assert_eq 16 "$(ssdc_stat wd dirty)" "dirty blocks while writeback fails"
	[ "$(cat "$(sysdir wd)/writeback_backoff_ms")" -gt 0 ] || fail "no writeback backoff"
	[ "$(cat "$(sysdir wd)/stats/origin_write_errors")" -gt 0 ] || fail "no failed writeback"
	assert_eq "$(dd if=/dev/zero bs=4k count=16 status=none | md5sum)" \
		"$(dd if="$base" bs=4k count=16 skip=2600 iflag=direct status=none | md5sum)" \
		"origin after failed writebacks"
	# A write to a dirty block waits for its writeback...
	dd if="$BATS_TEST_TMPDIR/n" of="$dm" bs=4k seek=2605 oflag=direct status=none &
	pid=$!
	sleep 2
	kill -0 "$pid" 2>/dev/null || fail "the write to a dirty block did not wait"
	# ... which succeeds once the origin works again.
	dm_reload wd_o "0 $(dev_sectors "$base") linear $base 0"
	wait "$pid" || fail "the write to a dirty block failed"
	wait_clean wd 60
	assert_eq 0 "$(cat "$(sysdir wd)/writeback_backoff_ms")" "backoff after success"
	cp "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/want"
	dd if="$BATS_TEST_TMPDIR/n" of="$BATS_TEST_TMPDIR/want" bs=4k seek=5 conv=notrunc status=none
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/want")" \
		"$(dd if="$base" bs=4k count=16 skip=2600 iflag=direct status=none | md5sum)" "origin"
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/want")" \
		"$(dd if="$dm" bs=4k count=16 skip=2600 iflag=direct status=none | md5sum)" "through the cache"
}
