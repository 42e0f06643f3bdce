#!/usr/bin/env bats
# Write-back mode: dirty blocks, the cleaner, flush and FUA, reloads.

load ../lib/common

REF=$SSDCACHE_TOP/tests/lib/refmodel.py

setup() {
	require_guest
}

@test "writeback: writes land on the SSD, read back, and reach the origin on flush" {
	origin=$(nullb_create wb_o 32 fast)
	cache=$(nullb_create wb_c 16 fast)
	dm=$(ssdc_create wb "$origin" "$cache" writeback format writeback_idle_ms 0 dirty_high 100)
	before=$(dev_sum "$origin")
	fio_verify "$dm" 4k-16k 8M
	[ "$(ssdc_stat wb dirty)" -gt 0 ] || fail "no dirty block"
	assert_eq "$before" "$(dev_sum "$origin")" "origin before writeback"
	assert_eq writeback "$(ssdc_stat wb mode)"
	assert_eq dirty "$(ssdc_stat wb writeback)"
	dmsetup message wb 0 flush
	wait_clean wb
	[ "$(ssdc_stat wb cleaned)" -gt 0 ]
	assert_eq "$(dev_sum "$dm")" "$(dev_sum "$origin")" "cache vs origin after flush"
}

# ssd_ios DISK FIELD: field FIELD (0: reads, 4: writes) of a null_blk
# disk's /sys/block stat.
ssd_ios() {
	local f
	read -ra f <"/sys/block/$1/stat"
	echo "${f[$2]}"
}

# run_io NAME OP BLOCK COUNT READS WRITES: COUNT 4 KiB blocks from BLOCK
# written (OP "w", new data, kept in $BATS_TEST_TMPDIR/img) or read back
# and compared (OP "r"), in one O_DIRECT request; the cache disk NAME_c
# must see READS reads and at most WRITES writes (a commit may add its
# journal writes, never reads).
run_io() {
	local name=$1 op=$2 b=$3 n=$4 reads=$5 writes=$6 r0 w0 got want
	r0=$(ssd_ios "${name}_c" 0) w0=$(ssd_ios "${name}_c" 4)
	if [ "$op" = w ]; then
		dd if=/dev/urandom of="$BATS_TEST_TMPDIR/blk" bs=4k count="$n" status=none
		dd if="$BATS_TEST_TMPDIR/blk" of="$BATS_TEST_TMPDIR/img" bs=4k seek="$b" \
			conv=notrunc status=none
		dd if="$BATS_TEST_TMPDIR/blk" of="/dev/mapper/$name" bs=$((n * 4))k \
			seek=$((b * 4))k oflag=direct,seek_bytes status=none
	else
		want=$(dd if="$BATS_TEST_TMPDIR/img" bs=4k skip="$b" count="$n" status=none | md5sum)
		got=$(dd if="/dev/mapper/$name" bs=$((n * 4))k skip=$((b * 4))k \
			count=1 iflag=direct,skip_bytes status=none | md5sum)
		assert_eq "$want" "$got" "blocks $b+$n read back"
	fi
	assert_eq "$reads" $(( $(ssd_ios "${name}_c" 0) - r0 )) "SSD reads for $op $b+$n"
	[ $(( $(ssd_ios "${name}_c" 4) - w0 )) -le "$writes" ] ||
		fail "SSD writes for $op $b+$n: $(( $(ssd_ios "${name}_c" 4) - w0 )), not at most $writes"
}

# runs_cache NAME [OPTS...]: a write-back cache NAME formatted with OPTS
# over new 32 MiB and 16 MiB disks NAME_o and NAME_c (NULLB_MAX_SECTORS
# passed on), no cleaning, cutoff or readahead, udev paused, the origin's
# image in $BATS_TEST_TMPDIR/img for run_io. Sets origin, cache and dm.
runs_cache() {
	local name=$1
	shift
	origin=$(nullb_create "${name}_o" 32 fast)
	cache=$(nullb_create "${name}_c" 16 fast)
	dm=$(ssdc_create "$name" "$origin" "$cache" writeback format "$@" writeback_idle_ms 0 \
		dirty_high 100 sequential_cutoff 0 readahead_kb 0)
	udevadm settle
	udev_pause
	dd if="$origin" of="$BATS_TEST_TMPDIR/img" bs=1M iflag=direct status=none
}

# flush_reads NAME: asks runs_cache's NAME to write every dirty block
# back, waits until it is clean, and sets $reads to the SSD reads that
# took (on NAME_c).
flush_reads() {
	local r0
	r0=$(ssd_ios "${1}_c" 0)
	dmsetup message "$1" 0 flush
	wait_clean "$1"
	reads=$(( $(ssd_ios "${1}_c" 0) - r0 ))
}

# remove_runs_cache NAME: resumes udev, removes runs_cache's NAME and
# checks that its origin holds run_io's image.
remove_runs_cache() {
	udev_resume
	dm_remove "$1"
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/img" | cut -d' ' -f1)" \
		"$(dd if="$origin" bs=1M iflag=direct status=none | md5sum | cut -d' ' -f1)" \
		"origin after writeback"
}

@test "writeback: a run of blocks goes to adjacent slots, and is one SSD request each way" {
	runs_cache mb
	# Runs of 8 blocks share a set: blocks 2048-2055 are one run, new to
	# the cache, written to 8 free slots in a row (cut into blocks, 8
	# requests). A commit may add up to 3 journal writes.
	run_io mb w 2048 8 0 4
	assert_eq 8 "$(ssdc_stat mb dirty)" "dirty blocks"
	run_io mb r 2048 8 1 3
	# Rewritten in place, dirty: the same slots, one request.
	run_io mb w 2048 8 0 4
	assert_eq 8 "$(ssdc_stat mb dirty)" "dirty blocks after the rewrite"
	# Two runs: two requests. Then half of one, half of the other.
	run_io mb w 2056 16 0 5
	run_io mb w 2052 8 0 5
	run_io mb r 2048 24 3 3
	# A 4 KiB block in the middle of a run read alone, and the run around it.
	run_io mb w 2060 1 0 4
	run_io mb r 2056 8 1 3
	# The cleaner reads each run of adjacent slots in one request: three
	# for the 24 dirty blocks (8 a set), not one per block.
	flush_reads mb
	assert_eq 3 "$reads" "SSD reads to write back 3 runs of 8 blocks"
	# Clean now, the blocks stay where they are: still one read per run.
	run_io mb r 2048 24 3 3
	remove_runs_cache mb
	# Warm restart: the map keeps the slots, the runs stay whole.
	dm=$(ssdc_create mb "$origin" "$cache" writeback readahead_kb 0)
	udev_pause
	run_io mb r 2048 24 3 3
}

@test "writeback: with run_size 131072 a run of 32 blocks is one SSD request each way, the cleaner's read too" {
	# 128 KiB requests whole: both disks take 512 sectors at once.
	NULLB_MAX_SECTORS=1024 runs_cache rs run_size 131072
	assert_eq 5 "$(python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" get-sb "$cache" set_shift)" \
		"set_shift of 32-block runs"
	# Blocks 2048-2079: one run, new, 32 free slots in a row; a commit may
	# add up to 3 journal writes.
	run_io rs w 2048 32 0 4
	assert_eq 32 "$(ssdc_stat rs dirty)" "dirty blocks"
	run_io rs r 2048 32 1 3
	run_io rs w 2048 32 0 4
	# Two runs: two requests each way.
	run_io rs w 2080 32 0 5
	run_io rs r 2064 32 2 3
	flush_reads rs
	assert_eq 2 "$reads" "SSD reads to write back 2 runs of 32 blocks"
	run_io rs r 2048 64 2 3
	remove_runs_cache rs
}

@test "writeback: run_size 131072 under random writes of 4 to 256 KiB, the cleaner racing: data verified" {
	origin=$(nullb_create rv_o 64 fast)
	cache=$(nullb_create rv_c 16 fast)
	dm=$(ssdc_create rv "$origin" "$cache" writeback format run_size 131072 \
		writeback_idle_ms 0 dirty_high 30 dirty_low 10 sequential_cutoff 0)
	fio_verify "$dm" 4k-256k 48m
	[ "$(ssdc_stat rv cleaned)" -gt 0 ] || fail "the cleaner did not run"
	want=$(dd if="$dm" bs=1M iflag=direct status=none | md5sum)
	dmsetup message rv 0 flush
	wait_clean rv
	dm_remove rv
	assert_eq "$want" "$(dd if="$origin" bs=1M iflag=direct status=none | md5sum)" \
		"origin after writeback"
}

# empty_wb_cache NAME: a write-back cache NAME over new 32 MiB and 16 MiB
# disks NAME_o and NAME_c, no cleaning, cutoff or readahead, with nothing
# cached (udev's probe read some blocks: discarded) and udev paused.
# Sets origin, cache, dm, sets (the number of sets) and ds (the SSD's
# first data sector).
empty_wb_cache() {
	origin=$(nullb_create "${1}_o" 32 fast)
	cache=$(nullb_create "${1}_c" 16 fast)
	dm=$(ssdc_create "$1" "$origin" "$cache" writeback format writeback_idle_ms 0 \
		dirty_high 100 sequential_cutoff 0 readahead_kb 0)
	udevadm settle
	udev_pause
	blkdiscard "$dm"
	ssdc_quiesce "$1"
	assert_eq 0 "$(ssdc_used "$1")" "blocks cached after the discard"
	sets=$(( $(ssdc_stat "$1" blocks | cut -d/ -f2) / 56 ))
	ds=$(python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" get-sb "$cache" data_start)
}

@test "writeback: a write over clean cached blocks takes free slots in a row, not the first free ones" {
	empty_wb_cache fr
	# Seven runs of 8 blocks of one set, read in order, fill its 56 slots
	# in that order; the last fill evicts the oldest block ahead, so the
	# set's first slot is free after the commit (ssdc_evict_ahead()).
	mapfile -t runs < <(blocks_in_set "$(set_of 4096 "$sets")" "$sets" 4096 7 8)
	blocks=()
	for r in "${runs[@]}"; do
		for ((b = r; b < r + 8; b++)); do blocks+=("$b"); done
	done
	read_blocks "$dm" "${blocks[@]}"
	ssdc_quiesce fr
	assert_eq 55 "$(ssdc_used fr)" "blocks cached"
	# Holes: slot 11 alone, slots 34-37 in a row. (-f: no probe for a
	# filesystem first, whose reads would fill slots.)
	blkdiscard -f -o $(( (runs[1] + 3) * 4096 )) -l 4096 "$dm"
	blkdiscard -f -o $(( (runs[4] + 2) * 4096 )) -l 16384 "$dm"
	ssdc_quiesce fr
	assert_eq 50 "$(ssdc_used fr)" "blocks cached after the discards"
	# 16 KiB over the 4 clean blocks at slots 48-51: four fresh slots in a
	# row, one SSD request. The first free ones (0, 11, then 34) would
	# have made it three: 8, 8 and 16 sectors.
	head -c 16384 /dev/urandom >"$BATS_TEST_TMPDIR/page"
	sizes=$(ssd_write_bios fr_c "$ds" dd if="$BATS_TEST_TMPDIR/page" of="$dm" bs=16k \
		seek=$(( runs[6] / 4 )) oflag=direct status=none)
	assert_eq 32 "${sizes//$'\n'/ }" "SSD data write bios (sectors each)"
	assert_eq 4 "$(ssdc_stat fr dirty)" "dirty blocks"
	# Read back in one SSD request too.
	r0=$(disk_reads fr_c)
	cmp "$BATS_TEST_TMPDIR/page" <(dd if="$dm" bs=16k skip=$(( runs[6] / 4 )) count=1 \
		iflag=direct status=none)
	assert_eq 1 $(( $(disk_reads fr_c) - r0 )) "SSD reads of the 16 KiB"
	dmsetup message fr 0 flush
	wait_clean fr
	cmp "$BATS_TEST_TMPDIR/page" <(dd if="$origin" bs=16k skip=$(( runs[6] / 4 )) count=1 \
		iflag=direct status=none)
	udev_resume
}

# lt_write BLOCK COUNT: COUNT 4 KiB blocks of new data written at BLOCK
# of $dm in one O_DIRECT request and to $shadow; prints the SSD data
# write bios it made (ssd_write_bios).
lt_write() {
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/blk" bs=4k count="$2" status=none
	dd if="$BATS_TEST_TMPDIR/blk" of="$shadow" bs=4k seek="$1" conv=notrunc status=none
	ssd_write_bios lt_c "$ds" dd if="$BATS_TEST_TMPDIR/blk" of="$dm" bs=$(( $2 * 4 ))k \
		seek=$(( $1 * 4096 )) oflag=direct,seek_bytes status=none
}

# lt_same DEV: DEV holds $shadow's blocks 800-805 and r2 to r2+2.
lt_same() {
	cmp <(dd if="$shadow" bs=4k skip=800 count=6 status=none) \
		<(dd if="$1" bs=4k skip=800 count=6 iflag=direct status=none)
	cmp <(dd if="$shadow" bs=4k skip="$r2" count=3 status=none) \
		<(dd if="$1" bs=4k skip="$r2" count=3 iflag=direct status=none)
}

@test "writeback: a rewritten dirty block and new blocks in the slots after it go as one request" {
	empty_wb_cache lt
	shadow=$BATS_TEST_TMPDIR/shadow
	# A redo log as MariaDB writes it: the block it ended in, then that
	# block again (records added) with the blocks after it. Block 800
	# starts a run; its set is empty, so the slots after its slot are free.
	assert_eq 8 "$(lt_write 800 1)" "SSD data write bios (sectors each): the tail"
	# Before: the dirty block in place, the new ones apart ("8 16").
	assert_eq 24 "$(lt_write 800 3 | tr '\n' ' ' | xargs)" "the tail and two new blocks"
	assert_eq 32 "$(lt_write 802 4 | tr '\n' ' ' | xargs)" "the next tail and three new blocks"
	assert_eq 6 "$(ssdc_stat lt dirty)" "dirty blocks"
	# A run in another (empty) set: r2 and r2+2 dirty in its first two
	# slots; r2 to r2+2 again: the slot after r2's is taken, and r2+2 is
	# dirty elsewhere, so three requests, each block written once.
	set_of 800 "$sets" s1
	for ((r2 = 1600; ; r2 += 8)); do
		set_of "$r2" "$sets" s2
		[ "$s2" -eq "$s1" ] || break
	done
	assert_eq 8 "$(lt_write "$r2" 1)" "r2"
	assert_eq 8 "$(lt_write $(( r2 + 2 )) 1)" "r2+2"
	assert_eq "8 8 8" "$(lt_write "$r2" 3 | tr '\n' ' ' | xargs)" "r2 to r2+2"
	assert_eq 9 "$(ssdc_stat lt dirty)" "dirty blocks, then"
	lt_same "$dm"
	# The new blocks are in the map: they survive a reload, then write back.
	udev_resume
	dm_remove lt
	dm=$(ssdc_create lt "$origin" "$cache" writeback writeback_idle_ms 0 dirty_high 100)
	assert_eq 9 "$(ssdc_stat lt dirty)" "dirty blocks after the reload"
	lt_same "$dm"
	dmsetup message lt 0 flush
	wait_clean lt
	lt_same "$origin"
}

@test "writeback: blocks made dirty again after their sets were found clean are written back" {
	origin=$(nullb_create wa_o 64 fast)
	cache=$(nullb_create wa_c 64 fast)
	dm=$(ssdc_create wa "$origin" "$cache" writeback format writeback_idle_ms 0 dirty_high 100)
	# Regions A and B in turn: each flush's scan finds the other region's
	# sets clean (the cleaner forgets them), and the next round dirties
	# them again; every round must reach the origin.
	for round in 1 2 3 4 5; do
		at=$(( round % 2 ? 1000 : 9000 ))
		dd if=/dev/urandom of="$BATS_TEST_TMPDIR/d" bs=4k count=16 status=none
		dd if="$BATS_TEST_TMPDIR/d" of="$dm" bs=4k seek=$at oflag=direct status=none
		assert_eq 16 "$(ssdc_stat wa dirty)" "dirty blocks in round $round"
		dmsetup message wa 0 flush
		wait_clean wa 60
		assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/d")" \
			"$(dd if="$origin" bs=4k count=16 skip=$at iflag=direct status=none | md5sum)" \
			"origin in round $round"
	done
}

@test "writeback: the cleaner starts by itself once the origin is idle (writeback_idle_ms)" {
	origin=$(nullb_create id_o 32 fast)
	cache=$(nullb_create id_c 16 fast)
	dm=$(ssdc_create id "$origin" "$cache" writeback format writeback_idle_ms 500 dirty_high 100)
	# Nothing dirty: the cleaner has looked and gone to sleep.
	sleep 1
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/d" bs=4k count=32 status=none
	dd if="$BATS_TEST_TMPDIR/d" of="$dm" bs=4k seek=3000 oflag=direct status=none
	# No flush message: idleness alone must start it.
	wait_clean id 60
	[ "$(ssdc_stat id cleaned)" -ge 32 ] || fail "cleaned $(ssdc_stat id cleaned)"
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/d")" \
		"$(dd if="$origin" bs=4k count=32 skip=3000 iflag=direct status=none | md5sum)" origin
}

@test "writeback: above dirty_high the cleaner writes back while fsyncs keep coming and idleness never counts" {
	origin=$(nullb_create hw_o 64 fast)
	cache=$(nullb_create hw_c 16 fast)
	dm=$(ssdc_create hw "$origin" "$cache" writeback format writeback_idle_ms 600000 \
		dirty_high 100 dirty_low 25 sequential_cutoff 0)
	total=$(ssdc_stat hw blocks | cut -d/ -f2)
	n=$((total * 7 / 10))
	fio --name=fill --filename="$dm" --rw=randwrite --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=8 --size=$((n * 4))k --randrepeat=0 \
		--output=/dev/null
	d0=$(ssdc_stat hw dirty)
	[ "$d0" -gt $((total / 2)) ] || fail "only $d0 of $total blocks dirty"
	sum=$(dd if="$dm" bs=4k count="$n" iflag=direct status=none | md5sum)
	# A database's pattern (dm-writecache holds its writeback while the
	# device takes flushes): a block written and fsynced every 0.1 s,
	# past the filled range, until killed (at most 120 s, should the
	# test stop before it kills the loop).
	python3 -c '
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
i = 0
end = time.monotonic() + 120
while time.monotonic() < end:
    buf[:8] = i.to_bytes(8, "little")
    os.pwrite(fd, buf, (int(sys.argv[2]) + i % 16) * 4096)
    os.fsync(fd)
    i += 1
    time.sleep(0.1)' "$dm" $((n + 64)) &
	loop=$!
	# dirty_low's share, and the loop's 16 blocks.
	bound=$((total / 4 + 16))
	dmsetup message hw 0 dirty_high 50
	for i in $(seq 1 600); do
		[ "$(ssdc_stat hw dirty)" -le "$bound" ] && break
		sleep 0.1
	done
	kill -0 "$loop" || fail "the fsync loop stopped"
	kill "$loop"
	wait "$loop" || true
	d1=$(ssdc_stat hw dirty)
	[ "$d1" -le "$bound" ] || fail "still $d1 of $total blocks dirty (from $d0)"
	[ "$(ssdc_stat hw cleaned)" -ge $((d0 - d1 - 16)) ] || fail "cleaned $(ssdc_stat hw cleaned)"
	assert_eq "$sum" "$(dd if="$dm" bs=4k count="$n" iflag=direct status=none | md5sum)" "through the cache"
	dmsetup message hw 0 flush
	wait_clean hw 60
	assert_eq "$sum" "$(dd if="$origin" bs=4k count="$n" iflag=direct status=none | md5sum)" origin
}

@test "writeback: dirty blocks survive remove and reload, then write back" {
	origin=$(nullb_create wr_o 32 fast)
	cache=$(nullb_create wr_c 16 fast)
	shadow=$BATS_TEST_TMPDIR/shadow
	# No cleaning at all: the dirty blocks must come back as they were.
	dm=$(ssdc_create wr "$origin" "$cache" writeback format writeback_idle_ms 0 dirty_high 100)
	python3 -S "$REF" run "$dm" "$shadow" 1500 11
	dirty=$(ssdc_stat wr dirty)
	[ "$dirty" -gt 0 ]
	dm_remove wr
	dm=$(ssdc_create wr "$origin" "$cache" writeback writeback_idle_ms 0 dirty_high 100)
	assert_eq "$dirty" "$(ssdc_stat wr dirty)" "dirty blocks after reload"
	python3 -S "$REF" compare "$dm" "$shadow"
	python3 -S "$REF" run "$dm" "$shadow" 500 12
	dmsetup message wr 0 flush
	wait_clean wr
	dm_remove wr
	python3 -S "$REF" compare "$origin" "$shadow"
}

@test "writeback: reference model with a small cache and the cleaner racing" {
	origin=$(nullb_create rs_o 64 fast)
	cache=$(nullb_create rs_c 3 fast)
	shadow=$BATS_TEST_TMPDIR/shadow
	dm=$(ssdc_create rs "$origin" "$cache" writeback format dirty_high 10 dirty_low 5)
	[[ "$(dmsetup table rs)" == *"dirty_high 10 dirty_low 5"* ]] || fail "$(dmsetup table rs)"
	python3 -S "$REF" run "$dm" "$shadow" 3000 21
	[ "$(ssdc_stat rs cleaned)" -gt 0 ] || fail "the cleaner never ran"
	dm_remove rs
	dm=$(ssdc_create rs "$origin" "$cache" writeback)
	python3 -S "$REF" compare "$dm" "$shadow"
	dmsetup message rs 0 flush
	wait_clean rs
	python3 -S "$REF" compare "$origin" "$shadow"
}

@test "writeback: switching to writethrough drains the dirty blocks" {
	origin=$(nullb_create ms_o 32 fast)
	cache=$(nullb_create ms_c 16 fast)
	shadow=$BATS_TEST_TMPDIR/shadow
	dm=$(ssdc_create ms "$origin" "$cache" writethrough format)
	python3 -S "$REF" run "$dm" "$shadow" 300 31
	dmsetup message ms 0 writeback_idle_ms 0
	dmsetup message ms 0 mode writeback
	python3 -S "$REF" run "$dm" "$shadow" 800 32
	[ "$(ssdc_stat ms dirty)" -gt 0 ]
	dmsetup message ms 0 mode writethrough
	assert_eq writethrough "$(ssdc_stat ms mode)"
	python3 -S "$REF" run "$dm" "$shadow" 300 33
	wait_clean ms
	python3 -S "$REF" compare "$dm" "$shadow"
	python3 -S "$REF" compare "$origin" "$shadow"
}

@test "writeback: flush and FUA complete through a commit" {
	origin=$(nullb_create ff_o 32 fast)
	cache=$(nullb_create ff_c 16 fast)
	dm=$(ssdc_create ff "$origin" "$cache" writeback format)
	c0=$(ssdc_stat ff commits)
	dd if=/dev/urandom of="$dm" bs=4k count=16 seek=3000 oflag=direct,dsync status=none
	[ "$(ssdc_stat ff fua_writes)" -gt 0 ] || [ "$(ssdc_stat ff flushes)" -gt 0 ] ||
		fail "no FUA write or flush went through the cache"
	f0=$(ssdc_stat ff flushes)
	dd if=/dev/urandom of="$dm" bs=4k count=16 seek=4000 oflag=direct status=none
	sync "$dm" 2>/dev/null || blockdev --flushbufs "$dm"
	[ "$(ssdc_stat ff flushes)" -gt "$f0" ]
	[ "$(ssdc_stat ff commits)" -gt "$c0" ]
}

@test "writeback: a dirty block rewritten and flushed costs no commit, and is written back" {
	origin=$(nullb_create rj_o 32 fast)
	cache=$(nullb_create rj_c 16 fast)
	dm=$(ssdc_create rj "$origin" "$cache" writeback format writeback_idle_ms 0 dirty_high 100)
	d=$BATS_TEST_TMPDIR/d
	rewrite() {
		dd if=/dev/urandom of="$d" bs=4k count=4 status=none
		dd if="$d" of="$dm" bs=4k seek=5000 oflag=direct conv=fsync status=none
	}
	rewrite
	ssdc_quiesce rj	# every entry so far durable
	j0=$(ssdc_stat rj journal_blocks) f0=$(ssdc_stat rj flushes)
	d0=$(ssdc_sysstat rj direct_flushes)
	# A database's log block: rewritten in place, each time with an fsync.
	for _ in 1 2 3 4 5 6; do
		rewrite
	done
	# The blocks' entries did not change: nothing to journal, and the
	# flushes go to the SSD without a commit.
	assert_eq $((d0 + 6)) "$(ssdc_sysstat rj direct_flushes)" "flushes sent to the SSD alone"
	assert_eq "$f0" "$(ssdc_stat rj flushes)" "flushes through a commit"
	assert_eq "$j0" "$(ssdc_stat rj journal_blocks)" "journal blocks after the rewrites"
	# A block not cached yet changes the map: its fsync waits for a commit.
	dd if="$d" of="$dm" bs=4k count=1 seek=6000 oflag=direct conv=fsync status=none
	assert_eq $((f0 + 1)) "$(ssdc_stat rj flushes)" "flushes through a commit after a new block"
	assert_eq $((d0 + 6)) "$(ssdc_sysstat rj direct_flushes)" "flushes sent to the SSD alone after a new block"
	[ "$(ssdc_stat rj journal_blocks)" -gt "$j0" ] || fail "the new block's entry was not journaled"
	assert_eq 5 "$(ssdc_stat rj dirty)" "dirty blocks"
	sum=$(md5sum <"$d")
	assert_eq "$sum" "$(dd if="$dm" bs=4k count=4 skip=5000 iflag=direct status=none | md5sum)" cache
	# The commits made them durable, so the cleaner takes them.
	dmsetup message rj 0 flush
	wait_clean rj 60
	assert_eq "$sum" "$(dd if="$origin" bs=4k count=4 skip=5000 iflag=direct status=none | md5sum)" origin
	dm_remove rj
	dm=$(ssdc_create rj "$origin" "$cache" writeback writeback_idle_ms 0 dirty_high 100)
	assert_eq 0 "$(ssdc_stat rj dirty)" "dirty blocks after a reload"
	assert_eq "$sum" "$(dd if="$dm" bs=4k count=4 skip=5000 iflag=direct status=none | md5sum)" reloaded
}

# An empty flush of the device, as fsync(2) on it sends.
dev_fsync() { python3 -S -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$1"; }

@test "writeback: clean copies made by reads do not hold an fsync up; their entries follow" {
	origin=$(nullb_create rc_o 32 fast)
	cache=$(nullb_create rc_c 16 fast)
	dm=$(ssdc_create rc "$origin" "$cache" writeback format writeback_idle_ms 0 dirty_high 100)
	dd if=/dev/urandom of="$dm" bs=4k count=1 seek=100 oflag=direct conv=fsync status=none
	ssdc_quiesce rc	# every entry so far durable
	u0=$(ssdc_used rc) f0=$(ssdc_stat rc flushes) d0=$(ssdc_sysstat rc direct_flushes)
	# Reads fill clean copies in the background (well within the second
	# before the periodic commit); the fsync right after them has only
	# clean entries to wait for, and goes to the SSD alone.
	dd if="$dm" of=/dev/null bs=4k count=16 skip=3000 iflag=direct status=none
	dev_fsync "$dm"
	assert_eq $((d0 + 1)) "$(ssdc_sysstat rc direct_flushes)" "flushes sent to the SSD alone"
	assert_eq "$f0" "$(ssdc_stat rc flushes)" "flushes through a commit"
	# Wait until the count of cached blocks holds still.
	u1=$u0
	for _ in $(seq 100); do
		sleep 0.2
		n=$(ssdc_used rc)
		[ "$n" -gt "$u0" ] && [ "$n" -eq "$u1" ] && break
		u1=$n
	done
	[ "$u1" -gt "$u0" ] || fail "the reads cached nothing"
	# A dirty entry changed: the next one goes through a commit. The
	# fsync follows the write in the same process: with a process of
	# its own, started under TCG, the periodic commit (every second)
	# could journal the entry first (seen once in a make check), and
	# the fsync then rightly went to the SSD alone.
	dd if=/dev/urandom of="$dm" bs=4k count=1 seek=6000 oflag=direct conv=fsync status=none
	assert_eq $((f0 + 1)) "$(ssdc_stat rc flushes)" "flushes through a commit after a new block"
	assert_eq $((d0 + 1)) "$(ssdc_sysstat rc direct_flushes)" "flushes sent to the SSD alone after a new block"
	# The clean copies' entries were journaled too: a reload keeps them.
	dm_remove rc
	dm=$(ssdc_create rc "$origin" "$cache" writeback)
	assert_eq $((u1 + 1)) "$(ssdc_used rc)" "cached blocks after a reload"
	assert_eq 2 "$(ssdc_stat rc dirty)" "dirty blocks after a reload"
}

@test "writeback: a batch started by idleness gives way to the first foreground bio" {
	origin=$(nullb_create iy_o 32 fast)
	cache=$(nullb_create iy_c 16 fast)
	# Every write to the origin takes a second.
	slow=$(dm_delay_create iy_d "$origin" 0 1000)
	dmesg_mark
	dm=$(ssdc_create iy "$slow" "$cache" writeback format writeback_idle_ms 0 dirty_high 100)
	# 400 dirty blocks, no two adjacent: a batch of 256 is 256 origin writes.
	python3 -S - "$dm" <<'PY'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
for b in range(400):
    buf[:] = os.urandom(4096)
    os.pwritev(fd, [buf], (1000 + 2 * b) * 4096)
PY
	want=$(dev_sum "$dm")
	# Idleness alone starts the cleaner now. As soon as it has read from
	# the SSD what it writes first (the origin's counters move only when a
	# write completes, a second later), foreground reads begin, often enough
	# that the origin is never idle for 300 ms: the batch under way must
	# stop, and no other may start. One process, so that the first read
	# comes at once (a process start takes a good part of a second here).
	sent=$(python3 -S - "$dm" "$slow" "$cache" <<'PY'
import mmap, os, subprocess, sys, time
def field(dev, i):
    dev = os.path.basename(os.path.realpath(dev))
    return int(open(f"/sys/block/{dev}/stat").read().split()[i])
written, ssd_reads = field(sys.argv[2], 4), field(sys.argv[3], 0)
subprocess.run(["dmsetup", "message", "iy", "0", "writeback_idle_ms", "300"], check=True)
end = time.monotonic() + 60
while field(sys.argv[3], 0) == ssd_reads:
    if time.monotonic() > end:
        sys.exit("the cleaner never started")
    time.sleep(0.01)
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
end = time.monotonic() + 4
i = 0
while time.monotonic() < end:
    os.preadv(fd, [buf], (i % 900) * 4096)
    i += 1
    time.sleep(0.05)
print(field(sys.argv[2], 4) - written)
PY
)
	echo "origin writes sent by the cleaner: $sent"
	# Before, the whole batch went at once: 256 writes. Now, the four
	# runs in flight when the first foreground bio came, and at most four
	# more should the check between them have just missed it.
	[ "$sent" -ge 1 ] && [ "$sent" -le 8 ] ||
		fail "$sent origin writes after foreground I/O started"
	dirty=$(ssdc_stat iy dirty)
	[ "$dirty" -ge 392 ] || fail "only $dirty of 400 blocks still dirty"
	# What was skipped is neither lost nor counted as failed. The origin
	# is fast again for that: at a second per write, the flush is slow.
	dm_reload iy_d "0 $(dev_sectors "$origin") delay $origin 0 0"
	dmsetup message iy 0 flush
	wait_clean iy 300
	assert_eq 400 "$(ssdc_stat iy cleaned)" "blocks cleaned"
	assert_eq "$want" "$(dev_sum "$dm")" "cache device"
	dm_remove iy
	assert_eq "$want" "$(dev_sum "$origin")" "origin"
	! dmesg_since | grep -q "writeback of" || fail "a skipped block was counted as failed"
}

@test "writeback: a multi-block write whose first block has no room goes to the origin whole" {
	origin=$(nullb_create fu_o 32 fast)
	cache=$(nullb_create fu_c 16 fast)
	dm=$(ssdc_create fu "$origin" "$cache" writeback format writeback_idle_ms 0 \
		dirty_high 100 sequential_cutoff 0 readahead_kb 0)
	total=$(ssdc_stat fu blocks | cut -d/ -f2)
	# The sets of blocks 7424 to 7439 (the 64 KiB at 29 MiB), filled with
	# dirty blocks, one write at a time (ssdcache_set_of() in
	# include/ssdcache_format.h: 4 KiB blocks, runs of 8). A write into a
	# full set evicts a clean block (the device's probe read some) for
	# the next one, free after a commit: rounds until none is left, up
	# to 8 (each set has 112 blocks below 7000: round 7 writes the last).
	# udev paused: its probe after each round's close would read a clean
	# block back into the slot the round's last eviction freed.
	udevadm settle
	udev_pause
	for round in 0 1 2 3 4 5 6 7; do
		sets=$(python3 -S - "$dm" "$total" "$round" <<'PY'
import mmap, os, sys
nr_sets, rnd = int(sys.argv[2]) // 56, int(sys.argv[3])
def set_of(ob):
    h = (((ob >> 3) * 0x61c8864680b583eb) & (2**64 - 1)) >> 32
    return (h * nr_sets) >> 32
want = {set_of(b) for b in range(7424, 7440)}
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
seen = {s: 0 for s in want}
for b in range(64, 7000):
    s = set_of(b)
    if s in seen:
        seen[s] += 1
        # Round 0 writes 60 blocks of each set, later ones 8 new ones.
        if (rnd == 0 and seen[s] <= 60) or 60 + 8 * (rnd - 1) < seen[s] <= 60 + 8 * rnd:
            buf[:] = os.urandom(4096)
            os.pwritev(fd, [buf], b * 4096)
print(len(want))
PY
)
		sleep 1
		[ "$(ssdc_stat fu dirty)" = $((sets * 56)) ] && break
	done
	dirty=$(ssdc_stat fu dirty)
	assert_eq $((sets * 56)) "$dirty" "dirty blocks: $sets sets full"
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/d" bs=64k count=1 status=none
	read -r w0 _ <<<"$(dev_writes "$origin")"
	bypassed=$(ssdc_stat fu bypassed_writes)
	dd if="$BATS_TEST_TMPDIR/d" of="$dm" bs=64k seek=464 oflag=direct status=none
	read -r w1 _ <<<"$(dev_writes "$origin")"
	# Before: cut into 16 blocks, each written around alone.
	assert_eq 1 $((w1 - w0)) "origin writes for one 64 KiB write"
	assert_eq $((bypassed + 1)) "$(ssdc_stat fu bypassed_writes)" "bypassed writes"
	assert_eq "$dirty" "$(ssdc_stat fu dirty)" "dirty blocks after"
	want=$(md5sum <"$BATS_TEST_TMPDIR/d")
	assert_eq "$want" "$(dd if="$dm" bs=64k count=1 skip=464 iflag=direct status=none | md5sum)" "read back"
	want_all=$(dev_sum "$dm")
	dmsetup message fu 0 flush
	wait_clean fu
	udev_resume
	dm_remove fu
	assert_eq "$want_all" "$(dev_sum "$origin")" "origin after writeback"
}

@test "writeback: a sequential read or write never bypasses a dirty block" {
	origin=$(nullb_create sq_o 32 fast)
	cache=$(nullb_create sq_c 16 fast)
	dm=$(ssdc_create sq "$origin" "$cache" writeback format sequential_cutoff 65536 \
		writeback_idle_ms 0)
	# Dirty blocks in the middle of what is then read and written whole.
	dd if=/dev/urandom of="$dm" bs=4k count=4 seek=2600 oflag=direct status=none
	dd if=/dev/urandom of="$dm" bs=512 count=3 seek=$((2700 * 8 + 1)) oflag=direct status=none
	want=$(dd if="$dm" bs=1M count=4 skip=9 iflag=direct status=none | md5sum)
	[ "$(ssdc_stat sq dirty)" -gt 0 ]
	got=$(dd if="$dm" bs=1M count=4 skip=9 iflag=direct status=none | md5sum)
	assert_eq "$want" "$got" "sequential read over dirty blocks"
	[ "$(ssdc_stat sq bypassed_reads)" -gt 0 ]
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/new" bs=1M count=4 status=none
	dd if="$BATS_TEST_TMPDIR/new" of="$dm" bs=1M seek=9 oflag=direct status=none
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/new")" \
		"$(dd if="$dm" bs=1M count=4 skip=9 iflag=direct status=none | md5sum)" "after a sequential write"
	dmsetup message sq 0 flush
	wait_clean sq
	assert_eq "$(md5sum <"$BATS_TEST_TMPDIR/new")" \
		"$(dd if="$origin" bs=1M count=4 skip=9 iflag=direct status=none | md5sum)" "origin"
}

@test "writeback: on a cache smaller than one bio, sequential reads and writes never pass a dirty block" {
	origin=$(nullb_create sb_o 32 fast)
	cache=$(nullb_create sb_c 2 fast)
	dm=$(ssdc_create sb "$origin" "$cache" writeback format sequential_cutoff 65536 \
		writeback_idle_ms 0 dirty_high 100)
	# Each 1 MiB bio spans more blocks than the cache holds: the search for
	# a dirty block in it takes the whole-cache path (ssdc_first_dirty()).
	blocks=$(ssdc_stat sb blocks)
	[ "${blocks#*/}" -lt 256 ] || fail "cache of ${blocks#*/} blocks"
	img=$BATS_TEST_TMPDIR/img
	dd if="$origin" of="$img" bs=1M count=4 skip=9 iflag=direct status=none
	# Dirty blocks in 3 of the 4 bios of 1 MiB; the expected image aside.
	# udev's reads filled the cache: a write to a full set goes to the
	# origin and evicts a block for next time, whose slot is free once a
	# commit has made that durable (ssdc_quiesce). So a block is written
	# until the SSD holds it dirty.
	n=0
	for at in 2305 2400 2555 2560 2816 3071; do
		dd if=/dev/urandom of="$BATS_TEST_TMPDIR/blk" bs=4k count=1 status=none
		n=$((n + 1))
		for try in 1 2 3 4; do
			dd if="$BATS_TEST_TMPDIR/blk" of="$dm" bs=4k seek=$at oflag=direct status=none
			[ "$(ssdc_stat sb dirty)" -lt $n ] || break
			ssdc_quiesce sb
		done
		dd if="$BATS_TEST_TMPDIR/blk" of="$img" bs=4k seek=$((at - 2304)) conv=notrunc status=none
	done
	[ "$(ssdc_stat sb dirty)" -eq 6 ] || fail "$(ssdc_stat sb dirty) dirty blocks, not 6"
	for round in 1 2; do
		assert_eq "$(md5sum <"$img")" \
			"$(dd if="$dm" bs=1M count=4 skip=9 iflag=direct status=none | md5sum)" \
			"sequential read $round"
	done
	[ "$(ssdc_stat sb bypassed_reads)" -gt 0 ] || fail "no read bypassed the cache"
	dd if=/dev/urandom of="$img" bs=1M count=4 status=none
	dd if="$img" of="$dm" bs=1M seek=9 oflag=direct status=none
	[ "$(ssdc_stat sb bypassed_writes)" -gt 0 ] || fail "no write bypassed the cache"
	assert_eq "$(md5sum <"$img")" \
		"$(dd if="$dm" bs=1M count=4 skip=9 iflag=direct status=none | md5sum)" "after a sequential write"
	dmsetup message sb 0 flush
	wait_clean sb
	assert_eq "$(md5sum <"$img")" \
		"$(dd if="$origin" bs=1M count=4 skip=9 iflag=direct status=none | md5sum)" "origin"
}

@test "writeback: a discard keeps dirty blocks and their data" {
	origin=$(nullb_create dc_o 32 fast)
	cache=$(nullb_create dc_c 16 fast)
	dm=$(ssdc_create dc "$origin" "$cache" writeback format writeback_idle_ms 0)
	dd if=/dev/urandom of="$dm" bs=4k count=8 seek=2600 oflag=direct status=none
	want=$(dd if="$dm" bs=4k count=8 skip=2600 iflag=direct status=none | md5sum)
	blkdiscard -o $((2600 * 4096)) -l $((8 * 4096)) "$dm"
	assert_eq "$want" "$(dd if="$dm" bs=4k count=8 skip=2600 iflag=direct status=none | md5sum)"
	dmsetup message dc 0 flush
	wait_clean dc
	assert_eq "$want" "$(dd if="$origin" bs=4k count=8 skip=2600 iflag=direct status=none | md5sum)"
}

@test "writeback: bad tunables are refused and change nothing" {
	origin=$(nullb_create tu_o 32 fast)
	cache=$(nullb_create tu_c 16 fast)
	ssdc_create tu "$origin" "$cache" writeback format >/dev/null
	! dmsetup message tu 0 dirty_high 101
	! dmsetup message tu 0 dirty_low 60
	! dmsetup message tu 0 writeback_yield 2
	! dmsetup message tu 0 writeback_rate -1
	assert_eq 50 "$(ssdc_stat tu dirty_high)"
	assert_eq 25 "$(ssdc_stat tu dirty_low)"
	dmsetup message tu 0 dirty_low 10
	dmsetup message tu 0 writeback_rate 1000
	assert_eq 10 "$(ssdc_stat tu dirty_low)"
	assert_eq 1000 "$(ssdc_stat tu writeback_rate)"
	dm_remove tu
	for bad in "dirty_high 10 dirty_low 20" "dirty_high x" "writeback_rate" "writeback_yield 5"; do
		run dmsetup create tu --table "0 $(dev_sectors "$origin") ssdcache $origin $cache writeback$(opt_args $bad)"
		[ "$status" -ne 0 ] || fail "accepted: $bad"
	done
}

@test "writeback: the origin sees the dirty blocks sorted and merged, synced or not" {
	origin=$(nullb_create so_o 32 fast)
	logdev=$(nullb_create so_l 128 fast)
	cache=$(nullb_create so_c 16 fast)
	lw=$(dm_logwrites_create so_lw "$origin" "$logdev")
	dm=$(ssdc_create so "$lw" "$cache" writeback format writeback_idle_ms 0 dirty_high 100)
	# Nothing writes to the origin before the flush message but the
	# cleaner (the commits flush it, and the list below has only writes).
	dm_logwrites_mark so_lw flush
	# 24 runs of 1 to 8 blocks, written in a shuffled order. The cleaner
	# takes only synced blocks: the first half is synced (fsync), the
	# second is not, and the flush message follows it at once (a timed
	# commit would sync it a second later). The message commits before
	# its first batch, so that batch takes both halves, each run whole.
	python3 -S - "$dm" "$BATS_TEST_TMPDIR/want" <<'PY'
import hashlib, mmap, os, random, subprocess, sys
rng = random.Random(5)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_DIRECT)
img = bytearray(32 << 20)
whole = mmap.mmap(-1, len(img))
os.preadv(fd, [whole], 0)
img[:] = whole
buf = mmap.mmap(-1, 4096)
blocks = []
for r in range(24):
    first = 2600 + r * 200 + rng.randrange(0, 100)
    blocks += range(first, first + rng.randint(1, 8))
rng.shuffle(blocks)
half = len(blocks) // 2
for i, b in enumerate(blocks):
    buf[:] = os.urandom(4096)
    os.pwritev(fd, [buf], b * 4096)
    img[b * 4096:(b + 1) * 4096] = buf
    if i == half - 1:
        os.fsync(fd)
subprocess.run(["dmsetup", "message", "so", "0", "flush"], check=True)
with open(sys.argv[2], "w") as f:
    f.write(hashlib.md5(img).hexdigest() + "\n")
PY
	wait_clean so
	dm_remove so
	dm_remove so_lw
	python3 -S "$SSDCACHE_TOP/tests/lib/logwrites.py" list "$logdev" >"$BATS_TEST_TMPDIR/log"
	# The writes after the mark, in the order the origin saw them.
	sed -n '/mark=flush/,$p' "$BATS_TEST_TMPDIR/log" |
		sed -n 's/^[0-9]* WRITE sector=\([0-9]*\) nr=\([0-9]*\)$/\1 \2/p' >"$BATS_TEST_TMPDIR/w"
	cat "$BATS_TEST_TMPDIR/w"
	n=$(wc -l <"$BATS_TEST_TMPDIR/w")
	[ "$n" -eq 24 ] || fail "$n writes to the origin for 24 runs of adjacent blocks"
	sort -n -c "$BATS_TEST_TMPDIR/w" || fail "writes to the origin not in LBA order"
	assert_eq "$(cat "$BATS_TEST_TMPDIR/want")" \
		"$(dd if="$origin" bs=1M count=32 iflag=direct status=none | md5sum | cut -d' ' -f1)" "origin"
}

@test "writeback: blocks written during a flush of many batches reach the origin with their last data" {
	origin=$(nullb_create mb_o 64 fast)
	cache=$(nullb_create mb_c 32 fast)
	# 4000 dirty blocks: 16 batches of 256, at most 1000 blocks/s, so the
	# cleaner takes them over about 4 s, from the blocks its scans keep.
	dm=$(ssdc_create mb "$origin" "$cache" writeback format writeback_idle_ms 0 \
		dirty_high 100 writeback_rate 1000)
	# w.py DEV first: 4000 random blocks written, then fsynced.
	# w.py DEV during: five bursts 0.3 s apart, each fsynced, of 100
	# rewrites of those blocks and 100 writes of random blocks.
	cat >"$BATS_TEST_TMPDIR/w.py" <<'PY'
import mmap, os, random, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
rng = random.Random(7)
old = rng.sample(range(16384), 4000)
if sys.argv[2] == "first":
    bursts = [old]
else:
    bursts = [[rng.choice(old) if i % 2 else rng.randrange(16384) for i in range(200)]
              for _ in range(5)]
for burst in bursts:
    for blk in burst:
        buf[:] = rng.randbytes(4096)
        os.pwritev(fd, [buf], blk * 4096)
    os.fsync(fd)
    if len(bursts) > 1:
        time.sleep(0.3)
PY
	python3 -S "$BATS_TEST_TMPDIR/w.py" "$dm" first
	assert_eq 4000 "$(ssdc_stat mb dirty)" "dirty blocks"
	dmsetup message mb 0 flush
	python3 -S "$BATS_TEST_TMPDIR/w.py" "$dm" during
	# The flush ends when nothing is dirty, which may have come between
	# two bursts.
	dmsetup message mb 0 flush
	wait_clean mb
	[ "$(ssdc_stat mb cleaned)" -ge 4000 ] || fail "$(ssdc_stat mb cleaned) blocks cleaned"
	assert_eq "$(dev_sum "$dm")" "$(dev_sum "$origin")" "cache vs origin after the flush"
}

@test "writeback: writes that race a fill of their block make one dirty copy" {
	origin=$(nullb_create fr_o 16 fast)
	cache=$(nullb_create fr_c 16 fast)
	# The SSD's writes can be slowed down under the cache (below).
	ssd=$(dm_delay_create fr_d "$cache" 0 0)
	dd if=/dev/urandom of="$origin" bs=4k count=1 seek=100 oflag=direct status=none
	dm=$(ssdc_create fr "$origin" "$ssd" writeback format readahead_kb 0 \
		writeback_idle_ms 0 dirty_high 100)
	dm_reload fr_d "0 $(dev_sectors "$cache") delay $cache 0 0 $cache 0 1500"
	# A read miss of block 100 fills a slot: its SSD write takes 1.5 s.
	# Meanwhile a write to the block takes a slot of its own and cancels
	# the fill; a second write, started while both SSD writes are under
	# way, must find the first one's slot (and wait for it), not the
	# cancelled fill's, or the block ends up dirty in two slots: reads
	# then serve whichever comes first, and the cleaner writes back both.
	python3 -S - "$dm" "$BATS_TEST_TMPDIR" <<'PY'
import mmap, os, sys, threading, time
dev, tmp = sys.argv[1], sys.argv[2]
fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
os.preadv(fd, [buf], 100 * 4096)
def write(name):
    data = os.urandom(4096)
    b = mmap.mmap(-1, 4096)
    b[:] = data
    os.pwritev(fd, [b], 100 * 4096)
    open(f"{tmp}/{name}", "wb").write(data)
time.sleep(0.3)
w1 = threading.Thread(target=write, args=("w1",))
w1.start()
time.sleep(0.3)
w2 = threading.Thread(target=write, args=("w2",))
w2.start()
w1.join()
w2.join()
PY
	assert_eq 1 "$(ssdc_stat fr dirty)" "dirty blocks after two writes of one block"
	dm_reload fr_d "0 $(dev_sectors "$cache") delay $cache 0 0 $cache 0 0"
	# The last write's data from now on, in the cache and after writeback.
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/w3" bs=4k count=1 status=none
	dd if="$BATS_TEST_TMPDIR/w3" of="$dm" bs=4k seek=100 oflag=direct status=none
	want=$(md5sum <"$BATS_TEST_TMPDIR/w3")
	assert_eq "$want" "$(blk "$dm" 100)" "block 100 read back"
	dmsetup message fr 0 flush
	wait_clean fr
	assert_eq "$want" "$(blk "$origin" 100)" "block 100 on the origin"
	dm_remove fr
	dm=$(ssdc_create fr "$origin" "$ssd" writeback)
	assert_eq "$want" "$(blk "$dm" 100)" "block 100 after a reload"
}
