// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: test-only hooks, built only with CONFIG_SSDCACHE_SELFTEST=y.
 *
 * They let the test harness prove that its own checks can fail, for
 * example that a kernel warning in the guest log fails the run. A normal
 * build does not contain this file.
 */
#include <linux/bug.h>
#include <linux/string.h>

#include "ssdcache.h"

int ssdcache_selftest_message(struct ssdcache *sc, unsigned int argc,
			      char **argv)
{
	if (argc == 1 && !strcasecmp(argv[0], "selftest_warn")) {
		WARN(1, "%s: deliberate warning requested by the test suite\n",
		     ssdcache_name(sc));
		return 0;
	}
	return -ENOTTY;
}
