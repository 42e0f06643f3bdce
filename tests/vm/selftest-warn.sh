#!/usr/bin/env bash
# Runs in the guest with the test-only (selftest) module: asks the target
# for a deliberate WARN. The command itself succeeds, so the run may only
# fail through vm-run's kernel log check: this proves that check can fail.
set -eu
SSDC_REGISTRY=$(mktemp)
# shellcheck source=tests/lib/devices.bash
source "$SSDCACHE_TOP/tests/lib/devices.bash"
trap devices_cleanup EXIT

dev=$(nullb_create selftest0 16 fast)
dm_create selftest "0 $(dev_sectors "$dev") ssdcache $dev" >/dev/null
dmsetup message selftest 0 selftest_warn
echo "selftest-warn: warning requested"
