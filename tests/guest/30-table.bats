#!/usr/bin/env bats
# Bad table lines and refused loads: each gets its own error, and no
# device is written to (the disks' write counters before and after).

load ../lib/common

setup() {
	require_guest
	origin=$(nullb_create tb_o 16 fast)
	cache=$(nullb_create tb_c 4 fast)
	small=$(nullb_create tb_s 1 fast)
	size=$(dev_sectors "$origin")
}

# What has been written to this suite's disks so far: a refusal that
# wrote anything to any of them, even the data already there, changes it.
snapshot() { dev_writes /dev/tb_*; }

# creation_refused TABLE_ARGS LOG_TEXT: creating "0 $size ssdcache
# TABLE_ARGS" fails with LOG_TEXT in the kernel log, leaves no device and
# changes nothing.
creation_refused() {
	local before
	before=$(snapshot)
	dmesg_mark
	run dmsetup create bad --table "0 ${SIZE:-$size} ssdcache $1"
	[ "$status" -ne 0 ] || { dmsetup remove bad; fail "table accepted: $1"; }
	[ ! -e /dev/mapper/bad ] || fail "device left behind"
	dmesg_since | grep -F "$2" || fail "no '$2' in the kernel log: $(dmesg_since)"
	assert_eq "$before" "$(snapshot)" "devices after a refused table"
}

# refused TABLE_ARGS EXPECTED_ERROR: the constructor refuses with this error.
refused() { creation_refused "$1" "ssdcache: $2"; }

@test "table: wrong argument counts" {
	refused "" "Invalid argument count"
	refused "$origin" "Invalid argument count"
	refused "$origin $cache" "Invalid argument count"
	refused "$origin $cache writethrough 2 format" "Invalid number of optional arguments"
	refused "$origin $cache writethrough 1 format extra" "Too many arguments"
}

@test "table: unknown or unsupported mode" {
	refused "$origin $cache fast" "Invalid mode"
	refused "$origin $cache writeback 3 format dirty_high 101" "Invalid tunable value"
	refused "$origin $cache writeback 3 format writeback_yield 2" "Invalid tunable value"
	refused "$origin $cache writeback 5 format dirty_high 10 dirty_low 20" "dirty_low is above dirty_high"
}

@test "table: unknown option, missing value, bad numbers" {
	refused "$origin $cache writethrough 1 turbo" "Unknown optional argument"
	refused "$origin $cache writethrough 1 block_size" "Optional argument is missing its value"
	refused "$origin $cache writethrough 3 format block_size big" "Invalid block_size: not a number"
	refused "$origin $cache writethrough 3 format policy mru" "Invalid policy"
	refused "$origin $cache writethrough 3 format sequential_cutoff -5" "Invalid sequential_cutoff"
	refused "$origin $cache writethrough x format" "Invalid number of optional arguments"
	refused "$origin $cache writethrough 1 force" "force is only valid with format"
}

@test "table: block size out of range or not a power of two" {
	for bs in 512 2048 6144 2097152; do
		refused "$origin $cache writethrough 3 format block_size $bs" "Invalid block_size: must be a power of two"
	done
}

@test "table: run_size not a power of two, outside block_size to 32 blocks, or without format" {
	refused "$origin $cache writethrough 3 format run_size big" "Invalid run_size: must be a power of two"
	refused "$origin $cache writethrough 3 format run_size 49152" "Invalid run_size: must be a power of two"
	refused "$origin $cache writethrough 3 format run_size 2048" "Invalid run_size: from block_size to 32 blocks"
	refused "$origin $cache writethrough 3 format run_size 262144" "Invalid run_size: from block_size to 32 blocks"
	refused "$origin $cache writethrough 5 format block_size 8192 run_size 4096" \
		"Invalid run_size: from block_size to 32 blocks"
	ssdc_create tc "$origin" "$cache" writethrough format >/dev/null
	dm_remove tc
	refused "$origin $cache writethrough 2 run_size 32768" "run_size is only valid with format"
}

@test "table: devices that cannot be used" {
	refused "/dev/nonexistent $cache writethrough 1 format" "Cannot open origin device"
	refused "$origin /dev/nonexistent writethrough 1 format" "Cannot open cache device"
	refused "$origin $origin writethrough 1 format" "Origin and cache are the same device"
	refused "$origin $small writethrough 1 format" "Cache device too small for its own metadata"
	SIZE=$((size - 8)) refused "$origin $cache writethrough 1 format" "Target length differs from the origin size"
}

@test "table: a cache whose block map would not fit in RAM is refused, unwritten" {
	local big=/dev/tb_big blocks
	nullb_past_ram tb_big
	creation_refused "$origin $big writeback 1 format" "ssdcache: Not enough RAM for the cache's block map"
	dmesg_since | grep -E "[0-9]{10} blocks of 4096 bytes need 1[0-9]{4} MiB of RAM \($(ram_each_re) each\), [0-9]+ MiB available" ||
		fail "no figures in the kernel log: $(dmesg_since)"
	! dmesg_since | grep -E "Out of memory|oom-kill|vmalloc error|page allocation failure" ||
		fail "the refusal went through the allocator"
	# The same device with 1 MiB blocks: 4 Mi blocks, 64 MiB of RAM.
	dm_create ok "0 $size ssdcache $origin $big writeback 3 format block_size 1048576"
	blocks=$(ssdc_stat ok blocks)
	[[ $blocks == 0/* ]] && [ "${blocks#0/}" -gt 4000000 ] || fail "blocks: $blocks"
	dm_remove ok
}

@test "table: a device in use elsewhere is refused" {
	dm_linear_create user "$cache"
	refused "$origin $cache writethrough 1 format" "Cache device is in use by another device"
	dm_remove user
	dm_linear_create user "$origin"
	refused "$origin $cache writethrough 1 format" "Origin device is in use by another device"
	dm_remove user
	mkfs.ext4 -q "$cache"
	mkdir -p "$BATS_TEST_TMPDIR/mnt"
	mount "$cache" "$BATS_TEST_TMPDIR/mnt"
	run dmsetup create bad --table "0 $size ssdcache $origin $cache writethrough 1 format"
	umount "$BATS_TEST_TMPDIR/mnt"
	[ "$status" -ne 0 ] || fail "a mounted cache device was accepted"
}

@test "table: load without format needs a superblock" {
	refused "$origin $cache writethrough" "No ssdcache superblock on the cache device"
}

@test "table: format over an existing cache needs force" {
	ssdc_create tc "$origin" "$cache" writethrough format
	dm_remove tc
	refused "$origin $cache writethrough 1 format" "Cache device holds an ssdcache superblock"
	ssdc_create tc "$origin" "$cache" writethrough format force
	[ "$(ssdc_stat tc state)" = ok ]
}

@test "table: a cache is refused for another origin" {
	other=$(nullb_create tb_x 16 fast)
	bigger=$(nullb_create tb_y 24 fast)
	ssdc_create tc "$origin" "$cache" writethrough format
	dm_remove tc
	refused "$other $cache writethrough" "Cache belongs to another origin"
	SIZE=$(dev_sectors "$bigger") refused "$bigger $cache writethrough" "Cache belongs to an origin of another size"
	refused "$origin $cache writethrough 2 origin_id someone-else" "Cache belongs to another origin"
	refused "$origin $cache writethrough 2 block_size 8192" "block_size differs"
	# The right origin still loads.
	ssdc_create tc "$origin" "$cache" writethrough
}

@test "table: an explicit origin_id is recorded and checked" {
	ssdc_create tc "$origin" "$cache" writethrough format origin_id disk-serial-42
	[[ "$(dmsetup table tc)" == *"origin_id disk-serial-42"* ]]
	dm_remove tc
	refused "$origin $cache writethrough" "Cache belongs to another origin"
	ssdc_create tc "$origin" "$cache" writethrough origin_id disk-serial-42
}

@test "table: corrupted superblocks are refused, one bad copy is survived" {
	ssdc_create tc "$origin" "$cache" writethrough format
	dm_remove tc
	# Flip a byte inside copy A (sector 0): copy B still loads.
	python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" flip "$cache" 100
	ssdc_create tc "$origin" "$cache" writethrough
	dm_remove tc
	# (Loading rewrote the superblock.) Both copies bad: refused, with the reason.
	python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" flip "$cache" 100
	python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" flip "$cache" $((4096 + 100))
	refused "$origin $cache writethrough" "Both ssdcache superblocks are corrupted"
}

@test "table: the superblock checksum is the documented crc32c" {
	ssdc_create tc "$origin" "$cache" writethrough format
	dm_remove tc
	run python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" sb "$cache"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"csum_ok=1"* && "${lines[1]}" == *"csum_ok=1"* ]] || fail "$output"
	[[ "$output" == *"version=3 "* && "$output" == *"set_shift=3"* ]] || fail "$output"
}

@test "table: an unknown format version is refused" {
	ssdc_create tc "$origin" "$cache" writethrough format
	dm_remove tc
	python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" set-sb "$cache" version 99
	refused "$origin $cache writethrough" "Unsupported on-disk format version"
	python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" set-sb "$cache" version 1
	refused "$origin $cache writethrough" "Unsupported on-disk format version"
}

@test "table: a set hash the format does not have is refused" {
	meta=$SSDCACHE_TOP/tests/lib/ssdc_meta.py
	ssdc_create tc "$origin" "$cache" writethrough format
	dm_remove tc
	python3 -S "$meta" set-sb "$cache" set_shift 6
	refused "$origin $cache writethrough" "Superblock has an unknown set hash"
	# Format 2 had no set_shift: it hashed every block alone.
	python3 -S "$meta" set-sb "$cache" set_shift 3
	python3 -S "$meta" set-sb "$cache" version 2
	refused "$origin $cache writethrough" "Superblock has an unknown set hash"
}

@test "table: a format 2 cache loads, keeps its data across a reload and stays format 2" {
	meta=$SSDCACHE_TOP/tests/lib/ssdc_meta.py
	# 32 KiB blocks: runs of one block, the hash format 2 used for all.
	opts="writeback_idle_ms 0 dirty_high 100"
	cache=$(nullb_create tb_b 16 fast)
	ssdc_create tc "$origin" "$cache" writeback format block_size 32768 $opts
	assert_eq 0 "$(python3 -S "$meta" get-sb "$cache" set_shift)" "set_shift of 32 KiB blocks"
	dm_remove tc
	python3 -S "$meta" set-sb "$cache" version 2
	dm=$(ssdc_create tc "$origin" "$cache" writeback $opts)
	assert_eq 2 "$(ssdc_stat tc version)" "format in the status line"
	fio_verify "$dm" 4k-64k 8M --do_verify=0
	[ "$(ssdc_stat tc dirty)" -gt 0 ]
	want=$(dev_sum "$dm")
	dm_remove tc
	"$SSDCACHECTL" check "$cache" || fail "check of a format 2 cache"
	dm=$(ssdc_create tc "$origin" "$cache" writeback $opts)
	[ "$(ssdc_stat tc dirty)" -gt 0 ]
	assert_eq "$want" "$(dev_sum "$dm")" "data after the reload"
	dmsetup message tc 0 flush
	wait_clean tc
	dm_remove tc
	assert_eq "$want" "$(dev_sum "$origin")" "origin after writeback"
	assert_eq 2 "$(python3 -S "$meta" get-sb "$cache" version)" "format after use"
}

@test "table: an inconsistent geometry is refused" {
	ssdc_create tc "$origin" "$cache" writethrough format
	dm_remove tc
	python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" set-sb "$cache" nr_blocks 999999
	refused "$origin $cache writethrough" "Superblock geometry is inconsistent"
}

# load_refused REASON: loading the cache (at the first resume) fails with
# REASON in the kernel log, leaves no device and changes nothing.
load_refused() { creation_refused "$origin $cache writeback" "$1"; }

@test "table: a corrupted block map or journal fails the load and changes nothing" {
	# No idle cleaning: the blocks must still be dirty at the reload,
	# however long the removal takes on a slow (debug) kernel.
	opts="writeback_idle_ms 0 dirty_high 100"
	dm=$(ssdc_create tc "$origin" "$cache" writeback format $opts)
	dd if=/dev/urandom of="$dm" bs=4k count=64 seek=3000 oflag=direct status=none
	dm_remove tc
	meta=$SSDCACHE_TOP/tests/lib/ssdc_meta.py
	python3 -S "$meta" flip-map "$cache" 0
	load_refused "Block map is corrupted"
	python3 -S "$meta" flip-map "$cache" 0
	ssdc_create tc "$origin" "$cache" writeback $opts >/dev/null
	[ "$(ssdc_stat tc dirty)" -gt 0 ]
	dm_remove tc
	python3 -S "$meta" bad-jrec "$cache"
	load_refused "Journal is corrupted"
	# Even an empty entry for a block past the end (the fuzzer found the
	# loaders storing it, out of bounds).
	python3 -S "$meta" bad-jrec-empty "$cache"
	load_refused "Journal is corrupted"
}
