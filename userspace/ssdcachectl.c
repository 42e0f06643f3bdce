// SPDX-License-Identifier: GPL-2.0
/*
 * ssdcachectl: control tool for ssdcache devices.
 *
 * Exit codes: 0 success, 1 the operation failed, 2 bad usage,
 * 3 the named device does not exist or is not an ssdcache device.
 */
#include <stdio.h>
#include <string.h>
#include <libdevmapper.h>

#include "dm.h"
#include "ssdcache_format.h"

#define EXIT_FAILED	1
#define EXIT_USAGE	2
#define EXIT_NODEV	3

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
		fprintf(f, "  %-8s %-10s %s\n", c->name, c->args, c->help);
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

static const struct command commands[] = {
	{ "list", "", "list the ssdcache devices", cmd_list },
	{ "status", "<name>", "print a device's status line", cmd_status },
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
