#!/usr/bin/env bash
# make stress [STRESS_SECS=600] [STRESS_RUN_SECS=0] [SSDCACHE_KERNELS="k1 k2"]:
# the randomized stress test (tests/guest/90-stress.bats) run again and
# again on each kernel, one VM at a time, until STRESS_SECS seconds have
# passed there. Each run starts from an empty cache and lasts 10 actions
# (SSDCACHE_STRESS_ACTIONS) and at least STRESS_RUN_SECS seconds: short
# runs by default, since a cache that is still filling (readahead, many
# fills) has found bugs that ten minutes of a full cache did not. The
# test-only selftest module runs, so that the test can also compare the
# block map on the SSD with RAM (SSDCACHE_VERIFY_MAP). Passes
# when every run passes and the harness finds the kernel log clean and
# the module unloadable.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
secs=${STRESS_SECS:-600}
run_secs=${STRESS_RUN_SECS:-0}
kernels=${SSDCACHE_KERNELS:-$(scripts/kernels.sh)}
res=$top/build/stress
rm -rf "$res"
mkdir -p "$res"
make -s tool || exit 1
# In the guest: runs until $1 seconds have passed, or the first failure.
# One line: the command reaches the guest through virtme's command line.
# shellcheck disable=SC2016
loop='end=$((SECONDS + $1)); n=0; while :; do n=$((n + 1)); echo "# run $n";'
loop+=' bats --tap tests/guest/90-stress.bats || { echo "stress: run $n failed"; exit 1; };'
loop+=' [ "$SECONDS" -lt "$end" ] || break; done; echo "stress: $n runs passed in ${SECONDS}s"'
rc=0
for k in $kernels; do
	scripts/build-module.sh "$k" --selftest >/dev/null || { echo "stress: $k: build failed"; rc=1; continue; }
	echo "stress: $k: ${secs}s of runs of at least ${run_secs}s"
	scripts/vm-run -k "$k" --selftest -t $((secs + run_secs + 1800)) -o "$res/$k" -- \
		env SSDCACHE_STRESS_SECS="$run_secs" SSDCACHE_VERIFY_MAP=1 bash -c "$loop" stress "$secs" \
		>"$res/$k.out" 2>"$res/$k.err"
	r=$?
	cat "$res/$k/output.log" 2>/dev/null
	echo "stress: $k: harness $(cat "$res/$k/harness" 2>/dev/null || echo unfinished), exit $r"
	[ "$r" = 0 ] || rc=1
done
exit $rc
