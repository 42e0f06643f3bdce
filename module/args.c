// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the table line.
 *
 *   ssdcache <origin_dev> <cache_dev> <mode> [<#opt_args> <opt_args>...]
 *
 * mode:      writethrough | writearound | writeback
 * opt_args:  block_size <bytes>          power of two, 4096..1048576
 *            run_size <bytes>            with format: blocks that share a set
 *                                        (32768; block_size to 32 blocks)
 *            policy <lru|fifo>
 *            sequential_cutoff <bytes>   0 disables
 *            origin_id <string>          the origin's identity, checked on load
 *            dirty_high <percent>        write-back: start cleaning (50)
 *            dirty_low <percent>         write-back: stop cleaning (25)
 *            writeback_idle_ms <ms>      clean when the origin is idle (2000, 0 off)
 *            writeback_rate <blocks/s>   cleaning rate limit (0 = none)
 *            writeback_yield <0|1>       pause cleaning under foreground I/O (1)
 *            format                      write a new, empty cache
 *            force                       with format: over an existing one
 */
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/string.h>

#include "ssdcache.h"

static const char * const mode_names[] = {
	[SSDCACHE_MODE_WRITETHROUGH] = "writethrough",
	[SSDCACHE_MODE_WRITEAROUND] = "writearound",
	[SSDCACHE_MODE_WRITEBACK] = "writeback",
};

static const char * const policy_names[] = {
	[SSDC_POLICY_LRU] = "lru",
	[SSDC_POLICY_FIFO] = "fifo",
};

const char *ssdc_mode_name(enum ssdcache_mode mode)
{
	if (mode < ARRAY_SIZE(mode_names) && mode_names[mode])
		return mode_names[mode];
	return "unknown";
}

const char *ssdc_policy_name(enum ssdc_policy policy)
{
	return policy < ARRAY_SIZE(policy_names) ? policy_names[policy] : "unknown";
}

/* Returns 0, or -EINVAL for an unknown word. */
int ssdc_parse_mode(const char *s, enum ssdcache_mode *mode)
{
	if (!strcmp(s, "writethrough"))
		*mode = SSDCACHE_MODE_WRITETHROUGH;
	else if (!strcmp(s, "writearound"))
		*mode = SSDCACHE_MODE_WRITEAROUND;
	else if (!strcmp(s, "writeback"))
		*mode = SSDCACHE_MODE_WRITEBACK;
	else
		return -EINVAL;
	return 0;
}

int ssdc_parse_policy(const char *s, enum ssdc_policy *policy)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(policy_names); i++) {
		if (!strcmp(s, policy_names[i])) {
			*policy = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_opt(struct dm_arg_set *as, struct ssdc_args *args,
		     unsigned int *left, char **error)
{
	const char *key = dm_shift_arg(as);
	const char *val;

	(*left)--;
	if (!strcasecmp(key, "format")) {
		args->format = true;
		return 0;
	}
	if (!strcasecmp(key, "force")) {
		args->force = true;
		return 0;
	}
	if (strcasecmp(key, "block_size") && strcasecmp(key, "run_size") &&
	    strcasecmp(key, "policy") &&
	    strcasecmp(key, "sequential_cutoff") && strcasecmp(key, "origin_id") &&
	    ssdc_tunable_parse(key, NULL, NULL, NULL) == -ENOTTY) {
		*error = "Unknown optional argument";
		return -EINVAL;
	}
	if (!*left) {
		*error = "Optional argument is missing its value";
		return -EINVAL;
	}
	val = dm_shift_arg(as);
	(*left)--;

	if (!strcasecmp(key, "block_size")) {
		if (kstrtouint(val, 10, &args->block_size)) {
			*error = "Invalid block_size: not a number";
			return -EINVAL;
		}
		if (!is_power_of_2(args->block_size) ||
		    args->block_size < SSDCACHE_MIN_BLOCK_SIZE ||
		    args->block_size > SSDCACHE_MAX_BLOCK_SIZE) {
			*error = "Invalid block_size: must be a power of two from 4096 to 1048576";
			return -EINVAL;
		}
		args->block_size_set = true;
	} else if (!strcasecmp(key, "run_size")) {
		if (kstrtouint(val, 10, &args->run_size) || !is_power_of_2(args->run_size)) {
			*error = "Invalid run_size: must be a power of two of bytes";
			return -EINVAL;
		}
	} else if (!strcasecmp(key, "policy")) {
		if (ssdc_parse_policy(val, &args->policy)) {
			*error = "Invalid policy: expected lru or fifo";
			return -EINVAL;
		}
	} else if (!strcasecmp(key, "sequential_cutoff")) {
		if (kstrtou64(val, 10, &args->seq_cutoff)) {
			*error = "Invalid sequential_cutoff: not a number of bytes";
			return -EINVAL;
		}
	} else if (!strcasecmp(key, "origin_id")) {
		if (!*val || strlen(val) >= SSDCACHE_ORIGIN_ID_LEN) {
			*error = "Invalid origin_id: 1 to 63 characters";
			return -EINVAL;
		}
		args->origin_id = val;
	} else {
		unsigned int i, v;

		if (ssdc_tunable_parse(key, val, &i, &v)) {
			*error = "Invalid tunable value: see Documentation/ssdcache.rst";
			return -EINVAL;
		}
		args->tun_given |= BIT(i);
		args->tun_val[i] = v;
	}
	return 0;
}

int ssdc_parse_args(struct dm_target *ti, unsigned int argc, char **argv,
		    struct ssdc_args *args)
{
	static const struct dm_arg opt_count = {
		0, 26, "Invalid number of optional arguments"
	};
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	unsigned int left;
	int r;

	memset(args, 0, sizeof(*args));
	args->block_size = SSDC_DEFAULT_BLOCK_SIZE;
	args->policy = SSDC_POLICY_LRU;
	args->seq_cutoff = SSDC_DEFAULT_SEQ_CUTOFF;

	if (argc < 3) {
		ti->error = "Invalid argument count: expected <origin> <cache> <mode> [opt_args]";
		return -EINVAL;
	}
	args->origin_path = dm_shift_arg(&as);
	args->cache_path = dm_shift_arg(&as);
	r = ssdc_parse_mode(dm_shift_arg(&as), &args->mode);
	if (r) {
		ti->error = "Invalid mode: expected writethrough, writearound or writeback";
		return -EINVAL;
	}
	if (!as.argc)
		return 0;

	r = dm_read_arg_group(&opt_count, &as, &left, &ti->error);
	if (r)
		return r;
	while (left) {
		r = parse_opt(&as, args, &left, &ti->error);
		if (r)
			return r;
	}
	if (as.argc) {
		ti->error = "Too many arguments after the optional arguments";
		return -EINVAL;
	}
	if (args->force && !args->format) {
		ti->error = "force is only valid with format";
		return -EINVAL;
	}
	if (args->run_size && !args->format) {
		ti->error = "run_size is only valid with format";
		return -EINVAL;
	}
	return ssdc_tunables_check_args(args, &ti->error);
}
