#!/usr/bin/env bash
# make check-debug: every guest suite on the debug 6.1 kernel (KASAN,
# lockdep, DEBUG_ATOMIC_SLEEP, kmemleak, DEBUG_OBJECTS; built once per
# machine by scripts/debug-kernel.sh), then a kmemleak scan after the
# module's unload. Passes when every test passes and the kernel log and
# kmemleak report nothing.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
res=$top/build/check-debug
rm -rf "$res"
mkdir -p "$res"
t0=$(date +%s)

scripts/debug-kernel.sh || { echo "check-debug: the debug kernel did not build"; exit 1; }
src=$(scripts/debug-kernel.sh --print-dir)
kver=$(make -s -C "$src" kernelrelease)
SSDCACHE_KDIR=$src scripts/build-module.sh "$kver" || exit 1
make -s tool || exit 1

echo "check-debug: booting $kver for the guest suites (KASAN and lockdep make this slow)"
# shellcheck disable=SC2086
scripts/vm-run -K "$src" --kmemleak -t 21600 -o "$res/vm" -- \
	bats --tap ${SSDCACHE_GUEST_SUITES:-tests/guest} >"$res/guest.out" 2>"$res/vm.err"
rc=$?
scripts/tap-results "[$kver]" <"$res/vm/output.log" | tee "$res/results.txt"
h=$(cat "$res/vm/harness" 2>/dev/null || echo unfinished)
echo "check-debug: harness: $h (vm-run exit $rc)"
[ "$rc" = 0 ] || tail -n 60 "$res/vm.err"
p=$(grep -c '^PASS' "$res/results.txt")
f=$(grep -c '^FAIL' "$res/results.txt")
echo "check-debug: $p passed, $f failed, harness $h, $(( $(date +%s) - t0 )) s"
[ "$rc" = 0 ] && [ "$f" = 0 ] && [ "$h" = ok ]
