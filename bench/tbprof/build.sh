#!/usr/bin/env bash
# Builds the tbprof QEMU plugin, build/tbprof/tbprof.so, for this
# machine's qemu-system-x86. Its one header, qemu-plugin.h, is part of
# QEMU's source, which no Debian binary package installs: it is taken
# from the Debian source tarball of the installed QEMU version (23 MB,
# downloaded once into build/tbprof/), or from $QEMU_PLUGIN_H if set.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/tbprof
mkdir -p "$out"

header=${QEMU_PLUGIN_H:-$out/include/qemu-plugin.h}
if [ ! -f "$header" ]; then
	ver=$(dpkg-query -W -f='${Version}' qemu-system-x86)
	upstream=${ver#*:}
	upstream=${upstream%%-*}
	mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null ||
		true)
	mirror=${mirror:-http://deb.debian.org/debian}
	tarball=$out/qemu_$upstream.orig.tar.xz
	if [ ! -f "$tarball" ]; then
		echo "tbprof: downloading QEMU $upstream's source for qemu-plugin.h" >&2
		curl -sSfL -o "$tarball.part" "$mirror/pool/main/q/qemu/qemu_$upstream.orig.tar.xz"
		mv "$tarball.part" "$tarball"
	fi
	mkdir -p "$out/include"
	tar -xJf "$tarball" -O --wildcards '*/include/qemu/qemu-plugin.h' >"$header.part"
	mv "$header.part" "$header"
fi
cc -O2 -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC -I"$(dirname "$header")" \
	-o "$out/tbprof.so" "$top/bench/tbprof/tbprof.c"
echo "$out/tbprof.so"
