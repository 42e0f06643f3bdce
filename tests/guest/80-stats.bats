#!/usr/bin/env bats
# Statistics and tunables: /sys/block/dm-N/ssdcache/, the status line's
# counters, and ssdcachectl stats / top.

load ../lib/common

setup() { require_guest; }

BASE=$((16 << 20))

# Runs fio with psync, one I/O at a time: the count of bios is exact.
fio_exact() {
	local dev=$1 rw=$2 offset=$3 size=$4
	fio --name=exact --filename="$dev" --direct=1 --ioengine=psync --bs=4k \
		--rw="$rw" --offset="$offset" --size="$size" --randrepeat=0 \
		--output-format=terse >"$BATS_TEST_TMPDIR/fio.out" 2>&1 ||
		{ cat "$BATS_TEST_TMPDIR/fio.out"; return 1; }
}

# Waits until counter COUNTER of NAME reaches VALUE (background fills).
wait_stat() {
	local name=$1 counter=$2 want=$3 i
	for i in $(seq 1 300); do
		[ "$(ssdc_sysstat "$name" "$counter")" = "$want" ] && return 0
		sleep 0.1
	done
	fail "$name: $counter is $(ssdc_sysstat "$name" "$counter"), expected $want"
}

# Sum of a histogram file's counts.
hist_total() { awk '$1 != "sum_us" {n += $2} END {print n + 0}' "$1"; }

# A fresh cache NAME in MODE over a 64 MiB origin, 8 MiB SSD, counters at 0.
# udev's probe has read (and so cached) the first and last MiB: the tests
# use the blocks from $BASE on.
stats_cache() {
	local name=$1 mode=$2
	dev=$(nullb_create "${name}o" 64 fast)
	cache=$(nullb_create "${name}c" 8 fast)
	# No idle cleaning: the cleaner runs only when a test asks. No
	# readahead: each block read is one miss or hit, as the tests count.
	ssdc_create "$name" "$dev" "$cache" "$mode" format writeback_idle_ms 0 \
		readahead_kb 0 >/dev/null
	udevadm settle
	dmsetup message "$name" 0 reset_stats
}

@test "sysfs: the directory comes with the target, lasts through suspend and reload, goes with it" {
	stats_cache sy0 writethrough
	d=$(sysdir sy0)
	[ -d "$d" ] && [ -d "$d/stats" ] || fail "no $d"
	assert_eq running "$(cat "$d/state")" state
	assert_eq writethrough "$(cat "$d/mode")" mode
	assert_eq 4096 "$(cat "$d/block_size")" block_size
	udev_pause
	fio_exact /dev/mapper/sy0 read:4k $BASE 256k
	assert_eq 32 "$(ssdc_sysstat sy0 reads)" reads

	dmsetup --noudevsync suspend sy0
	assert_eq suspended "$(cat "$d/state")" "state when suspended"
	dmsetup --noudevsync resume sy0
	assert_eq running "$(cat "$d/state")" "state after resume"

	# A reload with another policy: the directory shows the new table,
	# and the counters carry on.
	table=$(dmsetup table sy0 | sed 's/ policy lru / policy fifo /')
	dmsetup --noudevsync suspend sy0
	dmsetup --noudevsync load sy0 --table "$table"
	dmsetup --noudevsync resume sy0
	assert_eq fifo "$(cat "$d/policy")" "policy after reload"
	assert_eq 32 "$(ssdc_sysstat sy0 reads)" "reads after reload"
	fio_exact /dev/mapper/sy0 read:4k $BASE 256k
	assert_eq 64 "$(ssdc_sysstat sy0 reads)" "reads after reload and more reads"

	udev_resume
	dm_remove sy0
	[ ! -e "$d" ] || fail "$d is still there"
	[ -z "$(find /sys/block/*/ -maxdepth 1 -name ssdcache)" ] || fail "a directory stayed"
}

@test "stats: a scripted sequence gives the exact counters (write-through)" {
	stats_cache sx0 writethrough
	m=/dev/mapper/sx0
	blocks=$(cat "$(sysdir sx0)/cache_blocks")
	udev_pause
	# 64 whole-block writes to every other block: misses, installed.
	fio_exact $m write:4k $BASE 512k
	# The same blocks read twice: 128 hits.
	fio_exact $m read:4k $BASE 512k
	fio_exact $m read:4k $BASE 512k
	# 32 blocks between them, never written: misses, then promoted.
	fio_exact $m read:4k $((BASE + 4096)) 256k
	wait_stat sx0 promotions 32
	# One sequential stream over a one-block cutoff: every bio bypasses.
	dmsetup message sx0 0 sequential_cutoff 4096
	dd if=$m of=/dev/null bs=1M count=4 skip=32 iflag=direct status=none
	# One write to a cached block: a write hit.
	dd if=/dev/urandom of=$m bs=4k count=1 seek=$((BASE / 4096)) oflag=direct status=none

	bypassed=$(ssdc_sysstat sx0 bypassed_reads)
	[ "$bypassed" -ge 1 ] || fail "no bypassed read"
	assert_eq 128 "$(ssdc_sysstat sx0 read_hits)" read_hits
	assert_eq $((32 + bypassed)) "$(ssdc_sysstat sx0 read_misses)" read_misses
	assert_eq $((160 + bypassed)) "$(ssdc_sysstat sx0 reads)" reads
	assert_eq 65 "$(ssdc_sysstat sx0 writes)" writes
	assert_eq 1 "$(ssdc_sysstat sx0 write_hits)" write_hits
	assert_eq 64 "$(ssdc_sysstat sx0 write_misses)" write_misses
	assert_eq 0 "$(ssdc_sysstat sx0 bypassed_writes)" bypassed_writes
	assert_eq 0 "$(ssdc_sysstat sx0 evictions)" evictions
	assert_eq 0 "$(ssdc_sysstat sx0 dirty_blocks)" dirty_blocks
	used=$(ssdc_used sx0)
	assert_eq "$used" "$(ssdc_sysstat sx0 clean_blocks)" clean_blocks
	assert_eq $((blocks - used)) "$(ssdc_sysstat sx0 free_blocks)" free_blocks
	assert_eq $((128 * 4096)) "$(ssdc_sysstat sx0 ssd_read_bytes)" ssd_read_bytes
	assert_eq $((32 * 4096 + 4 * 1048576)) "$(ssdc_sysstat sx0 origin_read_bytes)" origin_read_bytes
	assert_eq $((65 * 4096)) "$(ssdc_sysstat sx0 origin_write_bytes)" origin_write_bytes
	[ "$(ssdc_sysstat sx0 ssd_write_bytes)" -ge $((96 * 4096)) ] || fail "ssd_write_bytes $(ssdc_sysstat sx0 ssd_write_bytes)"
	for e in ssd_read_errors ssd_write_errors origin_read_errors origin_write_errors discards; do
		assert_eq 0 "$(ssdc_sysstat sx0 $e)" "$e"
	done
	ratio=$(awk -v h=128 -v r=$((160 + bypassed)) 'BEGIN {printf "%.4f", h / r}')
	assert_eq "$ratio" "$(ssdc_sysstat sx0 read_hit_ratio)" read_hit_ratio
	d=$(sysdir sx0)/stats
	assert_eq 128 "$(hist_total "$d/read_latency_ssd_us")" "SSD latency samples"
	assert_eq $((32 + bypassed)) "$(hist_total "$d/read_latency_origin_us")" "origin latency samples"
	[ "$(awk '$1 == "sum_us" {print $2}' "$d/read_latency_ssd_us")" -gt 0 ] || fail "no latency sum"
	# The status line counts the same.
	assert_eq 128 "$(ssdc_stat sx0 read_hits)" "status read_hits"
	assert_eq $((32 + bypassed)) "$(ssdc_stat sx0 read_misses)" "status read_misses"

	# Both resets zero the counters and keep the block counts.
	echo 1 >"$d/reset"
	assert_eq 0 "$(ssdc_sysstat sx0 reads)" "reads after reset"
	assert_eq 0 "$(hist_total "$d/read_latency_ssd_us")" "histogram after reset"
	assert_eq "$used" "$(ssdc_sysstat sx0 clean_blocks)" "clean_blocks after reset"
	run sh -c "echo 0 >$d/reset"
	[ "$status" -ne 0 ] || fail "reset accepted 0"
	fio_exact $m read:4k $BASE 16k
	dmsetup message sx0 0 reset_stats
	assert_eq 0 "$(ssdc_sysstat sx0 reads)" "reads after reset_stats"
}

@test "stats: write-back counts dirty blocks, flushes, FUA, cleaning and discards" {
	stats_cache sb0 writeback
	m=/dev/mapper/sb0
	udev_pause
	fio_exact $m write:4k $BASE 128k
	assert_eq 16 "$(ssdc_sysstat sb0 write_misses)" write_misses
	assert_eq 16 "$(ssdc_sysstat sb0 dirty_blocks)" dirty_blocks
	assert_eq 0 "$(ssdc_sysstat sb0 origin_write_bytes)" "origin writes before cleaning"
	flushes=$(ssdc_sysstat sb0 flushes)
	dd if=/dev/zero of=$m bs=4k count=1 seek=$((BASE / 4096 + 64)) oflag=direct conv=fsync status=none
	[ "$(ssdc_sysstat sb0 flushes)" -gt "$flushes" ] || fail "fsync did not count a flush"
	dd if=/dev/zero of=$m bs=4k count=1 seek=$((BASE / 4096 + 66)) oflag=direct,sync status=none
	# O_SYNC on a block device writes with FUA where the queue has a cache.
	[ "$(ssdc_sysstat sb0 journal_commits)" -ge 1 ] || fail "no journal commit counted"
	assert_eq $(($(ssdc_sysstat sb0 journal_blocks) * 4096)) "$(ssdc_sysstat sb0 journal_bytes)" journal_bytes
	dmsetup message sb0 0 flush
	wait_clean sb0
	assert_eq 18 "$(ssdc_sysstat sb0 cleaned_blocks)" cleaned_blocks
	assert_eq $((18 * 4096)) "$(ssdc_sysstat sb0 origin_write_bytes)" origin_write_bytes
	[ "$(ssdc_sysstat sb0 ssd_read_bytes)" -ge $((18 * 4096)) ] || fail "cleaning read nothing from the SSD"
	assert_eq writeback "$(cat "$(sysdir sb0)/mode")" mode
	assert_eq clean "$(cat "$(sysdir sb0)/writeback")" "writeback state"
	blkdiscard -o $((BASE + (16 << 20))) -l $((1 << 20)) $m
	[ "$(ssdc_sysstat sb0 discards)" -ge 1 ] || fail "discard not counted"
}

# set_ok DIR FILE VALUE: writes VALUE to DIR/FILE in one write(), with
# bash's own printf (no program to start: each costs 0.1-0.4 s under
# TCG); true if the kernel took it.
set_ok() { { printf '%s\n' "$3" >"$1/$2"; } 2>/dev/null; }

@test "tunables: every sysfs file takes its valid range and refuses bad values, unchanged" {
	stats_cache tu0 writethrough
	d=$(sysdir tu0)
	check() {	# FILE "GOOD..." "BAD..."
		local f=$1 v before
		for v in $2; do
			set_ok "$d" "$f" "$v" || fail "$f=$v refused"
			assert_eq "$v" "$(<"$d/$f")" "$f read back"
		done
		before=$(<"$d/$f")
		for v in $3; do
			! set_ok "$d" "$f" "$v" || fail "$f accepted '$v'"
			assert_eq "$before" "$(<"$d/$f")" "$f after '$v'"
		done
	}
	check mode "writeback writearound writethrough" "fast wb 1 WRITEBACKX"
	check policy "fifo lru" "random 0 lr"
	check sequential_cutoff "0 1 1048576 18446744073709551615" "-1 1k 18446744073709551616 x"
	check dirty_low "0 10 25" "101 -1 x 2.5"
	check dirty_high "100 60 25" "101 -5 x"
	check dirty_high "50" "24"	# below dirty_low (25)
	check dirty_low "50" "51"	# above dirty_high (50)
	check writeback_idle_ms "0 1 3600000 2000" "3600001 -1 1s"
	check writeback_rate "0 1 4294967295 100" "4294967296 -1 fast"
	check writeback_yield "0 1" "2 -1 yes"
	check error_limit "0 1 1000000 8" "1000001 -1 x"
	check error_halflife_ms "0 1 86400000 60000" "86400001 -1 1m"
	# Read-only files refuse writes.
	for f in state health writeback writeback_backoff_ms block_size cache_blocks origin \
		 cache ram_per_block stats/reads; do
		! set_ok "$d" "$f" 1 || fail "$f is writable"
	done
	# The table line follows what sysfs set.
	[[ "$(dmsetup table tu0)" == *" policy lru "*" dirty_high 50 dirty_low 50 "* ]] ||
		fail "table: $(dmsetup table tu0)"
	# ssdcachectl set takes the same path.
	run "$SSDCACHECTL" set tu0 writeback_rate 77
	[ "$status" -eq 0 ] || fail "set: $output"
	assert_eq 77 "$(cat "$d/writeback_rate")" "set writeback_rate"
	run "$SSDCACHECTL" set tu0 dirty_high 101
	[ "$status" -eq 1 ] || fail "set dirty_high 101: status $status, $output"
	[[ "$output" == *refused* ]] || fail "set: $output"
	run "$SSDCACHECTL" set nosuch mode writeback
	[ "$status" -eq 3 ]
	run "$SSDCACHECTL" set tu0 mode
	[ "$status" -eq 2 ]
}

@test "ssdcachectl stats: text, JSON (jq) and Prometheus (prometheus_client) agree with sysfs" {
	stats_cache sj0 writethrough
	stats_cache sj1 writeback
	fio_exact /dev/mapper/sj0 read:4k $BASE 256k
	fio_exact /dev/mapper/sj1 write:4k $BASE 64k
	run "$SSDCACHECTL" stats sj0
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *"reads"*"32"* ]] || fail "text: $output"

	"$SSDCACHECTL" stats --json >"$BATS_TEST_TMPDIR/s.json"
	jq -e '.version == 1 and (.caches | length) == 2' "$BATS_TEST_TMPDIR/s.json" >/dev/null ||
		fail "json: $(cat "$BATS_TEST_TMPDIR/s.json")"
	assert_eq 32 "$(jq '.caches[] | select(.name == "sj0") | .counters.reads' "$BATS_TEST_TMPDIR/s.json")" "json reads"
	assert_eq 8 "$(jq '.caches[] | select(.name == "sj1") | .counters.dirty_blocks' "$BATS_TEST_TMPDIR/s.json")" "json dirty"
	assert_eq writeback "$(jq -r '.caches[] | select(.name == "sj1") | .mode' "$BATS_TEST_TMPDIR/s.json")" "json mode"
	assert_eq ok "$(jq -r '.caches[] | select(.name == "sj1") | .health' "$BATS_TEST_TMPDIR/s.json")" "json health"
	assert_eq "$(cat "$(sysdir sj0)/cache_blocks")" \
		"$(jq '.caches[] | select(.name == "sj0") | .settings.cache_blocks' "$BATS_TEST_TMPDIR/s.json")" "json blocks"
	jq -e '.caches[0].latency.ssd_read.buckets | length > 0' "$BATS_TEST_TMPDIR/s.json" >/dev/null
	jq -e '.caches[0].read_hit_ratio >= 0 and .caches[0].read_hit_ratio <= 1' "$BATS_TEST_TMPDIR/s.json" >/dev/null

	"$SSDCACHECTL" stats --prometheus sj0 sj1 >"$BATS_TEST_TMPDIR/s.prom"
	/usr/bin/python3 - "$BATS_TEST_TMPDIR/s.prom" <<-'EOF' || fail "prometheus: $(head -40 "$BATS_TEST_TMPDIR/s.prom")"
		import sys
		from prometheus_client.parser import text_string_to_metric_families
		fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
		def val(fam, cache, suffix=""):
		    for s in fams[fam].samples:
		        if s.labels.get("cache") == cache and s.name.endswith(suffix) and "le" not in s.labels:
		            return s.value
		    raise SystemExit(f"no {fam}{suffix} for {cache}")
		assert fams["ssdcache_reads"].type == "counter", fams["ssdcache_reads"].type
		assert val("ssdcache_reads", "sj0") == 32
		assert val("ssdcache_dirty_blocks", "sj1") == 8
		assert fams["ssdcache_dirty_blocks"].type == "gauge"
		h = fams["ssdcache_origin_read_latency_seconds"]
		assert h.type == "histogram"
		assert val("ssdcache_origin_read_latency_seconds", "sj0", "_count") == 32
		info = [s for s in fams["ssdcache_info"].samples if s.labels["cache"] == "sj1"][0]
		assert info.labels["mode"] == "writeback", info.labels
		assert info.labels["health"] == "ok", info.labels
	EOF

	# --watch repeats; one JSON document per line.
	timeout 3 "$SSDCACHECTL" stats --json --watch --interval 0.5 sj0 >"$BATS_TEST_TMPDIR/w.json" || true
	[ "$(wc -l <"$BATS_TEST_TMPDIR/w.json")" -ge 2 ] || fail "watch printed $(wc -l <"$BATS_TEST_TMPDIR/w.json") lines"
	jq -e -s 'all(.[]; .version == 1)' "$BATS_TEST_TMPDIR/w.json" >/dev/null

	run "$SSDCACHECTL" stats nosuch
	[ "$status" -eq 3 ]
	run "$SSDCACHECTL" stats --yaml sj0
	[ "$status" -eq 2 ]
}

@test "ssdcachectl top: renders every cache in a terminal, with rates, and quits on q" {
	stats_cache tp0 writethrough
	stats_cache tp1 writeback
	fio --name=load --filename=/dev/mapper/tp0 --direct=1 --ioengine=psync --bs=4k \
		--rw=randread --size=1m --time_based --runtime=300 >/dev/null 2>&1 &
	load=$!
	tmux new-session -d -s top -x 120 -y 20 "$SSDCACHECTL top"
	# Until top shows both caches and a read rate for tp0: no fixed sleep
	# is enough on a slow (debug) kernel, where 4 s caught a half-drawn
	# screen. Bounded; the checks below say what is missing.
	for _ in $(seq 90); do
		sleep 1
		tmux capture-pane -p -t top >"$BATS_TEST_TMPDIR/top.txt"
		grep -q "^tp1 .*writeback" "$BATS_TEST_TMPDIR/top.txt" &&
			awk '$1 == "tp0" && $5 + 0 > 0 {ok = 1} END {exit !ok}' "$BATS_TEST_TMPDIR/top.txt" &&
			break
	done
	tmux send-keys -t top q
	for _ in $(seq 30); do
		tmux has-session -t top 2>/dev/null || break
		sleep 1
	done
	! tmux has-session -t top 2>/dev/null || { tmux kill-session -t top; fail "top did not quit on q"; }
	# fio only: a bare wait would also wait for bats' own timer
	# (BATS_TEST_TIMEOUT), which ends the test only when it expires.
	kill "$load" 2>/dev/null || true
	wait "$load" || true
	cat "$BATS_TEST_TMPDIR/top.txt"
	grep -q "ssdcachectl top" "$BATS_TEST_TMPDIR/top.txt"
	grep -q "HIT%.*READ/s.*DIRTY%.*CLEAN/s" "$BATS_TEST_TMPDIR/top.txt"
	grep -q "^tp1 .*writeback" "$BATS_TEST_TMPDIR/top.txt"
	# tp0 is being read: a non-zero read rate.
	awk '$1 == "tp0" && $5 + 0 > 0 {ok = 1} END {exit !ok}' "$BATS_TEST_TMPDIR/top.txt" ||
		fail "no read rate for tp0"
	# Batch mode for scripts.
	run "$SSDCACHECTL" top -n 2 --interval 0.2
	[ "$status" -eq 0 ]
	[[ "$output" == *tp0*tp1* ]] || fail "top -n: $output"
	run "$SSDCACHECTL" top -n 0
	[ "$status" -eq 2 ]
}
