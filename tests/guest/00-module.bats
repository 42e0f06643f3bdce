#!/usr/bin/env bats
# The module itself: loaded by the harness, registered, unloads cleanly.

load ../lib/common

setup() { require_guest; }

@test "module: dm-ssdcache is loaded and the target is registered" {
	[ -d /sys/module/dm_ssdcache ]
	run dmsetup targets
	[ "$status" -eq 0 ]
	[[ "$output" == *ssdcache* ]]
}

@test "module: unloads and loads again cleanly" {
	dmesg_mark
	rmmod dm_ssdcache
	[ ! -d /sys/module/dm_ssdcache ]
	run dmsetup targets
	[[ "$output" != *ssdcache* ]]
	insmod "$SSDCACHE_KO"
	[ -d /sys/module/dm_ssdcache ]
	run dmsetup targets
	[[ "$output" == *ssdcache* ]]
	# Neither step may have complained.
	run dmesg_since
	[[ "$output" != *ssdcache* ]] || fail "unexpected kernel messages: $output"
}

@test "module: cannot be unloaded while a device uses it, can after" {
	origin=$(nullb_create mod0 16 fast)
	cache=$(nullb_create mod1 8 fast)
	ssdc_create modt "$origin" "$cache" writethrough format
	run rmmod dm_ssdcache
	[ "$status" -ne 0 ]
	[ -d /sys/module/dm_ssdcache ]
	dm_remove modt
	rmmod dm_ssdcache
	insmod "$SSDCACHE_KO"
}
