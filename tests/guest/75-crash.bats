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

# crash_sweep OPS SEED THEN [OPT...]: the workload, then THEN (a message
# to the cache, or "none"), waiting until nothing is dirty; then every
# crash point of all that.
crash_sweep() {
	local ops=$1 seed=$2 then=$3
	shift 3
	local osect=$((8 * 2048)) csect=$((4 * 2048))
	data=$(nullb_create cs_d 12 fast)
	logdev=$(nullb_create cs_l 1024 fast)
	echo "crash_sweep: log-writes" >/dev/kmsg
	lw=$(dm_logwrites_create cs_lw "$data" "$logdev")
	echo "crash_sweep: slices" >/dev/kmsg
	o=$(dm_linear_create cs_o "$lw" 0 $osect)
	c=$(dm_linear_create cs_c "$lw" $osect $csect)
	echo "crash_sweep: cache" >/dev/kmsg
	dm=$(ssdc_create cs "$o" "$c" writeback format origin_id crashcheck "$@")
	dm_logwrites_mark cs_lw formatted
	python3 "$CC" gen "$dm" "$BATS_TEST_TMPDIR/state" "$ops" "$seed" --marker cs_lw
	if [ "$then" != none ]; then
		dmsetup message cs 0 $then
		wait_clean cs
	fi
	dm_remove cs
	dm_remove cs_c
	dm_remove cs_o
	dm_remove cs_lw
	replay=$(nullb_create cs_r 12 fast)
	cow=$(nullb_create cs_w 64 fast)
	loadlog=$(nullb_create cs_ll 64 fast)
	modprobe dm-snapshot
	run python3 "$CC" sweep "$logdev" "$BATS_TEST_TMPDIR/state" "$replay" "$cow" \
		$osect $csect --every 10 --load-log "$loadlog"
	echo "$output"
	[ "$status" -eq 0 ]
	n=$(echo "$output" | sed -n 's/^crashcheck: \([0-9]*\) crash points checked$/\1/p')
	[ "${n:-0}" -ge 100 ] || fail "only ${n:-0} crash points"
	echo "# $n crash points checked" >&3
	echo "$output" | grep 'during recovery checked' | sed 's/^crashcheck: /# /' >&3
}

@test "crash: every flush point of a write-back workload, then a switch to writethrough" {
	crash_sweep 300 1 "mode writethrough" writeback_idle_ms 0 dirty_high 100
}

@test "crash: every flush point with the cleaner and evictions running, then a full flush" {
	crash_sweep 300 2 flush dirty_high 5 dirty_low 1
}

# power_cut_wb SECONDS: a write-back workload over two null_blk disks with
# volatile write caches, cut off after SECONDS.
power_cut_wb() {
	local secs=$1
	origin=$(nullb_create pw_o 16 fast 4)
	cache=$(nullb_create pw_c 6 fast 4)
	dm=$(ssdc_create pw "$origin" "$cache" writeback format dirty_high 30 dirty_low 10)
	python3 "$CC" gen "$dm" "$BATS_TEST_TMPDIR/state" 100000 $secs >/dev/null 2>&1 &
	pid=$!
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
	python3 "$CC" check "$dm" "$BATS_TEST_TMPDIR/state" --mark last >/dev/null
	grep -q '^M ' "$BATS_TEST_TMPDIR/state" || fail "no durability point before the cut"
	dm_remove pw
	devices_cleanup
}

@test "crash: power cut on both devices mid-workload, write-back" {
	for secs in 3 5 8; do
		power_cut_wb $secs
	done
}
