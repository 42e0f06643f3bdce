#!/usr/bin/env bash
# make check-debug: every guest suite on the debug 6.1 kernel (KASAN,
# lockdep, DEBUG_ATOMIC_SLEEP, kmemleak, DEBUG_OBJECTS; built once per
# machine by scripts/debug-kernel.sh), then a kmemleak scan after the
# module's unload. Passes when every test passes and the kernel log and
# kmemleak report nothing.
#
# The suites are shared out among SSDCACHE_DEBUG_VMS guests that run side
# by side (default: one per CPU, at most 2; each is one single-threaded
# TCG process), each with its own kernel log check and kmemleak scan.
# "check-debug.sh --split N" prints the N shares and does nothing else.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
res=$top/build/check-debug
t0=$(date +%s)

# Minutes each suite took on the debug kernel here (2026-11-24, two
# guests side by side); a suite not listed counts 10. Only the split
# uses them.
declare -A cost=([85-crash]=37 [20-cache-io]=23 [30-table]=13
	[50-persist]=12 [46-corrupt]=10 [60-fs]=10 [70-writeback]=9
	[80-stats]=8 [47-boot]=8 [40-tool]=7 [55-faults]=7 [90-stress]=5
	[57-devices]=6 [10-helpers]=4 [45-check]=3 [00-module]=1)

# split N FILE...: N lines, each a space-separated share of the suite
# files; the costliest suite goes to the least loaded guest first.
split_suites() {
	local n=$1 f b i best
	shift
	local -a load=() share=()
	for ((i = 0; i < n; i++)); do load[i]=0; share[i]=""; done
	while read -r _ f; do
		best=0
		for ((i = 1; i < n; i++)); do
			[ "${load[i]}" -lt "${load[best]}" ] && best=$i
		done
		b=$(basename "$f" .bats)
		load[best]=$(( load[best] + ${cost[$b]:-10} ))
		share[best]="${share[best]} $f"
	done < <(for f in "$@"; do b=$(basename "$f" .bats); echo "${cost[$b]:-10} $f"; done | sort -rn -k1,1)
	for ((i = 0; i < n; i++)); do
		# Each guest runs its share in the suites' own order.
		# shellcheck disable=SC2086
		[ -n "${share[i]}" ] && printf '%s\n' ${share[i]} | sort | tr '\n' ' ' && echo
	done
}

# shellcheck disable=SC2086
suites=$(ls ${SSDCACHE_GUEST_SUITES:-tests/guest/*.bats})
if [ "${1:-}" = --split ]; then
	# shellcheck disable=SC2086
	split_suites "${2:?--split needs a number of guests}" $suites
	exit
fi

scripts/debug-kernel.sh || { echo "check-debug: the debug kernel did not build"; exit 1; }
src=$(scripts/debug-kernel.sh --print-dir)
kver=$(make -s -C "$src" kernelrelease)
SSDCACHE_KDIR=$src scripts/build-module.sh "$kver" || exit 1
make -s tool || exit 1
rm -rf "$res"
mkdir -p "$res"

nvm=${SSDCACHE_DEBUG_VMS:-$(( $(nproc) >= 2 ? 2 : 1 ))}
# shellcheck disable=SC2086
mapfile -t shares < <(split_suites "$nvm" $suites)

echo "check-debug: booting $kver in ${#shares[@]} guest(s) (KASAN and lockdep make this slow)"
i=0
for s in "${shares[@]}"; do
	i=$((i + 1))
	echo "check-debug: guest $i:$s"
	# shellcheck disable=SC2086
	scripts/vm-run -K "$src" --kmemleak -t 21600 -o "$res/vm-$i" -- \
		env BATS_TEST_TIMEOUT=3600 bats -T --tap $s \
		>"$res/guest-$i.out" 2>"$res/vm-$i.err" &
done
wait
fails=0
for ((j = 1; j <= i; j++)); do
	scripts/tap-results "[$kver]" <"$res/vm-$j/output.log" >>"$res/results.txt"
	h=$(cat "$res/vm-$j/harness" 2>/dev/null || echo unfinished)
	echo "check-debug: guest $j harness: $h"
	if [ "$h" != ok ]; then
		fails=$((fails + 1))
		tail -n 60 "$res/vm-$j.err"
	fi
done
cat "$res/results.txt"
p=$(grep -c '^PASS' "$res/results.txt")
f=$(grep -c '^FAIL' "$res/results.txt")
echo "check-debug: $p passed, $f failed, $fails guest(s) not clean, $(( $(date +%s) - t0 )) s"
[ "$f" = 0 ] && [ "$fails" = 0 ]
