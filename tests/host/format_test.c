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
	/* The set hash, against values computed independently (Python). */
	check(ssdcache_set_of(0, 1000, 0) == 0 && ssdcache_set_of(1, 1000, 0) == 381,
	      "set of an origin block: known values");
	check(ssdcache_set_of(123456789, 31, 0) == 7 &&
	      ssdcache_set_of(1ULL << 47, 7, 0) == 5, "set hash over 64-bit blocks");
	check(ssdcache_set_of(8, 1000, 3) == 381 && ssdcache_set_of(15, 1000, 3) == 381 &&
	      ssdcache_set_of(7, 1000, 3) == 0 && ssdcache_set_of(16, 1000, 3) ==
	      ssdcache_set_of(2, 1000, 0), "with set_shift 3, runs of 8 blocks share a set");
	check(offsetof(struct ssdcache_disk_sb, set_shift) == 208,
	      "superblock set_shift where Documentation/format.rst puts it");
	check(!ssdcache_entry_problem(5, 0, 112, 1000, 0), "an empty entry is fine");
	check(ssdcache_entry_problem(112, SSDCACHE_MAP_VALID | 1, 112, 1000, 0) != NULL,
	      "an entry past the last block is refused");
	check(ssdcache_entry_problem(0, 1, 112, 1000, 0) != NULL, "an entry without VALID is refused");
	check(ssdcache_entry_problem(0, SSDCACHE_MAP_VALID | 1000, 112, 1000, 0) != NULL,
	      "an origin block out of range is refused");
	check(!ssdcache_entry_problem(ssdcache_set_of(7, 2, 0) * SSDCACHE_ASSOC,
				      SSDCACHE_MAP_VALID | SSDCACHE_MAP_DIRTY | 7, 112, 1000, 0),
	      "a dirty entry in its set is fine");
	check(ssdcache_entry_problem((1 - ssdcache_set_of(7, 2, 0)) * SSDCACHE_ASSOC,
				     SSDCACHE_MAP_VALID | 7, 112, 1000, 0) != NULL,
	      "an entry in the wrong set is refused");
	printf("1..%d\n", n);
	return failed;
}
