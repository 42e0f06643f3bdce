#!/usr/bin/env bats
# The build and test machinery: each check must be able to fail.

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup() {
	KVER=$("$TOP/scripts/kernels.sh" | head -n 1)
}

# A throw-away copy of the module sources and build scripts.
copy_tree() {
	tree=$BATS_TEST_TMPDIR/tree
	mkdir -p "$tree"
	cp -r "$TOP/Kbuild" "$TOP/include" "$TOP/module" "$TOP/scripts" "$tree/"
}

# Names as bats prints them, with and without -T's " in <N>ms", and one
# that BATS_TEST_TIMEOUT stopped.
@test "harness: tap-results counts pass, fail, skip and tests that never ran" {
	run "$TOP/scripts/tap-results" P <<<$'1..8\nok 1 a\nnot ok 2 b\nok 3 c # skip no disk\nok 4 - d\nok 5 e f in 46ms\nok 6 g in 141ms # skip no disk\nnot ok 7 h in 900012ms # timeout after 900s'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "PASS P a" ]
	[ "${lines[1]}" = "FAIL P b" ]
	[ "${lines[2]}" = "SKIP P c" ]
	[ "${lines[3]}" = "PASS P d" ]
	[ "${lines[4]}" = "PASS P e f" ]
	[ "${lines[5]}" = "SKIP P g" ]
	[ "${lines[6]}" = "FAIL P h (timeout after 900s)" ]
	[ "${lines[7]}" = "FAIL P (test 8 of 8 never reported)" ]
}

@test "harness: host-steal gives counters, then a percentage since them" {
	run "$TOP/scripts/host-steal"
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^[0-9]+\ [0-9]+$ ]]
	run "$TOP/scripts/host-steal" $output
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^[0-9]+$ ]]
	[ "$output" -le 100 ]
	run "$TOP/scripts/host-steal" 1
	[ "$status" -eq 2 ]
}

@test "harness: tap-results fails a stream without a plan" {
	run "$TOP/scripts/tap-results" P <<<"garbage"
	[ "${lines[0]}" = "FAIL P (no TAP plan: the test runner did not start or crashed)" ]
}

# bats (BATS_TEST_TIMEOUT) runs its timer as a background job of the
# test's shell: a bare wait waits for it, 15 minutes, and fails the test.
@test "harness: no test or helper waits for every background job" {
	run grep -nE '(^|[;&|{(]|then|do)[[:space:]]*wait[[:space:]]*($|[;&|)}#])' \
		"$TOP"/tests/guest/*.bats "$TOP"/tests/lib/*.bash
	[ "$status" -eq 1 ] || { echo "a bare wait: $output"; false; }
}

@test "harness: kernels.sh lists only kernels with an image and headers" {
	for k in $("$TOP/scripts/kernels.sh"); do
		[ -f "/boot/vmlinuz-$k" ]
		[ -f "/lib/modules/$k/build/Makefile" ]
	done
}

@test "harness: the module build fails on a compiler warning" {
	[ -n "$KVER" ] || skip "no kernel headers installed"
	copy_tree
	printf '\nvoid ssdc_warn(void);\nvoid ssdc_warn(void) { int unused; }\n' >>"$tree/module/target.c"
	run "$tree/scripts/build-module.sh" "$KVER"
	[ "$status" -ne 0 ]
	[[ "$output" == *unused* ]]
}

# "make -j2" at the top: the kernel's make says "-j2 forced in submake",
# which is make's, not a diagnostic about our code.
@test "harness: the module builds under a parallel make, and still fails on a warning" {
	[ -n "$KVER" ] || skip "no kernel headers installed"
	copy_tree
	printf 'all:\n\t+$(CURDIR)/scripts/build-module.sh %s\n' "$KVER" >"$tree/Makefile"
	run make -C "$tree" -j2
	[ "$status" -eq 0 ]
	grep -q "forced in submake" "$tree/build/$KVER/build.log"
	[[ "$output" == *"build-module: $KVER: built"* ]]
	printf '\nvoid ssdc_warn(void);\nvoid ssdc_warn(void) { int unused; }\n' >>"$tree/module/target.c"
	run make -C "$tree" -j2
	[ "$status" -ne 0 ]
	[[ "$output" == *unused* ]]
}

@test "harness: the sparse build fails on an endianness bug" {
	[ -n "$KVER" ] || skip "no kernel headers installed"
	copy_tree
	printf '\n__le32 ssdc_le(void);\n__le32 ssdc_le(void) { return 1; }\n' >>"$tree/module/target.c"
	run "$tree/scripts/build-module.sh" "$KVER"
	[ "$status" -eq 0 ]
	run "$tree/scripts/build-module.sh" "$KVER" --sparse
	[ "$status" -ne 0 ]
	[[ "$output" == *"different base types"* ]]
}

@test "harness: checkpatch fails on a style error in module code" {
	copy_tree
	run "$tree/scripts/checkpatch.sh"
	[ "$status" -eq 0 ]
	printf '\nint ssdc_style(int x);\nint ssdc_style(int x) { if(x) return 1; return 0; }\n' >>"$tree/module/target.c"
	run "$tree/scripts/checkpatch.sh"
	[ "$status" -ne 0 ]
	[[ "$output" == *"module/target.c"* ]]
}

@test "harness: checkpatch fails on a slot word changed past ssdc_slot_write()" {
	copy_tree
	sed -i 's/^\tssdc_slot_write(sc, slot, v | SSDC_SF_CHANGED);$/\tsc->slots[slot] = v | SSDC_SF_CHANGED;/' \
		"$tree/module/cache.c"
	grep -q 'sc->slots\[slot\] = v | SSDC_SF_CHANGED;' "$tree/module/cache.c"
	run "$tree/scripts/checkpatch.sh"
	[ "$status" -ne 0 ]
	[[ "$output" == *"module/cache.c:"*"past ssdc_slot_write()"* ]]
	copy_tree
	printf '\nstatic void ssdc_bad(struct ssdcache *sc) { sc->slots[1]++; }\n' >>"$tree/module/io.c"
	run "$tree/scripts/checkpatch.sh"
	[ "$status" -ne 0 ]
	[[ "$output" == *"module/io.c:"*"slots[1]++"* ]]
}

@test "harness: vm-run refuses an --icount that is not a number" {
	run "$TOP/scripts/vm-run" --icount x -- true
	[ "$status" -eq 2 ]
	run "$TOP/scripts/vm-run" --icount -- true
	[ "$status" -eq 2 ]
}

@test "harness: vm-run refuses an --append without its argument" {
	run "$TOP/scripts/vm-run" --append
	[ "$status" -eq 2 ]
	[[ "$output" == *"--append ARGS"* ]]
}

@test "harness: vm-run refuses an unknown kernel with a usage error" {
	run "$TOP/scripts/vm-run" -k 0.0-nonexistent -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"no kernel image"* ]]
}

# Real reports of lockdep, KASAN, the object debugger and the atomic-sleep
# check fail a run; the debug kernel's boot banners do not.
@test "harness: vm-run's kernel log pattern catches reports, not debug banners" {
	re=$(sed -n "s/^bad_re='\\(.*\\)'$/\\1/p" "$TOP/scripts/vm-run")
	[ -n "$re" ]
	while IFS= read -r line; do
		grep -q -E "$re" <<<"$line" || { echo "missed: $line"; return 1; }
	done <<-'EOF'
	[   12.5] WARNING: possible circular locking dependency detected
	[   12.5] WARNING: possible recursive locking detected
	[   12.5] WARNING: inconsistent lock state
	[   12.5] INFO: trying to register non-static key.
	[   12.5] BUG: sleeping function called from invalid context at mm/slab.h:712
	[   12.5] BUG: KASAN: slab-use-after-free in ssdc_end_io+0x1c/0x80 [dm_ssdcache]
	[   12.5] ODEBUG: free active (active state 0) object type: timer_list
	[   12.5] INFO: task kworker/0:1:42 blocked for more than 120 seconds.
	EOF
	while IFS= read -r line; do
		! grep -q -E "$re" <<<"$line" || { echo "false alarm: $line"; return 1; }
	done <<-'EOF'
	[    3.7] rcu: 	RCU lockdep checking is enabled.
	[    4.0] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
	[    4.0] kasan: KernelAddressSanitizer initialized (generic)
	[   17.3] kmemleak: Kernel memory leak detector initialized (mem pool available: 38548)
	[    3.7] rcu: 	RCU callback double-/use-after-free debug is enabled.
	EOF
}

@test "harness: check-debug shares every guest suite out once, balanced" {
	all=$(ls "$TOP"/tests/guest/*.bats | sed "s|^$TOP/||" | sort)
	for n in 1 2 3; do
		run "$TOP/scripts/check-debug.sh" --split $n
		[ "$status" = 0 ]
		[ "${#lines[@]}" = $n ]
		# Each suite in exactly one share.
		[ "$(printf '%s\n' $output | sort)" = "$all" ]
	done
	# The two costliest suites go to different guests.
	run "$TOP/scripts/check-debug.sh" --split 2
	[ "$(printf '%s\n' "${lines[@]}" | grep 85-crash | grep -c 20-cache-io)" = 0 ]
	# More guests than suites: one share per suite, no empty share.
	SSDCACHE_GUEST_SUITES="tests/guest/00-module.bats" run "$TOP/scripts/check-debug.sh" --split 2
	[ "$output" = "tests/guest/00-module.bats " ]
}

@test "deps: a second run of deps.sh installs nothing" {
	[ "$(id -u)" = 0 ] || skip "deps.sh needs root"
	run "$TOP/scripts/deps.sh"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "deps: ok: kernels: "* ]]
}

@test "install: make install puts the module and the tool in place" {
	[ -n "$KVER" ] || skip "no kernel headers installed"
	dest=$BATS_TEST_TMPDIR/root
	run make -C "$TOP" -s install KVER="$KVER" DESTDIR="$dest"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -f "$dest/lib/modules/$KVER/updates/dm-ssdcache.ko" ]
	[ -x "$dest/usr/local/sbin/ssdcachectl" ]
	[ -f "$dest/usr/local/share/man/man8/ssdcachectl.8" ]
	modinfo -F name "$dest/lib/modules/$KVER/updates/dm-ssdcache.ko" | grep -qx dm_ssdcache
}

@test "install: make install for a kernel without headers says so" {
	run make -C "$TOP" -s install KVER=0.0-nonexistent DESTDIR="$BATS_TEST_TMPDIR/root"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no headers for 0.0-nonexistent"* ]]
}
