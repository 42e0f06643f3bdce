#!/usr/bin/env bash
# make bench [BENCH_SECS=20] [SSDCACHE_KERNELS="k1 k2"]: the benchmarks
# (bench/guest.py) in one VM per kernel, one VM at a time: the raw HDD
# and SSD models, dm-linear, ssdcache, dm-cache, dm-writecache and bcache
# on the same simulated devices in the same boot. Results per kernel in
# build/bench/<kernel>/: results.json, results.md (bench/report.py), PNG
# plots, and the guest's output.log.
#
# BENCH_SYSTEMS, BENCH_WORKLOADS, BENCH_HIT_ROUNDS, BENCH_HIT_SLICES,
# BENCH_WRITE_ROUNDS, BENCH_MODEL, BENCH_FS, BENCH_PG_SCALE,
# BENCH_PG_CACHE_MB, BENCH_PG_PREWARM, BENCH_PG_ROUNDS and
# BENCH_SB_ROWS pass through to the guest (see bench/guest.py).
#
# Then, where workload 1 or 2 ran on the timed disks, a second boot per
# kernel with one vCPU (vm-run -c 1; in a two-vCPU guest a pair of
# slices is about ten times noisier, Documentation/performance.rst,
# "Workload 1 in a one-vCPU guest") measures them in slices beside
# dm-linear with bench/sliceprobe.py: dm-linear, ssdcache in both modes
# and dm-writecache, each in BENCH_SLICE_INSTANCES instances (default 4;
# 0: no such boot) created anew, the module loaded anew for each, 6
# pairs of 3 s slices each. Results in build/bench/<kernel>/onecpu/,
# pooled in results.md and its targets (bench/report.py).
#
# Then, where pgbench ran on ext4 on the timed disks, one more one-vCPU
# boot per kernel and contender runs pgbench in BENCH_PG_PAIRS (default
# 8; 0: no such boot) interleaved pairs of turns, write-back against
# that contender (bench/pgswap.py; each turn a warm-up run of BENCH_SECS
# and a measured one of twice that): about 25 minutes at 8 pairs. The
# contenders (bench/report.py --pg-pairs) are the raw SSD model, for the
# 0.8x target, where the main boot measured it and write-back, and the
# peers within 10% of the best one in the main boot, whose rounds do not
# tell them apart. With one vCPU the guest is CPU-bound, and each pair's
# ratio compares two runs a minute apart. Results in
# build/bench/<kernel>/pgpairs/<contender>/, in results.md and its
# targets.
# BENCH_ICOUNT=SHIFT boots the guest with a clock that counts its
# instructions (vm-run --icount): each figure is
# then guest instructions per I/O, the same from run to run and whatever
# else the host runs, not speed. Only with BENCH_MODEL=fast: with the
# timer-driven disk models, a 6.12 guest under QEMU 7.2's -icount died of
# a double fault in the slab allocator while fio ran on the raw SSD model
# (no device-mapper target involved).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
secs=${BENCH_SECS:-20}
# Workload 1's pairs of 3 s slices (bench/guest.py), 8 s a pair with the ramps.
slices=${BENCH_HIT_SLICES:-20}
case $slices in
''|*[!0-9]*) echo "bench: BENCH_HIT_SLICES must be a number of pairs (0: none), not $slices" >&2; exit 2 ;;
esac
instances=${BENCH_SLICE_INSTANCES:-4}
case $instances in
''|*[!0-9]*) echo "bench: BENCH_SLICE_INSTANCES must be a number of instances (0: none), not $instances" >&2; exit 2 ;;
esac
pgpairs=${BENCH_PG_PAIRS:-8}
case $pgpairs in
''|*[!0-9]*) echo "bench: BENCH_PG_PAIRS must be a number of pairs (0: none), not $pgpairs" >&2; exit 2 ;;
esac
workloads=${BENCH_WORKLOADS:-hit write mixed seq pgbench}
onecpu=()
for w in $workloads; do
	case $w in hit|write) onecpu+=("$w") ;; esac
done
[ -z "${BENCH_ICOUNT:-}" ] && [ "${BENCH_MODEL:-timed}" = timed ] && [ "$instances" -gt 0 ] || onecpu=()
# The pgbench pairs boots: pgswap.py runs ext4 only, and pairs write-back.
case " $workloads " in *" pgbench "*) ;; *) pgpairs=0 ;; esac
case " ${BENCH_SYSTEMS:-ssdcache_wb} " in *" ssdcache_wb "*) ;; *) pgpairs=0 ;; esac
case " ${BENCH_FS:-ext4} " in *" ext4 "*) ;; *) pgpairs=0 ;; esac
[ -z "${BENCH_ICOUNT:-}" ] && [ "${BENCH_MODEL:-timed}" = timed ] || pgpairs=0
kernels=${SSDCACHE_KERNELS:-$(scripts/kernels.sh)}
icount=()
if [ -n "${BENCH_ICOUNT:-}" ]; then
	case $BENCH_ICOUNT in
	*[!0-9]*) echo "bench: BENCH_ICOUNT must be a number (QEMU's icount shift), not $BENCH_ICOUNT" >&2; exit 2 ;;
	esac
	if [ "${BENCH_MODEL:-timed}" != fast ]; then
		echo "bench: BENCH_ICOUNT needs BENCH_MODEL=fast (see the top of $0)" >&2
		exit 2
	fi
	icount=(--icount "$BENCH_ICOUNT")
fi
res=${BENCH_OUT:-$top/build/bench}
mkdir -p "$res"
make -s tool || exit 1
rc=0
for k in $kernels; do
	scripts/build-module.sh "$k" >/dev/null || { echo "bench: $k: build failed"; rc=1; continue; }
	rm -rf "${res:?}/$k"
	steal0=$(scripts/host-steal)
	echo "bench: $k: booting under TCG, ${secs} s per measured run (about $((secs * 4 + 12)) minutes with every workload and system: 92 at 20 s on 6.12, 2026-11-29; the hit slices about $((slices * 8 * 7 / 60)) more)"
	scripts/vm-run -k "$k" -m 7G -t $((secs * 400 + 1800 + slices * 64)) "${icount[@]}" -o "$res/$k" -- \
		env BENCH_SECS="$secs" BENCH_SYSTEMS="${BENCH_SYSTEMS:-}" BENCH_ICOUNT="${BENCH_ICOUNT:-}" \
		BENCH_HIT_ROUNDS="${BENCH_HIT_ROUNDS:-3}" BENCH_HIT_SLICES="$slices" \
		BENCH_WRITE_ROUNDS="${BENCH_WRITE_ROUNDS:-3}" BENCH_MODEL="${BENCH_MODEL:-timed}" \
		BENCH_WORKLOADS="$workloads" \
		BENCH_FS="${BENCH_FS:-ext4}" BENCH_PG_SCALE="${BENCH_PG_SCALE:-20}" \
		BENCH_PG_CACHE_MB="${BENCH_PG_CACHE_MB:-768}" BENCH_PG_PREWARM="${BENCH_PG_PREWARM:-1}" \
		BENCH_PG_ROUNDS="${BENCH_PG_ROUNDS:-3}" BENCH_SB_ROWS="${BENCH_SB_ROWS:-500000}" \
		/usr/bin/python3 bench/guest.py "$res/$k" 2>&1 | tee "$res/$k.out"
	r=${PIPESTATUS[0]}
	# Steal slows the guest unevenly: a run with much of it is not
	# comparable with one without.
	# shellcheck disable=SC2086
	echo "bench: $k: harness $(cat "$res/$k/harness" 2>/dev/null || echo unfinished), exit $r," \
		"host CPU steal $(scripts/host-steal $steal0)% during the run" | tee -a "$res/$k.out"
	if [ "${#onecpu[@]}" -gt 0 ] && [ -f "$res/$k/results.json" ]; then
		echo "bench: $k: workloads ${onecpu[*]} in a one-vCPU boot, $instances instances of each system"
		scripts/vm-run -k "$k" -c 1 --no-module -t $((instances * 900 + 600)) -o "$res/$k/onecpu" -- \
			env INSTANCES="$instances" PAIRS=6 SECS=3 WORKLOADS="${onecpu[*]}" \
			SYSTEMS="linear_ssd ssdcache_wt ssdcache_wb dm_writecache" \
			VARIANTS="base=$top/build/$k/dm-ssdcache.ko" \
			/usr/bin/python3 bench/sliceprobe.py "$res/$k/onecpu" 2>&1 | tee -a "$res/$k.out"
		[ "${PIPESTATUS[0]}" = 0 ] || { echo "bench: $k: the one-vCPU boot failed" | tee -a "$res/$k.out"; rc=1; }
	fi
	peers=""
	if [ "$pgpairs" -gt 0 ] && [ -f "$res/$k/results.json" ]; then
		peers=$(/usr/bin/python3 bench/report.py --pg-pairs "$res/$k" pgbench_ext4)
	fi
	for peer in $peers; do
		echo "bench: $k: pgbench in a one-vCPU boot, $pgpairs interleaved pairs of turns, ssdcache_wb against $peer"
		scripts/vm-run -k "$k" -c 1 -m 8G -t $((pgpairs * (secs * 6 + 120) + 1200)) -o "$res/$k/pgpairs/$peer" -- \
			env PAIR="ssdcache_wb $peer" PAIRS="$pgpairs" BENCH_SECS="$secs" \
			BENCH_PG_SCALE="${BENCH_PG_SCALE:-20}" BENCH_PG_CACHE_MB="${BENCH_PG_CACHE_MB:-768}" \
			BENCH_PG_PREWARM="${BENCH_PG_PREWARM:-1}" \
			/usr/bin/python3 bench/pgswap.py "$res/$k/pgpairs/$peer" 2>&1 | tee -a "$res/$k.out"
		[ "${PIPESTATUS[0]}" = 0 ] || { echo "bench: $k: the pgbench pairs boot against $peer failed" | tee -a "$res/$k.out"; rc=1; }
	done
	if [ -f "$res/$k/results.json" ]; then
		/usr/bin/python3 bench/report.py "$res/$k" || rc=1
	else
		tail -n 30 "$res/$k.out"
	fi
	[ "$r" = 0 ] || rc=1
done
exit $rc
