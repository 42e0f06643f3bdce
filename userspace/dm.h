/* SPDX-License-Identifier: GPL-2.0 */
/* ssdcachectl: the device-mapper calls it needs, on libdevmapper. */
#ifndef SSDCACHECTL_DM_H
#define SSDCACHECTL_DM_H

#include <stddef.h>
#include <stdint.h>

/* Failures of the calls below. */
#define SSDC_DM_FAILED		(-1)	/* device-mapper refused or failed */
#define SSDC_DM_NODEV		(-2)	/* no device of that name */
#define SSDC_DM_NOT_SSDCACHE	(-3)	/* the device has no ssdcache target */

/* Called once for each mapped device that has an ssdcache target. */
typedef int (*ssdc_dev_fn)(const char *name, void *arg);

/*
 * Calls fn for every ssdcache device, stopping at the first non-zero
 * return, which it returns; SSDC_DM_FAILED if the list cannot be read.
 */
int ssdc_for_each_cache(ssdc_dev_fn fn, void *arg);

/*
 * Fetches the status line ("STATUSTYPE_INFO") of device @name into @buf.
 * Returns 0 or one of the SSDC_DM_* failures.
 */
int ssdc_status(const char *name, char *buf, size_t len);

/* The device number of ssdcache device @name; 0 or an SSDC_DM_* failure. */
int ssdc_devnum(const char *name, unsigned int *major, unsigned int *minor);

/* Sends message @msg to device @name's target; 0 or an SSDC_DM_* failure. */
int ssdc_message(const char *name, const char *msg);

/* How many times device @name is open, or an SSDC_DM_* failure. */
int ssdc_open_count(const char *name);

/* Removes device @name, waiting for udev; 0 or SSDC_DM_FAILED. */
int ssdc_remove(const char *name);

/* Creates device @name with one ssdcache target; 0 or SSDC_DM_FAILED. */
int ssdc_create_dev(const char *name, uint64_t sectors, const char *params);

/*
 * The origin and cache devices ("major:minor") of ssdcache device @name,
 * from its table; 0 or an SSDC_DM_* failure.
 */
int ssdc_table_devs(const char *name, char *origin, char *cache, size_t len);

#endif
