#!/usr/bin/env bash
# Build dm-ssdcache.ko out of tree for one kernel.
#
#   scripts/build-module.sh KVER [--selftest] [--sparse]
#
# Each kernel (and the test-only selftest variant) gets its own build
# directory, build/<KVER>[-selftest]/, holding symlinks to the sources, so
# builds for several kernels never share object files. The build fails on
# any compiler, modpost or (with --sparse) sparse report in our code.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:?usage: build-module.sh KVER [--selftest] [--sparse]}
shift
selftest=0 sparse=0
for a in "$@"; do
	case $a in
	--selftest) selftest=1 ;;
	--sparse) sparse=1 ;;
	*) echo "build-module: unknown option $a" >&2; exit 2 ;;
	esac
done

# SSDCACHE_KDIR: a kernel tree to build against instead (the debug kernel).
kdir=${SSDCACHE_KDIR:-/lib/modules/$kver/build}
if [ ! -f "$kdir/Makefile" ]; then
	echo "build-module: no headers for $kver in $kdir (install linux-headers-$kver)" >&2
	exit 1
fi

out=$top/build/$kver
[ "$selftest" = 1 ] && out=$out-selftest
mkdir -p "$out/module"

# Mirror the sources as symlinks; drop links whose source is gone.
find "$out" -type l ! -exec test -e {} \; -delete
ln -sfn "$top/Kbuild" "$out/Kbuild"
ln -sfn "$top/include" "$out/include"
for f in "$top"/module/*.[ch]; do
	ln -sfn "$f" "$out/module/$(basename "$f")"
done

args=(-C "$kdir" M="$out" modules)
[ "$selftest" = 1 ] && args+=(CONFIG_SSDCACHE_SELFTEST=y)
if [ "$sparse" = 1 ]; then
	# Force sparse over every file, even those already compiled.
	args+=(C=2 CHECK="sparse" CF="-D__CHECK_ENDIAN__")
fi

log=$out/build.log
if ! make -j"$(nproc)" "${args[@]}" >"$log" 2>&1; then
	cat "$log" >&2
	echo "build-module: build for $kver failed" >&2
	exit 1
fi

# Anything that looks like a diagnostic about our files fails the build.
# make's own note when "make -jN" at the top hands its jobs down is not one.
if grep -E '(warning|error):|^WARNING:' "$log" |
	grep -v -E '^make(\[[0-9]+\])?: warning: -j[0-9]+ forced in submake' >"$out/diagnostics.log"; then
	cat "$out/diagnostics.log" >&2
	echo "build-module: $kver: diagnostics above (warnings are errors)" >&2
	exit 1
fi
what="built"
[ "$sparse" = 1 ] && what="built, sparse-clean"
echo "build-module: $kver${selftest:+}$([ "$selftest" = 1 ] && echo ' (selftest)'): $what: $out/dm-ssdcache.ko"
