#!/usr/bin/env bats
# tests/lib/logwrites.py on synthetic dm-log-writes logs.

LW=$BATS_TEST_DIRNAME/../lib/logwrites.py

# make_log FILE: superblock + write(2 sectors at 4) + flush + discard(1 at 4)
# + write(1 at 0)|FUA + mark "m", sector size 512.
make_log() {
	python3 - "$1" <<'PY'
import struct, sys
ss = 512
def blk(b): return b + bytes(ss - len(b))
ent = lambda s, n, f, d=0: struct.pack("<QQQQ", s, n, f, d)
out = [blk(struct.pack("<QQQI", 0x6A736677736872, 1, 5, ss))]
out += [blk(ent(4, 2, 0)), b"A" * ss, b"B" * ss]
out += [blk(ent(0, 0, 1))]
out += [blk(ent(4, 1, 4))]
out += [blk(ent(0, 1, 2)), b"C" * ss]
out += [blk(ent(0, 0, 8, 1) + b"m")]
open(sys.argv[1], "wb").write(b"".join(out))
PY
}

@test "logwrites: lists entries with their flags and marks" {
	make_log "$BATS_TEST_TMPDIR/log"
	run python3 "$LW" list "$BATS_TEST_TMPDIR/log"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "0 WRITE sector=4 nr=2" ]
	[ "${lines[1]}" = "1 FLUSH sector=0 nr=0" ]
	[ "${lines[2]}" = "2 DISCARD sector=4 nr=1" ]
	[ "${lines[3]}" = "3 FUA sector=0 nr=1" ]
	[ "${lines[4]}" = "4 MARK sector=0 nr=0 mark=m" ]
}

@test "logwrites: crash points are the FLUSH and FUA entries" {
	make_log "$BATS_TEST_TMPDIR/log"
	run python3 "$LW" points "$BATS_TEST_TMPDIR/log"
	[ "$output" = "1 3" ]
}

@test "logwrites: replaying a prefix gives that point's contents" {
	make_log "$BATS_TEST_TMPDIR/log"
	dev=$BATS_TEST_TMPDIR/dev
	head -c 4096 /dev/zero >"$dev"
	python3 "$LW" replay "$BATS_TEST_TMPDIR/log" "$dev" --to 1
	[ "$(dd if="$dev" bs=512 skip=4 count=1 status=none | tr -d A | wc -c)" -eq 0 ]
	[ "$(dd if="$dev" bs=512 skip=5 count=1 status=none | tr -d B | wc -c)" -eq 0 ]
	python3 "$LW" replay "$BATS_TEST_TMPDIR/log" "$dev" --from 2 --to-mark m
	[ "$(dd if="$dev" bs=512 skip=4 count=1 status=none | tr -d '\0' | wc -c)" -eq 0 ]
	[ "$(dd if="$dev" bs=512 skip=0 count=1 status=none | tr -d C | wc -c)" -eq 0 ]
}

@test "logwrites: a damaged log is refused with a reason" {
	head -c 4096 /dev/zero >"$BATS_TEST_TMPDIR/bad"
	run python3 "$LW" list "$BATS_TEST_TMPDIR/bad"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not a dm-log-writes log"* ]]
	make_log "$BATS_TEST_TMPDIR/log"
	head -c 1500 "$BATS_TEST_TMPDIR/log" >"$BATS_TEST_TMPDIR/short"
	run python3 "$LW" list "$BATS_TEST_TMPDIR/short"
	[ "$status" -eq 1 ]
	[[ "$output" == *"past the end of the log"* ]]
	run python3 "$LW" replay "$BATS_TEST_TMPDIR/log" "$BATS_TEST_TMPDIR/x" --to-mark nosuch
	[ "$status" -eq 1 ]
	[[ "$output" == *"no mark 'nosuch'"* ]]
}
