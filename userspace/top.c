// SPDX-License-Identifier: GPL-2.0
/*
 * ssdcachectl top: every cache (or the named ones) on one screen, once a
 * second: hit ratio, IOPS, dirty share, cleaning rate. Rates are over the
 * last interval; the first screen shows totals since the last reset.
 */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "dm.h"
#include "stats.h"

#define TOP_MAX 64

struct top_list {
	char *names[TOP_MAX];
	unsigned int n;
};

static struct termios saved_tty;
static int tty_raw;
static volatile sig_atomic_t stop;

static void restore_tty(void)
{
	if (tty_raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
	tty_raw = 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Keys without Enter, no echo; restored at exit. */
static void raw_tty(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tty))
		return;
	t = saved_tty;
	t.c_lflag &= ~(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (!tcsetattr(STDIN_FILENO, TCSANOW, &t)) {
		tty_raw = 1;
		atexit(restore_tty);
	}
}

static int add_name(const char *name, void *arg)
{
	struct top_list *l = arg;

	if (l->n < TOP_MAX)
		l->names[l->n++] = strdup(name);
	return 0;
}

static double rate(uint64_t now, uint64_t before, double secs)
{
	return secs > 0 && now >= before ? (now - before) / secs : 0;
}

static void row(const struct ssdc_cache_stats *s, const struct ssdc_cache_stats *old)
{
	double secs = old ? s->when - old->when : 0;
	uint64_t reads = s->st[ST_READS], hits = s->st[ST_READ_HITS];
	uint64_t blocks = s->set[SE_CACHE_BLOCKS];
	char hit[16];

	if (old && reads >= old->st[ST_READS] && hits >= old->st[ST_READ_HITS]) {
		reads -= old->st[ST_READS];
		hits -= old->st[ST_READ_HITS];
	}
	if (reads)
		snprintf(hit, sizeof(hit), "%5.1f", 100.0 * hits / reads);
	else
		snprintf(hit, sizeof(hit), "%5s", "-");
	printf("%-16.16s %-12s %-9s %s %9.0f %9.0f %7.1f %9.0f %6.1f\n", s->name, s->mode,
	       s->state, hit,
	       old ? rate(s->st[ST_READS], old->st[ST_READS], secs) : 0,
	       old ? rate(s->st[ST_WRITES], old->st[ST_WRITES], secs) : 0,
	       blocks ? 100.0 * s->st[ST_DIRTY_BLOCKS] / blocks : 0,
	       old ? rate(s->st[ST_CLEANED_BLOCKS], old->st[ST_CLEANED_BLOCKS], secs) : 0,
	       blocks ? 100.0 * (blocks - s->st[ST_FREE_BLOCKS]) / blocks : 0);
}

static void screen(struct top_list *l, struct ssdc_cache_stats *cur,
		   struct ssdc_cache_stats *old, int have_old)
{
	char err[256], when[32];
	time_t t = time(NULL);
	unsigned int i;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	printf("\033[H\033[2J");
	printf("ssdcachectl top - %s - %u cache%s%s\n\n", when, l->n, l->n == 1 ? "" : "s",
	       tty_raw ? " - q quits" : "");
	printf("%-16s %-12s %-9s %5s %9s %9s %7s %9s %6s\n", "NAME", "MODE", "STATE",
	       "HIT%", "READ/s", "WRITE/s", "DIRTY%", "CLEAN/s", "USED%");
	for (i = 0; i < l->n; i++) {
		if (ssdc_read_stats(l->names[i], &cur[i], err, sizeof(err))) {
			printf("%-16.16s (gone or unreadable)\n", l->names[i]);
			cur[i].when = 0;
			continue;
		}
		row(&cur[i], have_old && old[i].when ? &old[i] : NULL);
	}
	if (!l->n)
		printf("(no ssdcache devices)\n");
	fflush(stdout);
}

/* Waits @interval seconds; true if a 'q' was typed or a signal came. */
static int wait_key(double interval)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char c;

	if (!tty_raw) {
		struct timespec ts = { (time_t)interval,
				       (long)((interval - (time_t)interval) * 1e9) };

		nanosleep(&ts, NULL);
		return stop;
	}
	if (poll(&p, 1, (int)(interval * 1000)) > 0 && read(STDIN_FILENO, &c, 1) == 1)
		return c == 'q' || c == 'Q';
	return stop;
}

int ssdc_top(char **names, unsigned int n, unsigned int iterations, double interval)
{
	struct ssdc_cache_stats *cur, *old, *tmp;
	struct top_list l = { .n = 0 };
	unsigned int i, done = 0;

	if (n) {
		for (i = 0; i < n && i < TOP_MAX; i++)
			add_name(names[i], &l);
	} else if (ssdc_for_each_cache(add_name, &l)) {
		return SSDC_DM_FAILED;
	}
	cur = calloc(TOP_MAX, sizeof(*cur));
	old = calloc(TOP_MAX, sizeof(*old));
	if (!cur || !old) {
		free(cur);
		free(old);
		return SSDC_DM_FAILED;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	raw_tty();
	for (;;) {
		screen(&l, cur, old, done > 0);
		if (iterations && ++done >= iterations)
			break;
		done += !iterations;
		if (wait_key(interval))
			break;
		tmp = old;
		old = cur;
		cur = tmp;
	}
	restore_tty();
	for (i = 0; i < l.n; i++)
		free(l.names[i]);
	free(cur);
	free(old);
	return 0;
}
