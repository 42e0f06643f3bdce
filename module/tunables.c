// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the numeric tunables.
 *
 * The five of writeback (writeback.c), the two of the SSD's error limit
 * (health.c) and readahead_kb (readahead.c) are set the same three ways:
 * on the table line, by a message, in sysfs. One table gives each its
 * name, its largest value and its field; a bad value is refused and
 * changes nothing.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include "ssdcache.h"

static const char * const names[SSDC_NR_TUNABLES] = {
	[SSDC_TUN_DIRTY_HIGH] = "dirty_high",
	[SSDC_TUN_DIRTY_LOW] = "dirty_low",
	[SSDC_TUN_IDLE_MS] = "writeback_idle_ms",
	[SSDC_TUN_RATE] = "writeback_rate",
	[SSDC_TUN_YIELD] = "writeback_yield",
	[SSDC_TUN_ERROR_LIMIT] = "error_limit",
	[SSDC_TUN_ERROR_HALFLIFE_MS] = "error_halflife_ms",
	[SSDC_TUN_READAHEAD_KB] = "readahead_kb",
};

static const unsigned int max[SSDC_NR_TUNABLES] = {
	[SSDC_TUN_DIRTY_HIGH] = 100,
	[SSDC_TUN_DIRTY_LOW] = 100,
	[SSDC_TUN_IDLE_MS] = 3600000,
	[SSDC_TUN_RATE] = UINT_MAX,
	[SSDC_TUN_YIELD] = 1,
	[SSDC_TUN_ERROR_LIMIT] = 1000000,
	[SSDC_TUN_ERROR_HALFLIFE_MS] = 86400000,
	[SSDC_TUN_READAHEAD_KB] = SSDC_READAHEAD_MAX_KB,
};

static unsigned int *field(struct ssdcache *sc, unsigned int i)
{
	unsigned int *fields[SSDC_NR_TUNABLES] = {
		[SSDC_TUN_DIRTY_HIGH] = &sc->wb_high,
		[SSDC_TUN_DIRTY_LOW] = &sc->wb_low,
		[SSDC_TUN_IDLE_MS] = &sc->wb_idle_ms,
		[SSDC_TUN_RATE] = &sc->wb_rate,
		[SSDC_TUN_YIELD] = &sc->wb_yield,
		[SSDC_TUN_ERROR_LIMIT] = &sc->err_limit,
		[SSDC_TUN_ERROR_HALFLIFE_MS] = &sc->err_halflife_ms,
		[SSDC_TUN_READAHEAD_KB] = &sc->ra_kb,
	};

	return fields[i];
}

/*
 * Parses tunable @key = @val into its index and value. -ENOTTY if @key is
 * none, -EINVAL for a bad value; with @val NULL, only looks @key up.
 */
int ssdc_tunable_parse(const char *key, const char *val, unsigned int *idx,
		       unsigned int *v)
{
	unsigned int i;

	for (i = 0; i < SSDC_NR_TUNABLES; i++)
		if (!strcasecmp(key, names[i]))
			break;
	if (i == SSDC_NR_TUNABLES)
		return -ENOTTY;
	if (!val)
		return 0;
	if (kstrtouint(val, 10, v) || *v > max[i])
		return -EINVAL;
	*idx = i;
	return 0;
}

/* The table line's watermarks, with the defaults, must be ordered. */
int ssdc_tunables_check_args(struct ssdc_args *args, char **error)
{
	unsigned int high = SSDC_WB_DIRTY_HIGH, low = SSDC_WB_DIRTY_LOW;

	if (args->tun_given & BIT(SSDC_TUN_DIRTY_HIGH))
		high = args->tun_val[SSDC_TUN_DIRTY_HIGH];
	if (args->tun_given & BIT(SSDC_TUN_DIRTY_LOW))
		low = args->tun_val[SSDC_TUN_DIRTY_LOW];
	if (low > high) {
		*error = "dirty_low is above dirty_high";
		return -EINVAL;
	}
	return 0;
}

void ssdc_tunables_apply_args(struct ssdcache *sc, struct ssdc_args *args)
{
	unsigned int i;

	for (i = 0; i < SSDC_NR_TUNABLES; i++)
		if (args->tun_given & BIT(i))
			WRITE_ONCE(*field(sc, i), args->tun_val[i]);
}

/* Sets tunable @key; -ENOTTY if it is none, -EINVAL if @val is bad. */
int ssdc_tunable_set(struct ssdcache *sc, const char *key, const char *val)
{
	unsigned int high = READ_ONCE(sc->wb_high), low = READ_ONCE(sc->wb_low), i, v;
	int r;

	r = ssdc_tunable_parse(key, val, &i, &v);
	if (r == -EINVAL)
		DMERR("%s: invalid %s \"%s\"", ssdcache_name(sc), key, val);
	if (r)
		return r;
	WRITE_ONCE(*field(sc, i), v);
	if (READ_ONCE(sc->wb_low) > READ_ONCE(sc->wb_high)) {
		DMERR("%s: dirty_low would be above dirty_high", ssdcache_name(sc));
		WRITE_ONCE(sc->wb_high, high);
		WRITE_ONCE(sc->wb_low, low);
		return -EINVAL;
	}
	ssdc_wb_kick(sc);
	return 0;
}
