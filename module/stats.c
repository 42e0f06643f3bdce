// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: statistics.
 *
 * The hot path only increments per-CPU counters (ssdcache.h). Here they
 * are summed, reset, and turned into the named values that sysfs shows
 * (Documentation/ssdcache.rst, "Statistics").
 */
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "ssdcache.h"

void ssdc_stats_sum(struct ssdcache *sc, struct ssdc_stats *t)
{
	int cpu, i, j;

	memset(t, 0, sizeof(*t));
	for_each_possible_cpu(cpu) {
		struct ssdc_stats *src = per_cpu_ptr(sc->stats, cpu);

		for (i = 0; i < SSDC_NR_COUNTERS; i++)
			t->c[i] += READ_ONCE(src->c[i]);
		for (i = 0; i < SSDC_NR_LAT; i++) {
			for (j = 0; j < SSDC_LAT_BUCKETS; j++)
				t->lat[i][j] += READ_ONCE(src->lat[i][j]);
			t->lat_sum_ns[i] += READ_ONCE(src->lat_sum_ns[i]);
		}
	}
}

/* Zeroes the counters and histograms; the block counts are not counters. */
void ssdc_stats_reset(struct ssdcache *sc)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(sc->stats, cpu), 0, sizeof(struct ssdc_stats));
}

/*
 * A table reload: @sc takes over from @old, which is suspended, so that
 * the counters run on. @sc has not started either.
 */
int ssdc_stats_inherit(struct ssdcache *sc, struct ssdcache *old)
{
	struct ssdc_stats *t = kmalloc(sizeof(*t), GFP_KERNEL), *dst;
	int i, j;

	if (!t)
		return -ENOMEM;
	ssdc_stats_sum(old, t);
	dst = per_cpu_ptr(sc->stats, cpumask_first(cpu_possible_mask));
	for (i = 0; i < SSDC_NR_COUNTERS; i++)
		dst->c[i] += t->c[i];
	for (i = 0; i < SSDC_NR_LAT; i++) {
		for (j = 0; j < SSDC_LAT_BUCKETS; j++)
			dst->lat[i][j] += t->lat[i][j];
		dst->lat_sum_ns[i] += t->lat_sum_ns[i];
	}
	kfree(t);
	return 0;
}

static u64 used_blocks(struct ssdcache *sc)
{
	return min_t(u64, atomic64_read(&sc->used), sc->nr_blocks);
}

static u64 dirty_blocks(struct ssdcache *sc)
{
	return min_t(u64, atomic64_read(&sc->dirty), used_blocks(sc));
}

/* The value of named statistic @id from the sum @t. */
u64 ssdc_stat_value(struct ssdcache *sc, const struct ssdc_stats *t,
		    enum ssdc_stat id)
{
	switch (id) {
	case SSDC_S_READS:
		return t->c[SSDC_C_READ_HITS] + t->c[SSDC_C_READ_MISSES];
	case SSDC_S_WRITES:
		return t->c[SSDC_C_WRITE_HITS] + t->c[SSDC_C_WRITE_MISSES];
	case SSDC_S_DIRTY_BLOCKS:
		return dirty_blocks(sc);
	case SSDC_S_CLEAN_BLOCKS:
		return used_blocks(sc) - dirty_blocks(sc);
	case SSDC_S_FREE_BLOCKS:
		return sc->nr_blocks - used_blocks(sc);
	case SSDC_S_JOURNAL_BYTES:
		return t->c[SSDC_C_JOURNAL_BLOCKS] * SSDCACHE_META_BLOCK_SIZE;
	default:
		return t->c[id - SSDC_S_COUNTERS];
	}
}

static const char * const stat_names[SSDC_NR_STATS] = {
	[SSDC_S_READS] = "reads",
	[SSDC_S_WRITES] = "writes",
	[SSDC_S_DIRTY_BLOCKS] = "dirty_blocks",
	[SSDC_S_CLEAN_BLOCKS] = "clean_blocks",
	[SSDC_S_FREE_BLOCKS] = "free_blocks",
	[SSDC_S_JOURNAL_BYTES] = "journal_bytes",
	[SSDC_S_COUNTERS + SSDC_C_READ_HITS] = "read_hits",
	[SSDC_S_COUNTERS + SSDC_C_READ_MISSES] = "read_misses",
	[SSDC_S_COUNTERS + SSDC_C_WRITE_HITS] = "write_hits",
	[SSDC_S_COUNTERS + SSDC_C_WRITE_MISSES] = "write_misses",
	[SSDC_S_COUNTERS + SSDC_C_BYPASSED_READS] = "bypassed_reads",
	[SSDC_S_COUNTERS + SSDC_C_BYPASSED_WRITES] = "bypassed_writes",
	[SSDC_S_COUNTERS + SSDC_C_FILLS] = "promotions",
	[SSDC_S_COUNTERS + SSDC_C_EVICTIONS] = "evictions",
	[SSDC_S_COUNTERS + SSDC_C_COMMITS] = "journal_commits",
	[SSDC_S_COUNTERS + SSDC_C_CLEANED] = "cleaned_blocks",
	[SSDC_S_COUNTERS + SSDC_C_JOURNAL_BLOCKS] = "journal_blocks",
	[SSDC_S_COUNTERS + SSDC_C_CHECKPOINTS] = "checkpoints",
	[SSDC_S_COUNTERS + SSDC_C_FLUSHES] = "flushes",
	[SSDC_S_COUNTERS + SSDC_C_FUA] = "fuas",
	[SSDC_S_COUNTERS + SSDC_C_DISCARDS] = "discards",
	[SSDC_S_COUNTERS + SSDC_C_READAHEADS] = "readaheads",
	[SSDC_S_COUNTERS + SSDC_C_DIRECT_FLUSHES] = "direct_flushes",
	[SSDC_S_COUNTERS + SSDC_C_SSD_READ_BYTES] = "ssd_read_bytes",
	[SSDC_S_COUNTERS + SSDC_C_SSD_WRITE_BYTES] = "ssd_write_bytes",
	[SSDC_S_COUNTERS + SSDC_C_ORIGIN_READ_BYTES] = "origin_read_bytes",
	[SSDC_S_COUNTERS + SSDC_C_ORIGIN_WRITE_BYTES] = "origin_write_bytes",
	[SSDC_S_COUNTERS + SSDC_C_SSD_READ_ERRORS] = "ssd_read_errors",
	[SSDC_S_COUNTERS + SSDC_C_SSD_WRITE_ERRORS] = "ssd_write_errors",
	[SSDC_S_COUNTERS + SSDC_C_ORIGIN_READ_ERRORS] = "origin_read_errors",
	[SSDC_S_COUNTERS + SSDC_C_ORIGIN_WRITE_ERRORS] = "origin_write_errors",
};

const char *ssdc_stat_name(enum ssdc_stat id)
{
	return id < SSDC_NR_STATS ? stat_names[id] : NULL;
}

/* "0.9740": hits over reads, 4 decimals, "0.0000" before any read. */
int ssdc_hit_ratio_show(const struct ssdc_stats *t, char *buf, size_t len)
{
	u64 hits = t->c[SSDC_C_READ_HITS];
	u64 reads = hits + t->c[SSDC_C_READ_MISSES];
	u64 r = reads ? div64_u64(hits * 10000 + reads / 2, reads) : 0;

	return scnprintf(buf, len, "%llu.%04llu\n", r / 10000, r % 10000);
}

/*
 * One line per bucket, "<upper bound in us> <count>"; the last bucket has
 * no upper bound and shows "inf". A last line "sum_us <total>" adds up
 * every read's latency.
 */
int ssdc_latency_show(const struct ssdc_stats *t, enum ssdc_lat which,
		      char *buf, size_t len)
{
	int i, n = 0;

	for (i = 0; i < SSDC_LAT_BUCKETS - 1; i++)
		n += scnprintf(buf + n, len - n, "%llu %llu\n", 2ULL << i,
			       t->lat[which][i]);
	n += scnprintf(buf + n, len - n, "inf %llu\n", t->lat[which][i]);
	n += scnprintf(buf + n, len - n, "sum_us %llu\n",
		       div_u64(t->lat_sum_ns[which], NSEC_PER_USEC));
	return n;
}
