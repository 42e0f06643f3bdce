// SPDX-License-Identifier: GPL-2.0
/* ssdcachectl: block devices, and the superblock through the shared header. */
#include <blkid/blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <endian.h>

#include "disk.h"

/* crc32c (Castagnoli, reflected), as the format uses it: no final inversion. */
uint32_t ssdc_crc32c(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78U & -(crc & 1));
	}
	return crc;
}

int ssdc_dev_open(const char *path, struct ssdc_dev *d, char *err, size_t len)
{
	struct stat st;
	uint64_t bytes;

	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "%s", path);
	if (stat(path, &st)) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISBLK(st.st_mode)) {
		snprintf(err, len, "%s: not a block device", path);
		return -1;
	}
	d->rdev = st.st_rdev;
	d->fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (d->fd < 0 || ioctl(d->fd, BLKGETSIZE64, &bytes)) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		if (d->fd >= 0)
			close(d->fd);
		return -1;
	}
	d->sectors = bytes >> 9;
	return 0;
}

void ssdc_dev_close(struct ssdc_dev *d)
{
	if (d->fd > 0)
		close(d->fd);
	d->fd = -1;
}

/* Is the device open exclusively (mounted, or claimed by a holder)? */
int ssdc_dev_busy(const struct ssdc_dev *d)
{
	int fd = open(d->path, O_RDONLY | O_EXCL | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EBUSY;
}

/* The first entry of /sys/dev/block/M:m/holders, or "" if none. */
void ssdc_dev_holder(const struct ssdc_dev *d, char *buf, size_t len)
{
	char path[128];
	struct dirent *e;
	DIR *dir;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders", major(d->rdev),
		 minor(d->rdev));
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)))
		if (e->d_name[0] != '.') {
			snprintf(buf, len, "%s", e->d_name);
			break;
		}
	closedir(dir);
}

/* What blkid finds on the device: "ext4 filesystem", "dos partition table"... */
int ssdc_dev_contents(const struct ssdc_dev *d, char *buf, size_t len)
{
	blkid_probe pr;
	const char *type = NULL;
	int found = 0, fd;

	buf[0] = 0;
	/* The kernel writes caches past the page cache: drop what it holds. */
	fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ioctl(fd, BLKFLSBUF, 0);
		close(fd);
	}
	pr = blkid_new_probe_from_filename(d->path);
	if (!pr)
		return -1;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	if (!blkid_do_safeprobe(pr)) {
		if (!blkid_probe_lookup_value(pr, "TYPE", &type, NULL)) {
			snprintf(buf, len, "a '%s' signature", type);
			found = 1;
		} else if (!blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL)) {
			snprintf(buf, len, "a %s partition table", type);
			found = 1;
		}
	}
	blkid_free_probe(pr);
	return found;
}

/* Reads the metadata block at @sector into @buf (4096-byte aligned). */
int ssdc_read_meta(const struct ssdc_dev *d, uint64_t sector, void *buf)
{
	return pread(d->fd, buf, SSDCACHE_META_BLOCK_SIZE, sector << 9) ==
	       SSDCACHE_META_BLOCK_SIZE ? 0 : -1;
}

/* The checksum of metadata block @block, whose csum field is @csum. */
uint32_t ssdc_meta_csum(const void *block, const uint32_t *csum)
{
	unsigned char copy[SSDCACHE_META_BLOCK_SIZE];

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* The fuzzer's build: every checksum is right, so mutations get past. */
	return le32toh(*csum);
#endif
	memcpy(copy, block, sizeof(copy));
	memset(copy + ((const unsigned char *)csum - (const unsigned char *)block), 0, 4);
	return ssdc_crc32c(SSDCACHE_CRC_SEED, copy, sizeof(copy));
}

int ssdc_read_sb_copy(const struct ssdc_dev *d, int copy, struct ssdcache_disk_sb *sb)
{
	static const uint64_t sectors[2] = { SSDCACHE_SB_SECTOR_A, SSDCACHE_SB_SECTOR_B };

	if (ssdc_read_meta(d, sectors[copy], sb))
		return SSDC_SB_IOERR;
	if (le64toh(sb->magic) != SSDCACHE_MAGIC)
		return SSDC_SB_NONE;
	/*
	 * As the module's read_sb(): the version is one of the rules checked
	 * on the newest copy (ssdcache_sb_problem), not a reason to take the
	 * older one.
	 */
	if (ssdc_meta_csum(sb, &sb->csum) != le32toh(sb->csum))
		return SSDC_SB_CORRUPT;
	return SSDC_SB_OK;
}

int ssdc_read_sb(const struct ssdc_dev *d, struct ssdcache_disk_sb *out)
{
	struct ssdcache_disk_sb *b;
	int i, r, magic = 0, valid = 0;

	if (posix_memalign((void **)&b, 4096, sizeof(*b)))
		return SSDC_SB_IOERR;
	for (i = 0; i < 2; i++) {
		r = ssdc_read_sb_copy(d, i, b);
		if (r == SSDC_SB_IOERR) {
			free(b);
			return r;
		}
		magic |= r != SSDC_SB_NONE;
		if (r == SSDC_SB_OK && (!valid || le64toh(b->seq) > le64toh(out->seq))) {
			*out = *b;
			valid = 1;
		}
	}
	free(b);
	if (valid)
		return SSDC_SB_OK;
	return magic ? SSDC_SB_CORRUPT : SSDC_SB_NONE;
}

/*
 * A stable name for the origin: its /dev/disk/by-id link ("by-id:NAME",
 * WWNs first), else its kernel name ("dev:NAME"), which may change at the
 * next boot. Returns 1 if the name is stable.
 */
int ssdc_origin_identity(const struct ssdc_dev *d, char *id, size_t len)
{
	char best[256] = "", path[PATH_MAX], target[PATH_MAX];
	const char *base;
	struct dirent *e;
	struct stat st;
	DIR *dir = opendir("/dev/disk/by-id");

	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) + 6 >= len)
			continue;
		snprintf(path, sizeof(path), "/dev/disk/by-id/%s", e->d_name);
		if (stat(path, &st) || st.st_rdev != d->rdev || !S_ISBLK(st.st_mode))
			continue;
		/* Prefer WWNs, then dm UUIDs, then anything but dm names. */
		if (!best[0] || !strncmp(e->d_name, "wwn-", 4) ||
		    (!strncmp(e->d_name, "dm-uuid-", 8) && strncmp(best, "wwn-", 4)) ||
		    !strncmp(best, "dm-name-", 8))
			snprintf(best, sizeof(best), "%s", e->d_name);
	}
	if (dir)
		closedir(dir);
	if (best[0]) {
		snprintf(id, len, "by-id:%s", best);
		return 1;
	}
	if (realpath(d->path, target) && (base = strrchr(target, '/')))
		snprintf(id, len, "dev:%s", base + 1);
	else
		snprintf(id, len, "dev:%u:%u", major(d->rdev), minor(d->rdev));
	return 0;
}

/* The device path an identity names, or -1 if it has none. */
int ssdc_identity_path(const char *id, char *path, size_t len)
{
	if (!strncmp(id, "by-id:", 6) && !strchr(id + 6, '/'))
		snprintf(path, len, "/dev/disk/by-id/%s", id + 6);
	else if (!strncmp(id, "dev:", 4) && !strchr(id + 4, '/'))
		snprintf(path, len, "/dev/%s", id + 4);
	else
		return -1;
	return 0;
}

/* Sets (1) or clears (0) the kernel's read-only flag of block device @path. */
int ssdc_dev_set_ro(const char *path, int ro)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -1;
	r = ioctl(fd, BLKROSET, &ro);
	close(fd);
	return r;
}

/* The kernel's read-only flag of @path: 1, 0, or -1 if it cannot be read. */
int ssdc_dev_get_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ro = -1;

	if (fd < 0)
		return -1;
	if (ioctl(fd, BLKROGET, &ro))
		ro = -1;
	close(fd);
	return ro;
}

/*
 * Asks udev to look at device @rdev again: a "change" uevent written to
 * sysfs, which the rule does not take as the device's arrival.
 */
void ssdc_dev_uevent(dev_t rdev)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(rdev), minor(rdev));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "change", 6) != 6)
			(void)0;	/* udev simply keeps its view */
		close(fd);
	}
}

/* The same for the device at @path, if it is there. */
void ssdc_path_uevent(const char *path)
{
	struct stat st;

	if (!stat(path, &st))
		ssdc_dev_uevent(st.st_rdev);
}

/*
 * Reserves the origin at @path for its cache (read-only, hidden by udev)
 * or gives it back (@ro 0), and tells udev.
 */
void ssdc_origin_reserve(const char *path, int ro)
{
	ssdc_dev_set_ro(path, ro);
	ssdc_path_uevent(path);
}

/* Drops the page cache of @path: reads made while a cache held it are stale. */
void ssdc_dev_drop_pages(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ioctl(fd, BLKFLSBUF, 0);
		close(fd);
	}
}

/* Zeroes both superblock copies of cache device @path, durably. */
int ssdc_wipe_sb(const char *path)
{
	static const uint64_t sectors[2] = { SSDCACHE_SB_SECTOR_A, SSDCACHE_SB_SECTOR_B };
	void *zero;
	int fd, i, r = 0;

	if (posix_memalign(&zero, 4096, SSDCACHE_META_BLOCK_SIZE))
		return -1;
	memset(zero, 0, SSDCACHE_META_BLOCK_SIZE);
	fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		free(zero);
		return -1;
	}
	for (i = 0; i < 2 && !r; i++)
		if (pwrite(fd, zero, SSDCACHE_META_BLOCK_SIZE, sectors[i] << 9) !=
		    SSDCACHE_META_BLOCK_SIZE)
			r = -1;
	if (!r && fsync(fd))
		r = -1;
	close(fd);
	free(zero);
	return r;
}

/*
 * @in (at most @max bytes, NUL-terminated or not) made safe to print: each
 * byte that is not printable ASCII as \xNN. Returns @out.
 */
const char *ssdc_printable(const char *in, size_t max, char *out, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < max && in[i] && o + 5 < len; i++) {
		unsigned char c = in[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = c;
		else
			o += snprintf(out + o, len - o, "\\x%02x", c);
	}
	out[o] = 0;
	return out;
}
