#!/usr/bin/env bats
# Bad table lines: each is refused with a specific error, and the origin
# is left untouched.

load ../lib/common

setup() {
	require_guest
	origin=$(nullb_create tb0 16 fast)
	dd if=/dev/urandom of="$origin" bs=1M count=16 oflag=direct status=none
	before=$(dev_md5 "$origin")
	size=$(dev_sectors "$origin")
}

# refused TABLE EXPECTED_ERROR
refused() {
	dmesg_mark
	run dmsetup create bad --table "$1"
	[ "$status" -ne 0 ] || { dmsetup remove bad; fail "table accepted: $1"; }
	[ ! -e /dev/mapper/bad ] || fail "device left behind"
	dmesg_since | grep -F "ssdcache: $2" ||
		fail "no '$2' in the kernel log: $(dmesg_since)"
	assert_eq "$before" "$(dev_md5 "$origin")" "origin contents"
}

@test "table: no arguments" {
	refused "0 $size ssdcache" "Invalid argument count"
}

@test "table: too many arguments" {
	refused "0 $size ssdcache $origin extra" "Invalid argument count"
}

@test "table: nonexistent origin device" {
	refused "0 $size ssdcache /dev/does-not-exist" "Cannot open origin device"
}

@test "table: target shorter than the origin" {
	refused "0 $((size - 8)) ssdcache $origin" "Target length differs from the origin size"
}

@test "table: target longer than the origin" {
	refused "0 $((size + 8)) ssdcache $origin" "Target length differs from the origin size"
}
