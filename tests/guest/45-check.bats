#!/usr/bin/env bats
# ssdcachectl check and dump: the metadata read offline, and damage found
# with fsck's exit codes (0 clean, 4 errors, 8 unreadable, 16 usage).

load ../lib/common

setup() { require_guest; }

META=$SSDCACHE_TOP/tests/lib/ssdc_meta.py

# A cache made by the tool on fresh disks, then removed: $cache holds it.
fresh_cache() {
	dev=$(nullb_create cko 64 fast)
	cache=$(nullb_create ckc 16 fast)
	# No idle cleaning: the dirty blocks must still be dirty on the SSD
	# after the remove, however long it takes on a slow (debug) kernel.
	"$SSDCACHECTL" create ck --origin "$dev" --cache "$cache" --mode wb \
		--writeback-idle-ms 0 --dirty-high 100 >/dev/null 2>&1 ||
		fail "create failed"
	_devices_register dm ck
	if [ "${1:-}" = dirty ]; then
		fio_verify /dev/mapper/ck 4k-4k 2m
		dirty=$(ssdc_stat ck dirty)
		used=$(ssdc_used ck)
	fi
	"$SSDCACHECTL" remove ck --keep-dirty || fail "remove failed"
}

# The kernel refuses the damaged cache too.
load_refused() {
	run "$SSDCACHECTL" load "$cache" ck
	[ "$status" -ne 0 ] || { dmsetup remove ck; fail "load accepted a damaged cache"; }
	! dmsetup info ck >/dev/null 2>&1 || fail "a refused load left device ck behind"
}

@test "check and dump: a cache with dirty blocks is clean and its map is listed" {
	fresh_cache dirty
	[ "$dirty" -gt 0 ] || fail "nothing dirty"
	run "$SSDCACHECTL" check "$cache"
	[ "$status" -eq 0 ] || fail "check: $status $output"
	[[ "$output" == *"superblock A: valid"*"superblock B: valid"* ]] || fail "check: $output"
	[[ "$output" == *" $used in use, $dirty dirty"* ]] || fail "check counts: $output (used $used dirty $dirty)"
	[[ "$output" == *"$cache: clean"* ]] || fail "check: $output"

	"$SSDCACHECTL" dump "$cache" >"$BATS_TEST_TMPDIR/dump.txt"
	assert_eq "$dirty" "$(grep -Ec '^[0-9]+ [0-9]+ dirty$' "$BATS_TEST_TMPDIR/dump.txt")" "dirty lines in dump"
	"$SSDCACHECTL" dump "$cache" --json >"$BATS_TEST_TMPDIR/dump.json"
	assert_eq "$dirty" "$(jq '[.map[] | select(.dirty)] | length' "$BATS_TEST_TMPDIR/dump.json")" "dirty in JSON"
	assert_eq "$used" "$(jq '.map | length' "$BATS_TEST_TMPDIR/dump.json")" "entries in JSON"
	assert_eq "dev:cko" "$(jq -r '.superblock.origin_id' "$BATS_TEST_TMPDIR/dump.json")" origin_id
	assert_eq 4096 "$(jq '.superblock.block_size' "$BATS_TEST_TMPDIR/dump.json")" block_size
	# check and dump wrote nothing: the cache loads with the same dirty blocks.
	run "$SSDCACHECTL" load "$cache" ck
	[ "$status" -eq 0 ] || fail "load: $output"
	assert_eq "$dirty" "$(ssdc_stat ck dirty)" "dirty after load"
}

@test "check: one damaged superblock copy is a warning; both are an error, and load refuses" {
	fresh_cache
	python3 -S "$META" flip "$cache" 100
	run "$SSDCACHECTL" check "$cache"
	[ "$status" -eq 0 ] || fail "one copy: $status $output"
	[[ "$output" == *"superblock A: wrong checksum"*"clean (one superblock copy is bad"* ]] ||
		fail "one copy: $output"
	python3 -S "$META" flip "$cache" $((4096 + 100))
	run "$SSDCACHECTL" check "$cache"
	[ "$status" -eq 4 ] || fail "both copies: $status $output"
	[[ "$output" == *"no valid superblock"* ]] || fail "both copies: $output"
	load_refused
}

@test "check: a block map page with no valid copy, a bad journal record, a block mapped twice" {
	fresh_cache
	python3 -S "$META" flip-map "$cache" 0
	run "$SSDCACHECTL" check "$cache"
	[ "$status" -eq 4 ] && [[ "$output" == *"block map page 0: no valid copy"* ]] ||
		fail "flip-map: $status $output"
	load_refused
	devices_cleanup

	fresh_cache
	python3 -S "$META" bad-jrec "$cache"
	run "$SSDCACHECTL" check "$cache"
	[ "$status" -eq 4 ] && [[ "$output" == *"journal commit"*"entry past the last cache block"* ]] ||
		fail "bad-jrec: $status $output"
	load_refused
	[[ "$output" == *"Journal is corrupted"* ]] || fail "load gave no reason: $output"
	devices_cleanup

	fresh_cache
	python3 -S "$META" bad-jrec-empty "$cache"
	run "$SSDCACHECTL" check "$cache"
	[ "$status" -eq 4 ] && [[ "$output" == *"journal commit"*"entry past the last cache block"* ]] ||
		fail "bad-jrec-empty: $status $output"
	load_refused
	devices_cleanup

	fresh_cache
	python3 -S "$META" dup-map "$cache"
	run "$SSDCACHECTL" check "$cache"
	[ "$status" -eq 4 ] && [[ "$output" == *"mapped twice (cache blocks 0 and 1)"* ]] ||
		fail "dup-map: $status $output"
	load_refused
	run "$SSDCACHECTL" dump "$cache"
	[ "$status" -eq 1 ] || fail "dump of a damaged cache: $status"
}

@test "load: a block mapped twice anywhere in its set is refused; two blocks sharing a lookup tag are not" {
	# The load looks up only the slots whose tag an earlier slot of the
	# set had: a copy across the tags' 64-bit words, and in the last one.
	for pair in "5 50" "7 8" "54 55"; do
		fresh_cache
		python3 -S "$META" dup-map "$cache" $pair
		run "$SSDCACHECTL" check "$cache"
		[ "$status" -eq 4 ] && [[ "$output" == *"mapped twice (cache blocks ${pair% *} and ${pair#* })"* ]] ||
			fail "dup-map $pair: $status $output"
		dmesg_mark
		load_refused
		dmesg_since | grep -q "set 0 maps an origin block twice" || fail "dup-map $pair: $(dmesg_since)"
		devices_cleanup
	done
	fresh_cache
	read -r x y < <(python3 -S "$META" tag-twins "$cache" 3 40)
	[ -n "$y" ] || fail "no tag twins"
	run "$SSDCACHECTL" check "$cache"
	[ "$status" -eq 0 ] || fail "tag twins: check: $status $output"
	run "$SSDCACHECTL" load "$cache" ck
	[ "$status" -eq 0 ] || fail "tag twins: load: $output"
	# Both are cached: a read of each is a hit.
	udevadm settle
	hits=$(ssdc_stat ck read_hits)
	read_blocks /dev/mapper/ck "$x" "$y"
	assert_eq $((hits + 2)) "$(ssdc_stat ck read_hits)" "read hits on blocks $x and $y"
}

@test "check: an unreadable or missing device is an operational error; bad usage is 16" {
	run "$SSDCACHECTL" check /dev/nosuch
	[ "$status" -eq 8 ] || fail "missing: $status $output"
	run "$SSDCACHECTL" check
	[ "$status" -eq 16 ]
	dev=$(nullb_create ckx 16 fast)
	run "$SSDCACHECTL" check "$dev"
	[ "$status" -eq 4 ] && [[ "$output" == *"no ssdcache magic"* ]] || fail "empty: $status $output"
}
