// SPDX-License-Identifier: GPL-2.0
/*
 * ssdcachectl remove and forget.
 *
 * remove takes a cache's device away but keeps the pairing: the cache
 * device keeps its blocks for the next load, and a registered origin goes
 * back to read-only and hidden, because data written to it alone would be
 * shadowed by the cache's older blocks at the next load, or would shadow
 * its dirty ones. remove --detach ends the pairing: it writes every dirty
 * block back, wipes the cache's superblocks and drops the registry entry,
 * and the origin is a plain disk again. forget ends a pairing whose cache
 * is not loaded (its SSD is lost, say), and says what that costs.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "disk.h"
#include "dm.h"
#include "flush.h"
#include "lifecycle.h"
#include "registry.h"

/* "/dev/<kernel name>" of device "major:minor" @mm; -1 if it has none. */
static int devnode(const char *mm, char *path, size_t len)
{
	char sys[128], real[PATH_MAX];

	snprintf(sys, sizeof(sys), "/sys/dev/block/%s", mm);
	if (!realpath(sys, real))
		return -1;
	snprintf(path, len, "/dev/%s", strrchr(real, '/') + 1);
	return 0;
}

struct pair {
	char origin[PATH_MAX], cache[PATH_MAX];
	struct ssdc_reg reg;
	int registered;
};

/* The devices of @name, and its registry entry if the cache device has it. */
static int find_pair(const char *name, struct pair *p)
{
	char o[32], c[32];
	struct ssdc_dev d;
	char err[512];
	int r = ssdc_table_devs(name, o, c, sizeof(o));

	memset(p, 0, sizeof(*p));
	if (r)
		return r;
	if (devnode(o, p->origin, sizeof(p->origin)) || devnode(c, p->cache, sizeof(p->cache)))
		return SSDC_DM_FAILED;
	if (!ssdc_dev_open(p->cache, &d, err, sizeof(err))) {
		p->registered = ssdc_role(&d, 0, NULL, &p->reg, NULL) == SSDC_ROLE_CACHE;
		ssdc_dev_close(&d);
	}
	return 0;
}

struct remove_opts {
	const char *name;
	int flush, keep, detach;
};

static int parse_remove(int argc, char **argv, struct remove_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--flush"))
			o->flush = 1;
		else if (!strcmp(argv[i], "--keep-dirty"))
			o->keep = 1;
		else if (!strcmp(argv[i], "--detach"))
			o->detach = 1;
		else if (argv[i][0] == '-' || o->name)
			break;
		else
			o->name = argv[i];
	}
	if (i < argc || !o->name || o->flush + o->keep + o->detach > 1) {
		fprintf(stderr, "ssdcachectl remove: expected <name> [--flush | --keep-dirty | --detach]\n");
		return EXIT_USAGE;
	}
	o->flush |= o->detach;
	return 0;
}

/* After --detach: no superblock, no entry, a writable and visible origin. */
static int detach(const char *name, const struct pair *p)
{
	int r = 0;

	if (ssdc_wipe_sb(p->cache)) {
		fprintf(stderr, "ssdcachectl remove: %s: removed and clean, but wiping the superblocks of %s failed: its stale blocks could be loaded again\n",
			name, p->cache);
		r = EXIT_FAILED;
	}
	if (p->registered && ssdc_reg_drop(p->reg.uuid)) {
		fprintf(stderr, "ssdcachectl remove: %s: cannot drop it from %s\n", name,
			ssdc_registry_path());
		r = EXIT_FAILED;
	}
	ssdc_origin_reserve(p->origin, 0);
	ssdc_path_uevent(p->cache);
	if (!r)
		printf("%s: detached; %s holds all its data and is a plain disk again\n", name,
		       p->origin);
	return r;
}

/* After a plain remove: a registered origin is read-only and hidden again. */
static void reserve(const char *name, const struct pair *p)
{
	if (!p->registered)
		return;
	ssdc_origin_reserve(p->origin, 1);
	printf("%s: removed; %s keeps its blocks for the next load, and %s stays reserved for it (read-only); remove --detach would end that\n",
	       name, p->cache, p->origin);
}

int ssdc_cmd_remove(int argc, char **argv)
{
	struct remove_opts o;
	struct pair p;
	uint64_t dirty;
	int r, lock;

	r = parse_remove(argc, argv, &o);
	if (r)
		return r;
	r = ssdc_open_count(o.name);
	if (r < 0)
		return ssdc_dm_failure("remove", o.name, r, "");
	if (r > 0) {
		fprintf(stderr, "ssdcachectl remove: %s: in use (open %d times); unmount it first\n",
			o.name, r);
		return EXIT_FAILED;
	}
	r = ssdc_dirty(o.name, &dirty, NULL, NULL, 0);
	if (!r)
		r = find_pair(o.name, &p);
	if (r)
		return ssdc_dm_failure("remove", o.name, r, "");
	if (dirty && !o.flush && !o.keep) {
		fprintf(stderr, "ssdcachectl remove: %s: %" PRIu64 " dirty blocks exist only on the cache; use --flush to write them back first, or --keep-dirty to leave them for the next load\n",
			o.name, dirty);
		return EXIT_FAILED;
	}
	if (dirty && o.flush) {
		r = ssdc_do_flush("remove", o.name);
		if (r)
			return r;
	}
	lock = ssdc_run_lock();
	if (ssdc_remove(o.name)) {
		ssdc_run_unlock(lock);
		fprintf(stderr, "ssdcachectl remove: %s: device-mapper refused to remove it (in use?)\n",
			o.name);
		return EXIT_FAILED;
	}
	if (o.detach)
		r = detach(o.name, &p);
	else
		reserve(o.name, &p);
	ssdc_run_unlock(lock);
	return r;
}

int ssdc_cmd_forget(int argc, char **argv)
{
	char origin[PATH_MAX], cache[PATH_MAX];
	unsigned int ma, mi;
	struct ssdc_reg e;
	int force = argc == 2 && !strcmp(argv[1], "--force"), present;
	struct ssdcache_disk_sb sb;

	if (argc < 1 || argc > 2 || argv[0][0] == '-' || (argc == 2 && !force)) {
		fprintf(stderr, "ssdcachectl forget: expected <name> --force\n");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], SSDC_FORGOTTEN) || !ssdc_reg_find(NULL, argv[0], &e)) {
		fprintf(stderr, "ssdcachectl forget: %s: no such cache in %s\n", argv[0],
			ssdc_registry_path());
		return EXIT_NODEV;
	}
	if (ssdc_devnum(e.name, &ma, &mi) != SSDC_DM_NODEV) {
		fprintf(stderr, "ssdcachectl forget: %s is loaded: use ssdcachectl remove %s --detach\n",
			e.name, e.name);
		return EXIT_FAILED;
	}
	if (!force) {
		fprintf(stderr, "ssdcachectl forget: %s: its cache device %s may hold dirty blocks, newer than %s; forgetting makes the origin usable alone and loses them. If the cache device works, load it and use remove --detach instead. Otherwise add --force.\n",
			e.name, e.cache_id, e.origin_id);
		return EXIT_FAILED;
	}
	/*
	 * Its blocks must never be loaded again over an origin used alone:
	 * wiped if its device is here, else remembered as forgotten.
	 */
	present = !ssdc_identity_path(e.cache_id, cache, sizeof(cache)) &&
		  ssdc_holds_cache(cache, e.uuid, &sb);
	if (present && ssdc_wipe_sb(cache)) {
		fprintf(stderr, "ssdcachectl forget: %s: cannot wipe the superblocks of %s; nothing changed\n",
			e.name, cache);
		return EXIT_FAILED;
	}
	snprintf(e.name, sizeof(e.name), "%s", SSDC_FORGOTTEN);
	e.opts[0] = 0;
	if (present ? ssdc_reg_drop(e.uuid) : ssdc_reg_put(&e)) {
		fprintf(stderr, "ssdcachectl forget: %s: cannot rewrite %s\n", argv[0],
			ssdc_registry_path());
		return EXIT_FAILED;
	}
	if (!ssdc_identity_path(e.origin_id, origin, sizeof(origin)))
		ssdc_origin_reserve(origin, 0);
	if (present)
		ssdc_path_uevent(cache);
	printf("%s: forgotten; %s is a plain disk again, without whatever the cache held dirty\n",
	       argv[0], e.origin_id);
	return 0;
}
