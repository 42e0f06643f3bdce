#!/usr/bin/env bash
# make demo: build, boot the newest installed kernel in a VM, put ssdcache
# over a simulated HDD (with a simulated SSD beside it), run a short fio
# workload on the raw HDD and through ssdcache, and print what happened.
#
# SSDCACHE_KERNEL=<release> picks another kernel; SSDCACHE_DEMO_SECS the
# length of each fio run (default 15).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kver=${SSDCACHE_KERNEL:-$(scripts/kernels.sh | tail -n 1)}
[ -n "$kver" ] || { echo "demo: no kernel with image and headers: run scripts/deps.sh" >&2; exit 1; }

echo "demo: building for $kver"
scripts/build-module.sh "$kver"
make -s tool
out=$top/build/demo
rm -rf "$out"
echo "demo: booting $kver under TCG (about 20 s), then about $((4 * ${SSDCACHE_DEMO_SECS:-15})) s of workload"
scripts/vm-run -k "$kver" -o "$out" -- \
	env SSDCACHE_DEMO_SECS="${SSDCACHE_DEMO_SECS:-15}" tests/vm/demo-guest.sh
echo "demo: the full output is in $out/output.log"
