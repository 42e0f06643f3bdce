// SPDX-License-Identifier: GPL-2.0
/*
 * ssdcachectl udev-probe and assemble: what udev and systemd run as the
 * devices of registered caches appear (udev/69-ssdcache.rules,
 * systemd/ssdcache-assemble@.service).
 *
 * udev-probe tells udev whether a device is the cache or the origin of a
 * registered cache, and sets an origin read-only while no cache holds it.
 * assemble loads the cache once both of its devices are present; it is
 * called for each of them, in any order, and for devices of no cache.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "boot.h"
#include "disk.h"
#include "dm.h"
#include "lifecycle.h"
#include "registry.h"

#define LOCK_DIR	"/run/ssdcache"
#define MAX_IDS		32

/*
 * Serialises udev-probe's protection, assemble, load and remove: an
 * origin must not be made read-only between load's clearing the flag and
 * the kernel's opening the device. -1 if the lock cannot be had.
 */
int ssdc_run_lock(void)
{
	int fd;

	mkdir(LOCK_DIR, 0755);
	fd = open(LOCK_DIR "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 && flock(fd, LOCK_EX)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void ssdc_run_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

struct ids {
	char id[MAX_IDS][SSDCACHE_ORIGIN_ID_LEN];
	int n;
};

static void add_id(struct ids *s, const char *prefix, const char *name, size_t len)
{
	if (s->n < MAX_IDS && strlen(prefix) + len < SSDCACHE_ORIGIN_ID_LEN)
		snprintf(s->id[s->n++], SSDCACHE_ORIGIN_ID_LEN, "%s%.*s", prefix, (int)len, name);
}

/* Adds by-id:NAME for link "disk/by-id/NAME"; a partition's, without -partN. */
static void add_link(struct ids *s, const char *link, int part)
{
	const char *name = link, *p;
	size_t len;

	if (!strncmp(name, "/dev/", 5))
		name += 5;
	if (strncmp(name, "disk/by-id/", 11))
		return;
	name += 11;
	len = strlen(name);
	p = strstr(name, "-part");
	if (part) {
		if (!p)
			return;
		len = p - name;
	}
	add_id(s, "by-id:", name, len);
}

/*
 * Every identity an origin recorded on this device could have: its kernel
 * name and by-id names (those udev is making, @links, and those in /dev),
 * and for a partition, its disk's: a registered disk's partitions are
 * protected with it.
 */
static void device_ids(const struct ssdc_dev *d, int nlinks, char **links, struct ids *s)
{
	char sys[128], real[PATH_MAX], path[PATH_MAX + 32], *base;
	struct dirent *e;
	struct stat st;
	int i, part;
	DIR *dir;

	s->n = 0;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(d->rdev), minor(d->rdev));
	if (!realpath(sys, real))
		return;
	base = strrchr(real, '/') + 1;
	add_id(s, "dev:", base, strlen(base));
	snprintf(path, sizeof(path), "%s/partition", real);
	part = !access(path, F_OK);
	if (part) {
		*strrchr(real, '/') = 0;
		base = strrchr(real, '/') + 1;
		add_id(s, "dev:", base, strlen(base));
	}
	for (i = 0; i < nlinks; i++)
		add_link(s, links[i], part);
	dir = opendir("/dev/disk/by-id");
	while (dir && (e = readdir(dir))) {
		snprintf(path, sizeof(path), "/dev/disk/by-id/%s", e->d_name);
		if (e->d_name[0] != '.' && !stat(path, &st) && st.st_rdev == d->rdev)
			add_link(s, path, part);
	}
	if (dir)
		closedir(dir);
}

/*
 * What device @d is to the registry: SSDC_ROLE_CACHE (its superblock's
 * UUID is registered), SSDC_ROLE_ORIGIN (an identity of it is a registered
 * origin's) or SSDC_ROLE_NONE; the entry in @e. A cache's superblock also
 * goes into @sb_out, if not NULL.
 */
int ssdc_role(const struct ssdc_dev *d, int nlinks, char **links, struct ssdc_reg *e,
	      struct ssdcache_disk_sb *sb_out)
{
	struct ssdcache_disk_sb sb;
	struct ssdc_reg *all;
	struct ids ids;
	char uuid[SSDC_UUID_STR_LEN], err[256];
	int n, i, k, role = SSDC_ROLE_NONE;

	if (ssdc_read_sb(d, &sb) == SSDC_SB_OK) {
		if (sb_out)
			*sb_out = sb;
		ssdc_uuid_str(sb.cache_uuid, uuid);
		return ssdc_reg_find(uuid, NULL, e) && !ssdc_reg_forgotten(e) ?
		       SSDC_ROLE_CACHE : SSDC_ROLE_NONE;
	}
	if (ssdc_reg_read(&all, &n, err, sizeof(err)) || !n)
		return SSDC_ROLE_NONE;
	device_ids(d, nlinks, links, &ids);
	for (i = 0; i < n && !role; i++)
		for (k = 0; k < ids.n && !role; k++)
			if (!strcmp(all[i].origin_id, ids.id[k]) && !ssdc_reg_forgotten(&all[i])) {
				*e = all[i];
				role = SSDC_ROLE_ORIGIN;
			}
	free(all);
	return role;
}

/* Makes origin @d read-only, unless something (its cache) holds it. */
static int protect(const struct ssdc_dev *d)
{
	int lock = ssdc_run_lock(), r = 0;

	if (!ssdc_dev_busy(d))
		r = !ssdc_dev_set_ro(d->path, 1);
	ssdc_run_unlock(lock);
	return r;
}

/*
 * SSDCACHE_LINKS: the links udev is making for the device, without those
 * named after its filesystem (by-uuid, by-label), which must name the
 * cache's device only. The rule assigns them back (systemd 252's udev
 * cannot remove one link: "SYMLINK-=" is refused).
 */
static void print_links(int n, char **links)
{
	const char *sep = "";
	int i;

	printf("SSDCACHE_LINKS=\"");
	for (i = 0; i < n; i++) {
		if (!strncmp(links[i], "disk/by-uuid/", 13) ||
		    !strncmp(links[i], "disk/by-label/", 14) || strpbrk(links[i], "\"\\"))
			continue;
		printf("%s%s", sep, links[i]);
		sep = " ";
	}
	printf("\"\n");
}

int ssdc_cmd_udev_probe(int argc, char **argv)
{
	static const char *const roles[] = { "", "cache", "origin" };
	struct ssdc_reg e;
	struct ssdc_dev d;
	char err[512];
	int role;

	if (argc < 1) {
		fprintf(stderr, "ssdcachectl udev-probe: expected <device> [<udev link>...]\n");
		return EXIT_USAGE;
	}
	if (ssdc_dev_open(argv[0], &d, err, sizeof(err)))
		return 0;	/* gone again, or not a block device: nothing to say */
	role = ssdc_role(&d, argc - 1, argv + 1, &e, NULL);
	if (role != SSDC_ROLE_NONE) {
		printf("SSDCACHE_ROLE=%s\nSSDCACHE_NAME=%s\nSSDCACHE_UUID=%s\n", roles[role],
		       e.name, e.uuid);
		print_links(argc - 1, argv + 1);
		if (role == SSDC_ROLE_ORIGIN && protect(&d))
			printf("SSDCACHE_READONLY=1\n");
	}
	ssdc_dev_close(&d);
	return 0;
}

/* For --background: messages go to the kernel log, where boot messages are. */
static void log_to_kmsg(void)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* one kernel log record per line */
}

int ssdc_holds_cache(const char *path, const char *uuid, struct ssdcache_disk_sb *sb)
{
	struct ssdc_dev d;
	char err[512], found[SSDC_UUID_STR_LEN];
	int r;

	if (ssdc_dev_open(path, &d, err, sizeof(err)))
		return 0;
	r = ssdc_read_sb(&d, sb) == SSDC_SB_OK;
	ssdc_dev_close(&d);
	if (r)
		ssdc_uuid_str(sb->cache_uuid, found);
	return r && !strcmp(found, uuid);
}

static int assemble(const char *devnode)
{
	struct ssdcache_disk_sb sb;
	struct ssdc_reg e;
	struct ssdc_dev d;
	char err[512], cache[PATH_MAX], origin[PATH_MAX];
	unsigned int ma, mi;
	int role;

	if (ssdc_dev_open(devnode, &d, err, sizeof(err)))
		return 0;
	role = ssdc_role(&d, 0, NULL, &e, &sb);
	ssdc_dev_close(&d);
	if (role == SSDC_ROLE_NONE)
		return 0;
	if (ssdc_devnum(e.name, &ma, &mi) != SSDC_DM_NODEV)
		return 0;	/* assembled already (or the name is taken: load says) */
	if (role == SSDC_ROLE_CACHE)
		snprintf(cache, sizeof(cache), "%s", devnode);	/* @sb is its */
	else if (ssdc_identity_path(e.cache_id, cache, sizeof(cache)))
		return 0;
	if (role != SSDC_ROLE_CACHE && !ssdc_holds_cache(cache, e.uuid, &sb)) {
		printf("ssdcachectl: %s: waiting for its cache device %s\n", e.name, e.cache_id);
		return 0;
	}
	sb.origin_id[SSDCACHE_ORIGIN_ID_LEN - 1] = 0;
	if (ssdc_identity_path(sb.origin_id, origin, sizeof(origin)) ||
	    ssdc_dev_open(origin, &d, err, sizeof(err))) {
		printf("ssdcachectl: %s: waiting for its origin %s\n", e.name, e.origin_id);
		return 0;
	}
	ssdc_dev_close(&d);
	if (!d.sectors) {	/* a detached loop device, an empty drive */
		printf("ssdcachectl: %s: waiting for its origin %s (empty)\n", e.name, e.origin_id);
		return 0;
	}
	printf("ssdcachectl: %s: assembling from %s and %s\n", e.name, cache, origin);
	return ssdc_load("assemble", cache, e.name, NULL);
}

int ssdc_cmd_assemble(int argc, char **argv)
{
	int background = argc == 2 && !strcmp(argv[0], "--background"), lock, r;
	const char *dev = argv[argc - 1];

	if (argc != 1 + background || dev[0] == '-') {
		fprintf(stderr, "ssdcachectl assemble: expected [--background] <device>\n");
		return EXIT_USAGE;
	}
	if (background) {
		if (fork())
			return 0;
		setsid();
		log_to_kmsg();
	}
	lock = ssdc_run_lock();
	r = assemble(dev);
	ssdc_run_unlock(lock);
	return r;
}
