/* SPDX-License-Identifier: GPL-2.0 */
/* ssdcachectl: boot-time assembly, the origin's protection, remove and forget. */
#ifndef SSDCACHECTL_BOOT_H
#define SSDCACHECTL_BOOT_H

struct ssdc_dev;
struct ssdc_reg;

enum { SSDC_ROLE_NONE, SSDC_ROLE_CACHE, SSDC_ROLE_ORIGIN };

int ssdc_role(const struct ssdc_dev *d, int nlinks, char **links, struct ssdc_reg *e);

int ssdc_run_lock(void);
void ssdc_run_unlock(int fd);

int ssdc_cmd_udev_probe(int argc, char **argv);
int ssdc_cmd_assemble(int argc, char **argv);
int ssdc_cmd_remove(int argc, char **argv);
int ssdc_cmd_forget(int argc, char **argv);

#endif
