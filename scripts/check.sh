#!/usr/bin/env bash
# make check: build for every installed kernel, sparse, host tests, then
# ONE VM per kernel running every guest suite, plus the harness self-test.
# Every step counts as a test; the last line is "N passed, N failed" (with
# ", N skipped" when any were). Exit status 0 only when nothing failed.
#
# Environment: SSDCACHE_KERNELS="k1 k2" limits the kernels;
# SSDCACHE_GUEST_SUITES="tests/guest/20-passthrough.bats" limits the suites.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
res=$top/build/check
rm -rf "$res"
mkdir -p "$res"
results=$res/results.txt
: >"$results"
t0=$(date +%s)
steal0=$(scripts/host-steal)

record() {
	echo "$1 $2" >>"$results"
	printf '%-4s %s\n' "$1" "$2"
}

# step NAME COMMAND...: one test that passes when COMMAND does.
step() {
	local name=$1 log
	shift
	log=$res/step-$(printf '%s' "$name" | tr -c 'A-Za-z0-9.-' _).log
	if "$@" >"$log" 2>&1; then
		record PASS "$name"
	else
		record FAIL "$name"
		{ echo "$name"; tail -n 40 "$log" | sed 's/^/    /'; } | tee -a "$res/failures.txt" | tail -n +2
	fi
}

# tap_diag N TAPFILE: the diagnostics (bats' "# " lines) of the Nth
# result in TAPFILE, at most 40 lines, indented.
tap_diag() {
	awk -v n="$1" '
		/^(not )?ok [0-9]+/ { i++; on = (i == n); next }
		on && /^#/ && shown < 40 { print "    " $0; shown++ }' "$2"
}

# ingest PREFIX TAPFILE: one test per TAP result; each failure is shown
# with its diagnostics, under its line and again in the summary (CI may
# show only part of the output).
ingest() {
	local st rest i=0 diag
	while read -r st rest; do
		record "$st" "$rest"
		i=$((i + 1))
		[ "$st" = FAIL ] || continue
		diag=$(tap_diag "$i" "$2")
		[ -n "$diag" ] || continue
		echo "$diag"
		{ echo "$rest"; echo "$diag"; } >>"$res/failures.txt"
	done < <(scripts/tap-results "$1" <"$2")
	return 0
}

summary() {
	local p f s
	p=$(grep -c '^PASS' "$results")
	f=$(grep -c '^FAIL' "$results")
	s=$(grep -c '^SKIP' "$results")
	echo
	# shellcheck disable=SC2086
	echo "check: results in $res ($(( $(date +%s) - t0 )) s," \
		"host CPU steal $(scripts/host-steal $steal0)%)"
	if [ "$f" != 0 ]; then
		if [ -s "$res/failures.txt" ]; then
			echo "diagnostics of the failed tests:"
			cat "$res/failures.txt"
		fi
		echo "failed:"
		grep '^FAIL' "$results" | sed 's/^FAIL /  /'
	fi
	if [ "$s" -gt 0 ]; then
		echo "$p passed, $f failed, $s skipped"
	else
		echo "$p passed, $f failed"
	fi
	[ "$f" = 0 ]
	exit $?
}

kernels=${SSDCACHE_KERNELS:-$(scripts/kernels.sh)}
suites=${SSDCACHE_GUEST_SUITES:-tests/guest}
if [ -z "$kernels" ]; then
	record FAIL "kernels: none has both an image and headers (run scripts/deps.sh)"
	summary
fi
echo "check: kernels:" $kernels
# vng shares the host's root with the guests over virtio-fs when it finds
# virtiofsd (scripts/deps.sh builds it), else over 9p, slower.
if command -v virtiofsd >/dev/null; then
	echo "check: guests mount the host's root over virtio-fs"
else
	echo "check: guests mount the host's root over 9p (no virtiofsd: slower)"
fi

for k in $kernels; do
	step "[$k] build: dm-ssdcache.ko, zero warnings" scripts/build-module.sh "$k"
	step "[$k] sparse: module code clean (C=2)" scripts/build-module.sh "$k" --sparse
	step "[$k] build: test-only selftest module" scripts/build-module.sh "$k" --selftest
done
step "[host] build: ssdcachectl with -Wall -Wextra -Werror" make -s tool
step "[host] checkpatch --strict: module and format header" scripts/checkpatch.sh

# The host suites run in two groups side by side: the VMs have not
# started yet, and bats keeps to one CPU. The suites that run make on
# build/ (an install, the packaging) go in the first group, one after the
# other; every other suite goes in the second.
host_make="tests/host/harness.bats tests/host/packaging.bats tests/host/tool.bats"
host_rest=$(ls tests/host/*.bats | grep -v -x -F "$(printf '%s\n' $host_make)")
# shellcheck disable=SC2086
bats --tap $host_make >"$res/host-make.tap" 2>&1 &
# shellcheck disable=SC2086
bats --tap $host_rest >"$res/host-rest.tap" 2>&1
wait
ingest "[host]" "$res/host-rest.tap"
ingest "[host]" "$res/host-make.tap"

# vm_checks KERNEL: the guest suites, the reboot test and the harness
# self-test of one kernel, each in its own VM boot.
vm_checks() {
	local k=$1 h rc
	if [ ! -f "build/$k/dm-ssdcache.ko" ]; then
		record FAIL "[$k] guest suites: no module was built"
		return
	fi
	echo "check: booting $k for the guest suites"
	# CI allows 90 minutes for everything: past 70 the guest suites are
	# stopped, so that the run still ends with its results rather than
	# CI's timeout. A test stuck for 15 minutes (the longest takes about
	# 3.5 here) fails alone: bats kills it and goes on (BATS_TEST_TIMEOUT).
	# bats -T puts each test's time in the TAP output (vm-*/output.log).
	# shellcheck disable=SC2086
	scripts/vm-run -k "$k" -t 4200 -o "$res/vm-$k" -- \
		env BATS_TEST_TIMEOUT=900 bats -T --tap $suites \
		>"$res/guest-$k.out" 2>"$res/vm-$k.err"
	ingest "[$k]" "$res/vm-$k/output.log"
	h=$(cat "$res/vm-$k/harness" 2>/dev/null || echo unfinished)
	if [ "$h" = ok ]; then
		record PASS "[$k] harness: guest finished, kernel log clean, module unloaded"
	else
		record FAIL "[$k] harness: $(echo $h)"
		tail -n 80 "$res/vm-$k.err" | sed 's/^/    /'
	fi

	echo "check: booting $k twice: warm restart across a reboot, assembled by udev"
	mkdir -p "$res/reboot-$k/disks"
	# Both boots share one results directory: the disks live there.
	if scripts/vm-run -k "$k" -o "$res/reboot-$k" -- \
		tests/vm/reboot.sh write "$res/reboot-$k/disks" >"$res/reboot-$k.out" 2>&1 &&
		scripts/vm-run -k "$k" -o "$res/reboot-$k" -- \
		tests/vm/reboot.sh verify "$res/reboot-$k/disks" >>"$res/reboot-$k.out" 2>&1; then
		record PASS "[$k] reboot: remove --keep-dirty, reboot: udev assembles the cache warm and exact"
	else
		record FAIL "[$k] reboot: write-back cache after a reboot"
		tail -n 40 "$res/reboot-$k.out" | sed 's/^/    /'
	fi
	rm -f "$res/reboot-$k/disks/"*.img

	if [ -f "build/$k-selftest/dm-ssdcache.ko" ]; then
		echo "check: booting $k for the harness self-test"
		scripts/vm-run -k "$k" --selftest -o "$res/selftest-$k" -- \
			tests/vm/selftest-harness.sh >"$res/selftest-$k.out" 2>"$res/selftest-$k.err"
		rc=$?
		h=$(cat "$res/selftest-$k/harness" 2>/dev/null)
		if [ "$rc" = 90 ] && [[ "$h" == *kernel-log* ]] &&
			grep -q 'deliberate warning' "$res/selftest-$k.err"; then
			record PASS "[$k] harness: a deliberate WARN in the guest fails the run"
		else
			record FAIL "[$k] harness: a deliberate WARN was not caught (vm-run exit $rc, harness '$h')"
			tail -n 40 "$res/selftest-$k.err" | sed 's/^/    /'
		fi
		if grep -q 'verify_map passes a sound map' "$res/selftest-$k.out" &&
			grep -q 'verify_map fails a torn map' "$res/selftest-$k.out"; then
			record PASS "[$k] selftest map check: passes a sound block map, fails a torn one"
		else
			record FAIL "[$k] selftest map check: sound map not passed or torn map not caught"
			tail -n 20 "$res/selftest-$k.out" | sed 's/^/    /'
		fi
		if grep -q 'a table past INT_MAX bytes is allocated' "$res/selftest-$k.out"; then
			record PASS "[$k] selftest big table: a block-map table past INT_MAX bytes (a cache of 2^28 blocks) is allocated"
		else
			record FAIL "[$k] selftest big table: a table past INT_MAX bytes was not allocated"
			grep big_table "$res/selftest-$k/kernel.log" 2>/dev/null | sed 's/^/    /'
		fi
		if [[ "$h" == *unload* ]] && grep -q 'could not be unloaded' "$res/selftest-$k.err"; then
			record PASS "[$k] harness: a device left behind fails the run (module unload check)"
		else
			record FAIL "[$k] harness: a leaked device was not caught (harness '$h')"
		fi
	else
		record FAIL "[$k] harness self-test: no selftest module was built"
	fi
}

# The kernels' VMs run side by side when there are CPUs for it (each VM is
# one single-threaded TCG process); each writes its own results, merged
# in order afterwards.
if [ "$(nproc)" -ge 2 ] && [ "$(echo $kernels | wc -w)" -ge 2 ]; then
	for k in $kernels; do
		(results=$res/results-$k.txt; : >"$results"; vm_checks "$k") >"$res/vm-checks-$k.log" 2>&1 &
	done
	wait
	for k in $kernels; do
		cat "$res/vm-checks-$k.log"
		cat "$res/results-$k.txt" >>"$results"
	done
else
	for k in $kernels; do
		vm_checks "$k"
	done
fi

summary
