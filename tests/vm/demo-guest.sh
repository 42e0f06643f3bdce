#!/usr/bin/env bash
# The demo, inside the guest (see scripts/demo.sh): ssdcache over a slow
# simulated HDD with a simulated SSD, a skewed random-read workload, and
# the speed-up over the raw HDD, measured in this run.
set -euo pipefail
SSDC_REGISTRY=$(mktemp)
# shellcheck source=tests/lib/devices.bash
source "$SSDCACHE_TOP/tests/lib/devices.bash"
trap devices_cleanup EXIT
secs=${SSDCACHE_DEMO_SECS:-15}
ctl=$SSDCACHE_TOP/build/userspace/ssdcachectl

# fio_iops DEV SECS: 4 KiB random reads, zipf 1.2 (a hot set, like a
# database's), queue depth 8, over 256 MiB.
fio_iops() {
	fio --name=demo --filename="$1" --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randread --bs=4k --size=256M --random_distribution=zipf:1.2 \
		--time_based --runtime="$2" --randrepeat=1 --output-format=json 2>/dev/null |
		python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'
}

# fio_write_iops DEV SECS: 4 KiB random writes, zipf 1.2, queue depth 8,
# an fsync every 64 writes (a database's commits).
fio_write_iops() {
	fio --name=demo --filename="$1" --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randwrite --bs=4k --size=256M --random_distribution=zipf:1.2 \
		--fsync=64 --time_based --runtime="$2" --randrepeat=1 --output-format=json 2>/dev/null |
		python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["write"]["iops"]))'
}

stat() { dmsetup status demo | awk -v f="$1" '{print $f}'; }

echo "== simulated devices"
hdd=$(nullb_create demo_hdd 512 hdd)
ssd=$(nullb_create demo_ssd 128 ssd)
echo "HDD model: $hdd, 512 MiB, queue depth 1, 4 ms per I/O"
echo "SSD model: $ssd, 128 MiB, queue depth 64, 60 us per I/O"

echo "== raw HDD: 4 KiB random reads, zipf 1.2 over 256 MiB, queue depth 8, ${secs} s"
raw_hdd=$(fio_iops "$hdd" "$secs")
echo "raw HDD: $raw_hdd IOPS"
echo "== raw HDD: 4 KiB random writes, same distribution, an fsync every 64, ${secs} s"
raw_hdd_w=$(fio_write_iops "$hdd" "$secs")
echo "raw HDD: $raw_hdd_w write IOPS"

echo "== ssdcache (write-through) over the HDD, with the SSD as cache"
table="0 $(dev_sectors "$hdd") ssdcache $hdd $ssd writethrough 1 format"
echo "table: $table"
dmsetup create demo --table "$table"
_devices_register dm demo
wait_for_dev /dev/mapper/demo
echo "warming up for $((2 * secs)) s ..."
warm=$(fio_iops /dev/mapper/demo $((2 * secs)))
echo "during warm-up: $warm IOPS, cache blocks used: $(stat 7)"
dmsetup message demo 0 reset_stats
echo "== measured run, ${secs} s"
cached=$(fio_iops /dev/mapper/demo "$secs")
hits=$(stat 9) misses=$(stat 10)
echo "ssdcache: $cached IOPS"
python3 - "$raw_hdd" "$cached" "$hits" "$misses" <<'PY'
import sys
hdd, cached, hits, misses = (float(x) for x in sys.argv[1:])
print(f"read hit ratio: {hits / max(hits + misses, 1):.1%} ({int(hits)} hits, {int(misses)} misses)")
print(f"speed-up over the raw HDD: {cached / hdd:.1f}x")
PY
echo "== write-back: the same random writes through the cache"
dmsetup message demo 0 mode writeback
dmsetup message demo 0 reset_stats
cached_w=$(fio_write_iops /dev/mapper/demo "$secs")
echo "ssdcache (write-back): $cached_w write IOPS, $(stat 8) dirty blocks," \
	"$(stat 24) flushes and $(stat 21) journal commits"
python3 -c "import sys; print(f'write speed-up over the raw HDD: {$cached_w / max($raw_hdd_w, 1):.1f}x')"
echo "== writing the dirty blocks back (flush message), in origin-LBA order"
t0=$(date +%s.%N)
dmsetup message demo 0 flush
for _ in $(seq 1 1800); do
	[ "$(stat 8)" = 0 ] && break
	sleep 0.1
done
echo "flush: $(stat 20) blocks written back in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s," \
	"$(stat 8) dirty left"
echo "== status"
"$ctl" status demo
dmsetup table demo
echo "(status fields: Documentation/ssdcache.rst)"
echo "== statistics since the write-back phase began (ssdcachectl stats, from sysfs)"
"$ctl" stats demo
