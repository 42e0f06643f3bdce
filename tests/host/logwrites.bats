#!/usr/bin/env bats
# tests/lib/logwrites.py on synthetic dm-log-writes logs.

LW=$BATS_TEST_DIRNAME/../lib/logwrites.py

# write_log FILE NR ENTRIES: a log of NR entries, sector size 512;
# ENTRIES is Python that appends them to out, with blk() (pads to a
# sector) and ent(sector, nr, flags, data_len).
write_log() {
	python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
ss = 512
def blk(b): return b + bytes(ss - len(b))
ent = lambda s, n, f, d=0: struct.pack("<QQQQ", s, n, f, d)
out = [blk(struct.pack("<QQQI", 0x6A736677736872, 1, int(sys.argv[2]), ss))]
exec(sys.argv[3])
open(sys.argv[1], "wb").write(b"".join(out))
PY
}

# make_log FILE: write(2 sectors at 4) + flush + discard(1 at 4)
# + write(1 at 0)|FUA + mark "m".
make_log() {
	write_log "$1" 5 '
out += [blk(ent(4, 2, 0)), b"A" * ss, b"B" * ss]
out += [blk(ent(0, 0, 1))]
out += [blk(ent(4, 1, 4))]
out += [blk(ent(0, 1, 2)), b"C" * ss]
out += [blk(ent(0, 0, 8, 1) + b"m")]'
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

# make_log2 FILE: write(1 at 0) + write(1 at 1)|FUA + write(2 at 2) +
# mark "m" + discard(1 at 0) + flush + write(1 at 3) + flush.
make_log2() {
	write_log "$1" 8 '
out += [blk(ent(0, 1, 0)), b"A" * ss]
out += [blk(ent(1, 1, 2)), b"B" * ss]
out += [blk(ent(2, 2, 0)), b"C" * ss, b"D" * ss]
out += [blk(ent(0, 0, 8, 1) + b"m")]
out += [blk(ent(0, 1, 4))]
out += [blk(ent(0, 0, 1))]
out += [blk(ent(3, 1, 0)), b"E" * ss]
out += [blk(ent(0, 0, 1))]'
}

@test "logwrites: a flush's unflushed writes stop at the FUA or FLUSH entry before them" {
	make_log2 "$BATS_TEST_TMPDIR/log"
	run python3 "$LW" unflushed "$BATS_TEST_TMPDIR/log" 5
	[ "$status" -eq 0 ]
	[ "$output" = "2 4" ]
	run python3 "$LW" unflushed "$BATS_TEST_TMPDIR/log" 7
	[ "$output" = "6" ]
	run python3 "$LW" unflushed "$BATS_TEST_TMPDIR/log" 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"entry 1 is not a FLUSH entry"* ]]
}

@test "logwrites: partial subsets: the last write alone, all but it, then random ones, never none or all" {
	run python3 - "$BATS_TEST_DIRNAME/../lib" <<'PY'
import random, sys
sys.path.insert(0, sys.argv[1])
import logwrites
class E:
    def __init__(self, i): self.index = i
rng = random.Random(1)
w = [E(i) for i in (3, 5, 8, 9)]
ix = lambda subsets: [[e.index for e in k] for k in subsets]
assert logwrites.partial_subsets([], 3, rng) == []
assert logwrites.partial_subsets(w[:1], 3, rng) == []
assert ix(logwrites.partial_subsets(w[:2], 5, rng)) == [[5], [3]]
assert ix(logwrites.partial_subsets(w, 1, rng)) == [[9]]
for _ in range(50):
    got = ix(logwrites.partial_subsets(w, 14, rng))
    assert got[:2] == [[9], [3, 5, 8]], got
    assert len(got) == 14 and len({tuple(k) for k in got}) == 14, got
    assert all(0 < len(k) < 4 and k == sorted(k) for k in got), got
print("ok")
PY
	[ "$status" -eq 0 ]
	[ "$output" = "ok" ]
}

@test "logwrites: torn parts: the first sector, all but it, the first half, then random ones, never none or all" {
	write_log "$BATS_TEST_TMPDIR/log" 3 '
out += [blk(ent(10, 1, 2)), b"A" * ss]
out += [blk(ent(20, 8, 3)), b"".join(bytes([48 + i]) * ss for i in range(8))]
out += [blk(ent(30, 4, 4))]'
	dev=$BATS_TEST_TMPDIR/dev
	head -c 32768 /dev/zero >"$dev"
	run python3 - "$BATS_TEST_DIRNAME/../lib" "$BATS_TEST_TMPDIR/log" "$dev" <<'PY'
import random, sys
sys.path.insert(0, sys.argv[1])
import logwrites as lw
f = open(sys.argv[2], "rb")
ss, (one, eight, discard) = lw.read_log(f)
rng = random.Random(1)
runs = lambda parts: [[(p.sector, p.nr_sectors) for p in k] for k in parts]
assert lw.torn_parts(one, ss, 3, rng) == []
assert lw.torn_parts(discard, ss, 3, rng) == []
assert runs(lw.torn_parts(eight, ss, 3, rng)) == [[(20, 1)], [(21, 7)], [(20, 4)]]
for _ in range(20):
    got = lw.torn_parts(eight, ss, 40, rng)
    assert len(got) == 40 and len({tuple(map(tuple, k)) for k in runs(got)}) == 40
    for k in got:
        secs = [s for p in k for s in range(p.sector, p.sector + p.nr_sectors)]
        assert 0 < len(secs) < 8 and secs == sorted(set(secs)), secs
        assert all(20 <= s < 28 for s in secs), secs
# Two sectors: only two torn versions exist (the first half is the first sector).
two = lw.Entry(9, 40, 2, lw.FUA, 0, "", eight.data_off)
assert runs(lw.torn_parts(two, ss, 5, rng)) == [[(40, 1)], [(41, 1)]]
# A piece writes its own sectors' data, nothing else.
lw.apply(f, ss, lw.torn_parts(eight, ss, 2, rng)[1], sys.argv[3])
img = open(sys.argv[3], "rb").read()
assert img[20 * ss:21 * ss] == bytes(ss)
assert all(img[s * ss:(s + 1) * ss] == bytes([28 + s]) * ss for s in range(21, 28))
print("ok")
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "ok" ]
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
