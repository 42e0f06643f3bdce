/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-ssdcache: internal definitions shared by the module's files.
 */
#ifndef SSDCACHE_H
#define SSDCACHE_H

#include <linux/device-mapper.h>

#include "compat.h"
#include "ssdcache_format.h"

#define DM_MSG_PREFIX SSDCACHE_TARGET_NAME

/* One instance of the target: what a table line constructs. */
struct ssdcache {
	struct dm_target *ti;
	struct dm_dev *origin;
};

/* The mapped device's name ("ssdcache-test"), for log messages. */
static inline const char *ssdcache_name(struct ssdcache *sc)
{
	return dm_table_device_name(sc->ti->table);
}

#ifdef SSDCACHE_SELFTEST
int ssdcache_selftest_message(struct ssdcache *sc, unsigned int argc,
			      char **argv);
#else
static inline int ssdcache_selftest_message(struct ssdcache *sc,
					    unsigned int argc, char **argv)
{
	return -ENOTTY;
}
#endif

#endif /* SSDCACHE_H */
