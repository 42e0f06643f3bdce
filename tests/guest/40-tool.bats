#!/usr/bin/env bats
# ssdcachectl against real device-mapper devices.

load ../lib/common

setup() { require_guest; }

@test "ssdcachectl: list shows ssdcache devices only" {
	dev=$(nullb_create tl0 16 fast)
	cache=$(nullb_create tl2 8 fast)
	other=$(nullb_create tl1 16 fast)
	ssdc_create tool1 "$dev" "$cache" writethrough format
	dm_linear_create notcache "$other"
	run "$SSDCACHECTL" list
	[ "$status" -eq 0 ]
	assert_eq "tool1" "$output" "list"
}

@test "ssdcachectl: status prints the target's status line" {
	dev=$(nullb_create tl0 16 fast)
	cache=$(nullb_create tl2 8 fast)
	ssdc_create tool1 "$dev" "$cache" writearound format
	run "$SSDCACHECTL" status tool1
	[ "$status" -eq 0 ]
	[[ "$output" == "tool1: 2 writearound 4096 "*" ok clean "* ]] || fail "status: $output"
}

@test "ssdcachectl: status of a missing or foreign device says so" {
	run "$SSDCACHECTL" status nosuchdev
	[ "$status" -eq 3 ]
	[[ "$output" == *"nosuchdev: no such device"* ]]
	other=$(nullb_create tl1 16 fast)
	dm_linear_create notcache "$other"
	run "$SSDCACHECTL" status notcache
	[ "$status" -eq 3 ]
	[[ "$output" == *"not an ssdcache device"* ]]
}
