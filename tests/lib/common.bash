# shellcheck shell=bash
# Loaded by every guest bats suite: device helpers and the teardown that
# cleans up after each test, failed or not.

SSDCACHE_TOP=${SSDCACHE_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/lib/devices.bash
source "$SSDCACHE_TOP/tests/lib/devices.bash"

# Under TCG every program started costs about 0.1 s: sleep, seq, mkdir,
# rm, rmdir, cut, basename and dirname run inside bash instead, as the
# loadable builtins of Debian's bash-builtins (scripts/deps.sh installs
# it; without it they stay programs). Only those whose options the tests
# use behave as the programs do: not head (no -c) nor stat.
for _b in sleep seq mkdir rm rmdir cut basename dirname; do
	enable -f "/usr/lib/bash/$_b" "$_b" 2>/dev/null || true
done
unset _b
# The tests' Python helpers use only the standard library: they run as
# "python3 -S", without site's start-up (about 0.35 s under TCG).

SSDCACHECTL=$SSDCACHE_TOP/build/userspace/ssdcachectl
# The tool's registry of caches (ssdcachectl(8)): each test has its own,
# dropped at teardown (47-boot uses the real one, as udev does).
export SSDCACHECTL_REGISTRY=${SSDCACHECTL_REGISTRY:-/tmp/ssdcache-test-registry}

teardown() {
	local rc=0
	if [ -n "${UDEV_PAUSED:-}" ]; then
		udev_queue_start || rc=1
	fi
	devices_cleanup || rc=1
	rm -f "$SSDCACHECTL_REGISTRY" "$SSDCACHECTL_REGISTRY.lock"
	return $rc
}

# Runs only inside the test VM: refuse to touch a real machine's devices.
# Every guest test calls it first (from its setup or its body). It also
# turns off functrace: bats' DEBUG trap, which records a stack trace for
# every command, then runs for the test's own lines only, not in the
# helpers they call nor in their $(...). A loop over the status fields
# as in ssdc_stat took 39 ms with the trap, 2 ms without (natively; TCG
# is many times slower). A failure still names the test's line and the
# command on it, no longer the line inside the helper.
require_guest() {
	[ -n "${SSDCACHE_RESULTS:-}" ] || skip "guest-only test (run it through scripts/vm-run)"
	set +T
}

# Kernel log lines printed since the mark taken by dmesg_mark. The mark
# is a line written to the log itself: the ring wraps during a run (the
# crash suite found a count of lines pointing past its end).
dmesg_mark() {
	DMESG_MARK="ssdcache-test: mark $BASHPID.$RANDOM.$SECONDS"
	echo "$DMESG_MARK" >/dev/kmsg
}
dmesg_since() {
	dmesg | awk -v m="$DMESG_MARK" 'on; substr($0, length($0) - length(m) + 1) == m { on = 1 }'
}

# Fails the test with a message.
fail() {
	echo "$*" >&2
	return 1
}

# assert_eq EXPECTED ACTUAL [WHAT]
assert_eq() {
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}

# lockdep_kernel: true on a kernel with lockdep (make check-debug's),
# where each set's spinlock carries a lock map and the module takes a
# little more RAM per cache block than on production kernels.
lockdep_kernel() { [ -e /proc/lockdep ]; }

# ram_each_re: an extended regex for the kernel's RAM per cache block in
# its "need N MiB of RAM (B each)" refusal: 16 bytes on production
# kernels, a little more under lockdep_kernel.
ram_each_re() {
	if lockdep_kernel; then
		echo "1[6-9]"
	else
		echo 16
	fi
}

# nullb_past_ram NAME: /dev/NAME, a 4 TiB null_blk that keeps nothing: a
# cache of 4 KiB blocks on it (about 2^30 of them) needs about 16 GiB of
# kernel RAM for its block map. Skips the test in a guest of 8 GiB of RAM
# or more, where that might fit. Not in $(...): skip must run in the test.
nullb_past_ram() {
	[ "$(awk '/^MemTotal/ {print $2}' /proc/meminfo)" -lt $((8 << 20)) ] ||
		skip "the guest has 8 GiB of RAM or more"
	NULLB_MEMORY_BACKED=0 nullb_create "$1" 4194304 fast >/dev/null
}

# ssdc_create NAME ORIGIN CACHE MODE [OPT...] -> prints /dev/mapper/NAME
# An ssdcache device over ORIGIN with CACHE; OPTs are the optional table
# arguments, e.g. "format" or "format block_size 65536".
ssdc_create() {
	local name=$1 origin=$2 cache=$3 mode=$4
	shift 4
	dm_create "$name" "0 $(dev_sectors "$origin") ssdcache $origin $cache $mode$(opt_args "$@")"
}

# ssdc_quiesce NAME: every fill of NAME written and journaled. A suspend
# waits for the fills in flight and commits; the resume goes on. A sleep
# is no such guarantee: on a loaded machine, commits run late.
# With udev paused (udev_pause), without waiting for udev's events.
ssdc_quiesce() {
	local sync=()
	[ -z "${UDEV_PAUSED:-}" ] || sync=(--noudevsync)
	dmsetup "${sync[@]}" suspend "$1" && dmsetup "${sync[@]}" resume "$1"
}

# The status line's fields after its first three (Documentation/
# ssdcache.rst), in order; exported for tests' Python helpers.
export SSDC_STATUS_FIELDS="version mode block_size blocks dirty read_hits read_misses write_hits write_misses bypassed_reads bypassed_writes ram_per_block policy sequential_cutoff state writeback cleaned commits journal_blocks checkpoints flushes fua_writes dirty_high dirty_low writeback_idle_ms writeback_rate writeback_yield"

# ssdc_stat NAME FIELD: one field of the status line, by name.
ssdc_stat() {
	local i=3 n f
	for n in $SSDC_STATUS_FIELDS; do
		if [ "$n" = "$2" ]; then
			read -ra f <<<"$(dmsetup status "$1")"
			echo "${f[i]}"
			return 0
		fi
		i=$((i + 1))
	done
	echo "ssdc_stat: no field $2" >&2
	return 1
}

# ssdc_wait_stat NAME FIELD N: waits up to 30 s for a status field to
# reach N (bios in the background, mapped one by one); the caller then
# asserts the value.
ssdc_wait_stat() {
	local i
	for i in $(seq 1 300); do
		[ "$(ssdc_stat "$1" "$2")" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 0
}

# sysdir NAME: the cache's sysfs directory.
sysdir() { echo "/sys/dev/block/$(dmsetup info -c --noheadings --separator : -o major,minor "$1")/ssdcache"; }

# ssdc_sysstat NAME COUNTER: one file of the cache's sysfs stats/.
ssdc_sysstat() { cat "$(sysdir "$1")/stats/$2"; }

# set_of BLOCK NR_SETS [VAR]: the set of an origin block (ssdcache_set_of()
# in include/ssdcache_format.h; 4 KiB blocks: runs of 8 share a set).
# Printed, or put in VAR (no fork).
set_of() {
	local h=$(( ((($1 >> 3) * 0x61c8864680b583eb) >> 32) & 0xffffffff ))
	if [ $# -ge 3 ]; then
		printf -v "$3" %d $(( (h * $2) >> 32 ))
	else
		echo $(( (h * $2) >> 32 ))
	fi
}

# in_own_bash NAME SCRIPT ARG...: runs SCRIPT in a bash of its own, with
# set_of, its arguments as $1...: for loops over thousands of blocks,
# which in a test's body would each pay bats' DEBUG trap (require_guest).
in_own_bash() {
	local name=$1 script=$2
	shift 2
	SSDC_SET_OF=$(declare -f set_of) bash -c 'eval "$SSDC_SET_OF"; '"$script" "$name" "$@"
}

# blocks_in_set SET NR_SETS FROM N [STEP]: the first N origin blocks
# FROM, FROM+STEP, ... (STEP 1 by default) that are in SET, one a line.
blocks_in_set() {
	in_own_bash blocks_in_set '
		set=$1 sets=$2 b=$3 n=$4 step=${5:-1}
		while [ "$n" -gt 0 ]; do
			set_of "$b" "$sets" s
			[ "$s" -ne "$set" ] || { echo "$b"; n=$((n - 1)); }
			b=$((b + step))
		done' "$@"
}

# blk DEV N: md5 of 4 KiB block N of DEV, read with O_DIRECT.
blk() { dd if="$1" bs=4k skip="$2" count=1 iflag=direct status=none | md5sum; }

# blk_sums DEV N...: blk of each block N, in order, one line each, read
# by one process (a dd and an md5sum per block cost about 0.3 s under TCG).
blk_sums() {
	local dev=$1
	shift
	python3 -S - "$dev" "$@" <<'PY'
import hashlib, mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
for b in sys.argv[2:]:
    if os.preadv(fd, [buf], int(b) * 4096) != 4096:
        sys.exit(f"blk_sums: short read of block {b}")
    print(hashlib.md5(buf).hexdigest() + "  -")
PY
}

# disk_reads DISK: reads completed by block device DISK (by its name).
disk_reads() { awk '{print $1}' "/sys/block/$1/stat"; }

# ssd_write_bios DISK FROM CMD...: runs CMD and prints the size in sectors
# of each write bio sent to block device DISK (by its name) at sector FROM
# or after meanwhile, one a line, in order: what the cache sent, before
# the block layer merges any of it. With FROM the data area's start, the
# journal's commits are left out: a disk without a volatile write cache
# has their FUA stripped before this trace point, so the flag cannot.
ssd_write_bios() {
	local disk=$1 from=$2 tr=/sys/kernel/tracing ev mm r=0
	shift 2
	ev=$tr/events/block/block_bio_queue
	[ -e "$tr/trace" ] || mount -t tracefs none "$tr" || return
	IFS=: read -r -a mm <"/sys/block/$disk/dev"
	echo 0 >"$tr/tracing_on" && : >"$tr/trace" &&
		echo "dev == $(((mm[0] << 20) | mm[1]))" >"$ev/filter" &&
		echo 1 >"$ev/enable" && echo 1 >"$tr/tracing_on" || return
	"$@" || r=$?
	echo 0 >"$tr/tracing_on"
	echo 0 >"$ev/enable"
	echo 0 >"$ev/filter"
	[ "$r" = 0 ] || return "$r"
	# ... block_bio_queue: 253,1 WS 2192 + 8 [dd]
	awk -v from="$from" '{
		for (i = 1; i <= NF; i++) if ($i == "block_bio_queue:") break
		if (i < NF && $(i + 2) ~ /W/ && $(i + 4) == "+" && $(i + 3) + 0 >= from + 0)
			print $(i + 5)
	}' "$tr/trace"
}

# read_blocks DEV BLOCK...: a 4 KiB O_DIRECT read of each block, in one
# process; fails on a short read.
read_blocks() { blk_sums "$@" >/dev/null; }

# Cached blocks in use (the part before the slash of "blocks").
ssdc_used() { ssdc_stat "$1" blocks | cut -d/ -f1; }

# fio_verify DEV BS_RANGE SIZE [EXTRA...]: random writes, crc32c verified.
fio_verify() {
	local dev=$1 bs=$2 size=$3
	shift 3
	fio --name=verify --filename="$dev" --direct=1 --ioengine=libaio \
		--iodepth=16 --rw=randwrite --bsrange="$bs" --size="$size" \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 \
		--output-format=terse "$@" >"$BATS_TEST_TMPDIR/fio.out" 2>&1 ||
		{ cat "$BATS_TEST_TMPDIR/fio.out"; return 1; }
}

# Reads a whole device once, O_DIRECT, in 4 KiB reads.
read_all() { dd if="$1" of=/dev/null bs=4k iflag=direct status=none; }

# Waits until NAME has no dirty block (after "flush"); fails after SECS.
wait_clean() {
	local name=$1 secs=${2:-120} i
	for i in $(seq 1 $((secs * 10))); do
		[ "$(ssdc_stat "$name" dirty)" = 0 ] && return 0
		sleep 0.1
	done
	fail "$name: still $(ssdc_stat "$name" dirty) dirty blocks after ${secs}s"
}
