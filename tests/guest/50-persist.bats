#!/usr/bin/env bats
# What survives: a reference model through reloads, a warm restart, races
# between fills and writes, and power cuts in the middle of a workload.

load ../lib/common

REF=$SSDCACHE_TOP/tests/lib/refmodel.py

@test "persist: reference model through I/O, reload and detach, both modes" {
	require_guest
	origin=$(nullb_create rm_o 32 fast)
	cache=$(nullb_create rm_c 4 fast)
	shadow=$BATS_TEST_TMPDIR/shadow
	seed=1
	for mode in writethrough writearound; do
		dm=$(ssdc_create rm "$origin" "$cache" $mode format force)
		python3 -S "$REF" run "$dm" "$shadow" 1500 $seed
		dm_remove rm
		dm=$(ssdc_create rm "$origin" "$cache" $mode)
		[ "$(ssdc_used rm)" -gt 0 ] || fail "$mode: nothing stayed cached"
		python3 -S "$REF" compare "$dm" "$shadow"
		python3 -S "$REF" run "$dm" "$shadow" 500 $((seed + 100))
		dm_remove rm
		python3 -S "$REF" compare "$origin" "$shadow"
		seed=$((seed + 1))
	done
}

@test "persist: warm restart keeps the hit ratio" {
	require_guest
	origin=$(nullb_create wr_o 64 fast)
	cache=$(nullb_create wr_c 16 fast)
	dm=$(ssdc_create wr "$origin" "$cache" writethrough format)
	pass() { dd if="$dm" of=/dev/null bs=4k count=512 skip=1024 iflag=direct status=none; }
	pass
	ssdc_quiesce wr
	dmsetup message wr 0 reset_stats
	pass
	before=$(ssdc_stat wr read_hits)
	assert_eq 512 "$before" "hits before the restart"
	dm_remove wr
	dm=$(ssdc_create wr "$origin" "$cache" writethrough)
	dmsetup message wr 0 reset_stats
	pass
	assert_eq "$before" "$(ssdc_stat wr read_hits)" "hits after the restart"
}

@test "persist: concurrent readers and writers on the same blocks never install stale data" {
	require_guest
	origin=$(nullb_create rc_o 16 fast)
	cache=$(nullb_create rc_c 8 fast)
	dm=$(ssdc_create rc "$origin" "$cache" writethrough format)
	fio --output-format=terse \
		--name=writer --filename="$dm" --direct=1 --ioengine=libaio --iodepth=4 \
		--rw=randwrite --bs=4k --size=1M --loops=20 --verify=crc32c \
		--verify_backlog=32 --verify_fatal=1 --randrepeat=0 \
		--name=reader1 --filename="$dm" --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randread --bs=4k --size=1M --loops=60 --randrepeat=0 \
		--name=reader2 --filename="$dm" --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randread --bs=16k --size=1M --loops=30 --randrepeat=0 >"$BATS_TEST_TMPDIR/fio.out" ||
		{ cat "$BATS_TEST_TMPDIR/fio.out"; false; }
	[ "$(ssdc_stat rc read_hits)" -gt 0 ]
	sleep 1
	assert_eq "$(dev_sum "$origin")" "$(dev_sum "$dm")" "cache vs origin"
	dm_remove rc
	dm=$(ssdc_create rc "$origin" "$cache" writethrough)
	assert_eq "$(dev_sum "$origin")" "$(dev_sum "$dm")" "after reload"
}

# power_cut MODE SECONDS: a workload on a cache over two null_blk disks with
# volatile write caches, cut off SECONDS after its first write reached
# the cache (fio alone takes seconds to start under TCG); then every
# block read through the reloaded cache must equal the origin's.
power_cut() {
	local mode=$1 secs=$2 st i
	origin=$(nullb_create pc_o 32 fast 4)
	cache=$(nullb_create pc_c 8 fast 4)
	dm=$(ssdc_create pc "$origin" "$cache" $mode format)
	fio --name=load --filename="$dm" --direct=1 --ioengine=libaio --iodepth=16 \
		--rw=randrw --bsrange=4k-64k --size=32M --time_based --runtime=60 \
		--fsync=32 --randrepeat=0 --output-format=terse >/dev/null 2>&1 &
	fio_pid=$!
	# Completed writes of the cache's device: field 5 of its stat file.
	for i in $(seq 600); do
		read -ra st <"/sys/block/$(basename "$(readlink -f "$dm")")/stat"
		[ "${st[4]}" -gt 0 ] && break
		sleep 0.1
	done
	[ "${st[4]}" -gt 0 ] || fail "$mode: no write completed in 60 s"
	sleep "$secs"
	nullb_power_off pc_c
	nullb_power_off pc_o
	wait "$fio_pid" || true
	dmsetup remove --retry pc
	nullb_power_on pc_o
	nullb_power_on pc_c
	dm=$(ssdc_create pc "$origin" "$cache" $mode)
	# Warm after the crash: blocks committed before the cut are still cached.
	[ "$(ssdc_used pc)" -gt 0 ] || fail "$mode, cut after ${secs}s: the cache came back cold"
	read_all "$dm"
	assert_eq "$(dev_sum "$origin")" "$(dev_sum "$dm")" "$mode, cut after ${secs}s"
	dm_remove pc
	devices_cleanup
}

@test "persist: power cut in writethrough: every block reads as the origin's" {
	require_guest
	for secs in 2 6; do
		power_cut writethrough $secs
	done
}

@test "persist: power cut in writearound: every block reads as the origin's" {
	require_guest
	for secs in 3 7; do
		power_cut writearound $secs
	done
}

# Completed flush requests of a disk (/sys/block/NAME/stat, field 16).
disk_flushes() { awk '{print $16}' "/sys/block/$1/stat"; }

@test "persist: write-back fsyncs flush the origin only after writes to it, and lose nothing" {
	require_guest
	origin=$(nullb_create of_o 32 fast 4)
	cache=$(nullb_create of_c 8 fast 4)
	dm=$(ssdc_create of "$origin" "$cache" writeback format writeback_idle_ms 0 dirty_high 100)
	blocks=$BATS_TEST_TMPDIR/blocks sector=$BATS_TEST_TMPDIR/sector
	head -c 131072 /dev/urandom >"$blocks"
	head -c 512 /dev/urandom >"$sector"
	# sync_write FILE BS SKIP SEEK: one O_DIRECT write, then fsync.
	sync_write() {
		dd if="$1" of="$dm" bs="$2" count=1 skip="$3" seek="$4" \
			oflag=direct conv=fsync,notrunc status=none
	}
	f0=$(disk_flushes of_o)
	for i in $(seq 0 31); do
		sync_write "$blocks" 4096 "$i" $((256 + i))
	done
	assert_eq 32 "$(ssdc_stat of dirty)" "dirty blocks"
	[ "$(ssdc_stat of flushes)" -ge 32 ] || fail "$(ssdc_stat of flushes) flushes through commits"
	f1=$(disk_flushes of_o)
	# The first commit of a new table flushes the origin once.
	[ $((f1 - f0)) -le 1 ] || fail "32 fsyncs of cached blocks flushed the origin $((f1 - f0)) times"
	# A 512-byte write goes to the origin: its fsync must flush the origin.
	sync_write "$sector" 512 0 8003
	f2=$(disk_flushes of_o)
	[ "$f2" -gt "$f1" ] || fail "the fsync after a write to the origin did not flush it"
	# The cleaner flushes the origin after its writes: that flush counts,
	# and the next fsync of a cached block needs none.
	dmsetup message of 0 flush
	wait_clean of
	f3=$(disk_flushes of_o)
	[ "$f3" -gt "$f2" ] || fail "the cleaner did not flush the origin"
	sync_write "$blocks" 4096 0 300
	assert_eq 1 "$(ssdc_stat of dirty)" "dirty blocks after the cleaning"
	assert_eq "$f3" "$(disk_flushes of_o)" "origin flushes after an fsync that follows the cleaning"
	# Power cut: both volatile caches are lost; every fsynced write stays.
	nullb_power_off of_c
	nullb_power_off of_o
	dmsetup remove --retry of
	nullb_power_on of_o
	nullb_power_on of_c
	dm=$(ssdc_create of "$origin" "$cache" writeback)
	assert_eq "$(md5sum <"$blocks")" \
		"$(dd if="$dm" bs=4k skip=256 count=32 iflag=direct status=none | md5sum)" \
		"fsynced blocks in the cache"
	assert_eq "$(head -c 4096 "$blocks" | md5sum)" \
		"$(dd if="$dm" bs=4k skip=300 count=1 iflag=direct status=none | md5sum)" \
		"the block fsynced after the cleaning"
	assert_eq "$(md5sum <"$sector")" \
		"$(dd if="$dm" bs=512 skip=8003 count=1 iflag=direct status=none | md5sum)" \
		"fsynced write to the origin"
}

@test "persist: an fsync after dirty blocks rewritten in place flushes the SSD alone, and they survive a power cut" {
	require_guest
	origin=$(nullb_create pr_o 32 fast 4)
	cache=$(nullb_create pr_c 8 fast 4)
	dm=$(ssdc_create pr "$origin" "$cache" writeback format writeback_idle_ms 0 dirty_high 100)
	d=$BATS_TEST_TMPDIR/d
	head -c 16384 /dev/urandom >"$d"
	dd if="$d" of="$dm" bs=4k count=4 seek=700 oflag=direct conv=fsync status=none
	ssdc_quiesce pr	# every entry durable: the next fsync has nothing to commit
	# null_blk writes over a sector of its media go to the media, past its
	# volatile cache: the four cache blocks are discarded on the SSD
	# itself, so that the rewrite below is lost at a power cut unless a
	# flush reached the SSD. Each holds the block written above.
	offs=$(python3 -S - "$d" "$cache" <<'PY'
import os, sys
data = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # the media, no stale page
img = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
for i in range(4):
    off = img.find(data[i * 4096:(i + 1) * 4096])
    assert off >= 0 and off % 4096 == 0, f"block {i} not found on the SSD"
    print(off)
PY
) || fail "the cache blocks were not found on the SSD"
	for o in $offs; do
		blkdiscard -f -o "$o" -l 4096 "$cache"
	done
	d0=$(ssdc_sysstat pr direct_flushes) f0=$(ssdc_stat pr flushes) o0=$(disk_flushes pr_o)
	c0=$(disk_flushes pr_c)
	head -c 16384 /dev/urandom >"$d"
	dd if="$d" of="$dm" bs=4k count=4 seek=700 oflag=direct conv=fsync status=none
	# The SSD's power cut at once, before the periodic commit (a second
	# away) flushes it: only the fsync's flush has put the rewrite on its
	# media.
	c1=$(disk_flushes pr_c)
	nullb_power_off pr_c
	o1=$(disk_flushes pr_o)
	nullb_power_off pr_o
	d1=$(ssdc_sysstat pr direct_flushes) f1=$(ssdc_stat pr flushes)
	dmsetup remove --retry pr
	nullb_power_on pr_o
	nullb_power_on pr_c
	dm=$(ssdc_create pr "$origin" "$cache" writeback)
	assert_eq 4 "$(ssdc_stat pr dirty)" "dirty blocks after the power cut"
	assert_eq "$(md5sum <"$d")" \
		"$(dd if="$dm" bs=4k skip=700 count=4 iflag=direct status=none | md5sum)" \
		"the rewrite fsynced last"
	assert_eq $((d0 + 1)) "$d1" "flushes sent to the SSD alone"
	assert_eq "$f0" "$f1" "flushes through a commit"
	[ "$c1" -gt "$c0" ] || fail "no flush reached the SSD"
	assert_eq "$o0" "$o1" "origin flushes"
}

@test "persist: write-through writes to cached blocks do not flush the origin each" {
	require_guest
	origin=$(nullb_create ow_o 32 fast 4)
	cache=$(nullb_create ow_c 8 fast 4)
	dm=$(ssdc_create ow "$origin" "$cache" writethrough format sequential_cutoff 0)
	# 256 KiB at 4 MiB, written and read once: all cached.
	dd if=/dev/urandom of="$dm" bs=4k count=64 seek=1024 oflag=direct status=none
	dd if="$dm" of=/dev/null bs=4k count=64 skip=1024 iflag=direct status=none
	ssdc_quiesce ow	# the fills are journaled as VALID
	dmsetup message ow 0 reset_stats
	dd if="$dm" of=/dev/null bs=4k count=64 skip=1024 iflag=direct status=none
	assert_eq 64 "$(ssdc_stat ow read_hits)" "cached blocks"
	w0=$(ssdc_stat ow write_hits) f0=$(disk_flushes ow_o) t0=$(date +%s)
	# 64 rewrites, one at a time: each waits for a commit that journals
	# its block's invalidation. Such commits flush both devices at most
	# once per second (they flushed the origin each before).
	fio --name=rw --filename="$dm" --direct=1 --ioengine=psync --rw=randwrite \
		--bs=4k --offset=4m --size=256k --randrepeat=0 --output-format=terse >/dev/null
	f1=$(disk_flushes ow_o) t1=$(date +%s)
	assert_eq 64 $(( $(ssdc_stat ow write_hits) - w0 )) "rewrites of cached blocks"
	[ $((f1 - f0)) -le $((t1 - t0 + 2)) ] ||
		fail "$((f1 - f0)) origin flushes for 64 writes in $((t1 - t0 + 1)) s or less"
	# The rewritten blocks are cached again (before a whole-device read
	# pushes them out).
	dmsetup message ow 0 reset_stats
	dd if="$dm" of=/dev/null bs=4k count=64 skip=1024 iflag=direct status=none
	assert_eq 64 "$(ssdc_stat ow read_hits)" "hits on the rewritten blocks"
	assert_eq "$(dev_sum "$origin")" "$(dev_sum "$dm")" "through the cache vs origin"
}

@test "persist: a block journaled after a checkpoint that found it new survives the next checkpoint" {
	require_guest
	origin=$(nullb_create jc_o 32 fast)
	cache=$(nullb_create jc_c 16 fast)
	# 16 MiB of cache: a journal of 256 blocks, checkpointed at 128 used.
	dm=$(ssdc_create jc "$origin" "$cache" writeback format writeback_idle_ms 0 \
		dirty_high 100 readahead_kb 0)
	udevadm settle
	udev_pause
	# Block 200: a clean copy, its entry journaled.
	read_blocks "$dm" 200
	ssdc_quiesce jc
	# FUA writes, one commit of one journal block each, until 127 are
	# used. Then, within the second before the next commit may sync:
	# block 3000 written (dirty, its entry not journaled yet: the data is
	# not durable), and a partial write to block 200, which waits for a
	# commit that journals the copy's eviction. That commit does not sync
	# (the last did, just before), writes the 128th block and checkpoints:
	# block 3000's page is written with the entry as it is durable, none.
	# The next commit syncs and journals block 3000; the checkpoint after
	# it must write its page again before it drops that journal.
	python3 -S - "$dm" "$BATS_TEST_TMPDIR/x" <<'PY'
import mmap, os, sys
sys.path.insert(0, os.environ["SSDCACHE_TOP"] + "/tests/lib")
import dmioctl
dev, out = sys.argv[1:3]
names = os.environ["SSDC_STATUS_FIELDS"].split()
def stat(name):
    f = dmioctl.status("jc").split()
    return int(f[3 + names.index(name)])
fua = os.open(dev, os.O_WRONLY | os.O_DIRECT | os.O_DSYNC)
fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
# The suspend before checkpointed: the journal was empty then.
j0, c0 = stat("journal_blocks"), stat("checkpoints")
b = 1000
while stat("journal_blocks") - j0 < 127:
    buf[:] = os.urandom(4096)
    os.pwritev(fua, [buf], b * 4096)
    b += 1
if stat("journal_blocks") - j0 != 127 or stat("checkpoints") != c0:
    sys.exit(f"setup: {stat('journal_blocks') - j0} journal blocks, "
             f"{stat('checkpoints') - c0} checkpoints")
x = os.urandom(4096)
buf[:] = x
os.pwritev(fd, [buf], 3000 * 4096)
os.pwritev(fd, [memoryview(buf)[:512]], 200 * 4096)
if stat("checkpoints") != c0 + 1:
    sys.exit(f"setup: {stat('checkpoints') - c0} checkpoints, not 1")
open(out, "wb").write(x)
PY
	# The sync, then the next checkpoint, then a load.
	sleep 2
	ssdc_quiesce jc
	udev_resume
	want=$(md5sum <"$BATS_TEST_TMPDIR/x")
	dirty=$(ssdc_stat jc dirty)
	dm_remove jc
	dm=$(ssdc_create jc "$origin" "$cache" writeback writeback_idle_ms 0 dirty_high 100)
	assert_eq "$dirty" "$(ssdc_stat jc dirty)" "dirty blocks after the load"
	assert_eq "$want" "$(blk "$dm" 3000)" "block 3000 after the load"
}

@test "persist: the journal holds four blocks per map page, and a checkpoint writes adjacent map pages as one request" {
	require_guest
	origin=$(nullb_create cp_o 256 fast)
	cache=$(nullb_create cp_c 160 fast)
	dm=$(ssdc_create cp "$origin" "$cache" writethrough format readahead_kb 0)
	udevadm settle
	udev_pause
	sb() { python3 -S "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" get-sb "$cache" "$1"; }
	cs=$(sb cache_sectors) bs=$(sb block_sectors) pages=$(sb map_pages)
	want=$((4 * (cs / bs / 504)))
	[ "$want" -ge $(((cs >> 10) / 8)) ] || want=$(((cs >> 10) / 8))
	[ "$want" -ge 256 ] || want=256
	[ "$want" -le 16384 ] || want=16384
	# 160 MiB of cache: ~81 map pages, a journal of ~324 blocks (256 before).
	[ "$want" -gt 256 ] || fail "setup: $want journal blocks"
	assert_eq "$want" "$(sb journal_blocks)" "journal blocks"
	# One block cached in each map page's sets: every page changes.
	blocks=$(python3 -S - "$pages" "$(sb nr_blocks)" "$(sb set_shift)" <<'PY'
import os, sys
sys.path.insert(0, os.environ["SSDCACHE_TOP"] + "/tests/lib")
from ssdc_meta import set_of
pages, nr, shift = map(int, sys.argv[1:4])
sets, per_page, want, run = nr // 56, 504 // 56, {}, 0
while len(want) < pages:
    pg = set_of(run << shift, sets, shift) // per_page
    want.setdefault(pg, run << shift)
    run += 1
print(" ".join(str(b) for b in want.values()))
PY
)
	read_blocks "$dm" $blocks
	# The fills written: a suspend then writes the map, nothing else.
	used=0
	for _ in $(seq 50); do
		sleep 0.2
		[ "$(ssdc_used cp)" != "$used" ] || break
		used=$(ssdc_used cp)
	done
	[ "$used" -ge "$pages" ] || fail "$used blocks cached, not one in each of $pages map pages"
	c0=$(ssdc_stat cp checkpoints) w0=$(dev_writes "$cache" | cut -d" " -f1)
	ssdc_quiesce cp
	w=$(($(dev_writes "$cache" | cut -d" " -f1) - w0))
	assert_eq $((c0 + 1)) "$(ssdc_stat cp checkpoints)" "checkpoints"
	# $pages pages in one copy, side by side: a request per 32 pages (one
	# bio each), with a journal commit and the superblocks besides.
	[ "$w" -le $((pages / 4)) ] || fail "$w SSD writes for a checkpoint of $pages map pages"
	udev_resume
	dm_remove cp
	dm=$(ssdc_create cp "$origin" "$cache" writethrough)
	assert_eq "$used" "$(ssdc_used cp)" "blocks cached after a reload"
}
