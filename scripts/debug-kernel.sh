#!/usr/bin/env bash
# Builds a debug 6.1 kernel from Debian's linux-source-6.1, once per
# machine, for make check-debug: KASAN, lockdep (PROVE_LOCKING),
# DEBUG_ATOMIC_SLEEP, kmemleak, DEBUG_OBJECTS and list debugging, on
# virtme-ng's minimal configuration, with every module the guest suites
# use (device-mapper targets, null_blk, scsi_debug, loop, XFS, bcache).
#
#   scripts/debug-kernel.sh [--print-dir]
#
# The tree lives in $SSDCACHE_DEBUG_KERNEL_DIR (default
# ~/.cache/ssdcache/debug-kernel-6.1); a build whose configuration
# fragment and source tarball are unchanged is not redone. --print-dir
# prints the tree's directory and exits 0 if it is built, 1 if not.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${SSDCACHE_DEBUG_KERNEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ssdcache/debug-kernel-6.1}
tarball=/usr/src/linux-source-6.1.tar.xz
src=$dir/linux

# The debug options and the modules the guest suites need.
fragment() {
	cat <<-'EOF'
	CONFIG_LOCALVERSION="-ssdc-debug"
	CONFIG_LOCALVERSION_AUTO=n
	CONFIG_MODULES=y
	CONFIG_MODULE_UNLOAD=y
	CONFIG_MODULE_SIG=n
	CONFIG_KASAN=y
	CONFIG_KASAN_GENERIC=y
	CONFIG_KASAN_INLINE=y
	CONFIG_PROVE_LOCKING=y
	CONFIG_DEBUG_ATOMIC_SLEEP=y
	CONFIG_DEBUG_KMEMLEAK=y
	CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF=n
	CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN=n
	CONFIG_DEBUG_KMEMLEAK_MEM_POOL_SIZE=40000
	CONFIG_DEBUG_OBJECTS=y
	CONFIG_DEBUG_OBJECTS_FREE=y
	CONFIG_DEBUG_OBJECTS_TIMERS=y
	CONFIG_DEBUG_OBJECTS_WORK=y
	CONFIG_DEBUG_OBJECTS_RCU_HEAD=y
	CONFIG_DEBUG_OBJECTS_PERCPU_COUNTER=y
	CONFIG_DEBUG_LIST=y
	CONFIG_DEBUG_INFO_NONE=y
	CONFIG_KALLSYMS=y
	CONFIG_BLK_DEV=y
	CONFIG_BLK_DEV_NULL_BLK=m
	CONFIG_BLK_DEV_LOOP=m
	CONFIG_CONFIGFS_FS=m
	CONFIG_MD=y
	CONFIG_BLK_DEV_DM=m
	CONFIG_DM_FLAKEY=m
	CONFIG_DM_DELAY=m
	CONFIG_DM_LOG_WRITES=m
	CONFIG_DM_SNAPSHOT=m
	CONFIG_DM_CACHE=m
	CONFIG_DM_CACHE_SMQ=m
	CONFIG_DM_WRITECACHE=m
	CONFIG_BCACHE=m
	CONFIG_SCSI=y
	CONFIG_BLK_DEV_SD=y
	CONFIG_SCSI_LOWLEVEL=y
	CONFIG_SCSI_DEBUG=m
	CONFIG_EXT4_FS=y
	CONFIG_XFS_FS=m
	CONFIG_CRYPTO_CRC32C=y
	CONFIG_LIBCRC32C=y
	CONFIG_TMPFS=y
	CONFIG_OVERLAY_FS=y
	CONFIG_FUSE_FS=y
	CONFIG_UNIX=y
	CONFIG_INOTIFY_USER=y
	CONFIG_SIGNALFD=y
	CONFIG_TIMERFD=y
	CONFIG_EPOLL=y
	CONFIG_DEVTMPFS=y
	EOF
}

stamp() { { fragment; stat -c '%s %Y' "$tarball"; } | md5sum | cut -d' ' -f1; }

built() { [ -f "$dir/built" ] && [ "$(cat "$dir/built")" = "$(stamp)" ]; }

if [ "${1:-}" = --print-dir ]; then
	echo "$src"
	built
	exit
fi

[ -f "$tarball" ] || { echo "debug-kernel: $tarball missing (apt install linux-source-6.1)" >&2; exit 1; }
if built; then
	echo "debug-kernel: up to date in $src"
	exit 0
fi

t0=$(date +%s)
mkdir -p "$dir"
rm -f "$dir/built"
if [ ! -f "$src/Makefile" ]; then
	echo "debug-kernel: unpacking $tarball"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xf "$tarball" -C "$src" --strip-components=1
fi

cd "$src"
echo "debug-kernel: configuring (virtme-ng defaults + debug fragment)"
vng --kconfig >"$dir/kconfig.log" 2>&1
fragment >"$dir/debug.config"
scripts/kconfig/merge_config.sh -m .config "$dir/debug.config" >>"$dir/kconfig.log" 2>&1
make olddefconfig >/dev/null
# Every option of the fragment must have survived (dependencies met).
missing=0
while IFS= read -r line; do
	case $line in
	*=n) ! grep -q "^${line%=n}=" .config || { echo "debug-kernel: $line did not stick" >&2; missing=1; } ;;
	*) grep -qx "$line" .config || { echo "debug-kernel: $line did not stick" >&2; missing=1; } ;;
	esac
done <"$dir/debug.config"
[ "$missing" = 0 ] || exit 1

echo "debug-kernel: building with $(nproc) CPUs (log: $dir/build.log)"
if ! make -j"$(nproc)" bzImage modules >"$dir/build.log" 2>&1; then
	tail -n 40 "$dir/build.log" >&2
	exit 1
fi
stamp >"$dir/built"
echo "debug-kernel: built $(make -s kernelrelease) in $(( $(date +%s) - t0 )) s"
