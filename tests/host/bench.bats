#!/usr/bin/env bats
# bench/report.py: ratios and targets from a results.json (bench/guest.py's
# format), so that a wrong sum or a swapped reference cannot hide in the
# tables of Documentation/performance.rst.

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

# A results.json with round figures: each system's IOPS are FACTOR times
# the raw HDD's 100.
fake_results() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
systems = {}
for name, label, cache, f in [
        ("raw_hdd", "raw HDD", False, 1), ("raw_ssd", "raw SSD", False, 50),
        ("linear_ssd", "dm-linear on SSD", False, 40),
        ("ssdcache_wt", "ssdcache write-through", True, 39),
        ("ssdcache_wb", "ssdcache write-back", True, 30),
        ("dm_cache", "dm-cache (smq)", True, 10),
        ("dm_writecache", "dm-writecache", True, 20),
        ("bcache", "bcache", True, 25)]:
    r = lambda d: {d: {"iops": 100 * f, "mib_s": f, "lat_mean_us": 1, "lat_p99_us": 1}}
    s = {"label": label, "cache_blocks": 1000 if cache else 0, "block_bytes": 4096,
         "hit": dict(r("read"), hit_ratio=1.0 if cache else None),
         "write": r("write"),
         "mixed": dict(r("read"), hit_ratio=0.5 if cache else None,
                       iops_over_time=[[1, f], [2, f]]),
         "seq": {"read": {"mib_s": 20.0}, "write": {"mib_s": 20.0}},
         "pgbench_ext4": {"tps": float(f), "latency_ms": 1.0}}
    if cache:
        s["mixed"]["hits_over_time"] = [[0.0, 0, 0], [1.0, 5, 5]]
        s["mem_at_create"] = 20000
        s["mem_after_mixed"] = 24000
        s["seq"].update(hot_hit_ratio_before=0.9, hot_hit_ratio_after=0.5)
    systems[name] = s
json.dump({"kernel": "test", "secs": 1, "cpus": 2,
           "devices": {k: {"mb": 1, "model": {"irqmode": 2, "completion_nsec": ns,
                                              "hw_queue_depth": qd}}
                       for k, ns, qd in [("hdd", 4000000, 1), ("ssd", 60000, 64),
                                         ("ssdbig", 60000, 64)]},
           "pgbench": {"scale": 1, "db_mb": {"ext4": 1}, "memory_limit": "1M", "clients": 1},
           "systems": systems}, open(sys.argv[1] + "/results.json", "w"))
PY
}

# fake_results, then Python statements ($2) that change its results.json,
# loaded as r.
fake_results_edited() {
	fake_results "$1"
	/usr/bin/python3 - "$1/results.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(r, open(sys.argv[1], "w"))
PY
}

# fake_results_edited, then its report, which must succeed.
edited_report() {
	fake_results_edited "$1" "$2"
	run /usr/bin/python3 "$TOP/bench/report.py" "$1"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

# The report of fake_results left as they are has no line with $2.
plain_report_lacks() {
	fake_results "$1"
	/usr/bin/python3 "$TOP/bench/report.py" "$1" >/dev/null
	! grep -q -F "$2" "$1/results.md"
}

@test "bench report: ratios, best peer and targets from a results.json" {
	d=$BATS_TEST_TMPDIR
	fake_results "$d"
	run /usr/bin/python3 "$TOP/bench/report.py" "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	md=$d/results.md
	# Hit path: 3900 IOPS, 39x the HDD, 0.78x the SSD, 0.97x dm-linear,
	# 1.56x the best peer (bcache, 2500).
	grep -F '| ssdcache write-through | 3,900 | 39.00x | 0.78x | 0.97x | 1.56x | 100.0% |' "$md"
	grep -F 'x best peer (bcache)' "$md"
	grep -F '| hit path (write-through) >= 0.95x dm-linear | 0.97x | met |' "$md"
	grep -F '| hit path (write-back) >= 0.95x dm-linear | 0.75x | MISSED |' "$md"
	grep -F '| write-through 4 KiB random write >= 0.95x raw HDD | 39.00x | met |' "$md"
	grep -F '| hot set kept across sequential I/O (ssdcache_wt) | 90.0% -> 50.0% | MISSED |' "$md"
	# 20000 bytes over 1000 blocks, 24000 after the mixed run.
	grep -F '| ssdcache write-back | 1,000 x 4 KiB | 20.0 | 24.0 | 24.0 |' "$md"
	# The models as results.json records them.
	grep -F 'HDD model 1 MiB (queue depth 1, 4 ms per request); SSD model (queue depth 64, 60 us per request)' "$md"
	for p in warmup-hit-ratio mixed-iops ratios; do
		[ -s "$d/$p.png" ] || { echo "no $p.png"; false; }
	done
	grep -F '.. csv-table::' "$d/results.rst"
}

@test "bench report: a system that failed is named, the rest still reported" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["bcache"] = {"label": "bcache", "error": "bcache: the cache device did not attach"}'
	grep -F '**Failed:** bcache: bcache: the cache device did not attach' "$d/results.md"
	grep -F 'x best peer (dm-writecache)' "$d/results.md"
}

@test "bench report: the hit path's rounds are listed under its table" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wt"]["hit"]["rounds_iops"] = [3800, 3900, 4100]'
	grep -F '(IOPS of each round: ssdcache write-through 3,800, 3,900, 4,100).' "$d/results.md"
	# One round (older results): no such line.
	plain_report_lacks "$d" 'IOPS of each round'
}

@test "bench report: rounds paired with dm-linear rounds give their own ratio and target" {
	d=$BATS_TEST_TMPDIR
	# Write-through's medians miss (3,400 / 4,000 = 0.85x) while each of
	# its rounds is within 0.95x of the reference round beside it.
	edited_report "$d" 'r["systems"]["ssdcache_wt"]["hit"]["read"]["iops"] = 3400
r["systems"]["ssdcache_wt"]["hit"]["rounds_iops"] = [3400, 3900, 3000]
r["systems"]["ssdcache_wt"]["hit"]["ref_rounds_iops"] = [3500, 4000, 3200]
r["systems"]["ssdcache_wb"]["hit"]["rounds_iops"] = [3000, 3000, 3000]
r["systems"]["ssdcache_wb"]["hit"]["ref_rounds_iops"] = [4000, 3000, 3500]
r["systems"]["ssdcache_wb"]["write"]["rounds_iops"] = [3000]
r["systems"]["ssdcache_wb"]["write"]["ref_rounds_iops"] = [3200]'
	md=$d/results.md
	grep -F 'the median of the rounds'"'"' ratios (each round'"'"'s): ssdcache write-through 0.971x (0.971, 0.975, 0.938); ssdcache write-back 0.857x (0.750, 1.000, 0.857).' "$md"
	grep -F '| hit path (write-through) >= 0.95x dm-linear | 0.85x | MISSED |' "$md"
	grep -F '| hit path (write-through) >= 0.95x dm-linear, paired rounds | 0.97x | met |' "$md"
	grep -F '| hit path (write-back) >= 0.95x dm-linear, paired rounds | 0.86x | MISSED |' "$md"
	# Workload 2: one round and its reference.
	grep -F 'ratios (each round'"'"'s): ssdcache write-back 0.938x (0.938).' "$md"
	grep -F '| write-back 4 KiB random write >= 0.9x dm-linear, paired rounds | 0.94x | met |' "$md"
	# Results without reference rounds (older runs): no such line or row.
	plain_report_lacks "$d" 'Paired with dm-linear'
	plain_report_lacks "$d" 'paired rounds'
}

@test "bench report: workload 1 in slices gives its interval and its own target rows" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wt"]["hit"]["slices"] = {"secs": 3,
    "ratios": [0.9, 1.0], "median": 0.95, "geomean": 0.9487, "ci95": [0.5, 1.8],
    "pairs": [[100, 90], [100, 100]]}
r["systems"]["ssdcache_wb"]["hit"]["slices"] = {"secs": 3, "ratios": [0.96],
    "median": 0.96, "geomean": 0.96, "pairs": [[100, 96]]}
r["systems"]["linear_ssd"]["hit"]["slices"] = {"secs": 3, "ratios": [1.0, 1.02],
    "median": 1.01, "geomean": 1.01, "ci95": [0.9, 1.13], "pairs": [[100, 100], [100, 102]]}'
	md=$d/results.md
	grep -F 'In slices: pairs of 3 s slices of one fio run' "$md"
	grep -F ': dm-linear on SSD 1.010x [0.900, 1.130] (median 1.010x, 2 pairs); ssdcache write-through 0.949x [0.500, 1.800] (median 0.950x, 2 pairs); ssdcache write-back 0.960x (median 0.960x, 1 pair).' "$md"
	# 0.9487 rounds to the bar: a third decimal, and missed.
	grep -F '| hit path (write-through) >= 0.95x dm-linear, slices (95% interval 0.500x to 1.800x) | 0.949x | MISSED |' "$md"
	# One pair has no interval: no target row from it.
	! grep -F 'hit path (write-back) >= 0.95x dm-linear, slices' "$md"
	plain_report_lacks "$d" 'In slices'
}

@test "bench report: the one-vCPU boot's pooled instances give their line and their own target rows" {
	d=$BATS_TEST_TMPDIR
	mkdir -p "$d/onecpu"
	cat >"$d/onecpu/slices.json" <<'JSON'
[{"system": "ssdcache_wt-base", "workload": "hit", "geomean": 0.96, "instance": 0},
 {"system": "linear_ssd", "workload": "hit", "instances": 4, "geomean": 1.003, "median": 1.0, "ci95": [0.98, 1.03], "ratios": [1, 1, 1, 1]},
 {"system": "ssdcache_wt-base", "workload": "hit", "instances": 4, "geomean": 0.9652, "median": 0.964, "ci95": [0.958, 0.973], "ratios": [1, 1, 1, 1]},
 {"system": "ssdcache_wb-base", "workload": "hit", "instances": 4, "geomean": 0.949, "median": 0.95, "ci95": [0.93, 0.97], "ratios": [1, 1, 1, 1]},
 {"system": "dm_writecache", "workload": "hit", "instances": 4, "geomean": 0.95, "median": 0.95, "ci95": [0.9, 1.0], "ratios": [1, 1, 1, 1]},
 {"system": "ssdcache_wb-base", "workload": "write", "instances": 4, "geomean": 0.93, "median": 0.93, "ci95": [0.9, 0.96], "ratios": [1, 1, 1, 1]}]
JSON
	edited_report "$d" 'pass'
	md=$d/results.md
	grep -F 'In a one-vCPU boot of its own, 4 KiB random reads (workload 1)' "$md"
	grep -F ': dm-linear on SSD 1.003x [0.980, 1.030] (median 1.000x, 4 instances); ssdcache write-through 0.965x [0.958, 0.973] (median 0.964x, 4 instances); ssdcache write-back 0.949x [0.930, 0.970] (median 0.950x, 4 instances); dm-writecache 0.950x [0.900, 1.000] (median 0.950x, 4 instances).' "$md"
	grep -F 'In a one-vCPU boot of its own, 4 KiB random writes (workload 2) in pairs of slices beside dm-linear, each system in several instances created anew; the geometric mean of the instances' "$md"
	grep -F '| hit path (write-through) >= 0.95x dm-linear, one vCPU, 4 instances (95% interval 0.958x to 0.973x) | 0.97x | met |' "$md"
	grep -F '| hit path (write-back) >= 0.95x dm-linear, one vCPU, 4 instances (95% interval 0.930x to 0.970x) | 0.949x | MISSED |' "$md"
	grep -F '| write-back 4 KiB random write >= 0.9x dm-linear, one vCPU, 4 instances (95% interval 0.900x to 0.960x) | 0.93x | met |' "$md"
	rm -r "$d/onecpu"
	plain_report_lacks "$d" 'one vCPU'
}

@test "bench report: the pgbench pairs boots give their line and their own target rows; --contenders names the peers" {
	d=$BATS_TEST_TMPDIR
	mkdir -p "$d/pgpairs/dm_writecache" "$d/pgpairs/bcache" "$d/pgpairs/raw_ssd"
	cat >"$d/pgpairs/raw_ssd/pgswap.json" <<'JSON'
{"pair": ["ssdcache_wb", "raw_ssd"], "pairs": 2, "ratios": [0.82, 0.79],
 "median_ratio": 0.805, "geomean_ratio": 0.805, "ci95": [0.61, 1.06], "first_won": 0, "runs": []}
JSON
	cat >"$d/pgpairs/dm_writecache/pgswap.json" <<'JSON'
{"pair": ["ssdcache_wb", "dm_writecache"], "pairs": 3, "ratios": [1.046, 0.947, 1.002],
 "median_ratio": 1.002, "geomean_ratio": 0.997, "ci95": [0.88, 1.13], "first_won": 2, "runs": []}
JSON
	cat >"$d/pgpairs/bcache/pgswap.json" <<'JSON'
{"pair": ["ssdcache_wb", "bcache"], "pairs": 2, "ratios": [1.1, 1.2],
 "median_ratio": 1.15, "geomean_ratio": 1.149, "ci95": [1.01, 1.3], "first_won": 2, "runs": []}
JSON
	edited_report "$d" 'pass'
	md=$d/results.md
	grep -F 'In one-vCPU boots of their own, pgbench (ext4) in interleaved pairs of turns against the raw SSD model and each peer within 10% of the best in the main boot, each turn' "$md"
	# The raw SSD first, then in PEERS order: dm-writecache before bcache.
	grep -F ': ssdcache write-back against raw SSD: ratio 0.805x [0.610, 1.060] (median 0.805x, 2 pairs), won 0 of 2; ssdcache write-back against dm-writecache: ratio 0.997x [0.880, 1.130] (median 1.002x, 3 pairs), won 2 of 3; ssdcache write-back against bcache: ratio 1.149x [1.010, 1.300] (median 1.150x, 2 pairs), won 2 of 2.' "$md"
	# Against the raw SSD the bar is 0.8x, not the best peer's 1.0x.
	grep -F '| pgbench ext4 (ssdcache_wb) >= 0.8x raw SSD: one vCPU, 2 interleaved pairs (95% interval 0.610x to 1.060x) | 0.81x | met |' "$md"
	! grep -F 'best peer: against raw_ssd' "$md"
	# The main boot's row against the raw SSD stays: 30 TPS against 50.
	grep -F '| pgbench ext4 (ssdcache_wb) >= 0.8x raw SSD | 0.60x | MISSED |' "$md"
	rm -r "$d/pgpairs/raw_ssd"
	/usr/bin/python3 "$TOP/bench/report.py" "$d" >/dev/null
	# The line names only the boots that ran: no raw SSD pairs now.
	grep -F 'pgbench (ext4) in interleaved pairs of turns against each peer within 10% of the best in the main boot, each turn' "$md"
	! grep -F 'against the raw SSD model' "$md"
	grep -F '| pgbench ext4 (ssdcache_wb) >= best peer: against dm_writecache, one vCPU, 3 interleaved pairs (95% interval 0.880x to 1.130x) | 0.997x | MISSED |' "$md"
	grep -F '| pgbench ext4 (ssdcache_wb) >= best peer: against bcache, one vCPU, 2 interleaved pairs (95% interval 1.010x to 1.300x) | 1.15x | met |' "$md"
	# The main boot's rows stay: write-back 30 TPS against bcache's 25.
	grep -F '| pgbench ext4 (ssdcache_wb) >= best peer | 1.20x | met |' "$md"
	rm -r "$d/pgpairs/bcache"
	/usr/bin/python3 "$TOP/bench/report.py" "$d" >/dev/null
	! grep -F 'against bcache' "$md"
	# Peers' TPS: bcache 25, dm-writecache 20, dm-cache 10; within 10%
	# of the best only bcache, then (22.5 >= 0.9 * 25) dm-writecache too.
	run /usr/bin/python3 "$TOP/bench/report.py" --contenders "$d" pgbench_ext4
	[ "$output" = bcache ]
	fake_results_edited "$d" 'r["systems"]["dm_writecache"]["pgbench_ext4"]["tps"] = 22.5'
	run /usr/bin/python3 "$TOP/bench/report.py" --contenders "$d" pgbench_ext4
	[ "$output" = "bcache dm_writecache" ]
	fake_results_edited "$d" 'r["systems"]["dm_cache"]["pgbench_ext4"]["tps"] = 99.0'
	run /usr/bin/python3 "$TOP/bench/report.py" --contenders "$d" pgbench_ext4
	[ "$output" = dm_cache ]
	fake_results_edited "$d" 'for p in ("dm_cache", "dm_writecache", "bcache"): del r["systems"][p]'
	run /usr/bin/python3 "$TOP/bench/report.py" --contenders "$d" pgbench_ext4
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	# --pg-pairs: the raw SSD model first, where write-back ran too.
	run /usr/bin/python3 "$TOP/bench/report.py" --pg-pairs "$d" pgbench_ext4
	[ "$status" -eq 0 ]
	[ "$output" = raw_ssd ]
	fake_results "$d"
	run /usr/bin/python3 "$TOP/bench/report.py" --pg-pairs "$d" pgbench_ext4
	[ "$output" = "raw_ssd bcache" ]
	fake_results_edited "$d" 'del r["systems"]["raw_ssd"]'
	run /usr/bin/python3 "$TOP/bench/report.py" --pg-pairs "$d" pgbench_ext4
	[ "$output" = bcache ]
	fake_results_edited "$d" 'del r["systems"]["ssdcache_wb"]["pgbench_ext4"]'
	run /usr/bin/python3 "$TOP/bench/report.py" --pg-pairs "$d" pgbench_ext4
	[ "$output" = bcache ]
	rm -r "$d/pgpairs"
	plain_report_lacks "$d" 'interleaved pairs'
}

@test "bench report: what each cache wrote back before the hit rounds is listed" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wb"]["hit"]["writeback_settled"] = {"dirty_before": 16384, "dirty_after": 0, "done": True, "secs": 4.2, "dirty_after_rounds": 0}
r["systems"]["dm_cache"]["hit"]["writeback_settled"] = {"dirty_before": 2048, "dirty_after": 12, "done": False, "secs": 600.0, "dirty_after_rounds": 3}
r["systems"]["ssdcache_wt"]["hit"]["writeback_settled"] = {"dirty_before": None, "dirty_after": None, "done": True, "secs": 0.0}'
	md=$d/results.md
	grep -F 'ssdcache write-back 16,384 -> 0 in 4.2 s, 0 after the rounds; dm-cache (smq) 2,048 -> 12 in 600.0 s (NOT all written back), 3 after the rounds.' "$md"
	! grep -F 'ssdcache write-through 0' "$md"
	plain_report_lacks "$d" 'Dirty blocks after the warm-up'
}

@test "bench report: what each cache wrote back before each write round is listed" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wb"]["write"]["writeback_settled"] = [{"dirty_before": b, "dirty_after": 0, "done": True, "secs": 1.0} for b in (0, 8192, 0, 8192)]
r["systems"]["bcache"]["write"]["writeback_settled"] = [{"dirty_before": 8000, "dirty_after": 5, "done": False, "secs": 600.0}]
r["systems"]["ssdcache_wt"]["write"]["writeback_settled"] = [{"dirty_before": 0, "dirty_after": 0, "done": True, "secs": 0.1}]'
	grep -F 'high watermark): ssdcache write-back 0, 8,192, 0, 8,192; bcache 8,000 (NOT all).' "$d/results.md"
	plain_report_lacks "$d" 'Dirty blocks before each round'
}

@test "bench report: what the sequential runs cost the HDD is listed under their tables" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'for n, rd, wr in [("raw_hdd", 128, 128), ("ssdcache_wb", 64, 128)]:
    r["systems"][n]["seq"]["read_hdd"] = {"reads_s": 160.0, "kib_per_read": float(rd)}
    r["systems"][n]["seq"]["write_hdd"] = {"writes_s": 150.0, "kib_per_write": float(wr)}'
	grep -F 'HDD read requests: raw HDD 160/s of 128 KiB; ssdcache write-back 160/s of 64.0 KiB.' "$d/results.md"
	grep -F 'HDD write requests: raw HDD 150/s of 128 KiB; ssdcache write-back 150/s of 128 KiB.' "$d/results.md"
	# Results without them (older runs): no such line.
	plain_report_lacks "$d" 'HDD read requests'
}

@test "bench report: how busy the HDD and the guest's CPUs were in a sequential run, where recorded" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["raw_hdd"]["seq"]["write_hdd"] = {"writes_s": 218.0, "kib_per_write": 114.0, "busy": 0.87, "guest_cpu_busy": 0.41}
r["systems"]["ssdcache_wb"]["seq"]["write_hdd"] = {"writes_s": 196.0, "kib_per_write": 114.0, "busy": 0.78}'
	grep -F 'HDD write requests: raw HDD 218/s of 114 KiB (HDD busy 87.0%, guest CPU busy 41.0%); ssdcache write-back 196/s of 114 KiB.' "$d/results.md"
}

@test "bench report: a sequential run's other-direction HDD requests and its start-up gap, where recorded" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wb"]["seq"]["read_hdd"] = {"reads_s": 150.0, "kib_per_read": 128.0, "writes_s": 8.0, "busy": 0.9, "guest_cpu_busy": 0.05, "gap": {"reads": 0, "writes": 40, "write_kib": 160}, "gap_s": 0.31}'
	grep -F 'ssdcache write-back 150/s of 128 KiB and 8.0 writes/s (HDD busy 90.0%, guest CPU busy 5.0%), after a 0.3 s start-up gap with 0 HDD reads and 40 writes' "$d/results.md"
}

@test "bench report: how long the HDD held requests in a sequential run's start-up gap, where recorded" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wb"]["seq"]["read_hdd"] = {"reads_s": 210.0, "kib_per_read": 114.0, "gap": {"reads": 1, "writes": 0, "write_kib": 0, "busy_ms": 1412, "guest_cpu_busy": 0.031}, "gap_s": 1.66}'
	grep -F 'ssdcache write-back 210/s of 114 KiB, after a 1.7 s start-up gap with 1 HDD reads and 0 writes (HDD busy 1,412 ms, guest CPU busy 3.1%)' "$d/results.md"
}

@test "bench report: what memory management did in a sequential run's start-up gap, where any of it happened" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wt"]["seq"]["read_hdd"] = {"reads_s": 194.0, "kib_per_read": 114.0, "gap": {"reads": 0, "writes": 0, "write_kib": 0, "busy_ms": 4, "guest_cpu_busy": 0.642, "mm": {"allocstall": 3, "compact_stall": 1, "pgscan_direct": 0, "thp_fault_alloc": 2}}, "gap_s": 4.91}
r["systems"]["ssdcache_wb"]["seq"]["read_hdd"] = {"reads_s": 210.0, "kib_per_read": 114.0, "gap": {"reads": 0, "writes": 0, "write_kib": 0, "busy_ms": 4, "guest_cpu_busy": 0.5, "mm": {"allocstall": 0, "compact_stall": 0, "pgscan_direct": 0, "thp_fault_alloc": 0}}, "gap_s": 1.1}'
	grep -F 'ssdcache write-through 194/s of 114 KiB, after a 4.9 s start-up gap with 0 HDD reads and 0 writes (HDD busy 4 ms, guest CPU busy 64.2%, 3 reclaim stalls, 1 compaction stall, 2 huge pages faulted in)' "$d/results.md"
	grep -F 'ssdcache write-back 210/s of 114 KiB, after a 1.1 s start-up gap with 0 HDD reads and 0 writes (HDD busy 4 ms, guest CPU busy 50.0%).' "$d/results.md"
}

@test "bench report: sequential MiB/s from the first completion on, and their target rows, where recorded" {
	d=$BATS_TEST_TMPDIR
	# The raw HDD lost 2 s of its 20 s to a stalled first read: 18.0
	# MiB/s in all, 20.0 from its first completion on.
	edited_report "$d" 'r["systems"]["raw_hdd"]["seq"]["read"] = {"mib_s": 18.0, "mib_s_after_first": 20.0}
r["systems"]["ssdcache_wt"]["seq"]["read"] = {"mib_s": 19.5, "mib_s_after_first": 19.6}
r["systems"]["ssdcache_wb"]["seq"]["read"] = {"mib_s": 18.5, "mib_s_after_first": 18.6}'
	md=$d/results.md
	grep -F 'a start-up stall left out for every system alike: raw HDD 20.0 (1.00x); ssdcache write-through 19.6 (0.98x); ssdcache write-back 18.6 (0.93x).' "$md"
	grep -F '| seq read (ssdcache_wt) >= 0.95x raw HDD | 1.08x | met |' "$md"
	grep -F '| seq read (ssdcache_wt) >= 0.95x raw HDD, from the first completion | 0.98x | met |' "$md"
	grep -F '| seq read (ssdcache_wb) >= 0.95x raw HDD, from the first completion | 0.93x | MISSED |' "$md"
	plain_report_lacks "$d" 'from the first completion'
}

@test "bench report: where fio waited in a sequential run's long start-up gap, where sampled" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wt"]["seq"]["read_hdd"] = {"reads_s": 194.0, "kib_per_read": 114.0, "gap": {"reads": 0, "writes": 0, "fio_stacks": [[12, "folio_wait_bit < io_submit_one"], [3, "rwsem_down_read_slowpath < lock_mm_and_find_vma"]], "fio_cpu_ms": [[120, 40], [300, 1480]]}, "gap_s": 4.91}
r["systems"]["raw_hdd"]["seq"]["read_hdd"] = {"reads_s": 194.0, "kib_per_read": 114.0, "gap": {"reads": 0, "writes": 0, "fio_stacks": [], "fio_cpu_ms": [[100, 30], [10, 20]]}, "gap_s": 1.0}'
	grep -F "fio's kernel stacks in the reads' start-up gap (sampled every 0.1 s after 1.5 s): ssdcache write-through 12x folio_wait_bit < io_submit_one; ssdcache write-through 3x rwsem_down_read_slowpath < lock_mm_and_find_vma." "$d/results.md"
	# The raw HDD's gap was short: its CPU times are not listed.
	grep -F "CPU time of each fio task (user/system ms) when the first read completed, after a start-up gap over 1.5 s: ssdcache write-through 120/40, 300/1,480." "$d/results.md"
	plain_report_lacks "$d" "fio's kernel stacks"
	plain_report_lacks "$d" "CPU time of each fio task"
}

@test "bench report: the stack sampler's settings as the run recorded them" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wt"]["seq"]["read_hdd"] = {"reads_s": 194.0, "kib_per_read": 114.0, "gap": {"reads": 0, "writes": 0, "fio_stacks": [[7, "io_schedule < blk_mq_get_tag"]], "fio_cpu_ms": [[50, 60]], "stack_every_s": 0.2, "stack_after_s": 2.5}, "gap_s": 2.0}'
	grep -F "fio's kernel stacks in the reads' start-up gap (sampled every 0.2 s after 2.5 s): ssdcache write-through 7x io_schedule < blk_mq_get_tag." "$d/results.md"
	# A 2 s gap is not over the recorded 2.5 s: no CPU times.
	! grep -F "CPU time of each fio task" "$d/results.md"
}

@test "bench report: when a sequential run's first I/Os completed, where recorded" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wb"]["seq"]["read_first_ios"] = [[350, 347.9], [391, 293.7]]
r["systems"]["raw_hdd"]["seq"]["read_first_ios"] = [[177, 175.5], [217, 165.2]]'
	grep -F "First reads done, ms from fio's start (latency ms): raw HDD 177 (176), 217 (165); ssdcache write-back 350 (348), 391 (294)." "$d/results.md"
	plain_report_lacks "$d" 'First reads done'
}

@test "bench report: a target ratio that rounds to its bar shows a third decimal" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["systems"]["ssdcache_wb"]["pgbench_ext4"]["tps"] = 86.8
r["systems"]["dm_writecache"]["pgbench_ext4"]["tps"] = 87.1
r["systems"]["ssdcache_wt"]["pgbench_ext4"]["tps"] = 87.2'
	grep -F '| pgbench ext4 (ssdcache_wb) >= best peer | 0.997x | MISSED |' "$d/results.md"
	grep -F '| pgbench ext4 (ssdcache_wt) >= best peer | 1.001x | met |' "$d/results.md"
	# Away from the bar: two decimals.
	grep -F '| hit path (write-through) >= 0.95x dm-linear | 0.97x | met |' "$d/results.md"
}

@test "bench report: BENCH_MODEL=fast is said, with the disks' model as configured" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["device_model"] = "fast"
for dev in r["devices"].values():
    dev["model"].update(irqmode=0, hw_queue_depth=64)'
	grep -F 'BENCH_MODEL=fast: no device waits' "$d/results.md"
	grep -F 'HDD model 1 MiB (queue depth 64, completed at submission)' "$d/results.md"
	# The targets are for the timed models: not judged here.
	grep -F 'not assessed with BENCH_MODEL=fast' "$d/results.md"
	run grep -c -E '\| (met|MISSED) \|' "$d/results.md"
	[ "$output" = 0 ]
	# The default (timed) says nothing of it.
	plain_report_lacks "$d" 'BENCH_MODEL=fast'
}

@test "bench report: BENCH_ICOUNT is said, and only then" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["icount_shift"] = 1'
	grep -F 'BENCH_ICOUNT=1: the guest' "$d/results.md"
	grep -F '(2 ns each)' "$d/results.md"
	plain_report_lacks "$d" 'BENCH_ICOUNT'
}

@test "bench: a BENCH_ICOUNT that is not a number, or without BENCH_MODEL=fast, is refused before any boot" {
	run env BENCH_ICOUNT=fast BENCH_MODEL=fast BENCH_OUT="$BATS_TEST_TMPDIR/out" "$TOP/scripts/bench.sh"
	[ "$status" -eq 2 ]
	[[ "$output" == *"BENCH_ICOUNT must be a number"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
	# Only on the fast disks: see bench.sh.
	run env BENCH_ICOUNT=0 BENCH_OUT="$BATS_TEST_TMPDIR/out" "$TOP/scripts/bench.sh"
	[ "$status" -eq 2 ]
	[[ "$output" == *"BENCH_ICOUNT needs BENCH_MODEL=fast"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
}

@test "bench: a BENCH_HIT_SLICES that is not a number is refused before any boot" {
	run env BENCH_HIT_SLICES=some BENCH_OUT="$BATS_TEST_TMPDIR/out" "$TOP/scripts/bench.sh"
	[ "$status" -eq 2 ]
	[[ "$output" == *"BENCH_HIT_SLICES must be a number of pairs (0: none), not some"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
}

@test "bench: a BENCH_SLICE_INSTANCES that is not a number is refused before any boot" {
	run env BENCH_SLICE_INSTANCES=4x BENCH_OUT="$BATS_TEST_TMPDIR/out" "$TOP/scripts/bench.sh"
	[ "$status" -eq 2 ]
	[[ "$output" == *"BENCH_SLICE_INSTANCES must be a number of instances (0: none), not 4x"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
}

@test "bench: a BENCH_PG_PAIRS that is not a number is refused before any boot" {
	run env BENCH_PG_PAIRS=eight BENCH_OUT="$BATS_TEST_TMPDIR/out" "$TOP/scripts/bench.sh"
	[ "$status" -eq 2 ]
	[[ "$output" == *"BENCH_PG_PAIRS must be a number of pairs (0: none), not eight"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
}

# The guest gets only the environment bench.sh hands it: a BENCH_ variable
# that bench/guest.py reads but bench.sh does not pass is silently ignored.
@test "bench: every BENCH_ variable bench/guest.py reads is passed to the guest" {
	missing=""
	for v in $(grep -o 'environ.get("BENCH_[A-Z_]*"' "$TOP/bench/guest.py" | grep -o 'BENCH_[A-Z_]*' | sort -u); do
		grep -q -E "\\b$v=\"" "$TOP/scripts/bench.sh" || missing="$missing $v"
	done
	[ -z "$missing" ] || { echo "not passed by scripts/bench.sh:$missing"; false; }
}

@test "bench: BENCH_MODEL other than timed or fast is refused" {
	run env BENCH_MODEL=slow /usr/bin/python3 "$TOP/bench/guest.py" "$BATS_TEST_TMPDIR"
	[ "$status" -ne 0 ]
	[[ "$output" == *"BENCH_MODEL must be timed or fast"* ]]
}

@test "bench report: pgbench's rounds and what a transaction cost each device" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["pgbench"]["rounds"] = 3
io = lambda rd, wr, kib: {"reads": rd, "writes": wr, "flushes": 0.0, "read_kib": 4.0, "write_kib": kib}
r["systems"]["ssdcache_wb"]["pgbench_ext4"].update(
    rounds_tps=[28.0, 30.0, 31.5], guest_cpu_busy=0.96,
    io_per_txn={"top": io(3, 9, 35.0), "hdd": io(0.02, 0.18, 19.0), "ssd": io(8.5, 12.75, 51.4)})
r["systems"]["raw_ssd"]["pgbench_ext4"].update(io_per_txn={"top": io(1.5, 3, 38.0), "hdd": io(0, 0, 0.0)})
r["systems"]["raw_hdd"]["pgbench_ext4"].update(io_per_txn={"top": io(2, 4, 40.0), "hdd": io(2, 4, 40.0)})'
	md=$d/results.md
	grep -F 'TPS is the median of 3 measured runs: ssdcache write-back 28.0, 30.0, 31.5.' "$md"
	# A cache's two devices; the one device a raw system is, in its column.
	grep -F '| ssdcache write-back | 8.50 | 12.75 | 51.4 | 0.02 | 0.18 | 19.0 | 96.0% |' "$md"
	grep -F '| raw SSD | 1.50 | 3.00 | 38.0 | - | - | - | - |' "$md"
	grep -F '| raw HDD | - | - | - | 2.00 | 4.00 | 40.0 | - |' "$md"
	# Results without them (older runs): no such lines.
	plain_report_lacks "$d" 'measured runs'
	plain_report_lacks "$d" 'Per transaction'
}

@test "bench report: sysbench on MariaDB, where run: TPS, latency, ratios to the raw disks and the best peer, its rounds" {
	d=$BATS_TEST_TMPDIR
	edited_report "$d" 'r["sysbench"] = {"tables": 4, "rows": 500000, "db_mb": {"ext4": 510},
    "threads": 4, "buffer_pool": "64M", "cache_mb": 768, "prewarm": True, "rounds": 3}
for name, s in r["systems"].items():
    s["sysbench_ext4"] = {"tps": 2 * s["pgbench_ext4"]["tps"], "latency_ms": 3.0, "p95_ms": 7.5}
r["systems"]["ssdcache_wb"]["sysbench_ext4"].update(rounds_tps=[55.0, 60.0, 61.0], hit_ratio=0.95)'
	md=$d/results.md
	grep -F '### MariaDB, sysbench oltp_read_write on ext4 (4 tables of 500,000 rows, 510 MiB database, 4 threads, InnoDB buffer pool 64M, O_DIRECT, 768 MiB cache device, prewarmed)' "$md"
	# write-back: 60 TPS against the raw HDD's 2, the raw SSD's 100 and bcache's 50.
	grep -F '| ssdcache write-back | 60.0 | 3.0 | 7.5 | 30.00x | 0.60x | 1.20x | 95.0% |' "$md"
	grep -F 'TPS is the median of 3 measured runs: ssdcache write-back 55.0, 60.0, 61.0.' "$md"
	# Results without it: no such table.
	plain_report_lacks "$d" 'sysbench'
}

@test "pgprobe: the write bios of a trace, the pieces their 32 KiB runs force, the splits" {
	local tr=$BATS_TEST_TMPDIR/tracing
	mkdir -p "$tr/events/block/block_bio_queue" "$tr/events/block/block_split" \
		"$tr/per_cpu/cpu0" "$tr/per_cpu/cpu1"
	printf 'entries: 9\noverrun: 0\n' >"$tr/per_cpu/cpu0/stats"
	printf 'entries: 2\noverrun: 3\n' >"$tr/per_cpu/cpu1/stats"
	# 16 KiB across the first 32 KiB run's end (2 pieces), 16 KiB inside
	# one run, 40 KiB over three runs; a read and an empty flush that do
	# not count; one split of a write, one of a read.
	cat >"$tr/trace" <<'TRACE'
# tracer: nop
 mariadbd-812 [000] ..... 10.000001: block_bio_queue: 254,0 WS 56 + 32 [mariadbd]
 mariadbd-812 [000] ..... 10.000002: block_bio_queue: 254,0 W 128 + 32 [mariadbd]
 mariadbd-812 [001] ..... 10.000003: block_bio_queue: 254,0 R 0 + 8 [mariadbd]
 mariadbd-812 [001] ..... 10.000004: block_bio_queue: 254,0 FWS 0 + 0 [mariadbd]
 mariadbd-812 [001] ..... 10.000005: block_bio_queue: 254,0 WS 184 + 80 [mariadbd]
 mariadbd-812 [000] ..... 10.000006: block_split: 254,0 WS 56 / 64 [mariadbd]
 mariadbd-812 [000] ..... 10.000007: block_split: 254,0 R 0 / 4 [mariadbd]
TRACE
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" "$tr" <<'PY'
import json, sys
tr, bench = sys.argv.pop(), sys.argv.pop()
sys.path.insert(0, bench)
import pgprobe
pgprobe.TR = tr
c = pgprobe.splits_off()
print(json.dumps(c, sort_keys=True))
print(json.dumps(pgprobe.per_txn(c, 2), sort_keys=True))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = '{"events_lost": 3, "pieces_forced_by_runs": 6, "splits": 1, "writes": 3, "writes_by_kib": {"16": 2, "40": 1}}' ]
	[ "${lines[1]}" = '{"events_lost": 3, "pieces_forced_by_runs": 3.0, "splits": 0.5, "writes": 1.5, "writes_by_kib": {"16": 1.0, "40": 0.5}}' ]
	# The events were turned off and their filters cleared.
	[ "$(cat "$tr/tracing_on")" = 0 ]
	[ "$(cat "$tr/events/block/block_split/enable")" = 0 ]
	[ "$(cat "$tr/events/block/block_bio_queue/filter")" = 0 ]
}

@test "pgabba: an unknown system in ORDER is refused before anything is set up; rounds pooled per system" {
	run env ORDER="ssdcache_wb dm_cache nope" /usr/bin/python3 "$TOP/bench/pgabba.py" "$BATS_TEST_TMPDIR"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == "ORDER: no such system: nope (known: raw_hdd raw_ssd "* ]]
	[ ! -e "$BATS_TEST_TMPDIR/pgabba.json" ]
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import json, sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import pgabba
blocks = [{"system": "b", "rounds_tps": [40.0, 50.0, 60.0]},
          {"system": "a", "rounds_tps": [50.0, 51.0, 52.0]},
          {"system": "a", "rounds_tps": [60.0, 61.0, 62.0]},
          {"system": "b", "rounds_tps": [45.0, 55.0, 65.0]}]
print(json.dumps(pgabba.pooled(blocks)))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = '{"b": {"rounds": 6, "median": 52.5}, "a": {"rounds": 6, "median": 56.0}}' ]
}

@test "pgswap: a pair that cannot run side by side, or an unknown DB, is refused before anything is set up; each pair's ratio" {
	for pair in "ssdcache_wb" "ssdcache_wb nope" "ssdcache_wt ssdcache_wb" "raw_ssd raw_ssd"; do
		run env PAIR="$pair" /usr/bin/python3 "$TOP/bench/pgswap.py" "$BATS_TEST_TMPDIR"
		echo "$pair: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == "PAIR: "* ]]
	done
	run env PAIR="ssdcache_wb nope" /usr/bin/python3 "$TOP/bench/pgswap.py" "$BATS_TEST_TMPDIR"
	[[ "$output" == "PAIR: no such system: nope (known: raw_hdd raw_ssd "* ]]
	run env PAIR="ssdcache_wt ssdcache_wb" /usr/bin/python3 "$TOP/bench/pgswap.py" "$BATS_TEST_TMPDIR"
	[ "$output" = "PAIR: ssdcache_wt and ssdcache_wb use the same device-mapper names" ]
	run env PAIR="raw_ssd raw_ssd" /usr/bin/python3 "$TOP/bench/pgswap.py" "$BATS_TEST_TMPDIR"
	[ "$output" = "PAIR: two different systems, not raw_ssd twice" ]
	run env PAIR="ssdcache_wb bcache" DB=oracle /usr/bin/python3 "$TOP/bench/pgswap.py" "$BATS_TEST_TMPDIR"
	[ "$status" -eq 1 ]
	[ "$output" = "DB: oracle? (pgbench or sysbench)" ]
	[ ! -e "$BATS_TEST_TMPDIR/pgswap.json" ]
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import json, sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import pgswap
runs = [{"pair": 0, "system": "a", "tps": 50.0}, {"pair": 0, "system": "b", "tps": 40.0},
        {"pair": 1, "system": "b", "tps": 50.0}, {"pair": 1, "system": "a", "tps": 40.0},
        {"pair": 2, "system": "a", "tps": 60.0}, {"pair": 2, "system": "b", "tps": 50.0},
        {"pair": 3, "system": "b", "tps": 10.0}]
print(json.dumps(pgswap.summary(runs, "a", "b"), sort_keys=True))
print([pgswap.check_pair(p) for p in (["ssdcache_wb", "bcache"], ["bcache", "dm_writecache"],
                                      ["ssdcache_wb_run128k", "dm_writecache"])])
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "[None, None, None]" ]
	# The interval: exp(mean +- t(2 df) * sd / sqrt(3)) of the logs of the
	# three ratios (pair 3 has no "a"), 4.30 * 0.2514 / 1.732 = 0.624.
	[ "${lines[0]}" = '{"a_median_tps": 50.0, "b_median_tps": 45.0, "ci95": [0.576, 1.961], "first_won": 2, "geomean_ratio": 1.063, "median_ratio": 1.2, "ratios": [1.25, 0.8, 1.2]}' ]
}

@test "guest: the write-back systems run only when named format with their block and run sizes; the loaded one takes the image in, dirty_high 95" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import guest as g
g.zero = lambda dev, mb: None
g.sectors = lambda dev: 2048
g.dm_create = lambda name, table: print(table) or "/dev/mapper/" + name
g.Ssdcache.status = lambda self: ["0", "2048", "ssdcache", "3", "writeback", "4096", "0/100"]
g.run = lambda cmd, **kw: print(" ".join(cmd))
for s in g.extra_systems({"hdd": "/dev/h", "ssd": "/dev/s"}):
    print(s.name, "|", s.label)
    s.create()
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "ssdcache_wb_ra0 | ssdcache write-back, readahead off" ]
	[ "${lines[1]}" = "0 2048 ssdcache /dev/h /dev/s writeback 3 format readahead_kb 0" ]
	[ "${lines[3]}" = "0 2048 ssdcache /dev/h /dev/s writeback 3 format block_size 8192" ]
	[ "${lines[4]}" = "ssdcache_wb_run128k | ssdcache write-back, 128 KiB runs" ]
	[ "${lines[5]}" = "0 2048 ssdcache /dev/h /dev/s writeback 3 format run_size 131072" ]
	[ "${lines[6]}" = "ssdcache_wb_loaded | ssdcache write-back, written in, dirty_high 95" ]
	[ "${lines[7]}" = "0 2048 ssdcache /dev/h /dev/s writeback 1 format" ]
	[ "${lines[8]}" = "dmsetup message bench_ssdc 0 dirty_high 95" ]
	[ "${lines[9]}" = "dmsetup message bench_ssdc 0 dirty_low 90" ]
	[ "${lines[10]}" = "dmsetup message bench_ssdc 0 sequential_cutoff 0" ]
	[ "${#lines[@]}" -eq 11 ]
}

@test "pgswap: dirty_share is a cache's dirty blocks over its blocks, None for a raw device or one that does not tell" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import pgswap

class S:
    def __init__(self, blocks, dirty):
        self.cache_blocks, self.n = blocks, dirty
    def dirty(self):
        return self.n
print([pgswap.dirty_share(S(*a)) for a in ((196608, 98304), (3, 1), (0, 5), (100, None))])
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "[0.5, 0.3333, None, None]" ]
}

@test "guest: measured_txn records a cache's own counters per transaction (names the module's sysfs has), nothing for a system without them" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import guest as g
g.disk_stat = lambda dev: [0] * 17
g.cpu_stat = lambda: [0] * 10
g.sched_stat = lambda: (0, 0)
g.cpu_busy = lambda a, b: 1.0
g.per_txn_sched = lambda a, b, n: {}
g.io_per_txn = lambda a, b, n: {}
vals = iter([{"journal_blocks": 10, "flushes": 4}, {"journal_blocks": 60, "flushes": 104}])
c = g.Ssdcache({"hdd": "/dev/h", "ssd": "/dev/s"}, "writeback")
c.counters = lambda: next(vals)
r = g.measured_txn(c, lambda: {"transactions": 100})
print(sorted(r["counters_per_txn"].items()))
raw = g.RawSsd({"hdd": "/dev/h", "ssdbig": "/dev/b"})
print("counters_per_txn" in g.measured_txn(raw, lambda: {"transactions": 100}))
import re
names = set(re.findall(r'= "(\w+)",', open(bench + "/../module/stats.c").read()))
print(sorted(set(g.SSDC_COUNTERS) - names), len(g.SSDC_COUNTERS) == len(set(g.SSDC_COUNTERS)))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "[('flushes', 1.0), ('journal_blocks', 0.5)]" ]
	[ "${lines[1]}" = "False" ]
	[ "${lines[2]}" = "[] True" ]
}

@test "guest: per-transaction CPU by kind, context switches and interrupts, idle time left out" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import json, sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import guest as g
before = {"user": 1000.0, "nice": 0.0, "system": 500.0, "idle": 10.0, "iowait": 0.0,
          "irq": 0.0, "softirq": 40.0, "ctxt": 100, "intr": 50}
after = {"user": 1600.0, "nice": 0.0, "system": 900.0, "idle": 900.0, "iowait": 30.0,
         "irq": 10.0, "softirq": 60.0, "ctxt": 4100, "intr": 2050}
print(json.dumps(g.per_txn_sched(before, after, 200), sort_keys=True))
s = g.sched_stat()
print(sorted(s) == sorted(g.CPU_FIELDS + ("ctxt", "intr")))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = '{"ctxt": 20.0, "intr": 10.0, "irq": 0.05, "nice": 0.0, "softirq": 0.1, "system": 2.0, "user": 3.0}' ]
	[ "${lines[1]}" = True ]
}

@test "guest: slices of one fio run alternate reference and device (ABBA); their ratios' geometric mean and 95% interval" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import json, sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import guest as g

def fake_run(cmd, check=True, **kw):
    job = open(cmd[-1]).read().splitlines()
    names = [x[1:-1] for x in job if x.startswith("[") and x != "[global]"]
    print(" ".join(names))
    print(" ".join(x for x in job if x.startswith(("filename=", "runtime=", "rw="))))
    return json.dumps({"jobs": [{"jobname": n,
                                 "read": {"iops": 100.0 if n.startswith("ref") else 90.0},
                                 "write": {"iops": 0.0}} for n in names]})

g.run = fake_run
print(g.fio_slices("/dev/null", "/dev/zero", (0, 64), ["--rw=randread"], 3, 2))
print(json.dumps(g.ratio_summary([(100, 90), (100, 110), (100, 100), (200, 190)]),
                 sort_keys=True))
print(json.dumps(g.ratio_summary([(100, 97)])))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "ref0 dev0 dev1 ref1 ref2 dev2" ]
	[ "${lines[1]}" = "runtime=2 rw=randread filename=/dev/null filename=/dev/zero filename=/dev/zero filename=/dev/null filename=/dev/null filename=/dev/zero" ]
	[ "${lines[2]}" = "[(100.0, 90.0), (100.0, 90.0), (100.0, 90.0)]" ]
	# By hand: ln 0.9, ln 1.1, 0, ln 0.95; mean -0.01534, sd 0.08539; t(3) 3.18.
	[ "${lines[3]}" = '{"ci95": [0.8598, 1.128], "geomean": 0.9848, "median": 0.975, "ratios": [0.9, 1.1, 1.0, 0.95]}' ]
	[ "${lines[4]}" = '{"ratios": [0.97], "median": 0.97, "geomean": 0.97}' ]
}

@test "guest: slices() sums up fio_slices() with its options; sliceprobe's FIO_OPTS name sets of options" {
	run env FIO_OPTS="cpu0=--cpus_allowed=0,--numjobs=1 any=" /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import json, sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import guest as g
import sliceprobe

def fake_run(cmd, check=True, **kw):
    job = open(cmd[-1]).read().splitlines()
    names = [x[1:-1] for x in job if x.startswith("[") and x != "[global]"]
    print(" ".join(x for x in job if x.startswith(("cpus_allowed=", "numjobs="))))
    return json.dumps({"jobs": [{"jobname": n,
                                 "read": {"iops": 100.4 if n.startswith("ref") else 90.6},
                                 "write": {"iops": 0.0}} for n in names]})

g.run = fake_run
g.log = lambda msg: print("log:", msg)
print(sliceprobe.FIO_OPTS)
out = g.slices("/dev/null", "/dev/zero", "sys", "hit", (0, 64), ["--rw=randread"] + sliceprobe.FIO_OPTS[0][1], 2, 3)
print(json.dumps(out, sort_keys=True))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "[('cpu0', ['--cpus_allowed=0', '--numjobs=1']), ('any', [])]" ]
	[ "${lines[1]}" = "cpus_allowed=0 numjobs=1" ]
	[ "${lines[2]}" = "log: sys: hit slices: 0.9024 [0.9024, 0.9024] median 0.9024" ]
	[ "${lines[3]}" = '{"ci95": [0.9024, 0.9024], "geomean": 0.9024, "median": 0.9024, "pairs": [[100, 91], [100, 91]], "ratios": [0.9024, 0.9024], "secs": 3}' ]
}

@test "sliceprobe: pool() sums up each label's instances, and leaves single ones alone" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import json, sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import guest as g
import sliceprobe

g.log = lambda msg: print("log:", msg)
res = [{"system": "wt", "workload": "hit", "geomean": m, "instance": i}
       for i, m in enumerate((0.9, 1.1, 1.0, 0.95))]
res += [{"system": "wb", "workload": "hit", "geomean": 0.97, "instance": 0},
        {"system": "wt", "workload": "write", "ratios": [], "instance": 0}]
print(json.dumps(sliceprobe.pool(res), sort_keys=True))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	# The instances' means as ratios: as ratio_summary()'s own test, by hand.
	# Their spread: the sd of ln 0.9, ln 1.1, 0, ln 0.95 is 0.0854; no pairs given.
	[ "${lines[0]}" = "log: wt: hit over 4 instances: 0.9848 [0.8598, 1.128] median 0.975; instances' sd 8.5% (pairs alone: None%)" ]
	[ "${lines[1]}" = '[{"ci95": [0.8598, 1.128], "geomean": 0.9848, "instances": 4, "median": 0.975, "pairs_sd_pct": null, "ratios": [0.9, 1.1, 1.0, 0.95], "sd_pct": 8.5, "system": "wt", "workload": "hit"}]' ]
}

@test "sliceprobe: spread() sets the instances' spread against their pairs' own" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import math, sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import sliceprobe

def inst(ratios):
    return {"ratios": ratios, "geomean": math.exp(sum(map(math.log, ratios)) / len(ratios))}

# Two instances whose means agree (0.995, 0.993) though their pairs scatter.
print(sliceprobe.spread([inst([0.9, 1.1]), inst([1.0, 1.0, 0.98])]))
# Two instances whose pairs agree but whose levels differ by 10%.
print(sliceprobe.spread([inst([0.9, 0.9]), inst([1.0, 1.0])]))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	# By hand: var(ln 0.9, ln 1.1)/2 = 0.01007, var(0, 0, ln 0.98)/3 = 0.0000454;
	# their mean's root 0.0711; the means' logs differ by 0.0017, sd 0.0012.
	[ "${lines[0]}" = "(0.1, 7.1)" ]
	# ln(1/0.9) = 0.1054 apart: sd 0.0745; no scatter inside either.
	[ "${lines[1]}" = "(7.5, 0.0)" ]
}

# sliceprobe.instances() in the environment "$@", each system's
# measurement faked: prints each build load, each log line, then the
# results.
fake_instances() {
	env "$@" /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import guest as g
import sliceprobe

g.load_build = lambda ko: print("load", ko)
g.log = lambda msg: print("log:", msg)
sliceprobe.one_system = lambda devs, ref, name, label, results: results.append({"system": label})
res = []
sliceprobe.instances(None, None, res)
print(res)
PY
}

@test "sliceprobe: instances() loads a build for each system, or with RELOAD=0 only when another is loaded" {
	for reload in 1 0; do
		run fake_instances RELOAD=$reload INSTANCES=2 SYSTEMS="linear_ssd ssdcache_wt" VARIANTS="a=/a.ko"
		echo "$output"
		[ "$status" -eq 0 ]
		# The build loaded before each of the two instances' ssdcache, or once.
		loads=$((reload ? 2 : 1))
		[ "${#lines[@]}" -eq $((loads + 1)) ]
		for ((i = 0; i < loads; i++)); do
			[ "${lines[$i]}" = "load /a.ko" ]
		done
		[ "${lines[$loads]}" = "[{'system': 'linear_ssd', 'instance': 0}, {'system': 'ssdcache_wt-a', 'instance': 0}, {'system': 'linear_ssd', 'instance': 1}, {'system': 'ssdcache_wt-a', 'instance': 1}]" ]
	done
}

@test "sliceprobe: CHURN reloads the first build before each instance from CHURN_FROM, and no cache is made of it" {
	run fake_instances CHURN=2 CHURN_FROM=1 INSTANCES=3 SYSTEMS="linear_ssd" VARIANTS="a=/a.ko b=/b.ko"
	echo "$output"
	[ "$status" -eq 0 ]
	# Instance 0 alone; before 1 and 2, reloaded twice each (load_build()
	# unloads the loaded build first).
	churn=$(printf 'load /a.ko\nload /a.ko')
	expected=$(printf '%s\nlog: instance 1: a reloaded 2 times\n%s\nlog: instance 2: a reloaded 2 times\n%s' \
		"$churn" "$churn" "[{'system': 'linear_ssd', 'instance': 0}, {'system': 'linear_ssd', 'instance': 1}, {'system': 'linear_ssd', 'instance': 2}]")
	[ "$output" = "$expected" ]
}

@test "pgprobe: hist files read as counts by key, stacks joined, addresses and offsets dropped" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import pgprobe
text = """# event histogram
#
{ function: [ffffffff81234560] delayed_work_timer_fn                        } hitcount:          7
{ function: [ffffffff81234570] process_timeout                              } hitcount:         12
{ stacktrace:
         __schedule+0x3a1/0xd70
         schedule+0x27/0xf0
         io_schedule+0x42/0x70
} hitcount:          3

Totals:
    Hits: 22
"""
for e in pgprobe.hist_entries(text):
    print(e)
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "(12, 'function: process_timeout')" ]
	[ "${lines[1]}" = "(7, 'function: delayed_work_timer_fn')" ]
	[ "${lines[2]}" = "(3, 'stacktrace: __schedule schedule io_schedule')" ]
}

@test "tbreport: a window's instructions per I/O by function, module and all, side by side" {
	local d=$BATS_TEST_TMPDIR/tb
	mkdir -p "$d"
	# Two windows after "start": dm-linear's (4 I/Os), build a's (2 I/Os).
	echo '[["start", 0], ["linear-hit-0", 4], ["a-wt-hit-0", 2]]' >"$d/windows.json"
	printf '%s\n' 'ffffffff81000000 T linear_map	[dm_mod]' \
		'ffffffff81000100 T _raw_spin_lock' 'ffffffff81000200 T other' >"$d/kallsyms-linear"
	printf '%s\n' 'ffffffff81000000 T linear_map	[dm_mod]' \
		'ffffffffc0000000 t map_read	[dm_ssdcache]' 'ffffffffc0000100 t find_slot	[dm_ssdcache]' \
		'ffffffffc0000200 T other2' >"$d/kallsyms-a"
	: >"$d/snap.0"
	# block start, instructions in it, executions
	printf '%s\n' 'ffffffff81000000 10 4' 'ffffffff81000104 3 8' '400000 100 4' >"$d/snap.1"
	printf '%s\n' 'ffffffffc0000000 20 2' 'ffffffffc0000010 5 4' 'ffffffffc0000100 7 2' \
		'400000 100 2' >"$d/snap.2"
	run "$TOP/bench/tbreport.py" "$d" linear-hit-0 a-wt-hit-0
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"            10.0              0.0    -10.0  linear_map [dm_mod]"* ]]
	[[ "$output" == *"             6.0              0.0     -6.0  _raw_spin_lock"* ]]
	# map_read: (20*2 + 5*4) / 2 I/Os; find_slot 7*2 / 2.
	[[ "$output" == *"             0.0             30.0    +30.0  map_read [dm_ssdcache]"* ]]
	[[ "$output" == *"             0.0              7.0     +7.0  find_slot [dm_ssdcache]"* ]]
	[[ "$output" == *"             0.0             37.0    +37.0  = module"* ]]
	# all: linear 10 + 6 + 100 user; a 37 + 100 user.
	[[ "$output" == *"           116.0            137.0    +21.0  = all"* ]]
	[[ "$output" == *"               4                2           I/Os"* ]]
	# --execs: blocks run per I/O, not instructions.
	run "$TOP/bench/tbreport.py" --execs "$d" linear-hit-0 a-wt-hit-0
	echo "$output"
	[ "$status" -eq 0 ]
	# linear_map: 4 runs / 4 I/Os; map_read (2 + 4) / 2; find_slot 2 / 2.
	[[ "$output" == *"             1.0              0.0     -1.0  linear_map [dm_mod]"* ]]
	[[ "$output" == *"             0.0              3.0     +3.0  map_read [dm_ssdcache]"* ]]
	[[ "$output" == *"             0.0              1.0     +1.0  find_slot [dm_ssdcache]"* ]]
	[[ "$output" == *"             0.0              4.0     +4.0  = module"* ]]
}

@test "guest: tbprof windows saved in marker order with their counts, and a build's symbols" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import json, sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import guest as g
g.tb_mark("start", 0)
g.tb_mark("before-x-0", 0)
g.tb_mark("x-0", 17)
g.tb_save(g.OUT)
g.tb_symbols(g.OUT, "x")
print(json.dumps(json.load(open(f"{g.OUT}/windows.json"))))
print(sum(1 for _ in open(f"{g.OUT}/kallsyms-x")) > 0)
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = '[["start", 0], ["before-x-0", 0], ["x-0", 17]]' ]
	[ "${lines[1]}" = "True" ]
}

@test "hostprof: host samples cut into the guest's fio rounds, per I/O by thread and code" {
	local d=$BATS_TEST_TMPDIR/hp
	mkdir -p "$d"
	echo 700 >"$d/host-pid"
	# 4.5 s rounds: windows [97, 99] and [197, 199], 2 s each.
	printf '%s\n' '90.000 bench: starting' '100.000 bench: linear-hit-0: 100000 IOPS lat 1us' \
		'200.000 bench: a-wt-hit-0: 50000 IOPS lat 2us' >"$d/host-stamps.txt"
	awk 'BEGIN {
		for (i = 0; i < 998; i++) {
			printf "  701 %.6f:  7f0000000000 [unknown] (/tmp/perf-700.map)\n", 97 + i / 500
			printf "  701 %.6f:  7f0000000000 [unknown] (/tmp/perf-700.map)\n", 197 + i / 500
		}
		for (i = 0; i < 499; i++)
			printf "  700 %.6f:  ffffffff81000000 do_sys_poll ([kernel.kallsyms])\n", 97 + i / 250
		# outside every window
		printf "  701 99.500000:  7f0000000000 [unknown] (/tmp/perf-700.map)\n"
		printf "  701 150.000000:  560000000000 qht_lookup_custom (/usr/bin/qemu-system-x86_64)\n"
	}' >"$d/host-perf.txt"
	run "$TOP/bench/hostprof.py" report "$d" 4.5 linear-hit a-wt-hit
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"linear-hit-0: 100000 IOPS, 10.0 us/IO wall, host CPU main  50% other 100%; host us/IO 15.0: main/kernel 5.0 other/JIT 10.0"* ]]
	[[ "$output" == *"a-wt-hit-0: 50000 IOPS, 20.0 us/IO wall, host CPU main   0% other 100%; host us/IO 20.0: other/JIT 20.0"* ]]
	[[ "$output" == *"other JIT JIT"*"10.00         20.00"* ]]
	[[ "$output" == *"main kernel do_sys_poll"*"5.00          0.00"* ]]
	[[ "$output" == *"total"*"15.00         20.00"* ]]
	[[ "$output" != *qht_lookup* ]]
}

@test "hostprof: refuses a command line without its output directory or round length, and rounds with no samples" {
	run "$TOP/bench/hostprof.sh" -k 6.1 -o "$BATS_TEST_TMPDIR/x" -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: bench/hostprof.sh"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	run "$TOP/bench/hostprof.py" report
	[ "$status" -ne 0 ]
	[[ "$output" == *"usage: bench/hostprof.py"* ]]
	# rounds, but no sample in any of them (perf recorded nothing)
	local d=$BATS_TEST_TMPDIR/empty
	mkdir -p "$d"
	echo 700 >"$d/host-pid"
	echo '100.000 bench: linear-hit-0: 100000 IOPS lat 1us' >"$d/host-stamps.txt"
	: >"$d/host-perf.txt"
	run "$TOP/bench/hostprof.py" report "$d" 4.5
	[ "$status" -ne 0 ]
	[[ "$output" == *"hostprof: no samples in any round of $d (1 rounds in host-stamps.txt)"* ]]
}

# A results.json of kernel $2 with paired rounds: write-through's hit
# rounds $3 against reference rounds $4 (comma-separated IOPS).
pool_run() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
out, kernel, mine, ref = sys.argv[1:5]
r = lambda v: [int(x) for x in v.split(",")]
json.dump({"kernel": kernel, "systems": {
    "ssdcache_wt": {"label": "ssdcache write-through",
                    "hit": {"rounds_iops": r(mine), "ref_rounds_iops": r(ref)},
                    "write": {"rounds_iops": [50], "ref_rounds_iops": [100]}},
    "raw_hdd": {"label": "raw HDD", "hit": {"rounds_iops": [1, 2]}}}}, open(out, "w"))
PY
}

@test "pool: paired rounds of several runs pooled per system; runs of two kernels refused" {
	pool_run "$BATS_TEST_TMPDIR/a.json" k1 "90,100,80" "100,100,100"
	pool_run "$BATS_TEST_TMPDIR/b.json" k1 "120,95" "100,100"
	pool_run "$BATS_TEST_TMPDIR/c.json" k2 "100" "100"
	run "$TOP/bench/pool.py" "$BATS_TEST_TMPDIR/a.json" "$BATS_TEST_TMPDIR/b.json"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"### hits, paired rounds of 2 run(s), k1"* ]]
	# Ratios 0.9, 1.0, 0.8, 1.2, 0.95: median 0.95, three of five at or above it.
	[[ "$output" == *"| ssdcache write-through | 5 | 0.950x | 0.961x | 3 of 5 | 0.800x | 1.200x |"* ]]
	[[ "$output" == *"| ssdcache write-through | 2 | 0.500x | 0.500x | 0 of 2 | 0.500x | 0.500x |"* ]]
	# The raw HDD has no reference rounds: not listed.
	[[ "$output" != *"raw HDD"* ]]
	run "$TOP/bench/pool.py" "$BATS_TEST_TMPDIR/a.json" "$BATS_TEST_TMPDIR/c.json"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == "pool: runs of more than one kernel (k1, k2)"* ]]
	run "$TOP/bench/pool.py"
	[ "$status" -eq 1 ]
	[[ "$output" == usage:* ]]
}

@test "cutprobe: a trace's cuts by caller and at a run's end, journal writes whose fresh rows all followed a stream" {
	run /usr/bin/python3 -S - "$BATS_TEST_TMPDIR" "$TOP/bench" <<'PY'
import json, sys
bench = sys.argv.pop()
sys.path.insert(0, bench)
import cutprobe as c
trace = """# tracer: nop
 postgres-1 [000] ..... 1.000001: cut: (dm_accept_partial_bio+0x4/0xa0 [dm_mod]) n=16 sector=48 size=32768 opf=1
 postgres-1 [000] ..... 1.000002: <stack trace>
 => kprobe_trace_func
 => dm_accept_partial_bio+0x5/0xa0 [dm_mod]
 => map_block_write+0x1c3/0x2a0 [dm_ssdcache]
 => __map_bio
 postgres-1 [000] ..... 1.000003: cut: (dm_accept_partial_bio+0x4/0xa0 [dm_mod]) n=8 sector=64 size=32768 opf=1
 postgres-1 [000] ..... 1.000004: <stack trace>
 => map_block_write+0x1c3/0x2a0 [dm_ssdcache]
 postgres-1 [000] ..... 1.000005: cut: (dm_accept_partial_bio+0x4/0xa0 [dm_mod]) n=8 sector=0 size=16384 opf=0
 postgres-1 [000] ..... 1.000006: <stack trace>
 => map_bio+0x10/0x80 [dm_ssdcache]
 kworker-2 [000] ..... 1.1: fresh: (ssdc_take_free_for+0x0/0x100 [dm_ssdcache]) oblock=100 want=2
 kworker-2 [000] ..... 1.2: jwrite: (ssdc_journal_write+0x0/0x100 [dm_ssdcache]) blocks=1 nrec=4
 kworker-2 [000] ..... 1.3: fresh: (ssdc_take_free_for+0x0/0x100 [dm_ssdcache]) oblock=102 want=1
 kworker-2 [000] ..... 1.4: jwrite: (ssdc_journal_write+0x0/0x100 [dm_ssdcache]) blocks=1 nrec=2
 kworker-2 [000] ..... 1.5: jwrite: (ssdc_journal_write+0x0/0x100 [dm_ssdcache]) blocks=1 nrec=2
 kworker-2 [000] ..... 1.6: fresh: (ssdc_take_free_for+0x0/0x100 [dm_ssdcache]) oblock=103 want=1
 kworker-2 [000] ..... 1.7: fresh: (ssdc_take_free_for+0x0/0x100 [dm_ssdcache]) oblock=500 want=1
 kworker-2 [000] ..... 1.8: jwrite: (ssdc_journal_write+0x0/0x100 [dm_ssdcache]) blocks=1 nrec=4
"""
print(json.dumps(c.summary(c.parse(trace.splitlines())), sort_keys=True))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = '{"cuts": 3, "cuts_by_caller": {"read map_bio": 1, "write map_block_write": 2}, "fresh_rows": 4, "journal_writes": 4, "journal_writes_stream_only": 1, "write_cut_mean_kib": 32.0, "write_cuts": 2, "write_cuts_at_run_end": 1}' ]
}
