#!/usr/bin/env bash
# Kernel coding style: checkpatch.pl --strict over the module and the shared
# on-disk header. Exceptions, each for a reason:
#   module/compat.h        LINUX_VERSION_CODE tests are its whole purpose
#   include/ssdcache_format.h  compiles in userspace too: _Static_assert,
#                          no BIT()
# Then the module's own rules, which checkpatch cannot know:
#   a slot word changes only through ssdc_slot_write(), which keeps the
#   slot's lookup tag in step (module/cache.c): any other store to
#   sc->slots[] could hide a cached block from lookups.
# Exit status non-zero on any error, warning or check.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
cp=${CHECKPATCH:-/opt/ssdcache-dev/checkpatch/scripts/checkpatch.pl}
[ -f "$cp" ] || { echo "checkpatch: $cp missing (run scripts/deps.sh)" >&2; exit 1; }

check() {
	perl "$cp" --no-tree --strict --terse --show-types --quiet "$@"
}

rc=0
for f in module/*.c module/*.h; do
	case $f in
	module/compat.h) check --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f "$f" || rc=1 ;;
	*) check -f "$f" || rc=1 ;;
	esac
done
check --ignore CAMELCASE,BIT_MACRO -f include/ssdcache_format.h || rc=1

# A store to a slot word: "slots[...] =", "|=", "++" and the like, or
# its address taken. ssdc_slot_write() itself is the one allowed.
if grep -nE 'slots\[[^]]*\] *([-+*/&|^]?=[^=]|\+\+|--)|&[a-z_>.-]*slots\[|slots *\+' \
	module/*.c module/*.h | grep -v '^module/ssdcache\.h:[0-9]*:	sc->slots\[slot\] = v;$'; then
	echo "checkpatch: the lines above change a slot word past ssdc_slot_write()" >&2
	rc=1
fi
[ "$rc" = 0 ] && echo "checkpatch: module and format header clean"
exit $rc
