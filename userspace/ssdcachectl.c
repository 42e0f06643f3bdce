// SPDX-License-Identifier: GPL-2.0
/*
 * ssdcachectl: control tool for ssdcache devices.
 *
 * Exit codes: 0 success, 1 the operation failed, 2 bad usage,
 * 3 the named device does not exist or is not an ssdcache device,
 * 130 interrupted (Ctrl-C) and cancelled cleanly.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libdevmapper.h>

#include "boot.h"
#include "check.h"
#include "dm.h"
#include "flush.h"
#include "lifecycle.h"
#include "registry.h"
#include "stats.h"
#include "ssdcache_format.h"


#define SSDCACHECTL_VERSION "0.1.0"

struct command {
	const char *name;
	const char *args;
	const char *help;
	int (*run)(int argc, char **argv);
};

static const struct command commands[];

static void usage(FILE *f)
{
	const struct command *c;

	fprintf(f, "usage: ssdcachectl <command> [args]\n\ncommands:\n");
	for (c = commands; c->name; c++)
		fprintf(f, "  %s%s%s\n      %s\n", c->name, *c->args ? " " : "", c->args,
			c->help);
	fprintf(f, "\nssdcachectl <command> --help shows one command's help.\n");
}

static int print_name(const char *name, void *arg)
{
	(void)arg;
	printf("%s\n", name);
	return 0;
}

static int cmd_list(int argc, char **argv)
{
	(void)argv;
	if (argc != 0) {
		fprintf(stderr, "ssdcachectl list: takes no arguments\n");
		return EXIT_USAGE;
	}
	if (ssdc_for_each_cache(print_name, NULL)) {
		fprintf(stderr, "ssdcachectl list: cannot list device-mapper devices\n");
		return EXIT_FAILED;
	}
	return 0;
}

static int cmd_status(int argc, char **argv)
{
	char buf[4096];
	int r;

	if (argc != 1) {
		fprintf(stderr, "ssdcachectl status: expected one device name\n");
		return EXIT_USAGE;
	}
	r = ssdc_status(argv[0], buf, sizeof(buf));
	switch (r) {
	case 0:
		break;
	case SSDC_DM_NODEV:
		fprintf(stderr, "ssdcachectl status: %s: no such device\n", argv[0]);
		return EXIT_NODEV;
	case SSDC_DM_NOT_SSDCACHE:
		fprintf(stderr, "ssdcachectl status: %s: not an ssdcache device\n", argv[0]);
		return EXIT_NODEV;
	default:
		fprintf(stderr, "ssdcachectl status: %s: device-mapper query failed\n", argv[0]);
		return EXIT_FAILED;
	}
	printf("%s: %s\n", argv[0], buf);
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("ssdcachectl %s (on-disk format %u)\n", SSDCACHECTL_VERSION,
	       SSDCACHE_FORMAT_VERSION);
	return 0;
}

struct name_list {
	char **names;
	unsigned int n;
};

static int collect_name(const char *name, void *arg)
{
	struct name_list *l = arg;
	char **more = realloc(l->names, (l->n + 1) * sizeof(*more));

	if (!more)
		return -1;
	l->names = more;
	l->names[l->n++] = strdup(name);
	return l->names[l->n - 1] ? 0 : -1;
}

enum { OUT_TEXT, OUT_JSON, OUT_PROM };

static int parse_interval(const char *cmd, const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	if (end == s || *end || *v < 0.1 || *v > 3600) {
		fprintf(stderr, "ssdcachectl %s: bad interval '%s' (0.1 to 3600 seconds)\n",
			cmd, s);
		return EXIT_USAGE;
	}
	return 0;
}

static int print_stats(struct name_list *l, int out)
{
	struct ssdc_cache_stats *s = calloc(l->n ? l->n : 1, sizeof(*s));
	char err[512];
	unsigned int i;
	int r;

	if (!s)
		return EXIT_FAILED;
	for (i = 0; i < l->n; i++) {
		r = ssdc_read_stats(l->names[i], &s[i], err, sizeof(err));
		if (r) {
			free(s);
			return ssdc_dm_failure("stats", l->names[i], r, err);
		}
	}
	if (out == OUT_JSON)
		ssdc_print_json(stdout, s, l->n);
	else if (out == OUT_PROM)
		ssdc_print_prometheus(stdout, s, l->n);
	else
		for (i = 0; i < l->n; i++)
			ssdc_print_text(stdout, &s[i]);
	fflush(stdout);
	free(s);
	return 0;
}

static int cmd_stats(int argc, char **argv)
{
	struct name_list l = { NULL, 0 };
	int out = OUT_TEXT, watch = 0, i, r = 0;
	double interval = 1;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			out = OUT_JSON;
		} else if (!strcmp(argv[i], "--prometheus")) {
			out = OUT_PROM;
		} else if (!strcmp(argv[i], "--watch")) {
			watch = 1;
		} else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
			r = parse_interval("stats", argv[++i], &interval);
			if (r)
				return r;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "ssdcachectl stats: unknown option '%s'\n", argv[i]);
			return EXIT_USAGE;
		} else if (collect_name(argv[i], &l)) {
			return EXIT_FAILED;
		}
	}
	if (!l.n && ssdc_for_each_cache(collect_name, &l)) {
		fprintf(stderr, "ssdcachectl stats: cannot list device-mapper devices\n");
		return EXIT_FAILED;
	}
	for (;;) {
		r = print_stats(&l, out);
		if (r || !watch)
			break;
		usleep((useconds_t)(interval * 1e6));
	}
	for (i = 0; i < (int)l.n; i++)
		free(l.names[i]);
	free(l.names);
	return r;
}

static int cmd_top(int argc, char **argv)
{
	unsigned int iterations = 0;
	double interval = 1;
	char *end;
	int i, r, first = argc;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			iterations = strtoul(argv[++i], &end, 10);
			if (*end || !iterations) {
				fprintf(stderr, "ssdcachectl top: bad count '%s'\n", argv[i]);
				return EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
			r = parse_interval("top", argv[++i], &interval);
			if (r)
				return r;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "ssdcachectl top: unknown option '%s'\n", argv[i]);
			return EXIT_USAGE;
		} else {
			first = i;
			break;
		}
	}
	if (ssdc_top(argv + first, argc - first, iterations, interval)) {
		fprintf(stderr, "ssdcachectl top: cannot list device-mapper devices\n");
		return EXIT_FAILED;
	}
	return 0;
}

static int send_message(const char *cmd, const char *name, const char *msg)
{
	int r = ssdc_message(name, msg);

	if (r == SSDC_DM_FAILED) {
		fprintf(stderr, "ssdcachectl %s: %s: the target refused '%s' (see the kernel log)\n",
			cmd, name, msg);
		return EXIT_FAILED;
	}
	return r ? ssdc_dm_failure(cmd, name, r, "") : 0;
}

static int cmd_set(int argc, char **argv)
{
	char msg[512];
	int r;

	if (argc != 3) {
		fprintf(stderr, "ssdcachectl set: expected <name> <setting> <value>\n");
		return EXIT_USAGE;
	}
	if (strchr(argv[1], ' ') || strchr(argv[2], ' ') || !*argv[2]) {
		fprintf(stderr, "ssdcachectl set: bad value '%s'\n", argv[2]);
		return EXIT_USAGE;
	}
	snprintf(msg, sizeof(msg), "%s %s", argv[1], argv[2]);
	r = send_message("set", argv[0], msg);
	/* The mode is in the superblock; the rest, in the registry for load. */
	if (!r && strcmp(argv[1], "mode") && ssdc_reg_set_opt(argv[0], argv[1], argv[2])) {
		fprintf(stderr, "ssdcachectl set: %s: set, but not recorded in %s: the next load will not have it\n",
			argv[0], ssdc_registry_path());
		return EXIT_FAILED;
	}
	return r;
}

static int cmd_reset_stats(int argc, char **argv)
{
	if (argc != 1) {
		fprintf(stderr, "ssdcachectl reset-stats: expected one device name\n");
		return EXIT_USAGE;
	}
	return send_message("reset-stats", argv[0], "reset_stats");
}

static int cmd_clear_degraded(int argc, char **argv)
{
	if (argc != 1) {
		fprintf(stderr, "ssdcachectl clear-degraded: expected one device name\n");
		return EXIT_USAGE;
	}
	return send_message("clear-degraded", argv[0], "clear_degraded");
}

static int cmd_flush(int argc, char **argv)
{
	if (argc != 1) {
		fprintf(stderr, "ssdcachectl flush: expected one device name\n");
		return EXIT_USAGE;
	}
	return ssdc_do_flush("flush", argv[0]);
}

static int cmd_check(int argc, char **argv)
{
	if (argc != 1 || argv[0][0] == '-') {
		fprintf(stderr, "ssdcachectl check: expected one cache device\n");
		return CHECK_USAGE;
	}
	return ssdc_check(argv[0]);
}

static int cmd_dump(int argc, char **argv)
{
	int json = argc == 2 && !strcmp(argv[1], "--json");

	if (argc < 1 || argc > 2 || argv[0][0] == '-' || (argc == 2 && !json)) {
		fprintf(stderr, "ssdcachectl dump: expected <cache-dev> [--json]\n");
		return EXIT_USAGE;
	}
	return ssdc_dump(argv[0], json) ? EXIT_FAILED : 0;
}

static const struct command commands[] = {
	{ "create", "<name> --origin DEV --cache DEV [--mode wt|wb|wa] [--block-size N] [--run-size N] [--policy lru|fifo] [--sequential-cutoff BYTES] [--force]",
	  "format DEV as a cache of the origin and create /dev/mapper/<name>", ssdc_cmd_create },
	{ "load", "<cache-dev> [<name>] [--mode wt|wb|wa]",
	  "reassemble a cache from its superblock; finds the origin by its recorded identity",
	  ssdc_cmd_load },
	{ "list", "", "list the ssdcache devices", cmd_list },
	{ "status", "<name>", "print a device's status line", cmd_status },
	{ "stats", "[--json|--prometheus] [--watch] [--interval S] [<name>...]",
	  "print statistics of the named devices, or of all", cmd_stats },
	{ "top", "[-n COUNT] [--interval S] [<name>...]",
	  "live view of every cache (q quits)", cmd_top },
	{ "set", "<name> <setting> <value>",
	  "change mode, policy, sequential_cutoff, a writeback tunable or the error limit",
	  cmd_set },
	{ "reset-stats", "<name>", "zero a device's counters", cmd_reset_stats },
	{ "clear-degraded", "<name>",
	  "trust the cache device again after too many errors degraded the cache",
	  cmd_clear_degraded },
	{ "flush", "<name>", "write every dirty block back (Ctrl-C cancels)", cmd_flush },
	{ "remove", "<name> [--flush | --keep-dirty | --detach]",
	  "remove a device; with dirty blocks, one of the options is needed; --detach also ends the pairing of origin and cache",
	  ssdc_cmd_remove },
	{ "forget", "<name> --force",
	  "drop a cache that is not loaded from the registry; its origin becomes a plain disk again",
	  ssdc_cmd_forget },
	{ "assemble", "[--background] <device>",
	  "load the registered cache that <device> belongs to, if both its devices are there (run by udev/systemd)",
	  ssdc_cmd_assemble },
	{ "udev-probe", "<device> [<link>...]",
	  "print udev properties for a device of a registered cache (run by udev)",
	  ssdc_cmd_udev_probe },
	{ "check", "<cache-dev>",
	  "verify a cache's metadata offline (exit 0 clean, 4 errors, 8 unreadable, 16 usage)",
	  cmd_check },
	{ "dump", "<cache-dev> [--json]", "print a cache's metadata (superblock, journal, map)",
	  cmd_dump },
	{ "version", "", "print the tool and format versions", cmd_version },
	{ NULL, NULL, NULL, NULL },
};

/* libdevmapper logs to stderr by default; keep only real errors. */
static void dm_log(int level, const char *file, int line, int dm_errno,
		   const char *fmt, ...)
{
	(void)level;
	(void)file;
	(void)line;
	(void)dm_errno;
	(void)fmt;
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	dm_log_with_errno_init(dm_log);
	for (c = commands; c->name; c++) {
		if (strcmp(argv[1], c->name))
			continue;
		if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
			printf("usage: ssdcachectl %s %s\n  %s\n", c->name, c->args, c->help);
			return 0;
		}
		return c->run(argc - 2, argv + 2);
	}
	fprintf(stderr, "ssdcachectl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
