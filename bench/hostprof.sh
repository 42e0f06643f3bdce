#!/usr/bin/env bash
# Runs a guest command with the host's perf recording the QEMU process,
# and each line of the guest's log stamped with the host's clock; then
# bench/hostprof.py cuts the samples into the guest's fio rounds:
#
#   bench/hostprof.sh -k KVER -o DIR -s SECS [vm-run options] -- COMMAND...
#   bench/hostprof.py report DIR SECS [LABEL...]     (again, with labels)
#
# SECS is the length of the command's fio rounds (abprobe.py's PSECS).
# Needs root (perf record of another process) and perf on the host.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out="" secs="" args=()
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	-s) secs=$2; shift 2 ;;
	--) break ;;
	*) args+=("$1"); shift ;;
	esac
done
[ -n "$out" ] && [ -n "$secs" ] && [ "${1:-}" = -- ] ||
	{ echo "usage: bench/hostprof.sh -k KVER -o DIR -s SECS [vm-run options] -- COMMAND..." >&2; exit 2; }
command -v perf >/dev/null || { echo "hostprof: no perf on this host" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/host-* "$out/output.log"

# The qemu-system process under PID, once it runs.
qemu_under() {
	local p kids
	kids=$(pgrep -P "$1" || true)
	for p in $kids; do
		case $(cat "/proc/$p/comm" 2>/dev/null) in
		qemu-system*) echo "$p"; return 0 ;;
		esac
		qemu_under "$p" && return 0
	done
	return 1
}

"$top/scripts/vm-run" "${args[@]}" -o "$out" "$@" &
vm=$!
"$top/bench/hostprof.py" stamp "$out/output.log" "$out/host-stamps.txt" &
stamper=$!
trap 'kill "$stamper" 2>/dev/null || true' EXIT
# vng runs short-lived QEMUs (its probes) before the guest's: the one
# that perf stays attached to for a second is the guest's.
qemu=""
while [ -z "$qemu" ] && kill -0 "$vm" 2>/dev/null; do
	qemu=$(qemu_under "$vm" || true)
	if [ -z "$qemu" ]; then
		sleep 0.2
		continue
	fi
	perf record -q -e cpu-clock -k mono -F 499 -p "$qemu" -o "$out/host-perf.data" \
		2>"$out/host-perf.err" &
	perfpid=$!
	sleep 1
	kill -0 "$perfpid" 2>/dev/null && continue
	kill -0 "$qemu" 2>/dev/null && { cat "$out/host-perf.err" >&2; qemu=""; break; }
	qemu=""
done
rc=0
[ -z "$qemu" ] || echo "$qemu" >"$out/host-pid"
wait "$vm" || rc=$?
sleep 1         # the stamper reads the log's last lines
if [ -n "$qemu" ]; then
	wait "$perfpid" || true
	perf script -i "$out/host-perf.data" -F tid,time,ip,sym,dso >"$out/host-perf.txt" 2>/dev/null
	"$top/bench/hostprof.py" report "$out" "$secs" | tee "$out/hostprof.txt"
else
	echo "hostprof: perf recorded no QEMU process under vm-run" >&2
	[ "$rc" != 0 ] || rc=1
fi
exit "$rc"
