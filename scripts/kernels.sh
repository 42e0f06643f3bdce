#!/usr/bin/env bash
# Print, one a line, every kernel release that has both an image in /boot
# and headers to build modules against: the kernels ssdcache is built and
# tested for by default.
set -euo pipefail
for img in /boot/vmlinuz-*; do
	[ -e "$img" ] || continue
	kver=${img#/boot/vmlinuz-}
	[ -f "/lib/modules/$kver/build/Makefile" ] && echo "$kver"
done | sort -V
