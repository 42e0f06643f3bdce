#!/usr/bin/env bash
# Runs in the guest with the test-only (selftest) module, to prove that the
# harness's own checks can fail. The command itself succeeds, but it
#  - asks the target for a deliberate WARN (vm-run's kernel log check), and
#  - leaves its ssdcache device behind, so the module cannot be unloaded
#    at the end (vm-run's unload check);
# and it shows that selftest_verify_map, make stress's check of the block
# map on the SSD against RAM, passes a sound map and fails a torn one,
# and that a block-map table of more than INT_MAX bytes is allocated.
# check.sh expects vm-run to fail with both problems reported.
set -eu
SSDC_REGISTRY=$(mktemp)
# shellcheck source=tests/lib/devices.bash
source "$SSDCACHE_TOP/tests/lib/devices.bash"

dev=$(nullb_create selftest0 16 fast)
cache=$(nullb_create selftest1 8 fast)
dm_create selftest "0 $(dev_sectors "$dev") ssdcache $dev $cache writethrough 1 format" >/dev/null
# The map check of make stress: a sound map passes, a corrupted one
# (both copies of page 0 torn) fails. check.sh looks for both lines.
dd if=/dev/urandom of=/dev/mapper/selftest bs=4k count=512 oflag=direct status=none
dd if=/dev/mapper/selftest of=/dev/null bs=4k count=1024 iflag=direct status=none
dmsetup suspend selftest
dmsetup message selftest 0 selftest_verify_map &&
	echo "selftest-harness: verify_map passes a sound map"
python3 "$SSDCACHE_TOP/tests/lib/ssdc_meta.py" flip-map "$cache" 0
dmsetup message selftest 0 selftest_verify_map 2>/dev/null ||
	echo "selftest-harness: verify_map fails a torn map"
dmsetup resume selftest
# A block-map table past the INT_MAX bytes kvmalloc() takes (a cache of
# 2^28 blocks): check.sh looks for this line.
dmsetup message selftest 0 selftest_big_table &&
	echo "selftest-harness: a table past INT_MAX bytes is allocated"
dmsetup message selftest 0 selftest_warn
echo "selftest-harness: warning requested, device left in place"
