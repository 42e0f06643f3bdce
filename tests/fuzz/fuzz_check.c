// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the cache metadata readers of ssdcachectl check and
 * dump (userspace/check.c), which apply the load rules the module shares
 * through include/ssdcache_format.h (superblock geometry, map pages,
 * journal blocks, map entries). The input is a cache image from offset 0
 * (superblocks, journal, block map), zero-padded to a 64 MiB sparse file.
 *
 * With SSDC_FUZZ_PRINT=1 in the environment, check's report goes to
 * stdout (to see what a seed exercises).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

#define IMAGE_BYTES	(64ULL << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("ssdcache-image", MFD_CLOEXEC);
		sink = getenv("SSDC_FUZZ_PRINT") ? stdout : fopen("/dev/null", "w");
		if (fd < 0 || !sink)
			abort();
	}
	if (size > IMAGE_BYTES)
		size = IMAGE_BYTES;
	if (ftruncate(fd, 0) || ftruncate(fd, IMAGE_BYTES) ||
	    pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	ssdc_check_image(fd, IMAGE_BYTES >> 9, sink);
	ssdc_dump_image(fd, IMAGE_BYTES >> 9, 1, sink);
	ssdc_dump_image(fd, IMAGE_BYTES >> 9, 0, sink);
	fflush(sink);
	return 0;
}
