#!/usr/bin/env bash
# make stress [STRESS_SECS=600] [SSDCACHE_KERNELS="k1 k2"]: the randomized
# stress run (tests/guest/90-stress.bats) for at least STRESS_SECS seconds on each
# kernel, one VM at a time. Passes when every run passes and the harness
# finds the kernel log clean and the module unloadable.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
secs=${STRESS_SECS:-600}
kernels=${SSDCACHE_KERNELS:-$(scripts/kernels.sh)}
res=$top/build/stress
rm -rf "$res"
mkdir -p "$res"
make -s tool || exit 1
rc=0
for k in $kernels; do
	scripts/build-module.sh "$k" >/dev/null || { echo "stress: $k: build failed"; rc=1; continue; }
	echo "stress: $k: ${secs}s"
	scripts/vm-run -k "$k" -t $((secs + 1800)) -o "$res/$k" -- \
		env SSDCACHE_STRESS_SECS="$secs" bats --tap tests/guest/90-stress.bats \
		>"$res/$k.out" 2>"$res/$k.err"
	r=$?
	cat "$res/$k/output.log" 2>/dev/null
	echo "stress: $k: harness $(cat "$res/$k/harness" 2>/dev/null || echo unfinished), exit $r"
	[ "$r" = 0 ] || rc=1
done
exit $rc
