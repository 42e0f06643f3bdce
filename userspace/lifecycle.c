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

#include "boot.h"
#include "disk.h"
#include "dm.h"
#include "lifecycle.h"
#include "registry.h"

#define ERR(...)	(fprintf(stderr, __VA_ARGS__), EXIT_FAILED)

/*
 * The kernel log's last device-mapper line about ssdcache (a table the
 * target refused, a cache it could not load), timestamp included so that
 * a repeated message still differs; "" if none can be read. With @prev,
 * the line before it there too.
 */
static void last_dm_lines(char *out, char *prev, size_t len)
{
	int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf, *line, *save = NULL;

	out[0] = 0;
	if (prev)
		prev[0] = 0;
	if (size <= 0 || !(buf = malloc(size + 1)))
		return;
	size = klogctl(3, buf, size);		/* SYSLOG_ACTION_READ_ALL */
	buf[size > 0 ? size : 0] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "device-mapper: ") && strstr(line, "ssdcache") &&
		    !strstr(line, "preresume failed")) {	/* dm's echo of ours */
			if (prev)
				snprintf(prev, len, "%s", out);
			snprintf(out, len, "%s", line);
		}
	free(buf);
}

static void last_dm_line(char *out, size_t len)
{
	last_dm_lines(out, NULL, len);
}

/* The text of kernel log line @line after its "device-mapper: ". */
static const char *dm_text(const char *line)
{
	const char *t = strstr(line, "device-mapper: ");

	return t ? t + strlen("device-mapper: ") : NULL;
}

/*
 * Says why the kernel refused, if its log has a new line about it; with
 * the line before it when the reason points to the log for details (the
 * figures of a cache too large for RAM).
 */
static int kernel_refused(const char *cmd, const char *before, const char *what)
{
	char after[512], prev[512];
	const char *reason, *detail;

	last_dm_lines(after, prev, sizeof(after));
	reason = dm_text(after);
	detail = dm_text(prev);
	if (!after[0] || !strcmp(before, after) || !reason)
		return ERR("ssdcachectl %s: the kernel refused %s (see the kernel log: dmesg | tail)\n",
			   cmd, what);
	if (strstr(reason, "see the kernel log") && detail && strcmp(before, prev))
		return ERR("ssdcachectl %s: the kernel refused %s: %s\n  %s\n", cmd, what,
			   reason, detail);
	return ERR("ssdcachectl %s: the kernel refused %s: %s\n", cmd, what, reason);
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
	char what[SSDC_PRINTABLE_ID_LEN + 64], id[SSDC_PRINTABLE_ID_LEN];
	int r = ssdc_read_sb(c, &sb);

	if (r == SSDC_SB_IOERR)
		return ERR("ssdcachectl create: cannot read %s\n", c->path);
	if (r == SSDC_SB_OK)
		snprintf(what, sizeof(what), "an ssdcache superblock (a cache of %s)",
			 ssdc_printable(sb.origin_id, SSDCACHE_ORIGIN_ID_LEN, id, sizeof(id)));
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

/*
 * Options create accepts as --<name with dashes> VALUE: table options,
 * registered for later loads, and format options, which only the table
 * that formats the cache takes.
 */
static const struct {
	const char *key;
	int format;
} create_keys[] = {
	{ "policy", 0 }, { "sequential_cutoff", 0 }, { "dirty_high", 0 },
	{ "dirty_low", 0 }, { "writeback_idle_ms", 0 }, { "writeback_rate", 0 },
	{ "writeback_yield", 0 }, { "error_limit", 0 }, { "error_halflife_ms", 0 },
	{ "readahead_kb", 0 }, { "block_size", 1 }, { "run_size", 1 },
};

struct create_opts {
	const char *name, *origin, *cache, *mode;
	char opts[SSDC_OPTS_LEN];	/* table options, "key value ..." */
	char fmt[64];			/* format options, the same */
	int force;
};

/* The index in create_keys of the option --@arg names ("--dirty-high"), or -1. */
static int create_key(const char *arg)
{
	char key[64];
	size_t i;

	if (strncmp(arg, "--", 2) || strlen(arg) >= sizeof(key) + 2)
		return -1;
	for (i = 0; arg[i + 2]; i++)
		key[i] = arg[i + 2] == '-' ? '_' : arg[i + 2];
	key[i] = 0;
	for (i = 0; i < sizeof(create_keys) / sizeof(create_keys[0]); i++)
		if (!strcmp(key, create_keys[i].key))
			return (int)i;
	return -1;
}

static int numeric(const char *s)
{
	return s && *s && strspn(s, "0123456789") == strlen(s);
}

/*
 * Appends option create_keys[@k] @val to the table or format options of
 * @o; the kernel checks the range.
 */
static int add_opt(struct create_opts *o, int k, const char *val)
{
	const char *key = create_keys[k].key;
	int format = create_keys[k].format;
	char *buf = format ? o->fmt : o->opts;
	size_t len = format ? sizeof(o->fmt) : sizeof(o->opts), used = strlen(buf);

	if (strcmp(key, "policy") ? !numeric(val) : strcmp(val, "lru") && strcmp(val, "fifo"))
		return ERR("ssdcachectl create: bad value '%s' for --%s\n", val, key) + 1;
	if (strstr(buf, key))
		return ERR("ssdcachectl create: --%s given twice\n", key) + 1;
	if (used + strlen(key) + strlen(val) + 3 > len)
		return ERR("ssdcachectl create: too many options\n") + 1;
	snprintf(buf + used, len - used, "%s%s %s", used ? " " : "", key, val);
	return 0;
}

static int parse_create(int argc, char **argv, struct create_opts *o)
{
	const char **val;
	int i, k, r;

	memset(o, 0, sizeof(*o));
	o->mode = "writethrough";
	for (i = 0; i < argc; i++) {
		val = !strcmp(argv[i], "--origin") ? &o->origin :
		      !strcmp(argv[i], "--cache") ? &o->cache :
		      !strcmp(argv[i], "--mode") ? &o->mode : NULL;
		k = create_key(argv[i]);
		if ((val || k >= 0) && i + 1 >= argc)
			return ERR("ssdcachectl create: %s needs a value\n", argv[i]) + 1;
		if (val) {
			*val = argv[++i];
		} else if (k >= 0) {
			r = add_opt(o, k, argv[++i]);
			if (r)
				return r;
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
	if (strlen(o->name) >= SSDC_NAME_LEN || strchr(o->name, '/') ||
	    !strcmp(o->name, SSDC_FORGOTTEN))
		return ERR("ssdcachectl create: bad name '%s'\n", o->name) + 1;
	return 0;
}

static int words(const char *s)
{
	int n = 0, in = 0;

	for (; *s; s++) {
		n += !in && *s != ' ';
		in = *s != ' ';
	}
	return n;
}

/*
 * Refuses what registry entries @e say belongs to another cache: the
 * origin (another cache's dirty blocks may be waiting for it) or the name.
 */
static int not_registered(const struct create_opts *o, const struct ssdc_reg *e, int n,
			  const char *origin_id, const char *cache_id)
{
	char err[512];
	int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(e[i].cache_id, cache_id) || ssdc_reg_forgotten(&e[i]))
			continue;	/* the cache device's old cache: see cache_empty */
		if (!strcmp(e[i].origin_id, origin_id))
			return ERR("ssdcachectl create: %s is the origin of the cache %s (on %s), whose blocks may not all be on it; end that first: ssdcachectl remove %s --detach, or ssdcachectl forget %s --force if its cache device is lost\n",
				   o->origin, e[i].name, e[i].cache_id, e[i].name, e[i].name);
		if (!strcmp(e[i].name, o->name))
			return ERR("ssdcachectl create: the name %s belongs to the registered cache on %s\n",
				   o->name, e[i].cache_id);
	}
	if (ssdc_reg_writable(err, sizeof(err)))
		return ERR("ssdcachectl create: cannot write the registry: %s\n", err);
	return 0;
}

/*
 * Refuses a read-only device, unless the origin is read-only only because
 * registry entries @e reserve it for the cache being formatted over again.
 */
static int writable(const struct create_opts *o, const struct ssdc_reg *e, int n,
		    const char *origin_id, const char *cache_id)
{
	int i, own = 0;

	if (ssdc_dev_get_ro(o->cache) == 1)
		return ERR("ssdcachectl create: %s is read-only\n", o->cache);
	if (ssdc_dev_get_ro(o->origin) != 1)
		return 0;
	for (i = 0; i < n; i++)
		own |= !strcmp(e[i].origin_id, origin_id) && !strcmp(e[i].cache_id, cache_id);
	if (!own)
		return ERR("ssdcachectl create: %s is read-only\n", o->origin);
	ssdc_dev_set_ro(o->origin, 0);
	return 0;
}

/* What the registry allows for the cache to create: see the two above. */
static int registry_allows(const struct create_opts *o, const char *origin_id,
			   const char *cache_id)
{
	struct ssdc_reg *e;
	char err[512];
	int n, r;

	if (ssdc_reg_read(&e, &n, err, sizeof(err)))
		return ERR("ssdcachectl create: cannot read the registry: %s\n", err);
	r = not_registered(o, e, n, origin_id, cache_id);
	if (!r)
		r = writable(o, e, n, origin_id, cache_id);
	free(e);
	return r;
}

int ssdc_cmd_create(int argc, char **argv)
{
	struct create_opts o;
	struct ssdc_dev origin, cache;
	char err[512], id[SSDCACHE_ORIGIN_ID_LEN], cache_id[SSDCACHE_ORIGIN_ID_LEN];
	char params[1024 + 64], before[512];
	int r, lock = -1;

	r = parse_create(argc, argv, &o);
	if (r)
		return r;
	r = name_free("create", o.name);
	if (r)
		return r;
	if (ssdc_dev_open(o.origin, &origin, err, sizeof(err)))
		return ERR("ssdcachectl create: origin %s\n", err);
	if (ssdc_dev_open(o.cache, &cache, err, sizeof(err))) {
		ssdc_dev_close(&origin);
		return ERR("ssdcachectl create: cache %s\n", err);
	}
	ssdc_origin_identity(&cache, cache_id, sizeof(cache_id));
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
	lock = ssdc_run_lock();		/* udev-probe must not set it read-only again */
	r = registry_allows(&o, id, cache_id);
	if (r)
		goto out;
	snprintf(params, sizeof(params), "%u:%u %u:%u %s %d format%s origin_id %s%s%s%s%s",
		 major(origin.rdev), minor(origin.rdev), major(cache.rdev), minor(cache.rdev),
		 mode_word(o.mode), 3 + !!o.force + words(o.fmt) + words(o.opts),
		 o.force ? " force" : "", id, o.fmt[0] ? " " : "", o.fmt,
		 o.opts[0] ? " " : "", o.opts);
	last_dm_line(before, sizeof(before));
	if (ssdc_create_dev(o.name, origin.sectors, params)) {
		r = kernel_refused("create", before, "the new cache");
		goto out;
	}
	r = ssdc_register(o.name, &cache, cache_id, o.opts, "create");
	ssdc_dev_uevent(origin.rdev);	/* udev hides it now */
	if (!r)
		printf("/dev/mapper/%s\n", o.name);
out:
	ssdc_run_unlock(lock);
	ssdc_dev_close(&origin);
	ssdc_dev_close(&cache);
	return r;
}

/* Why the superblock of @path could not be used, for command @cmd. */
static int sb_failure(const char *cmd, const char *path, int r)
{
	if (r == SSDC_SB_NONE)
		return ERR("ssdcachectl %s: %s holds no ssdcache superblock\n", cmd, path);
	if (r == SSDC_SB_CORRUPT)
		return ERR("ssdcachectl %s: both superblocks of %s are damaged (wrong checksum); nothing was loaded\n",
			   cmd, path);
	return ERR("ssdcachectl %s: cannot read %s\n", cmd, path);
}

int ssdc_load(const char *cmd, const char *cache_path, const char *want_name,
	      const char *mode)
{
	struct ssdcache_disk_sb sb;
	struct ssdc_dev origin, cache;
	struct ssdc_reg reg;
	char err[512], name[SSDC_NAME_LEN], path[PATH_MAX], params[1024], before[512];
	char uuid[SSDC_UUID_STR_LEN], cache_id[SSDCACHE_ORIGIN_ID_LEN], id[SSDC_PRINTABLE_ID_LEN];
	int r, registered, was_ro;

	if (ssdc_dev_open(cache_path, &cache, err, sizeof(err)))
		return ERR("ssdcachectl %s: %s\n", cmd, err);
	r = ssdc_read_sb(&cache, &sb);
	if (r != SSDC_SB_OK) {
		ssdc_dev_close(&cache);
		return sb_failure(cmd, cache_path, r);
	}
	if (le32toh(sb.version) < SSDCACHE_FORMAT_VERSION_MIN ||
	    le32toh(sb.version) > SSDCACHE_FORMAT_VERSION) {
		ssdc_dev_close(&cache);
		return ERR("ssdcachectl %s: %s is in on-disk format %u; this ssdcachectl and its module read formats %u to %u\n",
			   cmd, cache_path, le32toh(sb.version), SSDCACHE_FORMAT_VERSION_MIN,
			   SSDCACHE_FORMAT_VERSION);
	}
	sb.origin_id[SSDCACHE_ORIGIN_ID_LEN - 1] = 0;
	if (ssdc_identity_path(sb.origin_id, path, sizeof(path))) {
		ssdc_dev_close(&cache);
		return ERR("ssdcachectl %s: %s: the origin's identity '%s' names no device; load it with dmsetup and origin_id\n",
			   cmd, cache_path,
			   ssdc_printable(sb.origin_id, SSDCACHE_ORIGIN_ID_LEN, id, sizeof(id)));
	}
	if (ssdc_dev_open(path, &origin, err, sizeof(err))) {
		ssdc_dev_close(&cache);
		return ERR("ssdcachectl %s: the origin %s is not there: %s\n", cmd,
			   ssdc_printable(sb.origin_id, SSDCACHE_ORIGIN_ID_LEN, id, sizeof(id)),
			   ssdc_printable(err, sizeof(err), path, sizeof(path)));
	}
	ssdc_uuid_str(sb.cache_uuid, uuid);
	registered = ssdc_reg_find(uuid, NULL, &reg);
	if (registered && ssdc_reg_forgotten(&reg)) {
		ssdc_dev_close(&origin);
		ssdc_dev_close(&cache);
		return ERR("ssdcachectl %s: the cache on %s was forgotten (ssdcachectl forget) while it was away: its blocks may be older than the origin's, so it is not loaded; format it again with create --force\n",
			   cmd, cache_path);
	}
	if (want_name)
		snprintf(name, sizeof(name), "%s", want_name);
	else if (registered)
		snprintf(name, sizeof(name), "%s", reg.name);
	else
		snprintf(name, sizeof(name), "ssdc-%.8s", uuid);
	r = name_free(cmd, name);
	if (!r && origin.sectors != le64toh(sb.origin_sectors))
		r = ERR("ssdcachectl %s: the origin %s has %" PRIu64 " sectors, the cache was made for %" PRIu64 "\n",
			cmd, path, origin.sectors, (uint64_t)le64toh(sb.origin_sectors));
	if (!r)
		r = not_busy(cmd, "origin", &origin);
	if (!r)
		r = not_busy(cmd, "cache", &cache);
	if (!r && ssdc_reg_writable(err, sizeof(err)))
		r = ERR("ssdcachectl %s: cannot write the registry: %s\n", cmd, err);
	if (r)
		goto out;
	snprintf(params, sizeof(params), "%u:%u %u:%u %s %d block_size %u origin_id %s%s%s",
		 major(origin.rdev), minor(origin.rdev), major(cache.rdev), minor(cache.rdev),
		 mode ? mode : sb_mode_word(le32toh(sb.mode)),
		 4 + (registered ? words(reg.opts) : 0),
		 le32toh(sb.block_sectors) << 9, sb.origin_id,
		 registered && reg.opts[0] ? " " : "", registered ? reg.opts : "");
	last_dm_line(before, sizeof(before));
	/* The origin of a registered cache is read-only until the cache is loaded. */
	was_ro = ssdc_dev_get_ro(path) == 1;
	if (was_ro)
		ssdc_dev_set_ro(path, 0);
	if (ssdc_create_dev(name, origin.sectors, params)) {
		if (was_ro)
			ssdc_dev_set_ro(path, 1);
		r = kernel_refused(cmd, before, "the cache");
		goto out;
	}
	ssdc_origin_identity(&cache, cache_id, sizeof(cache_id));
	r = ssdc_register(name, &cache, cache_id, registered ? reg.opts : "", cmd);
	ssdc_dev_uevent(origin.rdev);
	if (!r)
		printf("/dev/mapper/%s\n", name);
out:
	ssdc_dev_close(&origin);
	ssdc_dev_close(&cache);
	return r;
}

int ssdc_cmd_load(int argc, char **argv)
{
	const char *mode = NULL;
	int lock, r;

	if (argc == 4 && !strcmp(argv[2], "--mode")) {
		mode = mode_word(argv[3]);
		if (!mode)
			return ERR("ssdcachectl load: unknown mode '%s' (wt, wb, wa)\n", argv[3]) + 1;
		argc = 2;
	}
	if (argc < 1 || argc > 2 || argv[0][0] == '-' || (argc == 2 && argv[1][0] == '-'))
		return ERR("ssdcachectl load: expected <cache-dev> [<name>] [--mode M]\n") + 1;
	if (argc == 2 && (strlen(argv[1]) >= SSDC_NAME_LEN || strchr(argv[1], '/') ||
			  !strcmp(argv[1], SSDC_FORGOTTEN)))
		return ERR("ssdcachectl load: bad name '%s'\n", argv[1]) + 1;
	lock = ssdc_run_lock();
	r = ssdc_load("load", argv[0], argc == 2 ? argv[1] : NULL, mode);
	ssdc_run_unlock(lock);
	return r;
}
