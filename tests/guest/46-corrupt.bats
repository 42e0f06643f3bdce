#!/usr/bin/env bats
# Damaged metadata, judged by both loaders: the module's and ssdcachectl
# check's must agree on every image (tests/lib/corrupt_diff.py). The
# images are the fuzzer's seeds (tests/fuzz/corpus) with random damage in
# every metadata structure; udev is paused so that nothing reads the
# device between the load and the count.

load ../lib/common

setup() { require_guest; }

teardown() {
	local rc=0
	udev_queue_start || rc=1
	dmsetup remove --retry cdiff >/dev/null 2>&1 || true
	devices_cleanup || rc=1
	return $rc
}

@test "corrupted metadata: the module and ssdcachectl check agree on 60 damaged images" {
	origin=$(nullb_create cdo 512 fast)
	cache=$(nullb_create cdc 2 fast)
	udevadm settle
	udev_queue_stop
	# One fixed random sequence per kernel: reproducible, and each kernel
	# sees other images.
	rseed=$(uname -r | cksum | cut -d' ' -f1)
	run python3 -S "$SSDCACHE_TOP/tests/lib/corrupt_diff.py" "$SSDCACHECTL" "$cache" "$origin" \
		"$SSDCACHE_TOP/tests/fuzz/corpus" 60 "$rseed" "$SSDCACHE_RESULTS"
	udev_queue_start
	echo "$output" | tee "$SSDCACHE_RESULTS/corrupt-diff.txt"
	[ "$status" -eq 0 ]
	[[ "$output" == *"60 rounds agree"* ]]
}
