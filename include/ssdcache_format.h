/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ssdcache on-disk format.
 *
 * This is the ONE definition of everything ssdcache stores on the cache
 * device. The kernel module (module/) and the control tool (userspace/)
 * both include it; nothing else may describe the layout.
 *
 * All multi-byte fields are little-endian. Every structure gets a fixed
 * size checked at compile time, so a change of layout cannot slip in
 * unnoticed: bump SSDCACHE_FORMAT_VERSION instead.
 *
 * Documentation/format.rst describes the layout in prose. The pass-through
 * target of this version writes nothing to a cache device yet; the
 * superblock, journal and block map are added here with the cache target.
 */
#ifndef SSDCACHE_FORMAT_H
#define SSDCACHE_FORMAT_H

#include <linux/types.h>

#ifdef __KERNEL__
#include <linux/build_bug.h>
#define SSDCACHE_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define SSDCACHE_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* Name of the device-mapper target, as written in a table line. */
#define SSDCACHE_TARGET_NAME	"ssdcache"

/* "SSDCACHE" read as a little-endian 64-bit number. */
#define SSDCACHE_MAGIC		0x4548434143445353ULL

/* Version of the on-disk format described in this file. */
#define SSDCACHE_FORMAT_VERSION	1

/* The unit of every on-disk offset: a 512-byte sector. */
#define SSDCACHE_SECTOR_SHIFT	9
#define SSDCACHE_SECTOR_SIZE	(1U << SSDCACHE_SECTOR_SHIFT)

/* Metadata is read and written in blocks of this size. */
#define SSDCACHE_META_BLOCK_SIZE	4096U

SSDCACHE_STATIC_ASSERT(SSDCACHE_META_BLOCK_SIZE % SSDCACHE_SECTOR_SIZE == 0,
		       "metadata blocks are whole sectors");

#endif /* SSDCACHE_FORMAT_H */
