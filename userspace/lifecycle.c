// SPDX-License-Identifier: GPL-2.0
/*
 * ssdcachectl create and load: the table line is built here, after the
 * checks that keep a user from formatting the wrong device.
 */
#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/sysmacros.h>

#include "disk.h"
#include "dm.h"
#include "lifecycle.h"

#define ERR(...)	(fprintf(stderr, __VA_ARGS__), EXIT_FAILED)

/*
 * The kernel log's last device-mapper line about ssdcache (a table the
 * target refused, a cache it could not load), timestamp included so that
 * a repeated message still differs; "" if none can be read.
 */
static void last_dm_line(char *out, size_t len)
{
	int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf, *line, *save = NULL;

	out[0] = 0;
	if (size <= 0 || !(buf = malloc(size + 1)))
		return;
	size = klogctl(3, buf, size);		/* SYSLOG_ACTION_READ_ALL */
	buf[size > 0 ? size : 0] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "device-mapper: ") && strstr(line, "ssdcache") &&
		    !strstr(line, "preresume failed"))	/* dm's echo of ours */
			snprintf(out, len, "%s", line);
	free(buf);
}

/* Says why the kernel refused, if its log has a new line about it. */
static int kernel_refused(const char *cmd, const char *before, const char *what)
{
	char after[512];
	const char *reason;

	last_dm_line(after, sizeof(after));
	reason = strstr(after, "device-mapper: ");
	if (after[0] && strcmp(before, after) && reason)
		return ERR("ssdcachectl %s: the kernel refused %s: %s\n", cmd, what,
			   reason + strlen("device-mapper: "));
	return ERR("ssdcachectl %s: the kernel refused %s (see the kernel log: dmesg | tail)\n",
		   cmd, what);
}

static const char *mode_word(const char *m)
{
	if (!strcmp(m, "wt") || !strcmp(m, "writethrough"))
		return "writethrough";
	if (!strcmp(m, "wb") || !strcmp(m, "writeback"))
		return "writeback";
	if (!strcmp(m, "wa") || !strcmp(m, "writearound"))
		return "writearound";
	return NULL;
}

static const char *sb_mode_word(uint32_t mode)
{
	switch (mode) {
	case SSDCACHE_MODE_WRITEBACK:
		return "writeback";
	case SSDCACHE_MODE_WRITEAROUND:
		return "writearound";
	default:
		return "writethrough";
	}
}

static int name_free(const char *cmd, const char *name)
{
	unsigned int ma, mi;
	int r = ssdc_devnum(name, &ma, &mi);

	if (r == SSDC_DM_NODEV)
		return 0;
	fprintf(stderr, "ssdcachectl %s: a device named %s exists already\n", cmd, name);
	return EXIT_FAILED;
}

/* Refuses a device that is mounted or held by another device. */
static int not_busy(const char *cmd, const char *what, const struct ssdc_dev *d)
{
	char holder[256];

	if (!ssdc_dev_busy(d))
		return 0;
	ssdc_dev_holder(d, holder, sizeof(holder));
	if (holder[0])
		fprintf(stderr, "ssdcachectl %s: %s %s is in use: held by %s\n", cmd, what,
			d->path, holder);
	else
		fprintf(stderr, "ssdcachectl %s: %s %s is in use (mounted?)\n", cmd, what,
			d->path);
	return EXIT_FAILED;
}

/* Refuses a cache device with data on it, unless @force. */
static int cache_empty(const struct ssdc_dev *c, int force)
{
	struct ssdcache_disk_sb sb;
	char what[128];
	int r = ssdc_read_sb(c, &sb);

	if (r == SSDC_SB_IOERR)
		return ERR("ssdcachectl create: cannot read %s\n", c->path);
	if (r == SSDC_SB_OK)
		snprintf(what, sizeof(what), "an ssdcache superblock (a cache of %.63s)",
			 sb.origin_id);
	else if (r == SSDC_SB_CORRUPT)
		snprintf(what, sizeof(what), "a damaged ssdcache superblock");
	else if (ssdc_dev_contents(c, what, sizeof(what)) <= 0)
		return 0;
	if (force) {
		fprintf(stderr, "ssdcachectl create: %s holds %s: overwriting it (--force)\n",
			c->path, what);
		return 0;
	}
	return ERR("ssdcachectl create: %s holds %s; use --force to overwrite it\n",
		   c->path, what);
}

struct create_opts {
	const char *name, *origin, *cache, *mode, *policy, *block_size, *cutoff;
	int force;
};

/* Where the value of option @arg goes; NULL if it takes none. */
static const char **option_slot(struct create_opts *o, const char *arg)
{
	const struct { const char *opt; const char **slot; } map[] = {
		{ "--origin", &o->origin }, { "--cache", &o->cache },
		{ "--mode", &o->mode }, { "--policy", &o->policy },
		{ "--block-size", &o->block_size },
		{ "--sequential-cutoff", &o->cutoff },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(arg, map[i].opt))
			return map[i].slot;
	return NULL;
}

static int parse_create(int argc, char **argv, struct create_opts *o)
{
	const char **val;
	int i;

	memset(o, 0, sizeof(*o));
	o->mode = "writethrough";
	for (i = 0; i < argc; i++) {
		val = option_slot(o, argv[i]);
		if (val) {
			if (i + 1 >= argc)
				return ERR("ssdcachectl create: %s needs a value\n", argv[i]) + 1;
			*val = argv[++i];
		} else if (!strcmp(argv[i], "--force")) {
			o->force = 1;
		} else if (argv[i][0] != '-' && !o->name) {
			o->name = argv[i];
		} else {
			return ERR("ssdcachectl create: unexpected '%s'\n", argv[i]) + 1;
		}
	}
	if (!o->name || !o->origin || !o->cache)
		return ERR("ssdcachectl create: expected <name> --origin DEV --cache DEV\n") + 1;
	if (!mode_word(o->mode))
		return ERR("ssdcachectl create: unknown mode '%s' (wt, wb, wa)\n", o->mode) + 1;
	return 0;
}

static int numeric(const char *s)
{
	return s && *s && strspn(s, "0123456789") == strlen(s);
}

int ssdc_cmd_create(int argc, char **argv)
{
	struct create_opts o;
	struct ssdc_dev origin, cache;
	char err[512], id[SSDCACHE_ORIGIN_ID_LEN], params[1024], before[512];
	int r, n;

	r = parse_create(argc, argv, &o);
	if (r)
		return r;
	if ((o.block_size && !numeric(o.block_size)) || (o.cutoff && !numeric(o.cutoff)) ||
	    (o.policy && strcmp(o.policy, "lru") && strcmp(o.policy, "fifo")))
		return ERR("ssdcachectl create: bad --block-size, --sequential-cutoff or --policy\n") + 1;
	r = name_free("create", o.name);
	if (r)
		return r;
	if (ssdc_dev_open(o.origin, &origin, err, sizeof(err)))
		return ERR("ssdcachectl create: origin %s\n", err);
	if (ssdc_dev_open(o.cache, &cache, err, sizeof(err))) {
		ssdc_dev_close(&origin);
		return ERR("ssdcachectl create: cache %s\n", err);
	}
	r = origin.rdev == cache.rdev ?
		ERR("ssdcachectl create: the origin and the cache are the same device\n") : 0;
	if (!r)
		r = not_busy("create", "origin", &origin);
	if (!r)
		r = not_busy("create", "cache", &cache);
	if (!r)
		r = cache_empty(&cache, o.force);
	if (r)
		goto out;
	if (!ssdc_origin_identity(&origin, id, sizeof(id)))
		fprintf(stderr, "ssdcachectl create: warning: %s has no /dev/disk/by-id name; recorded as %s, which may name another disk after a reboot\n",
			o.origin, id);
	n = snprintf(params, sizeof(params), "%u:%u %u:%u %s", major(origin.rdev),
		     minor(origin.rdev), major(cache.rdev), minor(cache.rdev),
		     mode_word(o.mode));
	snprintf(params + n, sizeof(params) - n, " %d format%s origin_id %s%s%s%s%s%s%s",
		 3 + !!o.force + 2 * !!o.block_size + 2 * !!o.policy + 2 * !!o.cutoff,
		 o.force ? " force" : "", id,
		 o.block_size ? " block_size " : "", o.block_size ? o.block_size : "",
		 o.policy ? " policy " : "", o.policy ? o.policy : "",
		 o.cutoff ? " sequential_cutoff " : "", o.cutoff ? o.cutoff : "");
	last_dm_line(before, sizeof(before));
	if (ssdc_create_dev(o.name, origin.sectors, params))
		r = kernel_refused("create", before, "the new cache");
	else
		printf("/dev/mapper/%s\n", o.name);
out:
	ssdc_dev_close(&origin);
	ssdc_dev_close(&cache);
	return r;
}

int ssdc_cmd_load(int argc, char **argv)
{
	struct ssdcache_disk_sb sb;
	struct ssdc_dev origin, cache;
	char err[512], name[128], path[PATH_MAX], params[1024], before[512];
	const char *mode = NULL;
	int r;

	if (argc == 4 && !strcmp(argv[2], "--mode")) {
		mode = mode_word(argv[3]);
		if (!mode)
			return ERR("ssdcachectl load: unknown mode '%s' (wt, wb, wa)\n", argv[3]) + 1;
		argc = 2;
	}
	if (argc < 1 || argc > 2 || argv[0][0] == '-' || (argc == 2 && argv[1][0] == '-'))
		return ERR("ssdcachectl load: expected <cache-dev> [<name>] [--mode M]\n") + 1;
	if (ssdc_dev_open(argv[0], &cache, err, sizeof(err)))
		return ERR("ssdcachectl load: %s\n", err);
	r = ssdc_read_sb(&cache, &sb);
	if (r != SSDC_SB_OK) {
		ssdc_dev_close(&cache);
		if (r == SSDC_SB_NONE)
			return ERR("ssdcachectl load: %s holds no ssdcache superblock\n", argv[0]);
		if (r == SSDC_SB_CORRUPT)
			return ERR("ssdcachectl load: both superblocks of %s are damaged (wrong checksum or version); nothing was loaded\n",
				   argv[0]);
		return ERR("ssdcachectl load: cannot read %s\n", argv[0]);
	}
	sb.origin_id[SSDCACHE_ORIGIN_ID_LEN - 1] = 0;
	if (ssdc_identity_path(sb.origin_id, path, sizeof(path))) {
		ssdc_dev_close(&cache);
		return ERR("ssdcachectl load: %s: the origin's identity '%s' names no device; load it with dmsetup and origin_id\n",
			   argv[0], sb.origin_id);
	}
	if (ssdc_dev_open(path, &origin, err, sizeof(err))) {
		ssdc_dev_close(&cache);
		return ERR("ssdcachectl load: the origin %s (%s) is not there: %s\n",
			   sb.origin_id, path, err);
	}
	if (argc == 2)
		snprintf(name, sizeof(name), "%s", argv[1]);
	else
		snprintf(name, sizeof(name), "ssdc-%02x%02x%02x%02x", sb.cache_uuid[0],
			 sb.cache_uuid[1], sb.cache_uuid[2], sb.cache_uuid[3]);
	r = name_free("load", name);
	if (!r && origin.sectors != le64toh(sb.origin_sectors))
		r = ERR("ssdcachectl load: the origin %s has %" PRIu64 " sectors, the cache was made for %" PRIu64 "\n",
			path, origin.sectors, (uint64_t)le64toh(sb.origin_sectors));
	if (!r)
		r = not_busy("load", "origin", &origin);
	if (!r)
		r = not_busy("load", "cache", &cache);
	if (r)
		goto out;
	snprintf(params, sizeof(params), "%u:%u %u:%u %s 4 block_size %u origin_id %s",
		 major(origin.rdev), minor(origin.rdev), major(cache.rdev), minor(cache.rdev),
		 mode ? mode : sb_mode_word(le32toh(sb.mode)),
		 le32toh(sb.block_sectors) << 9, sb.origin_id);
	last_dm_line(before, sizeof(before));
	if (ssdc_create_dev(name, origin.sectors, params))
		r = kernel_refused("load", before, "the cache");
	else
		printf("/dev/mapper/%s\n", name);
out:
	ssdc_dev_close(&origin);
	ssdc_dev_close(&cache);
	return r;
}
