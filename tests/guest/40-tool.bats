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
	[[ "$output" == "tool1: 3 writearound 4096 "*" ok clean "* ]] || fail "status: $output"
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

# A write-back cache "fl" that cleans only when asked, with 4 MiB of
# random 4 KiB writes dirty on it; $sum is the device's checksum then.
dirty_cache() {
	dev=$(nullb_create flo 64 fast)
	cache=$(nullb_create flc 16 fast)
	table_opts="writeback_idle_ms 0 dirty_high 100 $*"
	ssdc_create fl "$dev" "$cache" writeback format $table_opts >/dev/null
	fio_verify /dev/mapper/fl 4k-4k 4m
	[ "$(ssdc_stat fl dirty)" -gt 0 ] || fail "nothing dirty"
	sum=$(dev_sum /dev/mapper/fl)
}

@test "ssdcachectl flush: writes every dirty block back; the origin alone then has the data" {
	dirty_cache
	run "$SSDCACHECTL" flush fl
	[ "$status" -eq 0 ] || fail "flush: $status $output"
	[[ "$output" == *"fl: clean"* ]] || fail "flush: $output"
	assert_eq 0 "$(ssdc_stat fl dirty)" "dirty after flush"
	run "$SSDCACHECTL" remove fl
	[ "$status" -eq 0 ] || fail "remove: $output"
	assert_eq "$sum" "$(dev_sum "$dev")" "origin after flush and remove"
}

@test "ssdcachectl flush: Ctrl-C cancels cleanly, the rest stays dirty" {
	dirty_cache writeback_rate 20
	before=$(ssdc_stat fl dirty)
	"$SSDCACHECTL" flush fl >"$BATS_TEST_TMPDIR/flush.out" 2>&1 &
	pid=$!
	# Ctrl-C once the flush is under way (the tool may start slowly).
	for _ in $(seq 1 300); do
		[ "$(ssdc_stat fl writeback)" = flushing ] && break
		sleep 0.1
	done
	kill -INT "$pid"
	status=0
	wait "$pid" || status=$?
	output=$(cat "$BATS_TEST_TMPDIR/flush.out")
	[ "$status" -eq 130 ] || fail "flush under Ctrl-C: $status $output"
	[[ "$output" == *"cancelled"* ]] || fail "flush: $output"
	assert_eq dirty "$(ssdc_stat fl writeback)" "writeback state after cancel"
	left=$(ssdc_stat fl dirty)
	[ "$left" -gt 0 ] && [ "$left" -lt "$before" ] || fail "dirty $before -> $left"
	assert_eq "$sum" "$(dev_sum /dev/mapper/fl)" "data after cancel"
}

@test "ssdcachectl remove: refuses dirty blocks without --flush or --keep-dirty; --keep-dirty keeps them for the next load" {
	dirty_cache
	dirty=$(ssdc_stat fl dirty)
	run "$SSDCACHECTL" remove fl
	[ "$status" -eq 1 ] || fail "remove with dirty blocks: $status $output"
	[[ "$output" == *"$dirty dirty blocks"*--flush*--keep-dirty* ]] || fail "remove: $output"
	dmsetup info fl >/dev/null || fail "the device went away"
	run "$SSDCACHECTL" remove fl --flush --keep-dirty
	[ "$status" -eq 2 ]

	run "$SSDCACHECTL" remove fl --keep-dirty
	[ "$status" -eq 0 ] || fail "remove --keep-dirty: $output"
	! dmsetup info fl >/dev/null 2>&1 || fail "fl still exists"
	ssdc_create fl "$dev" "$cache" writeback $table_opts >/dev/null
	assert_eq "$dirty" "$(ssdc_stat fl dirty)" "dirty blocks after the next load"
	assert_eq "$sum" "$(dev_sum /dev/mapper/fl)" "data after the next load"

	run "$SSDCACHECTL" remove fl --flush
	[ "$status" -eq 0 ] || fail "remove --flush: $output"
	assert_eq "$sum" "$(dev_sum "$dev")" "origin after remove --flush"
}

@test "ssdcachectl remove: refuses a device in use, and names a missing one" {
	dev=$(nullb_create flo 64 fast)
	cache=$(nullb_create flc 16 fast)
	ssdc_create fl "$dev" "$cache" writethrough format >/dev/null
	sleep 60 </dev/mapper/fl &
	holder=$!
	run "$SSDCACHECTL" remove fl
	kill "$holder"
	wait "$holder" 2>/dev/null || true
	[ "$status" -eq 1 ] || fail "remove while open: $status $output"
	[[ "$output" == *"in use"* ]] || fail "remove: $output"
	run "$SSDCACHECTL" remove nosuch
	[ "$status" -eq 3 ]
	[[ "$output" == *"nosuch: no such device"* ]]
	run "$SSDCACHECTL" flush nosuch
	[ "$status" -eq 3 ]
	run "$SSDCACHECTL" remove fl
	[ "$status" -eq 0 ] || fail "remove: $output"
}

@test "ssdcachectl create: --block-size and --run-size format the cache, among table options, and a load needs neither" {
	dev=$(nullb_create bso 64 fast)
	cache=$(nullb_create bsc 16 fast)
	run "$SSDCACHECTL" create bs --origin "$dev" --cache "$cache" --mode wb --run-size 32768 \
		--dirty-high 90 --block-size 8192
	[ "$status" -eq 0 ] || fail "create: $output"
	_devices_register dm bs
	assert_eq 8192 "$(ssdc_stat bs block_size)" "block size"
	[[ "$(dmsetup table bs)" == *"dirty_high 90"* ]] || fail "table: $(dmsetup table bs)"
	fio_verify /dev/mapper/bs 8k-8k 4m
	run "$SSDCACHECTL" remove bs --flush
	[ "$status" -eq 0 ] || fail "remove: $output"
	assert_eq 16 "$(python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" get-sb "$cache" block_sectors)" \
		"block_sectors in the superblock"
	assert_eq 2 "$(python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" get-sb "$cache" set_shift)" \
		"set_shift of 4-block runs"
	run "$SSDCACHECTL" load "$cache" bs2
	[ "$status" -eq 0 ] || fail "load: $output"
	_devices_register dm bs2
	assert_eq 8192 "$(ssdc_stat bs2 block_size)" "block size after load"
	# The load names the block size it found (the table always shows it).
	[[ "$(dmsetup table bs2)" != *"run_size"* && "$(dmsetup table bs2)" != *"format"* ]] ||
		fail "format options registered: $(dmsetup table bs2)"
	[[ "$(dmsetup table bs2)" == *"dirty_high 90"* ]] || fail "table after load: $(dmsetup table bs2)"
}

@test "ssdcachectl create/load: create, write, remove --keep-dirty, load: same data, same dirty blocks" {
	dev=$(nullb_create lco 64 fast)
	cache=$(nullb_create lcc 16 fast)
	# No idle cleaning (registered, so the load passes it again): the dirty
	# count must not change however slow the remove and the load are.
	# 64 KiB runs (part of the format: not registered, the load needs none).
	run "$SSDCACHECTL" create lc --origin "$dev" --cache "$cache" --mode wb --policy fifo \
		--writeback-idle-ms 0 --dirty-high 100 --run-size 65536
	[ "$status" -eq 0 ] || fail "create: $output"
	[[ "$output" == *"/dev/mapper/lc"* ]] || fail "create: $output"
	[[ "$output" == *"no /dev/disk/by-id name"* ]] || fail "no warning about the unstable name: $output"
	_devices_register dm lc
	[[ "$(dmsetup table lc)" == *" writeback "*"policy fifo"*"origin_id dev:lco"* ]] ||
		fail "table: $(dmsetup table lc)"
	fio_verify /dev/mapper/lc 4k-4k 4m
	sum=$(dev_sum /dev/mapper/lc)
	dirty=$(ssdc_stat lc dirty)
	[ "$dirty" -gt 0 ] || fail "nothing dirty"
	run "$SSDCACHECTL" remove lc --keep-dirty
	[ "$status" -eq 0 ] || fail "remove: $output"
	assert_eq 4 "$(python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" get-sb "$cache" set_shift)" \
		"set_shift of 16-block runs"

	run "$SSDCACHECTL" load "$cache" lc2
	[ "$status" -eq 0 ] || fail "load: $output"
	_devices_register dm lc2
	assert_eq writeback "$(ssdc_stat lc2 mode)" "mode after load"
	assert_eq "$dirty" "$(ssdc_stat lc2 dirty)" "dirty after load"
	assert_eq "$sum" "$(dev_sum /dev/mapper/lc2)" "data after load"
	# A second load of the same cache is refused: it is in use.
	run "$SSDCACHECTL" load "$cache" lc3
	[ "$status" -eq 1 ] || fail "second load: $status $output"
	[[ "$output" == *"in use"* ]] || fail "second load: $output"
	run "$SSDCACHECTL" remove lc2 --flush
	[ "$status" -eq 0 ] || fail "remove --flush: $output"
	assert_eq "$sum" "$(dev_sum "$dev")" "origin after remove --flush"
	# Without a name, load takes the registered one, which the last load
	# set; a cache the registry does not know is named after its UUID.
	run "$SSDCACHECTL" load "$cache"
	[ "$status" -eq 0 ] || fail "load without a name: $output"
	_devices_register dm lc2
	assert_eq /dev/mapper/lc2 "$output" "load without a name"
	"$SSDCACHECTL" remove lc2
	run env SSDCACHECTL_REGISTRY="$BATS_TEST_TMPDIR/empty" "$SSDCACHECTL" load "$cache"
	[ "$status" -eq 0 ] || fail "load, unregistered: $output"
	name=${output##*/}
	_devices_register dm "$name"
	[[ "$name" == ssdc-* ]] || fail "load named it $name"
}

@test "ssdcachectl create: a cache too large for RAM is refused with the kernel's figures" {
	dev=$(nullb_create lco 64 fast)
	nullb_past_ram lcb
	run "$SSDCACHECTL" create lc --origin "$dev" --cache /dev/lcb
	[ "$status" -eq 1 ] || fail "create: $status $output"
	[[ "$output" == *"the kernel refused the new cache: table: "*"Not enough RAM for the cache's block map"* ]] ||
		fail "no reason: $output"
	grep -qE "blocks of 4096 bytes need [0-9]+ MiB of RAM \($(ram_each_re) each\), [0-9]+ MiB available" <<<"$output" ||
		fail "no figures: $output"
	! dmsetup info lc >/dev/null 2>&1 || fail "lc was created"
}

@test "ssdcachectl create: refuses a cache holding a filesystem, a partition table or a cache, and devices in use" {
	dev=$(nullb_create lco 64 fast)
	cache=$(nullb_create lcc 16 fast)
	other=$(nullb_create lcx 16 fast)
	mkfs.ext4 -q "$cache"
	run "$SSDCACHECTL" create lc --origin "$dev" --cache "$cache"
	[ "$status" -eq 1 ] || fail "create over ext4: $status $output"
	[[ "$output" == *"ext4"*--force* ]] || fail "create over ext4: $output"
	! dmsetup info lc >/dev/null 2>&1 || fail "lc was created"

	wipefs -qa "$cache"
	# An MBR with one Linux partition (no partitioning tool needed).
	/usr/bin/python3 - "$cache" <<-'PY'
		import struct, sys
		with open(sys.argv[1], "r+b") as f:
		    f.seek(446)
		    f.write(struct.pack("<B3sB3sII", 0, b"\0\2\0", 0x83, b"\0\0\0", 2048, 8192))
		    f.seek(510)
		    f.write(b"\x55\xaa")
	PY
	run "$SSDCACHECTL" create lc --origin "$dev" --cache "$cache"
	[ "$status" -eq 1 ] && [[ "$output" == *"dos partition table"* ]] || fail "over a partition table: $output"

	run "$SSDCACHECTL" create lc --origin "$dev" --cache "$cache" --force
	[ "$status" -eq 0 ] || fail "create --force: $output"
	_devices_register dm lc
	run "$SSDCACHECTL" remove lc
	[ "$status" -eq 0 ] || fail "remove: $output"
	run "$SSDCACHECTL" create lc --origin "$dev" --cache "$cache"
	[ "$status" -eq 1 ] && [[ "$output" == *"ssdcache superblock (a cache of dev:lco)"* ]] ||
		fail "over a cache: $output"

	dm_linear_create holder "$other" >/dev/null
	run "$SSDCACHECTL" create lc --origin "$dev" --cache "$other" --force
	[ "$status" -eq 1 ] && [[ "$output" == *"in use: held by dm-"* ]] || fail "held cache: $output"
	run "$SSDCACHECTL" create lc --origin "$dev" --cache "$dev"
	[ "$status" -eq 1 ] && [[ "$output" == *"same device"* ]] || fail "same device: $output"
	run "$SSDCACHECTL" create lc --origin /dev/nosuch --cache "$cache"
	[ "$status" -eq 1 ] && [[ "$output" == *"/dev/nosuch"* ]] || fail "missing origin: $output"
	run "$SSDCACHECTL" create lc --origin "$dev" --cache "$cache" --mode fast
	[ "$status" -eq 2 ]
	run "$SSDCACHECTL" create lc --origin "$dev"
	[ "$status" -eq 2 ]
	run "$SSDCACHECTL" create holder --origin "$dev" --cache "$cache" --force
	[ "$status" -eq 1 ] && [[ "$output" == *"exists already"* ]] || fail "existing name: $output"
	# What only the kernel checks comes back with the kernel's reason.
	small=$(nullb_create lcs 1 fast)
	dev2=$(nullb_create lcp 64 fast)
	other2=$(nullb_create lcq 16 fast)
	run "$SSDCACHECTL" create lcsmall --origin "$dev2" --cache "$small"
	[ "$status" -eq 1 ] && [[ "$output" == *"Cache device too small for its own metadata"* ]] ||
		fail "too small: $output"
	! dmsetup info lcsmall >/dev/null 2>&1 || fail "lcsmall was created"
	! grep -q lcsmall "$SSDCACHECTL_REGISTRY" || fail "lcsmall was registered"
	# The registry keeps the name of a cache that is not loaded.
	run "$SSDCACHECTL" create lc --origin "$dev2" --cache "$other2"
	[ "$status" -eq 1 ] && [[ "$output" == *"the name lc belongs to the registered cache on dev:lcc"* ]] ||
		fail "registered name: $output"
}

@test "ssdcachectl load: refuses a device without a cache, damaged superblocks and a missing origin" {
	dev=$(nullb_create lco 64 fast)
	cache=$(nullb_create lcc 16 fast)
	run "$SSDCACHECTL" load "$cache" lc
	[ "$status" -eq 1 ] && [[ "$output" == *"no ssdcache superblock"* ]] || fail "empty: $output"
	"$SSDCACHECTL" create lc --origin "$dev" --cache "$cache" >/dev/null 2>&1
	_devices_register dm lc
	"$SSDCACHECTL" remove lc
	cp_cache=$BATS_TEST_TMPDIR/sb
	# A byte flipped in each superblock copy: checksums fail.
	for off in 100 4196; do
		printf "\xff" | dd of="$cache" bs=1 seek=$off conv=notrunc,fsync status=none
	done
	run "$SSDCACHECTL" load "$cache" lc
	[ "$status" -eq 1 ] && [[ "$output" == *"both superblocks"*"damaged"* ]] || fail "damaged: $output"
	! dmsetup info lc >/dev/null 2>&1 || fail "lc was loaded"

	# The damaged cache still owns the origin in the registry until forgotten.
	cache2=$(nullb_create lcd 16 fast)
	run "$SSDCACHECTL" create lc --origin "$dev" --cache "$cache2"
	[ "$status" -eq 1 ] && [[ "$output" == *"is the origin of the cache lc"* ]] ||
		fail "create over a registered origin: $output"
	"$SSDCACHECTL" forget lc --force
	"$SSDCACHECTL" create lc --origin "$dev" --cache "$cache2" >/dev/null 2>&1
	"$SSDCACHECTL" remove lc
	_nullb_remove lco
	run "$SSDCACHECTL" load "$cache2" lc
	[ "$status" -eq 1 ] && [[ "$output" == *"origin dev:lco"*"is not there"* ]] || fail "missing origin: $output"
}
