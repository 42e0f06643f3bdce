// SPDX-License-Identifier: GPL-2.0
/*
 * ssdcachectl: the registry of caches, one line per cache:
 *
 *   <name> <cache-uuid> <origin-identity> <cache-identity> [<key> <value>]...
 *
 * Lines starting with '#' are comments. Writers take an exclusive flock
 * on "<registry>.lock" and replace the file atomically (write, fsync,
 * rename, fsync of the directory), so a crash leaves the old or the new
 * registry, never a torn one.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk.h"
#include "registry.h"

const char *ssdc_registry_path(void)
{
	const char *p = getenv("SSDCACHECTL_REGISTRY");

	return p && *p ? p : SSDC_REGISTRY_DEFAULT;
}

void ssdc_uuid_str(const unsigned char *uuid, char *out)
{
	int i;

	for (i = 0; i < SSDCACHE_UUID_LEN; i++)
		sprintf(out + 2 * i, "%02x", uuid[i]);
}

static int copy_field(char *dst, size_t len, const char *src)
{
	if (!src || strlen(src) >= len)
		return -1;
	strcpy(dst, src);
	return 0;
}

/* Parses one registry line (modified in place); 1 entry, 0 none, -1 bad. */
static int parse_line(char *line, struct ssdc_reg *e)
{
	char *save = NULL, *tok[4], *opt;
	size_t used = 0;
	int i, nopts = 0;

	line[strcspn(line, "\n")] = 0;
	tok[0] = strtok_r(line, " \t", &save);
	if (!tok[0] || tok[0][0] == '#')
		return 0;
	for (i = 1; i < 4; i++)
		tok[i] = strtok_r(NULL, " \t", &save);
	memset(e, 0, sizeof(*e));
	if (copy_field(e->name, sizeof(e->name), tok[0]) ||
	    copy_field(e->uuid, sizeof(e->uuid), tok[1]) ||
	    strlen(e->uuid) != SSDC_UUID_STR_LEN - 1 ||
	    strspn(e->uuid, "0123456789abcdef") != SSDC_UUID_STR_LEN - 1 ||
	    copy_field(e->origin_id, sizeof(e->origin_id), tok[2]) ||
	    copy_field(e->cache_id, sizeof(e->cache_id), tok[3]))
		return -1;
	while ((opt = strtok_r(NULL, " \t", &save))) {
		if (used + strlen(opt) + 2 > sizeof(e->opts))
			return -1;
		used += sprintf(e->opts + used, "%s%s", used ? " " : "", opt);
		nopts++;
	}
	return nopts % 2 ? -1 : 1;
}

int ssdc_reg_read(struct ssdc_reg **entries, int *n, char *err, size_t len)
{
	const char *path = ssdc_registry_path();
	struct ssdc_reg e, *more;
	char line[1024];
	int lineno = 0, r = 0;
	FILE *f = fopen(path, "re");

	*entries = NULL;
	*n = 0;
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (!r && fgets(line, sizeof(line), f)) {
		lineno++;
		switch (parse_line(line, &e)) {
		case 0:
			continue;
		case 1:
			more = realloc(*entries, (*n + 1) * sizeof(e));
			if (!more) {
				snprintf(err, len, "out of memory");
				r = -1;
				break;
			}
			*entries = more;
			(*entries)[(*n)++] = e;
			continue;
		default:
			snprintf(err, len, "%s:%d: malformed entry", path, lineno);
			r = -1;
		}
	}
	if (!r && ferror(f)) {
		snprintf(err, len, "%s: read error", path);
		r = -1;
	}
	fclose(f);
	if (r) {
		free(*entries);
		*entries = NULL;
		*n = 0;
	}
	return r;
}

int ssdc_reg_find(const char *uuid, const char *name, struct ssdc_reg *out)
{
	struct ssdc_reg *e;
	char err[256];
	int n, i, found = 0;

	if (ssdc_reg_read(&e, &n, err, sizeof(err)))
		return 0;
	for (i = 0; i < n && !found; i++) {
		if (uuid ? strcmp(e[i].uuid, uuid) : strcmp(e[i].name, name))
			continue;
		*out = e[i];
		found = 1;
	}
	free(e);
	return found;
}

static int mkdir_parent(const char *path)
{
	char *copy = strdup(path), *dir;
	int r;

	if (!copy)
		return -1;
	dir = dirname(copy);
	r = mkdir(dir, 0755);
	if (r && errno == EEXIST)
		r = 0;
	free(copy);
	return r;
}

static int fsync_parent(const char *path)
{
	char *copy = strdup(path);
	int fd, r = -1;

	if (!copy)
		return -1;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		r = fsync(fd);
		close(fd);
	}
	free(copy);
	return r;
}

/*
 * Opens (creates) the lock file of registry @path, whose name goes into
 * @lock, creating the registry's directory if need be. -1 with errno set.
 */
static int open_lock(const char *path, char *lock, size_t len)
{
	if (mkdir_parent(path))
		return -1;
	snprintf(lock, len, "%s.lock", path);
	return open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
}

/*
 * Rewrites the registry under the lock: without the entry of @drop_uuid,
 * or of @add's UUID, cache device or name (forgotten caches share theirs),
 * and then with @add.
 */
static int rewrite(const char *drop_uuid, const struct ssdc_reg *add)
{
	const char *path = ssdc_registry_path();
	char tmp[4096], lock[4096], err[256];
	struct ssdc_reg *e = NULL;
	int n, i, lfd, r = -1;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	lfd = open_lock(path, lock, sizeof(lock));
	if (lfd < 0 || flock(lfd, LOCK_EX))
		goto out;
	if (ssdc_reg_read(&e, &n, err, sizeof(err))) {
		errno = EINVAL;
		goto out;
	}
	f = fopen(tmp, "we");
	if (!f)
		goto out;
	fprintf(f, "# ssdcache registry, written by ssdcachectl: see ssdcachectl(8).\n"
		"# name cache-uuid origin-identity cache-identity [option value]...\n");
	for (i = 0; i < n; i++) {
		if ((drop_uuid && !strcmp(e[i].uuid, drop_uuid)) ||
		    (add && (!strcmp(e[i].uuid, add->uuid) || !strcmp(e[i].cache_id, add->cache_id) ||
			     (!strcmp(e[i].name, add->name) && !ssdc_reg_forgotten(add)))))
			continue;
		fprintf(f, "%s %s %s %s%s%s\n", e[i].name, e[i].uuid, e[i].origin_id,
			e[i].cache_id, e[i].opts[0] ? " " : "", e[i].opts);
	}
	if (add)
		fprintf(f, "%s %s %s %s%s%s\n", add->name, add->uuid, add->origin_id,
			add->cache_id, add->opts[0] ? " " : "", add->opts);
	if (fflush(f) || fsync(fileno(f))) {
		fclose(f);
		unlink(tmp);
		goto out;
	}
	if (fclose(f) || rename(tmp, path) || fsync_parent(path)) {
		unlink(tmp);
		goto out;
	}
	r = 0;
out:
	free(e);
	if (lfd >= 0)
		close(lfd);
	return r;
}

int ssdc_reg_put(const struct ssdc_reg *e)
{
	return rewrite(NULL, e);
}

int ssdc_reg_drop(const char *uuid)
{
	return rewrite(uuid, NULL);
}

int ssdc_reg_writable(char *err, size_t len)
{
	const char *path = ssdc_registry_path();
	char lock[4096];
	int fd;

	lock[0] = 0;
	fd = open_lock(path, lock, sizeof(lock));
	if (fd < 0) {
		snprintf(err, len, "%s: %s", lock[0] ? lock : path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int ssdc_register(const char *name, const struct ssdc_dev *cache, const char *cache_id,
		  const char *opts, const char *cmd)
{
	struct ssdcache_disk_sb sb;
	struct ssdc_reg e;

	memset(&e, 0, sizeof(e));
	if (ssdc_read_sb(cache, &sb) != SSDC_SB_OK) {
		fprintf(stderr, "ssdcachectl %s: %s: cannot read back its superblock to register it\n",
			cmd, cache->path);
		return 1;
	}
	snprintf(e.name, sizeof(e.name), "%s", name);
	ssdc_uuid_str(sb.cache_uuid, e.uuid);
	snprintf(e.origin_id, sizeof(e.origin_id), "%.*s", SSDCACHE_ORIGIN_ID_LEN - 1,
		 sb.origin_id);
	snprintf(e.cache_id, sizeof(e.cache_id), "%s", cache_id);
	snprintf(e.opts, sizeof(e.opts), "%s", opts);
	if (ssdc_reg_put(&e)) {
		fprintf(stderr, "ssdcachectl %s: /dev/mapper/%s works, but it could not be registered in %s (%s): it will not be assembled at boot, and its origin is not protected\n",
			cmd, name, ssdc_registry_path(), strerror(errno));
		return 1;
	}
	return 0;
}

/* Sets option @key of @opts ("key value ..." pairs) to @val. */
static int set_opt(char *opts, size_t len, const char *key, const char *val)
{
	char out[SSDC_OPTS_LEN] = "", *save = NULL, *k, *v;
	size_t used = 0;

	for (k = strtok_r(opts, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
		v = strtok_r(NULL, " ", &save);
		if (!v || !strcmp(k, key))
			continue;
		used += snprintf(out + used, sizeof(out) - used, "%s%s %s", used ? " " : "", k, v);
		if (used >= sizeof(out))
			return -1;
	}
	used += snprintf(out + used, sizeof(out) - used, "%s%s %s", used ? " " : "", key, val);
	if (used >= sizeof(out) || used >= len)
		return -1;
	strcpy(opts, out);
	return 0;
}

int ssdc_reg_set_opt(const char *name, const char *key, const char *val)
{
	struct ssdc_reg e;

	if (!ssdc_reg_find(NULL, name, &e) || ssdc_reg_forgotten(&e))
		return 0;
	if (set_opt(e.opts, sizeof(e.opts), key, val))
		return -1;
	return ssdc_reg_put(&e);
}
