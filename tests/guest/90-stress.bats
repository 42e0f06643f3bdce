#!/usr/bin/env bats
# A randomized run: fio verify jobs while the cleaner runs, modes and
# policies switch, tunables change, stats are read, the table is suspended,
# resumed and reloaded. Ends with a full verification against the origin
# and after a reload. The length is a number of actions, each taken while
# fio runs (SSDCACHE_STRESS_ACTIONS, default 10), and at least
# SSDCACHE_STRESS_SECS seconds (default 0 in make check; make stress runs
# 600): fio runs until both are reached, then stops. The harness fails
# the run on any kernel log warning. With SSDCACHE_VERIFY_MAP=1 (make
# stress, which loads the test-only selftest module), the block map on the
# SSD is also compared with RAM while suspended and while fio runs: a lost
# map entry shows there before any read or reload can find it.

load ../lib/common

# The selftest module's map check on cache NAME, when asked for.
verify_map() {
	[ "${SSDCACHE_VERIFY_MAP:-0}" = 1 ] || return 0
	dmsetup message "$1" 0 selftest_verify_map
}

ACTIONS=(suspend mode policy cutoff watermarks flush stats reset reload rate verify)

# One random action on cache NAME; prints its name from ACTIONS, which is
# also left in ACTION for the message when it fails.
stress_action() {
	local name=$1 dir n=10 r=0 a
	dir=$(sysdir "$name")
	[ "${SSDCACHE_VERIFY_MAP:-0}" = 1 ] && n=11
	a=$((RANDOM % n))
	ACTION=${ACTIONS[a]}
	case $a in
	0) dmsetup suspend "$name" || return
	   verify_map "$name" || r=$?
	   sleep 0.$((RANDOM % 5))
	   dmsetup resume "$name" && [ "$r" = 0 ] ;;
	1) local m=(writethrough writeback writearound writeback)
	   dmsetup message "$name" 0 mode "${m[RANDOM % 4]}" ;;
	2) local p=(lru fifo)
	   echo "${p[RANDOM % 2]}" >"$dir/policy" ;;
	3) local c=(0 65536 1048576 4194304)
	   dmsetup message "$name" 0 sequential_cutoff "${c[RANDOM % 4]}" ;;
	4) local lo=$((RANDOM % 50))
	   dmsetup message "$name" 0 dirty_low 0 && dmsetup message "$name" 0 dirty_high $((lo + 10 + RANDOM % 40)) &&
		dmsetup message "$name" 0 dirty_low "$lo" ;;
	5) dmsetup message "$name" 0 flush ;;
	6) find "$dir" -maxdepth 2 -type f -perm -0444 -exec cat {} + >/dev/null &&
		"$SSDCACHECTL" stats --json "$name" >/dev/null ;;
	7) dmsetup message "$name" 0 reset_stats ;;
	8) dm_reload "$name" "$(dmsetup table "$name")" ;;
	9) dmsetup message "$name" 0 writeback_rate $(((RANDOM % 3) * 500)) ;;
	10) verify_map "$name" ;;
	esac || return
	echo "$ACTION"
}

@test "stress: fio verify on 4 jobs while everything else changes under it" {
	require_guest
	local secs=${SSDCACHE_STRESS_SECS:-0} want=${SSDCACHE_STRESS_ACTIONS:-10}
	origin=$(nullb_create st_o 256 fast)
	ssd=$(nullb_create st_s 48 fast)
	dm=$(ssdc_create st "$origin" "$ssd" writeback format)
	# Each job owns 48 MiB; verify_backlog checks what was written while
	# the run goes on, so every block is verified, not only at the end.
	# fio runs until told to stop; the runtime is only a backstop.
	fio --name=stress --filename="$dm" --direct=1 --ioengine=libaio \
		--iodepth=8 --numjobs=4 --size=48M --offset_increment=48M \
		--rw=randrw --rwmixread=40 --bsrange=4k-128k --random_distribution=zipf:1.1 \
		--verify=crc32c --verify_backlog=256 --verify_fatal=1 \
		--time_based --runtime=$((secs + 7200)) --randrepeat=0 --group_reporting \
		--output-format=terse >"$BATS_TEST_TMPDIR/fio.out" 2>&1 &
	pid=$!
	# A sequential reader over the rest of the device, past the cutoff.
	end=$(( $(dev_sectors "$dm") / 2048 ))
	actions=0
	start=$SECONDS
	: >"$BATS_TEST_TMPDIR/actions"
	while [ "$actions" -lt "$want" ] || [ $((SECONDS - start)) -lt "$secs" ]; do
		kill -0 "$pid" 2>/dev/null || break
		stress_action st >>"$BATS_TEST_TMPDIR/actions" || fail "action failed: $ACTION"
		dd if="$dm" of=/dev/null bs=1M count=8 skip=$((192 + RANDOM % (end - 200))) \
			iflag=direct status=none
		actions=$((actions + 1))
		sleep 0.$((RANDOM % 10))
	done
	sort "$BATS_TEST_TMPDIR/actions" | uniq -c
	echo "$actions actions in $((SECONDS - start))s"
	# fio still running means it met no error: stop it and check that it
	# reports none. Gone early means it failed.
	rc=0
	if kill -0 "$pid" 2>/dev/null; then
		kill -INT "$pid"
		wait "$pid" || rc=$?
	else
		wait "$pid" || rc=$?
		cat "$BATS_TEST_TMPDIR/fio.out"
		fail "fio ended early (status $rc)"
	fi
	# 128 is fio's status when a signal ended it; the terse line's fifth
	# field is the job's error; a verify failure also prints its own line.
	err=$(grep '^3;' "$BATS_TEST_TMPDIR/fio.out" | cut -d';' -f5)
	if { [ "$rc" != 0 ] && [ "$rc" != 128 ]; } || [ "$err" != 0 ] ||
		grep -Eq 'verify failed|bad (magic|header)|, err=[1-9]' "$BATS_TEST_TMPDIR/fio.out"; then
		cat "$BATS_TEST_TMPDIR/fio.out"
		fail "fio verify failed (status $rc, error '$err')"
	fi

	# The end: write everything back, compare, reload, compare again.
	dmsetup message st 0 writeback_rate 0
	dmsetup message st 0 mode writeback
	"$SSDCACHECTL" flush st
	assert_eq 0 "$(ssdc_stat st dirty)"
	assert_eq ok "$(ssdc_stat st state)"
	sum=$(dev_sum "$origin")
	assert_eq "$sum" "$(dev_sum "$dm")" "cache vs origin"
	verify_map st || fail "the map on the SSD differs from RAM at the end"
	dm_remove st
	dm=$(ssdc_create st "$origin" "$ssd" writeback)
	assert_eq "$sum" "$(dev_sum "$dm")" "after a reload"
	dm_remove st
	run "$SSDCACHECTL" check "$ssd"
	[ "$status" -eq 0 ] || fail "check after the run: $output"
}
