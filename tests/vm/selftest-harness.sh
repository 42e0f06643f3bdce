#!/usr/bin/env bash
# Runs in the guest with the test-only (selftest) module, to prove that the
# harness's own checks can fail. The command itself succeeds, but it
#  - asks the target for a deliberate WARN (vm-run's kernel log check), and
#  - leaves its ssdcache device behind, so the module cannot be unloaded
#    at the end (vm-run's unload check).
# check.sh expects vm-run to fail with both problems reported.
set -eu
SSDC_REGISTRY=$(mktemp)
# shellcheck source=tests/lib/devices.bash
source "$SSDCACHE_TOP/tests/lib/devices.bash"

dev=$(nullb_create selftest0 16 fast)
cache=$(nullb_create selftest1 8 fast)
dm_create selftest "0 $(dev_sectors "$dev") ssdcache $dev $cache writethrough 1 format" >/dev/null
dmsetup message selftest 0 selftest_warn
echo "selftest-harness: warning requested, device left in place"
