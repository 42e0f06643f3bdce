#!/usr/bin/env bats
# ssdcachectl on the host: usage, help and exit codes (no device needed).

TOOL=$BATS_TEST_DIRNAME/../../build/userspace/ssdcachectl

@test "tool: --help lists the commands and exits 0" {
	run "$TOOL" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *list* && "$output" == *status* && "$output" == *version* ]]
}

@test "tool: no command is a usage error (exit 2)" {
	run "$TOOL"
	[ "$status" -eq 2 ]
	[[ "$output" == *usage* ]]
}

@test "tool: an unknown command is a usage error that names it" {
	run "$TOOL" frobnicate
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown command 'frobnicate'"* ]]
}

@test "tool: every command has --help" {
	for c in create load list status stats top set reset-stats clear-degraded flush remove forget assemble udev-probe check dump version; do
		run "$TOOL" "$c" --help
		[ "$status" -eq 0 ]
		[[ "$output" == *"usage: ssdcachectl $c"* ]]
	done
}

@test "tool: status needs exactly one name; list takes none" {
	run "$TOOL" status
	[ "$status" -eq 2 ]
	run "$TOOL" status a b
	[ "$status" -eq 2 ]
	run "$TOOL" list extra
	[ "$status" -eq 2 ]
}

@test "tool: version prints the on-disk format version" {
	run "$TOOL" version
	[ "$status" -eq 0 ]
	fmt=$(sed -n 's/^#define SSDCACHE_FORMAT_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
		"$BATS_TEST_DIRNAME/../../include/ssdcache_format.h")
	[[ "$output" == *"on-disk format $fmt)"* ]]
}

@test "tool: stats, top and set refuse bad options and arguments (exit 2)" {
	run "$TOOL" stats --yaml
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown option '--yaml'"* ]]
	run "$TOOL" stats --interval 0 x
	[ "$status" -eq 2 ]
	run "$TOOL" top -n 0
	[ "$status" -eq 2 ]
	run "$TOOL" top -n x
	[ "$status" -eq 2 ]
	run "$TOOL" set onlyname mode
	[ "$status" -eq 2 ]
	run "$TOOL" set name mode "write back"
	[ "$status" -eq 2 ]
	run "$TOOL" reset-stats
	[ "$status" -eq 2 ]
	run "$TOOL" clear-degraded
	[ "$status" -eq 2 ]
	run "$TOOL" clear-degraded a b
	[ "$status" -eq 2 ]
	run "$TOOL" flush
	[ "$status" -eq 2 ]
	run "$TOOL" remove
	[ "$status" -eq 2 ]
	run "$TOOL" remove x --flush --keep-dirty
	[ "$status" -eq 2 ]
	run "$TOOL" remove x --now
	[ "$status" -eq 2 ]
	run "$TOOL" create x --origin /dev/null
	[ "$status" -eq 2 ]
	run "$TOOL" create x --origin a --cache b --mode fast
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown mode 'fast'"* ]]
	run "$TOOL" create x --origin a --cache b --block-size 4k
	[ "$status" -eq 2 ]
	run "$TOOL" load
	[ "$status" -eq 2 ]
	run "$TOOL" load /dev/x name extra
	[ "$status" -eq 2 ]
	run "$TOOL" check
	[ "$status" -eq 16 ]
	run "$TOOL" check /dev/nonexistent-device
	[ "$status" -eq 8 ]
	run "$TOOL" dump /dev/x --yaml
	[ "$status" -eq 2 ]
}

@test "man page: renders without warnings and documents every command" {
	page=$BATS_TEST_DIRNAME/../../Documentation/ssdcachectl.8
	warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$warnings" ] || { echo "$warnings"; return 1; }
	text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$page" 2>/dev/null)
	for c in $("$TOOL" --help | awk '/^  [a-z]/ {print $1}'); do
		grep -qE "^ +$c( |$)" <<<"$text" || { echo "no entry for $c"; return 1; }
	done
}

@test "tool: create refuses bad table options before touching a device (exit 2)" {
	for bad in "--dirty-high abc" "--policy mru" "--writeback-rate -1" "--dirty-high 5 --dirty-high 6" \
		"--block-size 4k" "--run-size 128k" "--run-size" "--dirty-high" "--run-size 8192 --run-size 8192"; do
		# shellcheck disable=SC2086
		run "$TOOL" create x --origin /dev/null --cache /dev/null $bad
		[ "$status" -eq 2 ] || { echo "$bad: $status $output"; false; }
	done
	run "$TOOL" create - --origin /dev/null --cache /dev/null
	[ "$status" -eq 2 ]
}

@test "tool: remove takes one of --flush, --keep-dirty, --detach; forget needs a registered name" {
	run "$TOOL" remove x --flush --detach
	[ "$status" -eq 2 ]
	run "$TOOL" remove x --keep-dirty --detach
	[ "$status" -eq 2 ]
	export SSDCACHECTL_REGISTRY=$BATS_TEST_TMPDIR/caches
	run "$TOOL" forget nosuch --force
	[ "$status" -eq 3 ]
	[[ "$output" == *"no such cache in $SSDCACHECTL_REGISTRY"* ]]
	run "$TOOL" forget nosuch --now
	[ "$status" -eq 2 ]
}

@test "tool: udev-probe and assemble say nothing and succeed for what is no cache's device" {
	export SSDCACHECTL_REGISTRY=$BATS_TEST_TMPDIR/caches
	run "$TOOL" udev-probe /nonexistent disk/by-id/x
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$TOOL" udev-probe /dev/null
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$TOOL" assemble /dev/null
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$TOOL" assemble
	[ "$status" -eq 2 ]
}
