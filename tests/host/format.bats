#!/usr/bin/env bats
# The shared on-disk header from userspace.

TOP=$BATS_TEST_DIRNAME/../..

@test "format: header builds standalone as strict C11 and C2x" {
	for std in c11 gnu2x; do
		cc -std=$std -Wall -Wextra -Werror -pedantic -I"$TOP/include" \
			-o "$BATS_TEST_TMPDIR/format_test" "$TOP/tests/host/format_test.c"
	done
}

@test "format: constants" {
	cc -std=c11 -Wall -Wextra -Werror -I"$TOP/include" \
		-o "$BATS_TEST_TMPDIR/format_test" "$TOP/tests/host/format_test.c"
	run "$BATS_TEST_TMPDIR/format_test"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"not ok"* ]]
}
