#!/usr/bin/env bats
# tests/lib/crashcheck.py's verify() on synthetic images: every kind of
# contract break it must report, in a blank region and in a written one.

CC_DIR=$BATS_TEST_DIRNAME/../lib

# verify_case CASE: builds a 64-sector model (writes 1 and 2 to sectors
# 8..11, a durability mark after write 2, write 3 to sector 40), an image
# that holds it, spoils it as CASE says, and prints what verify() says.
verify_case() {
	python3 - "$CC_DIR" "$BATS_TEST_TMPDIR/state" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import crashcheck as cc
state, case = sys.argv[2], sys.argv[3]
with open(state, "w") as f:
    f.write("S 64\nW 1 8 4\nW 2 8 4\nM s0\nW 3 40 1\n")
model = cc.Model(state)
img = bytearray(64 * cc.SECTOR)
def put(s, g):
    img[s * cc.SECTOR:(s + 1) * cc.SECTOR] = cc.stamp(s, g)
for s in range(8, 12):
    put(s, 2)
if case == "garbage-blank":
    img[30 * cc.SECTOR + 7] = 1
elif case == "garbage-written":
    put(9, 2)
    img[9 * cc.SECTOR + 100] ^= 0xff
elif case == "stale":
    put(10, 1)
elif case == "never-written":
    put(20, 2)
elif case == "other-sector":
    img[9 * cc.SECTOR:10 * cc.SECTOR] = cc.stamp(8, 2)
elif case == "lost":
    img[11 * cc.SECTOR:12 * cc.SECTOR] = bytes(cc.SECTOR)
# Twice: the second pass runs on what the first remembered.
for _ in range(2):
    print(cc.verify(bytes(img), model, "s0"))
PY
}

@test "crashcheck: a sound image passes, twice" {
	run verify_case none
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = None ]
	[ "${lines[1]}" = None ]
}

@test "crashcheck: every contract break is reported, twice" {
	local c want
	for c in garbage-blank:"sector 30: garbage" garbage-written:"sector 9: garbage" \
		stale:"sector 10: generation 1 is older than 2" \
		never-written:"sector 20: generation 2 was never written there" \
		other-sector:"sector 9: garbage" lost:"sector 11: generation 0 is older than 2"; do
		want=${c#*:}
		run verify_case "${c%%:*}"
		echo "${c%%:*}: $output"
		[ "$status" -eq 0 ]
		[[ "${lines[0]}" == "$want"* ]] || return 1
		[[ "${lines[1]}" == "$want"* ]] || return 1
	done
}

# gen needs O_DIRECT: a file on the disk the repository is on, not tmpfs.
teardown() {
	[ -z "${GEN_DIR:-}" ] || rm -rf "$GEN_DIR"
}

@test "crashcheck: gen --fill stamps every sector durably, --append goes on from the state" {
	local d st
	GEN_DIR=$(mktemp -d -p "$BATS_TEST_DIRNAME")
	d=$GEN_DIR st=$GEN_DIR/state
	truncate -s 64K "$d/dev"
	run python3 "$CC_DIR/crashcheck.py" gen "$d/dev" "$st" 0 0 --fill
	echo "$output"
	[ "$output" = "crashcheck: 2 writes, 1 durability marks" ]
	run python3 "$CC_DIR/crashcheck.py" gen "$d/dev" "$st" 10 5 --append
	[ "$output" = "crashcheck: 12 writes, $(grep -c '^M ' "$st") durability marks" ]
	[ "$(grep -c '^S ' "$st")" -eq 1 ]
	[ "$(awk '$1 == "W" {print $2}' "$st" | sort -n | uniq -d)" = "" ]
	python3 "$CC_DIR/crashcheck.py" check "$d/dev" "$st" --mark last
	# Zeros over a filled sector break the fill's durability mark.
	dd if=/dev/zero of="$d/dev" bs=512 count=1 seek=100 conv=notrunc status=none
	run python3 "$CC_DIR/crashcheck.py" check "$d/dev" "$st" --mark s0
	[ "$status" -eq 1 ]
	[[ "$output" == *"sector 100: generation 0 is older than 2, durable since mark s0"* ]]
}
