// SPDX-License-Identifier: GPL-2.0
/*
 * The shared on-disk header, compiled as strict userspace C: it must build
 * standalone with -Wall -Wextra -Werror -pedantic, and its constants must
 * mean what they say. Prints TAP.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ssdcache_format.h"

static int n, failed;

static void check(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++n, what);
	if (!ok)
		failed = 1;
}

int main(void)
{
	unsigned char m[8];
	unsigned long long magic = SSDCACHE_MAGIC;
	int i;

	for (i = 0; i < 8; i++)
		m[i] = (unsigned char)(magic >> (8 * i));
	unsigned int jm = SSDCACHE_JOURNAL_MAGIC;

	printf("1..8\n");
	check(!memcmp(m, "SSDCACHE", 8), "magic reads \"SSDCACHE\" in little-endian order");
	check(SSDCACHE_SECTOR_SIZE == 512, "sector size is 512");
	check(SSDCACHE_META_BLOCK_SIZE % SSDCACHE_SECTOR_SIZE == 0, "metadata block is whole sectors");
	check(!strcmp(SSDCACHE_TARGET_NAME, "ssdcache"), "target name");
	check(!memcmp(&jm, "SCJL", 4), "journal magic reads \"SCJL\" in little-endian order");
	check(offsetof(struct ssdcache_disk_sb, journal_tail) == 184 &&
	      offsetof(struct ssdcache_disk_sb, ckpt_seq) == 200,
	      "superblock journal fields where Documentation/format.rst puts them");
	check(sizeof(struct ssdcache_disk_jhdr) + SSDCACHE_JOURNAL_RECORDS *
	      sizeof(struct ssdcache_disk_jrec) == SSDCACHE_META_BLOCK_SIZE,
	      "a journal block is its header and 252 records");
	check((SSDCACHE_MAP_ENTRY_MASK & SSDCACHE_MAP_DIRTY) && SSDCACHE_MAP_DIRTY != SSDCACHE_MAP_VALID,
	      "map entries have a DIRTY bit of their own");
	return failed;
}
