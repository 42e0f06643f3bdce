// SPDX-License-Identifier: GPL-2.0
/* ssdcachectl: device-mapper access through libdevmapper. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <libdevmapper.h>

#include "dm.h"
#include "ssdcache_format.h"

/* Runs a DM_DEVICE_STATUS task on @name; the caller destroys it. */
static struct dm_task *status_task(const char *name)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_STATUS);

	if (!dmt)
		return NULL;
	if (!dm_task_set_name(dmt, name) || !dm_task_run(dmt)) {
		dm_task_destroy(dmt);
		return NULL;
	}
	return dmt;
}

/* Finds the first ssdcache target of a status task; NULL if none. */
static const char *ssdcache_params(struct dm_task *dmt)
{
	void *next = NULL;
	uint64_t start, length;
	char *type, *params;

	do {
		next = dm_get_next_target(dmt, next, &start, &length, &type, &params);
		if (type && !strcmp(type, SSDCACHE_TARGET_NAME))
			return params ? params : "";
	} while (next);
	return NULL;
}

int ssdc_status(const char *name, char *buf, size_t len)
{
	struct dm_task *dmt = status_task(name);
	struct dm_info info;
	const char *params;
	int r = 0;

	if (!dmt)
		return SSDC_DM_FAILED;
	if (!dm_task_get_info(dmt, &info) || !info.exists) {
		dm_task_destroy(dmt);
		return SSDC_DM_NODEV;
	}
	params = ssdcache_params(dmt);
	if (!params)
		r = SSDC_DM_NOT_SSDCACHE;
	else
		snprintf(buf, len, "%s", params);
	dm_task_destroy(dmt);
	return r;
}

/* The dm_info of ssdcache device @name; 0 or an SSDC_DM_* failure. */
static int ssdcache_info(const char *name, struct dm_info *info)
{
	struct dm_task *dmt = status_task(name);
	int r = 0;

	if (!dmt)
		return SSDC_DM_FAILED;
	if (!dm_task_get_info(dmt, info) || !info->exists)
		r = SSDC_DM_NODEV;
	else if (!ssdcache_params(dmt))
		r = SSDC_DM_NOT_SSDCACHE;
	dm_task_destroy(dmt);
	return r;
}

int ssdc_devnum(const char *name, unsigned int *major, unsigned int *minor)
{
	struct dm_info info;
	int r = ssdcache_info(name, &info);

	*major = r ? 0 : info.major;
	*minor = r ? 0 : info.minor;
	return r;
}

int ssdc_message(const char *name, const char *msg)
{
	unsigned int major, minor;
	struct dm_task *dmt;
	int r = ssdc_devnum(name, &major, &minor);

	if (r)
		return r;
	dmt = dm_task_create(DM_DEVICE_TARGET_MSG);
	if (!dmt)
		return SSDC_DM_FAILED;
	if (!dm_task_set_name(dmt, name) || !dm_task_set_sector(dmt, 0) ||
	    !dm_task_set_message(dmt, msg) || !dm_task_run(dmt))
		r = SSDC_DM_FAILED;
	dm_task_destroy(dmt);
	return r;
}

int ssdc_open_count(const char *name)
{
	struct dm_info info;
	int r = ssdcache_info(name, &info);

	return r ? r : info.open_count;
}

int ssdc_remove(const char *name)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_REMOVE);
	uint32_t cookie = 0;
	int ok;

	if (!dmt)
		return SSDC_DM_FAILED;
	/* udev may still hold the device open for a moment after I/O. */
	ok = dm_task_set_name(dmt, name) && dm_task_retry_remove(dmt) &&
	     dm_task_set_cookie(dmt, &cookie, 0) && dm_task_run(dmt);
	if (cookie)
		dm_udev_wait(cookie);
	dm_task_destroy(dmt);
	return ok ? 0 : SSDC_DM_FAILED;
}

int ssdc_create_dev(const char *name, uint64_t sectors, const char *params)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_CREATE);
	uint32_t cookie = 0;
	int ok;

	if (!dmt)
		return SSDC_DM_FAILED;
	ok = dm_task_set_name(dmt, name) &&
	     dm_task_add_target(dmt, 0, sectors, SSDCACHE_TARGET_NAME, params) &&
	     dm_task_set_cookie(dmt, &cookie, 0) && dm_task_run(dmt);
	if (cookie)
		dm_udev_wait(cookie);
	dm_task_destroy(dmt);
	return ok ? 0 : SSDC_DM_FAILED;
}

int ssdc_for_each_cache(ssdc_dev_fn fn, void *arg)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_LIST);
	struct dm_names *names;
	unsigned int next = 0;
	int r = 0;

	if (!dmt)
		return SSDC_DM_FAILED;
	names = dm_task_run(dmt) ? dm_task_get_names(dmt) : NULL;
	if (!names) {
		dm_task_destroy(dmt);
		return SSDC_DM_FAILED;
	}
	if (names->dev) {
		do {
			struct dm_task *st;

			names = (struct dm_names *)((char *)names + next);
			st = status_task(names->name);
			if (st && ssdcache_params(st))
				r = fn(names->name, arg);
			if (st)
				dm_task_destroy(st);
			next = names->next;
		} while (next && !r);
	}
	dm_task_destroy(dmt);
	return r;
}

int ssdc_table_devs(const char *name, char *origin, char *cache, size_t len)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_TABLE);
	uint64_t start, length;
	char *type = NULL, *params = NULL, o[32], c[32];
	int r = SSDC_DM_NOT_SSDCACHE;

	if (!dmt)
		return SSDC_DM_FAILED;
	if (!dm_task_set_name(dmt, name) || !dm_task_run(dmt)) {
		dm_task_destroy(dmt);
		return SSDC_DM_NODEV;
	}
	dm_get_next_target(dmt, NULL, &start, &length, &type, &params);
	if (type && !strcmp(type, SSDCACHE_TARGET_NAME) && params &&
	    sscanf(params, "%31s %31s", o, c) == 2) {
		snprintf(origin, len, "%s", o);
		snprintf(cache, len, "%s", c);
		r = 0;
	}
	dm_task_destroy(dmt);
	return r;
}
