#!/usr/bin/env bash
# Runs a guest command under the tbprof QEMU plugin (bench/tbprof/): the
# guest instructions of each stretch between two calls of the marker,
# by translation block, in DIR/snap.<n>. Then bench/tbreport.py DIR.
#
#   bench/tbprof.sh -k KVER -o DIR [vm-run options] -- COMMAND...
#
# The marker is the kernel's __x64_sys_sysfs; the guest boots with
# nokaslr so that its address is known before the boot, from a first
# boot's /proc/kallsyms (kept in build/tbprof/mark-<kernel>).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kver="" out="" args=()
while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=$2; args+=("$1" "$2"); shift 2 ;;
	-o) out=$2; shift 2 ;;
	--) break ;;
	*) args+=("$1"); shift ;;
	esac
done
[ -n "$kver" ] && [ -n "$out" ] && [ "${1:-}" = -- ] ||
	{ echo "usage: bench/tbprof.sh -k KVER -o DIR [vm-run options] -- COMMAND..." >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

so=$("$top/bench/tbprof/build.sh")
markf=$top/build/tbprof/mark-$kver
if [ ! -s "$markf" ]; then
	"$top/scripts/vm-run" -k "$kver" --no-module --append nokaslr -o "$out/mark" -t 600 -- \
		sh -c "awk '\$3 == \"__x64_sys_sysfs\" {print \$1}' /proc/kallsyms >$out/mark/addr" >/dev/null
	[ -s "$out/mark/addr" ] || { echo "tbprof: no __x64_sys_sysfs in $kver's kallsyms" >&2; exit 1; }
	cp "$out/mark/addr" "$markf"
fi
rm -f "$out"/snap.*
exec "$top/scripts/vm-run" "${args[@]}" --append nokaslr \
	--plugin "$so,mark=$(cat "$markf"),out=$out/snap" -o "$out" "$@"
