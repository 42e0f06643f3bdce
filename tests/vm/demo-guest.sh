#!/usr/bin/env bash
# The demo, inside the guest (see scripts/demo.sh).
set -euo pipefail
SSDC_REGISTRY=$(mktemp)
# shellcheck source=tests/lib/devices.bash
source "$SSDCACHE_TOP/tests/lib/devices.bash"
trap devices_cleanup EXIT
secs=${SSDCACHE_DEMO_SECS:-15}
ctl=$SSDCACHE_TOP/build/userspace/ssdcachectl

# fio_iops DEV: 4 KiB random reads at queue depth 8 over a 64 MiB hot set.
fio_iops() {
	fio --name=demo --filename="$1" --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randread --bs=4k --size=64M --time_based --runtime="$secs" \
		--randrepeat=1 --output-format=json 2>/dev/null |
		python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'
}

echo "== simulated devices"
hdd=$(nullb_create demo_hdd 512 hdd)
ssd=$(nullb_create demo_ssd 128 ssd)
echo "HDD model: $hdd, 512 MiB, queue depth 1, 4 ms per I/O"
echo "SSD model: $ssd, 128 MiB, queue depth 64, 60 us per I/O"
dd if=/dev/urandom of="$hdd" bs=1M count=64 oflag=direct status=none

echo "== ssdcache over the HDD"
table="0 $(dev_sectors "$hdd") ssdcache $hdd"
echo "table: $table"
dev=$(dm_create demo "$table")
echo "ssdcachectl list: $("$ctl" list | tr '\n' ' ')"
"$ctl" status demo

echo "== fio: 4 KiB random reads, queue depth 8, ${secs} s each"
raw_hdd=$(fio_iops "$hdd")
raw_ssd=$(fio_iops "$ssd")
cached=$(fio_iops "$dev")
printf '%-28s %8s IOPS\n' "raw HDD model" "$raw_hdd" "raw SSD model" "$raw_ssd" \
	"ssdcache over the HDD" "$cached"
python3 - "$raw_hdd" "$cached" <<'PY'
import sys
hdd, cached = (float(x) for x in sys.argv[1:])
print(f"ssdcache / raw HDD: {cached / hdd:.2f}x")
PY
echo "(This version of the target is the pass-through foundation: every I/O"
echo " goes to the origin, so the expected ratio is about 1x. Caching on the"
echo " SSD comes with the cache target.)"
"$ctl" status demo
dmsetup table demo
