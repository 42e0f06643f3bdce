#!/usr/bin/env bats
# The pass-through target: every I/O reaches the origin unchanged.

load ../lib/common

setup() {
	require_guest
	origin=$(nullb_create pt0 64 fast)
	dm=$(dm_create pt "0 $(dev_sectors "$origin") ssdcache $origin")
}

# fio_verify DEV BS_RANGE: random writes with crc32c verification.
fio_verify() {
	fio --name=verify --filename="$1" --direct=1 --ioengine=libaio \
		--iodepth=16 --rw=randwrite --bsrange="$2" --size=32M \
		--verify=crc32c --verify_fatal=1 --do_verify=1 \
		--randrepeat=0 --output-format=terse >"$BATS_TEST_TMPDIR/fio.out" 2>&1 ||
		{ cat "$BATS_TEST_TMPDIR/fio.out"; return 1; }
}

@test "passthrough: fio verify=crc32c with 4 KiB writes" {
	fio_verify "$dm" 4k-4k
}

@test "passthrough: fio verify=crc32c with 512 B to 128 KiB writes" {
	fio_verify "$dm" 512-128k
}

@test "passthrough: the origin holds exactly what was written" {
	dd if=/dev/urandom of="$dm" bs=1M count=16 oflag=direct conv=fsync status=none
	assert_eq "$(dev_md5 "$origin")" "$(dev_md5 "$dm")" "origin vs target"
}

@test "passthrough: unaligned 512-byte I/O at odd sectors" {
	for s in 1 7 13 4095; do
		head -c 512 /dev/urandom >"$BATS_TEST_TMPDIR/s"
		dd if="$BATS_TEST_TMPDIR/s" of="$dm" bs=512 seek=$s oflag=direct status=none
		got=$(dd if="$origin" bs=512 skip=$s count=1 iflag=direct status=none | md5sum)
		assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/s")" "$got" "sector $s"
	done
}

@test "passthrough: discard reaches the origin" {
	dd if=/dev/urandom of="$dm" bs=1M count=4 oflag=direct status=none
	blkdiscard -o 0 -l $((4 << 20)) "$dm"
	zeros=$(head -c $((4 << 20)) /dev/zero | md5sum | cut -d' ' -f1)
	assert_eq "$zeros" "$(dd if="$origin" bs=1M count=4 iflag=direct status=none | md5sum | cut -d' ' -f1)" \
		"origin after discard"
}

@test "passthrough: status and table lines" {
	run dmsetup status pt
	[ "$status" -eq 0 ]
	[[ "$output" == *"ssdcache 1 passthrough"* ]]
	run dmsetup table pt
	[[ "$output" == *"ssdcache $(cat /sys/block/pt0/dev)"* ]]
}

@test "passthrough: an unknown message is refused" {
	run dmsetup message pt 0 no_such_message
	[ "$status" -ne 0 ]
}
