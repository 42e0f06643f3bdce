#!/usr/bin/env bats
# Readahead while the cache warms up (module/readahead.c): a miss of less
# than its aligned chunk of readahead_kb reads the chunk in one origin
# request and fills its other uncached blocks, never over a block the
# cache holds, and only while 1/8 of the cache is free.

load ../lib/common

setup() {
	require_guest
	origin=$(nullb_create ra_o 64 fast)
	cache=$(nullb_create ra_c 8 fast)
	dd if=/dev/urandom of="$origin" bs=1M count=8 oflag=direct status=none
}

# udev's probe of a new device reads it (and reads ahead): forget that.
settle_reset() { udevadm settle; dmsetup message ra 0 reset_stats; }

# fill_sets NR_SETS FROM PER_SET N: N origin blocks from FROM on, in
# order, each in a set that holds fewer than PER_SET blocks with those
# picked before it, the set of FROM one more; stdin has the blocks each
# set holds already ("SET COUNT" lines).
fill_sets() {
	in_own_bash fill_sets '
		declare -A n
		while read -r s c; do n[$s]=$c; done
		sets=$1 b=$2 per=$3 want=$4
		set_of "$b" "$sets" s
		n[$s]=$(( ${n[$s]:-0} - 1 ))
		while [ "$want" -gt 0 ]; do
			set_of "$b" "$sets" s
			if [ "${n[$s]:-0}" -lt "$per" ]; then
				n[$s]=$(( ${n[$s]:-0} + 1 ))
				echo "$b"
				want=$((want - 1))
			fi
			b=$((b + 1))
		done' "$@"
}

# hit_reads FIRST N WANT: reads blocks FIRST to FIRST+N-1 of $dm in one
# read (FIRST a multiple of N); asserts that all N hit and that the SSD
# saw WANT read requests.
hit_reads() {
	local first=$1 n=$2 want=$3 h0 r0
	h0=$(ssdc_stat ra read_hits)
	r0=$(disk_reads ra_c)
	dd if="$dm" of=/dev/null bs=$((n * 4))k skip=$((first / n)) count=1 iflag=direct status=none
	assert_eq "$n" $(( $(ssdc_stat ra read_hits) - h0 )) "hits, blocks $first-$((first + n - 1))"
	assert_eq "$want" $(( $(disk_reads ra_c) - r0 )) "SSD reads for blocks $first-$((first + n - 1))"
}

@test "readahead: a 4 KiB miss reads its 64 KiB chunk in one origin read and fills it" {
	dm=$(ssdc_create ra "$origin" "$cache" writethrough format)
	settle_reset
	assert_eq 64 "$(cat "$(sysdir ra)/readahead_kb")" "the default"
	u0=$(ssdc_used ra)
	want=$(blk "$origin" 2037)
	r0=$(disk_reads ra_o)
	assert_eq "$want" "$(blk "$dm" 2037)" "the block read"
	assert_eq 1 $(( $(disk_reads ra_o) - r0 )) "origin reads"
	assert_eq 1 "$(ssdc_sysstat ra readaheads)" "readaheads"
	assert_eq 1 "$(ssdc_stat ra read_misses)" "read misses"
	ssdc_quiesce ra
	assert_eq 16 $(( $(ssdc_used ra) - u0 )) "blocks 2032 to 2047 cached"
	dmsetup message ra 0 reset_stats
	mapfile -t want < <(blk_sums "$origin" $(seq 2032 2047))
	mapfile -t got < <(blk_sums "$dm" $(seq 2032 2047))
	assert_eq 16 "${#got[@]}" "blocks read"
	for i in $(seq 0 15); do
		assert_eq "${want[i]}" "${got[i]}" "block $((2032 + i)) from the cache"
	done
	assert_eq 16 "$(ssdc_stat ra read_hits)" "hits"
	assert_eq 0 "$(ssdc_stat ra read_misses)" "misses"
}

@test "readahead: a chunk's fills take neighbouring slots in order, each 32 KiB run read back in one SSD request" {
	dm=$(ssdc_create ra "$origin" "$cache" writethrough format)
	settle_reset
	blk "$dm" 2037 >/dev/null
	ssdc_quiesce ra
	settle_reset
	# The 8 blocks of a 32 KiB run (SSDCACHE_RUN_BYTES) share a set: one
	# hit run, one SSD request, only if their slots follow in order.
	hit_reads 2032 8 1
	# The whole 64 KiB chunk: its two runs, two requests.
	hit_reads 2032 16 2
}

@test "runs: a block's fill takes the slot after its run's cached neighbour, not the first free one" {
	dm=$(ssdc_create ra "$origin" "$cache" writearound format readahead_kb 0)
	settle_reset
	# Blocks 2032-2039 are one run, in one set. Filled in this order, 2034,
	# 2036 and 2032 take three free slots in a row, F, F+1 and F+2; a
	# write-around write then frees F. 2033's fill must take F+3, after
	# 2032's slot, not F, the first free one: then 2032-2033 are one hit
	# run, one SSD request.
	for b in 2034 2036 2032; do
		blk "$dm" "$b" >/dev/null
		ssdc_quiesce ra
	done
	dd if=/dev/urandom of="$dm" bs=4k seek=2034 count=1 oflag=direct status=none
	ssdc_quiesce ra
	blk "$dm" 2033 >/dev/null
	ssdc_quiesce ra
	settle_reset
	hit_reads 2032 2 1
}

@test "runs: a write-through run write's copies of adjacent slots go to the SSD in one bio" {
	dm=$(ssdc_create ra "$origin" "$cache" writethrough format readahead_kb 0)
	settle_reset
	head -c 32768 /dev/urandom >"$BATS_TEST_TMPDIR/run"
	u0=$(ssdc_used ra)
	# Blocks 2032-2039, one run in one set, uncached: written in one
	# 32 KiB request, copied to eight adjacent slots in one bio (not
	# eight that the block layer may or may not merge).
	# The journal (its commits may fall in the dd) lies before the data.
	ds=$(python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" get-sb "$cache" data_start)
	sizes=$(ssd_write_bios ra_c "$ds" dd if="$BATS_TEST_TMPDIR/run" of="$dm" bs=32k \
		seek=254 oflag=direct status=none)
	assert_eq 64 "${sizes//$'\n'/ }" "SSD data write bios (sectors each)"
	ssdc_quiesce ra
	assert_eq 8 $(( $(ssdc_used ra) - u0 )) "blocks cached"
	hit_reads 2032 8 1
	dmsetup message ra 0 reset_stats
	cmp "$BATS_TEST_TMPDIR/run" <(dd if="$dm" bs=32k skip=254 count=1 iflag=direct status=none)
	assert_eq 8 "$(ssdc_stat ra read_hits)" "read back from the cache"
	cmp "$BATS_TEST_TMPDIR/run" <(dd if="$origin" bs=32k skip=254 count=1 iflag=direct status=none)
}

@test "readahead: a sequential 4 KiB reader reads each chunk ahead once" {
	dm=$(ssdc_create ra "$origin" "$cache" writethrough format)
	settle_reset
	# Blocks 2048-2111: four chunks. The blocks after each chunk's first
	# may miss (their fills not in yet), but do not read it again.
	dd if="$dm" of=/dev/null bs=4k skip=2048 count=64 iflag=direct status=none
	assert_eq 4 "$(ssdc_sysstat ra readaheads)" "readaheads"
	ssdc_quiesce ra
	for b in 2048 2070 2111; do
		assert_eq "$(blk "$origin" "$b")" "$(blk "$dm" "$b")" "block $b"
	done
}

@test "readahead: readahead_kb 0 turns it off, a bad value changes nothing" {
	dm=$(ssdc_create ra "$origin" "$cache" writethrough format readahead_kb 0)
	settle_reset
	u0=$(ssdc_used ra)
	blk "$dm" 2005 >/dev/null
	ssdc_quiesce ra
	assert_eq 1 $(( $(ssdc_used ra) - u0 )) "blocks cached"
	assert_eq 0 "$(ssdc_sysstat ra readaheads)" "readaheads"
	run dmsetup message ra 0 readahead_kb 1025
	[ "$status" -ne 0 ]
	run dmsetup message ra 0 readahead_kb -1
	[ "$status" -ne 0 ]
	assert_eq 0 "$(cat "$(sysdir ra)/readahead_kb")" "after bad values"
	# 8 KiB: chunks of two blocks.
	dmsetup message ra 0 readahead_kb 8
	[[ "$(dmsetup table ra)" == *" readahead_kb 8" ]] || fail "table: $(dmsetup table ra)"
	blk "$dm" 2009 >/dev/null
	ssdc_quiesce ra
	assert_eq 3 $(( $(ssdc_used ra) - u0 )) "blocks 2008 and 2009 cached too"
	dm_remove ra
	run ssdc_create ra "$origin" "$cache" writethrough readahead_kb 1025
	[ "$status" -ne 0 ]
	! dmsetup info ra >/dev/null 2>&1 || fail "the device exists"
}

@test "readahead: a chunk is no larger than the origin's largest request" {
	# An origin that takes 128 KiB requests, then 127 KiB ones.
	om=$(NULLB_MAX_SECTORS=256 nullb_create ra_m 64 fast)
	echo none >/sys/block/ra_m/queue/scheduler
	dd if=/dev/urandom of="$om" bs=1M count=8 oflag=direct status=none
	dm=$(ssdc_create ra "$om" "$cache" writethrough format readahead_kb 128)
	settle_reset
	q=/sys/block/ra_m/queue
	# chunk: the blocks a 4 KiB miss at block $b reads, in one request,
	# and fills. Blocks 3013 and 3045, away from those udev's probe of
	# the new device reads (and reads ahead around).
	b=3000
	for kb_chunk in 128:32 127:16; do
		echo "${kb_chunk%:*}" >$q/max_sectors_kb
		chunk=${kb_chunk#*:}
		b=$(( (b / 32 + 1) * 32 + 5 ))
		want=$(blk "$om" "$b")
		u0=$(ssdc_used ra)
		r0=$(disk_reads ra_m)
		assert_eq "$want" "$(blk "$dm" "$b")" "block $b"
		assert_eq 1 $(( $(disk_reads ra_m) - r0 )) \
			"origin reads, max_sectors_kb ${kb_chunk%:*}"
		ssdc_quiesce ra
		assert_eq "$chunk" $(( $(ssdc_used ra) - u0 )) \
			"blocks cached, max_sectors_kb ${kb_chunk%:*}"
		first=$(( b / chunk * chunk ))
		for c in "$first" $((first + chunk - 1)); do
			assert_eq "$(blk "$om" "$c")" "$(blk "$dm" "$c")" "block $c"
		done
	done
	assert_eq 2 "$(ssdc_sysstat ra readaheads)" "readaheads"
	dm_remove ra
}

@test "readahead: a block the cache holds dirty keeps its data" {
	# Idle cleaning off: on a slow guest (the debug kernel) more than
	# writeback_idle_ms passed between the write and the origin's check,
	# and the cleaner had written the block back.
	dm=$(ssdc_create ra "$origin" "$cache" writeback format writeback_idle_ms 0)
	settle_reset
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/new" bs=4k count=1 status=none
	want=$(md5sum <"$BATS_TEST_TMPDIR/new")
	u0=$(ssdc_used ra)
	dd if="$BATS_TEST_TMPDIR/new" of="$dm" bs=4k seek=2070 oflag=direct status=none
	assert_eq 1 "$(ssdc_stat ra dirty)" "dirty blocks"
	blk "$dm" 2064 >/dev/null
	assert_eq 1 "$(ssdc_sysstat ra readaheads)" "readaheads"
	ssdc_quiesce ra
	assert_eq "$want" "$(blk "$dm" 2070)" "the dirty block after its chunk was read"
	[ "$(blk "$origin" 2070)" != "$want" ] || fail "the origin has the new data already"
	assert_eq 16 $(( $(ssdc_used ra) - u0 )) "cached: the chunk, the dirty block once"
}

@test "readahead: a write-back write to a block of a chunk being read wins" {
	# Reads of blocks 5120-5135 take 2 s: the chunk's read is in flight
	# while a write-back write puts new data for one of its blocks on the
	# SSD; that block's fill, read before, must not replace it. (Only
	# there: udev's probes of the devices read their start and end.)
	sectors=$(dev_sectors "$origin")
	slow=$(dm_create ra_slow "0 40960 linear $origin 0
40960 128 delay $origin 40960 2000 $origin 40960 0
41088 $((sectors - 41088)) linear $origin 41088")
	dm=$(ssdc_create ra "$slow" "$cache" writeback format)
	settle_reset
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/new" bs=4k count=1 status=none
	want=$(md5sum <"$BATS_TEST_TMPDIR/new")
	blk "$dm" 5120 >/dev/null &
	reader=$!
	sleep 0.5
	dd if="$BATS_TEST_TMPDIR/new" of="$dm" bs=4k seek=5125 oflag=direct status=none
	kill -0 "$reader" || fail "the chunk's read was no longer in flight"
	wait "$reader"
	assert_eq 1 "$(ssdc_sysstat ra readaheads)" "readaheads"
	ssdc_quiesce ra
	assert_eq "$want" "$(blk "$dm" 5125)" "the block written during the chunk's read"
	dm_remove ra
	dm_remove ra_slow
}

@test "readahead: a chunk whose read fails reads the block alone" {
	# Sectors 16064 to 16071 (block 2008) of the origin fail; block
	# 2003's chunk covers them.
	sectors=$(dev_sectors "$origin")
	bad=$(dm_create ra_bad "0 16064 linear $origin 0
16064 8 error
16072 $((sectors - 16072)) linear $origin 16072")
	dm=$(ssdc_create ra "$bad" "$cache" writethrough format)
	settle_reset
	assert_eq "$(blk "$origin" 2003)" "$(blk "$dm" 2003)" "block 2003"
	assert_eq 1 "$(ssdc_sysstat ra readaheads)" "readaheads"
	dd if="$dm" of=/dev/null bs=4k skip=2008 count=1 iflag=direct status=none && fail "block 2008 read"
	dm_remove ra
	dm_remove ra_bad
}

@test "readahead: none in a set that has had to evict" {
	dm=$(ssdc_create ra "$origin" "$cache" writethrough format readahead_kb 0 \
		sequential_cutoff 0)
	settle_reset
	sets=$(( $(ssdc_stat ra blocks | cut -d/ -f2) / 56 ))
	# Block 3000's chunk is 2992-3007; fill the set of 2993 with blocks
	# past it, read without readahead.
	full=$(set_of 2993 "$sets")
	[ "$(set_of 3000 "$sets")" -ne "$full" ] || skip "block 3000 is in set $full"
	mapfile -t blocks < <(blocks_in_set "$full" "$sets" 4096 72)
	read_blocks "$dm" "${blocks[@]:0:56}"
	ssdc_quiesce ra
	# Then one more at a time, until one has to evict: after the commit,
	# the set has a free slot (the victim's), which readahead must leave
	# alone.
	e=$(ssdc_sysstat ra evictions)
	for b in "${blocks[@]:56}"; do
		p=$(ssdc_sysstat ra promotions)
		read_blocks "$dm" "$b"
		# Its fill is installed, or evicts instead.
		until [ "$(ssdc_sysstat ra promotions)" -ne "$p" ] || [ "$(ssdc_sysstat ra evictions)" -ne "$e" ]; do
			sleep 0.1
		done
		[ "$(ssdc_sysstat ra evictions)" -eq "$e" ] || break
	done
	[ "$(ssdc_sysstat ra evictions)" -ne "$e" ] || fail "72 blocks of set $full read, none evicted"
	ssdc_quiesce ra
	want=0
	for b in $(seq 2992 3007); do
		set_of $b "$sets" s
		[ "$s" -eq "$full" ] || want=$(( want + 1 ))
	done
	u0=$(ssdc_used ra)
	dmsetup message ra 0 readahead_kb 64
	assert_eq "$(blk "$origin" 3000)" "$(blk "$dm" 3000)" "block 3000"
	ssdc_quiesce ra
	assert_eq 1 "$(ssdc_sysstat ra readaheads)" "readaheads"
	assert_eq $(( u0 + want )) "$(ssdc_used ra)" "cached: the chunk's blocks not in set $full"
}

@test "readahead: none once 7/8 of the cache is in use" {
	dm=$(ssdc_create ra "$origin" "$cache" writethrough format readahead_kb 0 \
		sequential_cutoff 0)
	udevadm settle
	total=$(ssdc_stat ra blocks | cut -d/ -f2)
	sets=$(( total / 56 ))
	# The blocks udev's probe cached, per set ("SET COUNT" lines): from
	# the map, offline.
	dm_remove ra
	"$SSDCACHECTL" dump "$cache" | awk '/^[0-9]+ [0-9]+ clean$/ { n[int($1 / 56)]++ }
		END { for (s in n) print s, n[s] }' >"$BATS_TEST_TMPDIR/used"
	dm=$(ssdc_create ra "$origin" "$cache" writethrough readahead_kb 0 sequential_cutoff 0)
	settle_reset
	# Fill each set to 49 of its 56 blocks, the first to 50: just over
	# 7/8 of the cache, and no set evicts. Nearly contiguous blocks:
	# sequential_cutoff 0 keeps them from bypassing.
	want=$(( sets * 49 + 1 - $(ssdc_used ra) ))
	mapfile -t blocks < <(fill_sets "$sets" 4096 49 "$want" <"$BATS_TEST_TMPDIR/used")
	assert_eq "$want" "${#blocks[@]}" "blocks to read"
	# In batches, each quiesced: reads faster than fills are written
	# would leave blocks out (at most SSDC_MAX_FILLS are in flight).
	for i in $(seq 0 256 $(( ${#blocks[@]} - 1 ))); do
		read_blocks "$dm" "${blocks[@]:i:256}"
		ssdc_quiesce ra
	done
	assert_eq 0 "$(ssdc_sysstat ra evictions)" "evictions"
	u0=$(ssdc_used ra)
	assert_eq $(( sets * 49 + 1 )) "$u0" "blocks used"
	[ $(( u0 * 8 )) -gt $(( total * 7 )) ] || fail "only $u0 of $total blocks used"
	dmsetup message ra 0 readahead_kb 64
	assert_eq "$(blk "$origin" 3000)" "$(blk "$dm" 3000)" "block 3000"
	ssdc_quiesce ra
	assert_eq 0 "$(ssdc_sysstat ra readaheads)" "readaheads"
	assert_eq $(( u0 + 1 )) "$(ssdc_used ra)" "blocks cached"
}

# fio_pattern DEV [EXTRA...]: 4 KiB random writes over 16 MiB with
# crc32c headers, the same offsets every time (randrepeat).
fio_pattern() {
	local dev=$1
	shift
	fio --name=ra --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 \
		--rw=randwrite --bs=4k --size=16M --verify=crc32c --verify_fatal=1 \
		--randrepeat=1 --output-format=terse "$@" >"$BATS_TEST_TMPDIR/fio.out" 2>&1 ||
		{ cat "$BATS_TEST_TMPDIR/fio.out"; return 1; }
}

@test "readahead: fio verifies every block read through the cache, then from it" {
	fio_pattern "$origin" --do_verify=0
	dm=$(ssdc_create ra "$origin" "$cache" writethrough format)
	# Random 4 KiB reads over 16 MiB: misses with readahead, and later
	# reads of blocks read ahead; fio checks each block's header.
	fio_pattern "$dm" --verify_only
	[ "$(ssdc_sysstat ra readaheads)" -gt 0 ] || fail "no readahead ran"
	ssdc_quiesce ra
	dmsetup message ra 0 reset_stats
	fio_pattern "$dm" --verify_only
	[ "$(ssdc_stat ra read_hits)" -gt 0 ] || fail "no hit"
	[ "$(ssdc_stat ra state)" = ok ]
}
