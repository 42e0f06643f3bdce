// SPDX-License-Identifier: GPL-2.0
/*
 * ssdcachectl flush: write every dirty block back, with progress, and
 * cancel cleanly on Ctrl-C ("flush cancel": nothing is lost, the blocks
 * not yet written back simply stay dirty).
 */
#include <inttypes.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dm.h"
#include "lifecycle.h"
#include "stats.h"
#include "flush.h"

#define POLL_US		200000
#define STALL_SECS	60	/* no block written back for this long: give up */

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
	(void)sig;
	interrupted = 1;
}

int ssdc_dirty(const char *name, uint64_t *dirty, uint64_t *cleaned, char *state,
	       size_t len)
{
	char buf[4096], st[32], wb[32];
	int r = ssdc_status(name, buf, sizeof(buf));
	uint64_t c;

	if (r)
		return r;
	/* Fields: Documentation/ssdcache.rst, "Status". */
	if (sscanf(buf, "%*u %*s %*u %*u/%*u %" SCNu64 " %*u %*u %*u %*u %*u %*u %*u %*s %*u %31s %31s %" SCNu64,
		   dirty, st, wb, &c) != 4)
		return SSDC_DM_FAILED;
	if (cleaned)
		*cleaned = c;
	if (state)
		snprintf(state, len, "%s", st);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(FILE *f, uint64_t total, uint64_t left, double rate)
{
	int width = 30, done = total ? (int)(width * (total - left) / total) : width;

	fprintf(f, "\rflushing [%.*s%*s] %3d%%  %" PRIu64 " dirty left  %.0f blocks/s   ",
		done, "##############################", width - done, "",
		total ? (int)(100 * (total - left) / total) : 100, left, rate);
	fflush(f);
}

int ssdc_flush(const char *name, int *cancelled)
{
	uint64_t total, dirty, cleaned, last_cleaned;
	int tty = isatty(STDERR_FILENO), r;
	double start = now(), last_progress;
	struct sigaction sa, old;
	char state[32];

	*cancelled = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_int;
	sigaction(SIGINT, &sa, &old);
	r = ssdc_dirty(name, &total, &last_cleaned, state, sizeof(state));
	if (!r && total && !interrupted)
		r = ssdc_message(name, "flush");
	if (r || !total || interrupted) {
		sigaction(SIGINT, &old, NULL);
		*cancelled = interrupted;
		return r;
	}
	last_progress = start;
	for (;;) {
		r = ssdc_dirty(name, &dirty, &cleaned, state, sizeof(state));
		if (r || !dirty || !strcmp(state, "failed"))
			break;
		if (cleaned != last_cleaned) {
			last_cleaned = cleaned;
			last_progress = now();
		}
		if (tty)
			progress(stderr, total, dirty, (total - (dirty < total ? dirty : total)) /
				 (now() - start + 1e-9));
		if (interrupted || now() - last_progress > STALL_SECS) {
			ssdc_message(name, "flush cancel");
			*cancelled = interrupted ? 1 : 2;
			break;
		}
		usleep(POLL_US);
	}
	sigaction(SIGINT, &old, NULL);
	if (tty)
		fprintf(stderr, "\n");
	if (!r && !strcmp(state, "failed"))
		return SSDC_FLUSH_FAILED;
	return r;
}

/* Reports a failed lookup of @name by command @cmd; returns the exit code. */
int ssdc_dm_failure(const char *cmd, const char *name, int r, const char *err)
{
	switch (r) {
	case SSDC_DM_NODEV:
		fprintf(stderr, "ssdcachectl %s: %s: no such device\n", cmd, name);
		return EXIT_NODEV;
	case SSDC_DM_NOT_SSDCACHE:
		fprintf(stderr, "ssdcachectl %s: %s: not an ssdcache device\n", cmd, name);
		return EXIT_NODEV;
	case SSDC_NO_SYSFS:
		fprintf(stderr, "ssdcachectl %s: %s: %s\n", cmd, name, err);
		return EXIT_FAILED;
	default:
		fprintf(stderr, "ssdcachectl %s: %s: device-mapper query failed\n", cmd, name);
		return EXIT_FAILED;
	}
}

/* Flushes @name for command @cmd; returns the exit code. */
int ssdc_do_flush(const char *cmd, const char *name)
{
	uint64_t dirty = 0;
	int cancelled, r = ssdc_flush(name, &cancelled);

	if (r == SSDC_FLUSH_FAILED) {
		fprintf(stderr, "ssdcachectl %s: %s: the cache failed during the flush (see the kernel log)\n",
			cmd, name);
		return EXIT_FAILED;
	}
	if (r)
		return ssdc_dm_failure(cmd, name, r, "");
	ssdc_dirty(name, &dirty, NULL, NULL, 0);
	if (cancelled == 1) {
		fprintf(stderr, "ssdcachectl %s: %s: cancelled; %" PRIu64 " blocks stay dirty\n",
			cmd, name, dirty);
		return EXIT_CANCELLED;
	}
	if (cancelled) {
		fprintf(stderr, "ssdcachectl %s: %s: no block written back for a minute; %" PRIu64 " stay dirty (origin errors? see the kernel log)\n",
			cmd, name, dirty);
		return EXIT_FAILED;
	}
	printf("%s: clean\n", name);
	return 0;
}

