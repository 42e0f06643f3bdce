/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences, in one place.
 *
 * ssdcache supports the Debian 12 kernel (6.1 LTS) and the bookworm-
 * backports kernel (6.12 LTS). Any API that differs between them is
 * wrapped here and nowhere else, so the rest of the module reads as plain
 * current kernel code.
 */
#ifndef SSDCACHE_COMPAT_H
#define SSDCACHE_COMPAT_H

#include <linux/blkdev.h>
#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "ssdcache needs Linux 6.1 or newer"
#endif

#define SSDCACHE_KERNEL_AT_LEAST(maj, min) \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(maj, min, 0))

/* Opening a device read-write: 6.5 replaced fmode_t with blk_mode_t. */
#if SSDCACHE_KERNEL_AT_LEAST(6, 5)
#define SSDC_OPEN_RW	(BLK_OPEN_READ | BLK_OPEN_WRITE)
#else
#define SSDC_OPEN_RW	(FMODE_READ | FMODE_WRITE)
#endif

#endif /* SSDCACHE_COMPAT_H */
