#!/usr/bin/env bats
# The metadata readers under libFuzzer (make fuzz), briefly: the seeds are
# what they claim to be, every corpus file runs clean under ASan and UBSan,
# and a short fuzzing run finds nothing. `make fuzz` runs longer.

TOP=$BATS_TEST_DIRNAME/../..
FUZZER=$TOP/build/fuzz/fuzz_check

setup_file() {
	make -C "$TOP" -s build/fuzz/fuzz_check >/dev/null
}

@test "fuzz: the seeds are valid caches that reach the superblock, map and journal rules" {
	for seed in clean dirty journal one-superblock-damaged v2-clean; do
		run env SSDC_FUZZ_PRINT=1 "$FUZZER" "$TOP/tests/fuzz/corpus/$seed"
		[ "$status" -eq 0 ] || { echo "$output"; false; }
		[[ "$output" == *"image: clean"* ]] || { echo "$seed: $output"; false; }
	done
	run env SSDC_FUZZ_PRINT=1 "$FUZZER" "$TOP/tests/fuzz/corpus/journal"
	[[ "$output" == *"2 commits (3 blocks) to replay"* ]]
	run env SSDC_FUZZ_PRINT=1 "$FUZZER" "$TOP/tests/fuzz/corpus/dirty"
	[[ "$output" == *"15 dirty"* ]]
}

@test "fuzz: the seed generator still writes the committed seeds" {
	python3 "$TOP/tests/fuzz/make_seeds.py" "$BATS_TEST_TMPDIR/seeds"
	for f in "$BATS_TEST_TMPDIR"/seeds/*; do
		cmp "$f" "$TOP/tests/fuzz/corpus/$(basename "$f")"
	done
}

@test "fuzz: every corpus file, past crashes included, runs clean" {
	run "$FUZZER" "$TOP"/tests/fuzz/corpus/*
	[ "$status" -eq 0 ] || { echo "$output" | tail -n 30; false; }
}

@test "fuzz: 20 seconds of fuzzing find no crash, sanitizer report or hang" {
	work=$BATS_TEST_TMPDIR/corpus
	mkdir -p "$work"
	run "$FUZZER" -max_total_time=20 -timeout=10 -max_len=65536 \
		-artifact_prefix="$BATS_TEST_TMPDIR/" "$work" "$TOP/tests/fuzz/corpus"
	[ "$status" -eq 0 ] || { echo "$output" | tail -n 40; false; }
	! ls "$BATS_TEST_TMPDIR"/crash-* "$BATS_TEST_TMPDIR"/timeout-* 2>/dev/null
}
