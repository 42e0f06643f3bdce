# shellcheck shell=bash
# Loaded by every guest bats suite: device helpers and the teardown that
# cleans up after each test, failed or not.

SSDCACHE_TOP=${SSDCACHE_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=tests/lib/devices.bash
source "$SSDCACHE_TOP/tests/lib/devices.bash"

SSDCACHECTL=$SSDCACHE_TOP/build/userspace/ssdcachectl

teardown() {
	devices_cleanup
}

# Runs only inside the test VM: refuse to touch a real machine's devices.
require_guest() {
	[ -n "${SSDCACHE_RESULTS:-}" ] || skip "guest-only test (run it through scripts/vm-run)"
}

# Kernel log lines printed since the mark taken by dmesg_mark.
dmesg_mark() { DMESG_MARK=$(dmesg | wc -l); }
dmesg_since() { dmesg | tail -n +"$((DMESG_MARK + 1))"; }

# Fails the test with a message.
fail() {
	echo "$*" >&2
	return 1
}

# assert_eq EXPECTED ACTUAL [WHAT]
assert_eq() {
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}
