/* SPDX-License-Identifier: GPL-2.0 */
/* ssdcachectl: exit codes, and the create and load commands. */
#ifndef SSDCACHECTL_LIFECYCLE_H
#define SSDCACHECTL_LIFECYCLE_H

#define EXIT_FAILED	1
#define EXIT_USAGE	2
#define EXIT_NODEV	3
#define EXIT_CANCELLED	130	/* Ctrl-C */

int ssdc_cmd_create(int argc, char **argv);
int ssdc_cmd_load(int argc, char **argv);

/*
 * Loads the cache on @cache_path as @name (NULL: its registered name, else
 * ssdc-<uuid>) in @mode (NULL: as last used), registers it; exit code.
 */
int ssdc_load(const char *cmd, const char *cache_path, const char *name, const char *mode);

#endif
