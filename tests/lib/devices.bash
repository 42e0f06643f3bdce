# shellcheck shell=bash
# Reproducible fake disks for the guest test suites.
#
# Every device made here is recorded, and devices_cleanup tears them all
# down in reverse order, so a test that fails half-way leaves nothing
# behind. common.bash calls devices_cleanup from the bats teardown.
#
# null_blk models (memory backed, so data is real; timer completions):
#   hdd   queue depth 1, 4 ms per I/O: a slow disk
#   ssd   queue depth 64, 60 us per I/O: a SATA/NVMe-class SSD
#   fast  no delay at all: for functional tests, where TCG is slow enough
# A non-zero cache size gives the disk a volatile write cache: data not
# flushed is lost when nullb_power_off cuts the power.

NULLB_CFS=/sys/kernel/config/nullb

# The list of what this test made: SSDC_REGISTRY if set, else one file
# per bats test.
_registry() { echo "${SSDC_REGISTRY:-${BATS_TEST_TMPDIR:-/tmp}/ssdc-devices}"; }

_devices_register() { echo "$*" >>"$(_registry)"; }

# Each command started costs about 0.1-0.4 s under TCG: nothing is run
# when null_blk's configfs directory is already there.
_nullb_ready() {
	[ -d "$NULLB_CFS" ] && return 0
	modprobe null_blk nr_devices=0 || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
	[ -d "$NULLB_CFS" ]
}

# Waits for a block device node to appear (udev may be slow under TCG).
wait_for_dev() {
	local dev=$1 i
	[ -b "$dev" ] && return 0
	for i in $(seq 1 100); do
		[ -b "$dev" ] && return 0
		udevadm settle 2>/dev/null || sleep 0.1
	done
	echo "wait_for_dev: $dev did not appear" >&2
	return 1
}

# nullb_model DIR MODEL: writes a model's parameters into a powered-off
# null_blk's configfs directory (make bench uses it too).
nullb_model() {
	local d=$1
	case $2 in
	hdd) echo 2 >"$d/irqmode"; echo 4000000 >"$d/completion_nsec"
	     echo 1 >"$d/hw_queue_depth"; echo 1 >"$d/submit_queues" ;;
	ssd) echo 2 >"$d/irqmode"; echo 60000 >"$d/completion_nsec"
	     echo 64 >"$d/hw_queue_depth" ;;
	fast) echo 0 >"$d/irqmode"; echo 64 >"$d/hw_queue_depth" ;;
	*) echo "nullb_model: unknown model '$2' (hdd, ssd, fast)" >&2; return 1 ;;
	esac
}

# nullb_create NAME SIZE_MB MODEL [CACHE_MB] [BLOCKSIZE] -> prints /dev/NAME
# NULLB_MAX_SECTORS in the environment: the disk's largest request in
# sectors (null_blk's default: 255). NULLB_MEMORY_BACKED=0: a disk that
# keeps nothing (reads return zeros), of any size at no RAM.
nullb_create() {
	local name=$1 size=$2 model=$3 cache=${4:-0} bs=${5:-512}
	local d=$NULLB_CFS/$name
	_nullb_ready || return 1
	mkdir "$d" || return 1
	_devices_register nullb "$name"
	echo "$size" >"$d/size"
	echo "$bs" >"$d/blocksize"
	echo "${NULLB_MEMORY_BACKED:-1}" >"$d/memory_backed"
	nullb_model "$d" "$model" || return 1
	if [ -n "${NULLB_MAX_SECTORS:-}" ]; then
		echo "$NULLB_MAX_SECTORS" >"$d/max_sectors" || return 1
	fi
	if [ "$cache" != 0 ]; then
		echo "$cache" >"$d/cache_size"
		# One request at a time: null_blk's cache code (6.1) can livelock
		# when two requests make room in a full cache at once (one spins
		# in null_make_cache_space while the other, holding pages, waits
		# for the CPU: a soft lockup, seen once in 50-persist).
		echo 1 >"$d/hw_queue_depth"
		echo 1 >"$d/submit_queues"
	fi
	echo 1 >"$d/discard" 2>/dev/null || true
	echo 1 >"$d/power" || return 1
	wait_for_dev "/dev/$name" || return 1
	echo "/dev/$name"
}

# Cuts the power: the device disappears and its volatile cache is lost.
nullb_power_off() { echo 0 >"$NULLB_CFS/$1/power"; }

# Brings a powered-off device back with the data that reached its media.
nullb_power_on() {
	echo 1 >"$NULLB_CFS/$1/power" && wait_for_dev "/dev/$1"
}

_nullb_remove() {
	local d=$NULLB_CFS/$1
	[ -d "$d" ] || return 0
	echo 0 >"$d/power" 2>/dev/null
	rmdir "$d"
}

# loop_create FILE SIZE_MB -> prints /dev/loopN: a loop device over a new
# file. Unlike null_blk disks, loop devices get udev's by-uuid links.
loop_create() {
	local dev
	modprobe loop || return 1
	truncate -s "${2}M" "$1" || return 1
	dev=$(losetup --find --show "$1") || return 1
	_devices_register loop "$dev"
	udevadm settle 2>/dev/null || true
	# A read-only flag set on an earlier user of this loop device outlives it.
	blockdev --setrw "$dev"
	echo "$dev"
}

# opt_args WORD...: " <count> WORD..." as a table line's optional
# argument group, or nothing when there are none.
opt_args() {
	[ $# -eq 0 ] || echo " $# $*"
}

# dm_create NAME TABLE -> prints /dev/mapper/NAME
dm_create() {
	local name=$1 table=$2
	dmsetup create "$name" --table "$table" || return 1
	_devices_register dm "$name"
	wait_for_dev "/dev/mapper/$name" || return 1
	# udev probes every new device (blkid reads it): let that finish, so
	# that tests counting the cache's hits and misses see only their I/O.
	udevadm settle 2>/dev/null || true
	echo "/dev/mapper/$name"
}

# dm_remove NAME. dmsetup --retry waits up to 5 s for openers to go; udev's
# probe after a writer closes the device may take longer under TCG: then
# once more after udev settles; if that fails too, its open count is said.
dm_remove() {
	dmsetup remove --retry "$1" 2>/dev/null && return 0
	udevadm settle 2>/dev/null
	dmsetup remove --retry "$1" && return 0
	echo "dm_remove: $1 still open (count: $(dmsetup info -c --noheadings -o open "$1" 2>&1))" >&2
	return 1
}

# Replaces a live device's table (suspend, load, resume).
dm_reload() {
	dmsetup suspend "$1" && dmsetup load "$1" --table "$2" && dmsetup resume "$1"
}

# _blk_name DEV VAR: the kernel's name of block device DEV (tb_o, dm-3) in
# VAR (not _bn); from the path alone when DEV is /dev/NAME, no program
# started.
_blk_name() {
	local _bn=${1#/dev/}
	if [ "$_bn" = "$1" ] || [ -L "$1" ] || [ ! -e "/sys/class/block/$_bn" ]; then
		_bn=$(basename "$(readlink -f "$1")")
	fi
	printf -v "$2" %s "$_bn"
}

# dev_sectors DEV: its size in 512-byte sectors.
dev_sectors() {
	local n
	_blk_name "$1" n && read -r n <"/sys/class/block/$n/size" && echo "$n"
}

dm_linear_create() {
	local name=$1 dev=$2 off=${3:-0} len=${4:-$(dev_sectors "$2")}
	dm_create "$name" "0 $len linear $dev $off"
}

# dm_flakey_create NAME DEV UP_SECS DOWN_SECS [FEATURE...]
# e.g. dm_flakey_create f /dev/x 0 100 error_writes  (always failing writes)
dm_flakey_create() {
	local name=$1 dev=$2 up=$3 down=$4
	shift 4
	dm_create "$name" "0 $(dev_sectors "$dev") flakey $dev 0 $up $down$(opt_args "$@")"
}

# dm_delay_create NAME DEV READ_MS [WRITE_MS]
dm_delay_create() {
	local name=$1 dev=$2 rd=$3 wr=${4:-$3}
	dm_create "$name" "0 $(dev_sectors "$dev") delay $dev 0 $rd $dev 0 $wr"
}

# dm_logwrites_create NAME DEV LOGDEV: records every write to DEV in LOGDEV.
dm_logwrites_create() {
	modprobe dm-log-writes || return 1
	dm_create "$1" "0 $(dev_sectors "$2") log-writes $2 $3"
}

# Puts a named mark in a log-writes log.
dm_logwrites_mark() { dmsetup message "$1" 0 mark "$2"; }

# scsi_debug_create SIZE_MB [MODULE_PARAM...] -> prints /dev/sdX
# One scsi_debug disk at a time (it is a module with global parameters).
scsi_debug_create() {
	local size=$1 dev="" i
	shift
	modprobe scsi_debug dev_size_mb="$size" "$@" || return 1
	_devices_register scsi_debug -
	for i in $(seq 1 100); do
		dev=$(ls /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/ 2>/dev/null | head -n 1)
		[ -n "$dev" ] && break
		udevadm settle 2>/dev/null || sleep 0.1
	done
	[ -n "$dev" ] || { echo "scsi_debug_create: no disk appeared" >&2; return 1; }
	wait_for_dev "/dev/$dev" || return 1
	echo "/dev/$dev"
}

_scsi_debug_remove() {
	local i
	for i in $(seq 1 50); do
		[ -d /sys/module/scsi_debug ] || return 0
		rmmod scsi_debug 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# udevd 252 drops a control message now and then, while udevadm reports
# success: it checks the sender's credentials, and a message that arrives
# between its accept() of the connection and its setsockopt(SO_PASSCRED)
# carries none ("Invalid sender uid 65534, ignoring message" in its debug
# log). Under TCG a vCPU can stall for a whole time slice in that window.
# On 6.12 a lost --start-exec-queue left a removal waiting for udev in 3
# of 8 full runs, and within 3 to 5 rounds of 80-stats run alone. So
# these two check the effect of each command and send it again.

# udev_queue_stop: stops udevd's event queue. The check: an event made
# after the command must stay queued (udevadm settle times out).
udev_queue_stop() {
	local i
	for i in $(seq 1 20); do
		udevadm control --stop-exec-queue || return 1
		echo change >/sys/devices/virtual/mem/null/uevent
		udevadm settle -t 2 >/dev/null 2>&1 || return 0
	done
	echo "udev_queue_stop: udevd keeps running its queue" >&2
	return 1
}

# udev_queue_start: starts udevd's event queue again and waits until it
# is empty.
udev_queue_start() {
	local i
	for i in $(seq 1 60); do
		udevadm control --start-exec-queue || return 1
		udevadm settle -t 2 >/dev/null 2>&1 && return 0
	done
	echo "udev_queue_start: udevd's queue does not drain" >&2
	return 1
}

# udev probes a device (reads it) after every close of a writer and every
# resume: exact request counts hold only while its event queue is paused.
# udev_pause stops it for the rest of the test (the common teardown starts
# it again, devices_cleanup() needs it); dmsetup must then run with
# --noudevsync for a suspend or resume, so as not to wait for udev.
udev_pause() { udev_queue_stop && UDEV_PAUSED=1; }
udev_resume() { udev_queue_start && UDEV_PAUSED=; }

# _udev_report: what udev and the device-mapper are doing, for a cleanup
# that waited too long: udevd's answer, every udev worker, dmsetup and
# blkid process with its state and kernel stack, the pending events and
# the device-mapper's udev cookies.
_udev_report() {
	local p
	echo "udevd: $(pgrep -x systemd-udevd | tr '\n' ' ')$(udevadm control --ping -t 5 2>&1 && echo answers)"
	echo "events queued: $(ls /run/udev/queue 2>/dev/null && echo yes || echo none)"
	for p in $(pgrep -f 'udev-worker|systemd-udevd|dmsetup|blkid|ssdcachectl'); do
		[ -r "/proc/$p/stat" ] || continue
		echo "pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)): state $(awk '{print $3}' "/proc/$p/stat") wchan $(cat "/proc/$p/wchan" 2>/dev/null)"
		sed 's/^/    /' "/proc/$p/stack" 2>/dev/null
	done
	echo "cookies:"; dmsetup udevcookies 2>&1 | sed 's/^/    /'
	echo "devices:"; dmsetup info -c 2>&1 | sed 's/^/    /'
}

# _dm_cleanup NAME: removes dm device NAME. dmsetup waits for udev to
# finish the removal's event; a removal still waiting after 120 s (udevd
# stopped, paused or stuck, or the removal itself stuck in the kernel)
# fails this cleanup, with a report of what udev and dmsetup were doing,
# instead of hanging the rest of the run; udev's queue is started again
# for the tests after it.
_dm_cleanup() {
	local name=$1 pid i
	dmsetup remove --retry "$name" >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 1 1200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		{
			echo "cleanup: removing $name still waits after 120 s"
			_udev_report
		} >&2
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		# What the next tests need: a queue that runs, no stale waits.
		udev_queue_start
		dmsetup udevcomplete_all -y >/dev/null 2>&1
		dmsetup info "$name" >/dev/null 2>&1 &&
			dmsetup remove --noudevsync --force --retry "$name" >/dev/null 2>&1
		return 1
	fi
	wait "$pid" && return 0
	timeout 120 dmsetup remove --force --retry "$name" >/dev/null 2>&1 && return 0
	echo "cleanup: cannot remove dm device $name" >&2
	return 1
}

# Tears down everything this test made, newest first. Returns non-zero if
# anything could not be removed, and says what.
devices_cleanup() {
	local kind name rc=0 reg i lines
	reg=$(_registry)
	[ -f "$reg" ] || return 0
	mapfile -t lines <"$reg"
	for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
		read -r kind name <<<"${lines[i]}"
		case $kind in
		dm) [ -e "/dev/mapper/$name" ] || continue
		    _dm_cleanup "$name" || rc=1 ;;
		loop) blockdev --setrw "$name" 2>/dev/null	# the flag outlives the file
		      losetup -d "$name" 2>/dev/null || true ;;
		nullb) _nullb_remove "$name" ||
			{ echo "cleanup: cannot remove null_blk $name" >&2; rc=1; } ;;
		scsi_debug) _scsi_debug_remove ||
			{ echo "cleanup: cannot unload scsi_debug" >&2; rc=1; } ;;
		esac
	done
	rm -f "$reg"
	return $rc
}

# A checksum of a whole device, read with O_DIRECT so no cache hides
# anything: POSIX cksum (a CRC-32 and the length), which under TCG hashes
# 3-4 times faster than md5sum; tests only compare these with each other.
dev_sum() {
	dd if="$1" bs=1M iflag=direct status=none | cksum
}

# dev_writes DEV...: the write and the discard requests each device has
# completed so far (fields 5 and 12 of its /sys/block stat). Every write,
# write-zeroes or discard that reaches a disk counts there, so equal
# figures before and after an operation say that it wrote nothing, even
# data equal to what was there, at no cost (a dev_sum reads the disk).
dev_writes() {
	local d f n
	for d in "$@"; do
		_blk_name "$d" n
		read -ra f <"/sys/class/block/$n/stat"
		printf '%s %s ' "${f[4]}" "${f[11]:-0}"
	done
}
