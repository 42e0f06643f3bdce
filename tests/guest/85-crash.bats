#!/usr/bin/env bats
# Write-back crash consistency (Documentation/ssdcache.rst, "The
# durability contract"): a workload on a cache whose origin and SSD are
# two slices of one dm-log-writes device; the log is then replayed to
# every FLUSH/FUA entry in turn, and the cache loaded on each crash state
# must keep the contract. Power cuts with volatile write caches on both
# devices catch a missing flush to either device.

load ../lib/common

CC=$SSDCACHE_TOP/tests/lib/crashcheck.py

setup() {
	require_guest
}

# log_devices P [OPT...]: a write-back cache P (table options OPT) whose
# origin and SSD are two slices of one dm-log-writes device P_lw logging
# to $logdev; sets dm, logdev, osect, csect, meta (where the SSD
# slice's metadata ends: the sweeps tear metadata writes, not data) and
# jblocks (the journal's size in blocks).
# FILL=1: every sector of the origin is first written with a stamp
# (crashcheck gen --fill, into the state file), so that no block of it
# reads as zeros. The SSD slice is first filled with random bytes.
log_devices() {
	local p=$1 data lw o c
	shift
	osect=$((8 * 2048)) csect=$((4 * 2048))
	data=$(nullb_create "${p}_d" 12 fast)
	logdev=$(nullb_create "${p}_l" 1024 fast)
	lw=$(dm_logwrites_create "${p}_lw" "$data" "$logdev")
	o=$(dm_linear_create "${p}_o" "$lw" 0 $osect)
	c=$(dm_linear_create "${p}_c" "$lw" $osect $csect)
	if [ "${FILL:-0}" = 1 ]; then
		python3 -S "$CC" gen "$o" "$BATS_TEST_TMPDIR/state" 0 0 --fill --marker "${p}_lw" ||
			fail "the origin's fill failed"
	fi
	# The SSD holds random bytes, as a reused one would: what the module
	# did not write there (a journal block's sectors that a torn commit
	# did not reach) is not zeros.
	dd if=/dev/urandom of="$c" bs=1M count=$((csect / 2048)) oflag=direct status=none
	dm=$(ssdc_create "$p" "$o" "$c" writeback format origin_id crashcheck "$@")
	meta=$(python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" get-sb "$c" data_start)
	jblocks=$(python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" get-sb "$c" journal_blocks)
	[ "$meta" -gt 0 ] && [ "$jblocks" -gt 0 ] || fail "no data_start or journal_blocks in the superblock"
}

# replay_devices P: removes P's devices; makes the disks a sweep replays
# onto; sets replay and cow.
replay_devices() {
	local p=$1 n
	for n in "$p" "${p}_c" "${p}_o" "${p}_lw"; do
		dm_remove "$n"
	done
	replay=$(nullb_create "${p}_r" 12 fast)
	cow=$(nullb_create "${p}_w" 64 fast)
	modprobe dm-snapshot
}

# The sweeps' lengths: make check runs these; set larger ones for a longer
# search (each crash point costs about 2 s under TCG).
CRASH_OPS=${SSDCACHE_CRASH_OPS:-60}
FSCRASH_ROUNDS=${SSDCACHE_FSCRASH_ROUNDS:-5}
# Partial crash states per flush, at most: part of the writes a flush
# made durable kept (the last alone, all but the last, then random
# parts): a power cut can leave any subset of them.
CRASH_PARTIAL=${SSDCACHE_CRASH_PARTIAL:-3}
# Torn versions of each metadata write (journal commit, superblock), and
# torn map pages before each flush, at most: a power cut during a write
# leaves any subset of its sectors written.
CRASH_TORN=${SSDCACHE_CRASH_TORN:-3}

# state_count TOOL WHAT MAX: the number of WHAT ("partial crash states",
# "torn writes") a sweep's output reports; fails when none was checked
# though MAX per point were asked for.
state_count() {
	local n
	n=$(echo "$output" | sed -n "s/^$1: \([0-9]*\) $2 checked\$/\1/p")
	[ "$3" -eq 0 ] || [ "${n:-0}" -gt 0 ] || fail "no $2 checked"
	echo "${n:-0}"
}

# sweep_counts TOOL: the partial states and torn writes a sweep checked.
sweep_counts() {
	local part torn
	part=$(state_count "$1" "partial crash states" "$CRASH_PARTIAL") || return 1
	torn=$(state_count "$1" "torn writes" "$CRASH_TORN") || return 1
	echo "$part partial crash states and $torn torn writes"
}

# crash_sweep SEED THEN [OPT...]: CRASH_OPS operations, then THEN (a
# message to the cache, or "none"), waiting until nothing is dirty; then
# every crash point of all that. PREFILL=1: the origin is written whole
# (FILL=1 of log_devices) and read whole through the cache, so that
# writes land on clean copies of data that is not zeros (a block lost
# from the cache, or read from another's slot, then shows); EVERY=K: the
# origin is also checked alone, after a full writeback, at every K-th
# point (10); WRAP=N: N one-block O_DSYNC writes before the sweep's
# first point, N commits that wrap the journal, so that a torn commit
# leaves old commits' records, not zeros, in the sectors it lost.
crash_sweep() {
	local ops=$CRASH_OPS seed=$1 then=$2 h0 more=()
	shift 2
	FILL=${PREFILL:-0} log_devices cs "$@"
	if [ "${PREFILL:-0}" = 1 ]; then
		more=(--append)
	fi
	if [ "${WRAP:-0}" -gt 0 ]; then
		python3 -S "$CC" gen "$dm" "$BATS_TEST_TMPDIR/state" 0 "$seed" --dsync "$WRAP" \
			--marker cs_lw "${more[@]}"
		more=(--append)
		[ "$(ssdc_stat cs journal_blocks)" -gt "$jblocks" ] ||
			fail "the journal ($jblocks blocks) did not wrap"
	fi
	dm_logwrites_mark cs_lw formatted
	if [ "${PREFILL:-0}" = 1 ]; then
		read_all "$dm"
		ssdc_quiesce cs
		[ "$(ssdc_used cs)" -gt 0 ] || fail "the reads cached nothing"
		h0=$(ssdc_stat cs write_hits)
	fi
	python3 -S "$CC" gen "$dm" "$BATS_TEST_TMPDIR/state" "$ops" "$seed" --marker cs_lw "${more[@]}"
	if [ "${PREFILL:-0}" = 1 ]; then
		# With nothing dirty before, a first write that hits met a clean copy.
		[ "$(ssdc_stat cs write_hits)" -gt "$h0" ] || fail "no write met a clean copy"
	fi
	if [ "$then" != none ]; then
		dmsetup message cs 0 $then
		wait_clean cs
	fi
	replay_devices cs
	loadlog=$(nullb_create cs_ll 64 fast)
	run python3 -S "$CC" sweep "$logdev" "$BATS_TEST_TMPDIR/state" "$replay" "$cow" \
		$osect $csect --every "${EVERY:-10}" --load-log "$loadlog" \
		--partial "$CRASH_PARTIAL" --torn "$CRASH_TORN" --meta-end "$meta"
	echo "$output"
	[ "$status" -eq 0 ]
	n=$(echo "$output" | sed -n 's/^crashcheck: \([0-9]*\) crash points checked$/\1/p')
	# 60 operations gave 50 to 63 points, 40 gave 37 to 41.
	[ "${n:-0}" -ge $((ops * 2 / 3)) ] || fail "only ${n:-0} crash points"
	counts=$(sweep_counts crashcheck)
	echo "# $n crash points checked, $counts" >&3
	echo "$output" | grep 'during recovery checked' | sed 's/^crashcheck: /# /' >&3
}

@test "crash: every flush point of a write-back workload over a wrapped journal, then a switch to writethrough" {
	WRAP=300 crash_sweep 1 "mode writethrough" writeback_idle_ms 0 dirty_high 100
}

@test "crash: every flush point with the cleaner and evictions running, then a full flush" {
	crash_sweep 2 flush dirty_high 5 dirty_low 1
}

# A write over a clean copy goes to a fresh slot; the copy's entry turns
# invalid, and the new one valid and dirty, in a commit after the data is
# durable. No crash point may leave a clean copy of data the origin does
# not hold: checked through the cache at every point, and the origin
# alone, after a full writeback, at every second one.
@test "crash: every flush point of writes over clean copies, the origin checked at every second" {
	PREFILL=1 EVERY=2 crash_sweep 3 flush writeback_idle_ms 0 dirty_high 100 sequential_cutoff 0
}

# power_cut_wb SECONDS: a write-back workload over two null_blk disks with
# volatile write caches, cut off SECONDS after its first durability point
# (a busy machine can take seconds to reach it).
power_cut_wb() {
	local secs=$1 i
	origin=$(nullb_create pw_o 16 fast 4)
	cache=$(nullb_create pw_c 6 fast 4)
	dm=$(ssdc_create pw "$origin" "$cache" writeback format dirty_high 30 dirty_low 10)
	: >"$BATS_TEST_TMPDIR/state"
	python3 -S "$CC" gen "$dm" "$BATS_TEST_TMPDIR/state" 100000 $secs >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 600); do
		grep -q '^M ' "$BATS_TEST_TMPDIR/state" && break
		sleep 0.1
	done
	sleep "$secs"
	# Both devices lose power at once: a torn state across them.
	nullb_power_off pw_c
	nullb_power_off pw_o
	wait "$pid" || true
	dmsetup remove --retry pw
	nullb_power_on pw_o
	nullb_power_on pw_c
	dmesg_mark
	t0=$(date +%s%N)
	dm=$(ssdc_create pw "$origin" "$cache" writeback)
	echo "# cut after ${secs}s: recovery (dmsetup create) $(( ($(date +%s%N) - t0) / 1000000 )) ms;" \
		"$(dmesg_since | grep -o 'replayed [0-9]* journal commits'), $(ssdc_stat pw dirty) dirty" >&3
	python3 -S "$CC" check "$dm" "$BATS_TEST_TMPDIR/state" --mark last >/dev/null
	grep -q '^M ' "$BATS_TEST_TMPDIR/state" || fail "no durability point before the cut"
	dm_remove pw
	devices_cleanup
}

@test "crash: power cut on both devices mid-workload, write-back" {
	for secs in 3 8; do
		power_cut_wb $secs
	done
}

@test "crash: every flush point of a database-like writer on ext4 (files, fsync, a log with fdatasync), e2fsck at each" {
	local FC=$SSDCACHE_TOP/tests/lib/fscrash.py mnt=$BATS_TEST_TMPDIR/mnt
	# The cleaner and evictions run during the workload.
	log_devices fs dirty_high 30 dirty_low 10
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dm"
	blockdev --flushbufs "$dm"
	dm_logwrites_mark fs_lw formatted
	mkdir -p "$mnt"
	mount -t ext4 "$dm" "$mnt"
	python3 -S "$FC" gen "$mnt" "$BATS_TEST_TMPDIR/state" "$FSCRASH_ROUNDS" 7 --marker fs_lw ||
		{ umount "$mnt"; fail "the workload failed"; }
	umount "$mnt"
	replay_devices fs
	run python3 -S "$FC" sweep "$logdev" "$BATS_TEST_TMPDIR/state" "$replay" "$cow" \
		$osect $csect "$mnt" --partial "$CRASH_PARTIAL" --torn "$CRASH_TORN" --meta-end "$meta"
	echo "$output"
	[ "$status" -eq 0 ]
	n=$(echo "$output" | sed -n 's/^fscrash: \([0-9]*\) crash points checked$/\1/p')
	# 85 and 86 points seen in 5 rounds, 60 in 3.
	[ "${n:-0}" -ge $((FSCRASH_ROUNDS * 10)) ] || fail "only ${n:-0} crash points"
	counts=$(sweep_counts fscrash)
	echo "# $n crash points checked, $counts (ext4, e2fsck at each)" >&3
}
