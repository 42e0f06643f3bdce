#!/usr/bin/env bash
# Runs inside the guest (started by scripts/vm-run): prepares the guest,
# loads dm-ssdcache, runs the command, unloads the module, and leaves the
# results in the shared directory:
#   output.log  the command's output      rc          its exit status
#   dmesg.log   the kernel log            unload-failed  if rmmod failed
#
#   guest-run.sh RESULTS_DIR KO|- -- COMMAND [ARGS...]
set -u

out=$1 ko=$2
shift 3

export SSDCACHE_RESULTS=$out
export SSDCACHE_TOP
SSDCACHE_TOP=$(cd "$(dirname "$0")/.." && pwd)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

finish() {
	echo "$1" >"$out/rc"
	dmesg >"$out/dmesg.log" 2>&1
	sync
	exit 0
}

# Tests want device nodes to appear and configfs for null_blk.
modprobe configfs 2>/dev/null
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
modprobe dm-mod

# udev runs bcache's probe (a program) on every new block device that has
# no known filesystem: on nearly every disk a test makes, at 0.1-0.4 s a
# program under TCG. Nothing here needs it (make bench registers bcache
# devices itself): this guest's /etc, an overlay, masks the rule.
if [ -f /lib/udev/rules.d/69-bcache.rules ] && [ ! -e /etc/udev/rules.d/69-bcache.rules ]; then
	mkdir -p /etc/udev/rules.d &&
		ln -s /dev/null /etc/udev/rules.d/69-bcache.rules &&
		udevadm control --reload 2>/dev/null
fi

if [ "$ko" != "-" ]; then
	export SSDCACHE_KO=$ko
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	# shellcheck disable=SC2086
	[ -z "$deps" ] || modprobe -a $deps
	if ! insmod "$ko"; then
		echo "guest-run: cannot load $ko" | tee "$out/output.log"
		finish 1
	fi
fi

"$@" 2>&1 | tee "$out/output.log"
rc=${PIPESTATUS[0]}

if [ "$ko" != "-" ] && [ -d /sys/module/dm_ssdcache ]; then
	if ! msg=$(rmmod dm_ssdcache 2>&1); then
		{ echo "$msg"; dmsetup table; } >"$out/unload-failed" 2>&1
	fi
fi

# A debug kernel with kmemleak (SSDCACHE_KMEMLEAK=1, vm-run --kmemleak):
# scan after the unload; any unreferenced object is reported.
if [ "${SSDCACHE_KMEMLEAK:-0}" = 1 ]; then
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	if [ -w /sys/kernel/debug/kmemleak ]; then
		# Objects must be seen unreferenced by two scans to be reported.
		for _ in 1 2 3; do
			echo scan >/sys/kernel/debug/kmemleak
			sleep 5
		done
		cat /sys/kernel/debug/kmemleak >"$out/kmemleak.log"
	else
		echo "no /sys/kernel/debug/kmemleak in this kernel" >"$out/kmemleak.log"
	fi
fi
finish "$rc"
