/* SPDX-License-Identifier: GPL-2.0 */
/* ssdcachectl: boot-time assembly, the origin's protection, remove and forget. */
#ifndef SSDCACHECTL_BOOT_H
#define SSDCACHECTL_BOOT_H

struct ssdc_dev;
struct ssdc_reg;

enum { SSDC_ROLE_NONE, SSDC_ROLE_CACHE, SSDC_ROLE_ORIGIN };

struct ssdcache_disk_sb;
/* Is @path's superblock (read into @sb) that of the cache with UUID @uuid? */
int ssdc_holds_cache(const char *path, const char *uuid, struct ssdcache_disk_sb *sb);

int ssdc_role(const struct ssdc_dev *d, int nlinks, char **links, struct ssdc_reg *e,
	      struct ssdcache_disk_sb *sb_out);

int ssdc_run_lock(void);
void ssdc_run_unlock(int fd);

int ssdc_cmd_udev_probe(int argc, char **argv);
int ssdc_cmd_assemble(int argc, char **argv);
int ssdc_cmd_remove(int argc, char **argv);
int ssdc_cmd_forget(int argc, char **argv);

#endif
