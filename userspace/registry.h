/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ssdcachectl: the registry of the caches this machine owns,
 * /etc/ssdcache/caches (Documentation/ssdcachectl.rst, "Boot and the
 * origin's protection"). It names each cache, ties its cache device to
 * its origin, and keeps the table options that load passes again.
 */
#ifndef SSDCACHECTL_REGISTRY_H
#define SSDCACHECTL_REGISTRY_H

#include <stddef.h>
#include <string.h>

#include "ssdcache_format.h"

#define SSDC_REGISTRY_DEFAULT	"/etc/ssdcache/caches"
#define SSDC_UUID_STR_LEN	(2 * SSDCACHE_UUID_LEN + 1)
#define SSDC_NAME_LEN		128
#define SSDC_OPTS_LEN		512

/*
 * An entry named SSDC_FORGOTTEN marks a cache that `forget` ended while
 * its device was absent: its blocks may be stale, so it is never loaded.
 */
#define SSDC_FORGOTTEN		"-"

struct ssdc_reg {
	char name[SSDC_NAME_LEN];
	char uuid[SSDC_UUID_STR_LEN];		/* the cache's, in hex */
	char origin_id[SSDCACHE_ORIGIN_ID_LEN];
	char cache_id[SSDCACHE_ORIGIN_ID_LEN];
	char opts[SSDC_OPTS_LEN];		/* "key value ..." table options */
};

/* $SSDCACHECTL_REGISTRY, else SSDC_REGISTRY_DEFAULT. */
const char *ssdc_registry_path(void);

void ssdc_uuid_str(const unsigned char *uuid, char *out);

/*
 * Reads every entry; *n is their number (0 if there is no registry).
 * Returns 0, or -1 if the registry exists and cannot be read or parsed
 * (with the reason in @err).
 */
int ssdc_reg_read(struct ssdc_reg **entries, int *n, char *err, size_t len);

/* The entry with @uuid (or, if @uuid is NULL, @name) into @out; 1 if found. */
int ssdc_reg_find(const char *uuid, const char *name, struct ssdc_reg *out);

/* Adds @e, replacing any entry with its UUID or name; 0 or -1 (errno). */
int ssdc_reg_put(const struct ssdc_reg *e);

/* Drops the entry with @uuid; 0 (also if there was none) or -1 (errno). */
int ssdc_reg_drop(const char *uuid);

static inline int ssdc_reg_forgotten(const struct ssdc_reg *e)
{
	return !strcmp(e->name, SSDC_FORGOTTEN);
}

/*
 * Records table option @key = @val for the registered cache @name (the
 * next load passes it); 0 also if @name is not registered, -1 on error.
 */
int ssdc_reg_set_opt(const char *name, const char *key, const char *val);

/* 0 if the registry can be written (its lock file made); else -1, @err. */
int ssdc_reg_writable(char *err, size_t len);

struct ssdc_dev;
/*
 * Registers the cache on @cache (just made or loaded) as @name, reading
 * its superblock; @cmd names the command in errors. 0, or 1 (exit code).
 */
int ssdc_register(const char *name, const struct ssdc_dev *cache, const char *cache_id,
		  const char *opts, const char *cmd);

#endif
