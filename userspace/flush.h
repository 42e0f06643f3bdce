/* SPDX-License-Identifier: GPL-2.0 */
/* ssdcachectl: writing dirty blocks back. */
#ifndef SSDCACHECTL_FLUSH_H
#define SSDCACHECTL_FLUSH_H

#include <stddef.h>
#include <stdint.h>

#define SSDC_FLUSH_FAILED	(-20)	/* the cache entered the failed state */

/*
 * Dirty blocks, blocks cleaned so far and the state ("ok", "failed") of
 * device @name, from its status line. 0 or an SSDC_DM_* failure.
 */
int ssdc_dirty(const char *name, uint64_t *dirty, uint64_t *cleaned, char *state,
	       size_t len);

/*
 * Writes every dirty block of @name back and waits, with a progress bar
 * when stderr is a terminal. On Ctrl-C (*cancelled = 1) or when no block
 * was written back for a minute (*cancelled = 2), asks the target to stop
 * and returns 0; the blocks left stay dirty. Else 0 once clean, an
 * SSDC_DM_* failure or SSDC_FLUSH_FAILED.
 */
int ssdc_flush(const char *name, int *cancelled);

/* Reports failure @r of looking up @name for command @cmd; the exit code. */
int ssdc_dm_failure(const char *cmd, const char *name, int r, const char *err);

/* Flushes @name for command @cmd, with progress; the exit code. */
int ssdc_do_flush(const char *cmd, const char *name);

#endif
