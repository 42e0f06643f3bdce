/* SPDX-License-Identifier: GPL-2.0 */
/* ssdcachectl: block devices and the on-disk superblock. */
#ifndef SSDCACHECTL_DISK_H
#define SSDCACHECTL_DISK_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ssdcache_format.h"

struct ssdc_dev {
	char path[PATH_MAX];
	dev_t rdev;
	uint64_t sectors;
	int fd;			/* O_RDONLY | O_DIRECT */
};

uint32_t ssdc_crc32c(uint32_t crc, const void *data, size_t len);

/* Opens block device @path; -1 with a reason in @err. */
int ssdc_dev_open(const char *path, struct ssdc_dev *d, char *err, size_t len);
void ssdc_dev_close(struct ssdc_dev *d);
int ssdc_dev_busy(const struct ssdc_dev *d);
void ssdc_dev_holder(const struct ssdc_dev *d, char *buf, size_t len);
int ssdc_dev_contents(const struct ssdc_dev *d, char *buf, size_t len);

int ssdc_read_meta(const struct ssdc_dev *d, uint64_t sector, void *buf);
uint32_t ssdc_meta_csum(const void *block, const uint32_t *csum);

enum { SSDC_SB_OK, SSDC_SB_NONE, SSDC_SB_CORRUPT, SSDC_SB_IOERR };
/* Copy @copy (0: A, 1: B) of the superblock; OK: magic and checksum right. */
int ssdc_read_sb_copy(const struct ssdc_dev *d, int copy, struct ssdcache_disk_sb *sb);
/* The newest valid superblock copy of @d, in @out (little-endian fields). */
int ssdc_read_sb(const struct ssdc_dev *d, struct ssdcache_disk_sb *out);

int ssdc_dev_set_ro(const char *path, int ro);
int ssdc_dev_get_ro(const char *path);
void ssdc_dev_uevent(dev_t rdev);
void ssdc_path_uevent(const char *path);
void ssdc_origin_reserve(const char *path, int ro);
void ssdc_dev_drop_pages(const char *path);
int ssdc_wipe_sb(const char *path);

/* Room for a printable superblock origin_id (4 bytes out per byte in). */
#define SSDC_PRINTABLE_ID_LEN	(4 * SSDCACHE_ORIGIN_ID_LEN + 1)
const char *ssdc_printable(const char *in, size_t max, char *out, size_t len);

int ssdc_origin_identity(const struct ssdc_dev *d, char *id, size_t len);
int ssdc_identity_path(const char *id, char *path, size_t len);

#endif
