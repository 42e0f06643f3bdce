/* SPDX-License-Identifier: GPL-2.0 */
/* ssdcachectl check and dump: the metadata, offline. Exit codes as fsck's. */
#ifndef SSDCACHECTL_CHECK_H
#define SSDCACHECTL_CHECK_H

#include <stdint.h>
#include <stdio.h>

#define CHECK_CLEAN		0
#define CHECK_ERRORS		4	/* errors left uncorrected */
#define CHECK_OPERATIONAL	8	/* cannot open or read */
#define CHECK_USAGE		16

int ssdc_check(const char *path);
int ssdc_dump(const char *path, int json);

/* The same on an image open as @fd, of @sectors (the fuzzer's way in). */
int ssdc_check_image(int fd, uint64_t sectors, FILE *out);
int ssdc_dump_image(int fd, uint64_t sectors, int json, FILE *out);

#endif
