/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ssdcachectl: a cache's statistics, read from /sys/block/dm-N/ssdcache/
 * (see Documentation/ssdcache.rst, "Statistics"), and their output.
 */
#ifndef SSDCACHECTL_STATS_H
#define SSDCACHECTL_STATS_H

#include <stdint.h>
#include <stdio.h>

#define SSDC_MAX_BUCKETS	64

/* The named statistics under stats/, in output order. */
enum {
	ST_READS, ST_WRITES, ST_READ_HITS, ST_READ_MISSES, ST_WRITE_HITS,
	ST_WRITE_MISSES, ST_BYPASSED_READS, ST_BYPASSED_WRITES, ST_PROMOTIONS,
	ST_EVICTIONS, ST_DIRTY_BLOCKS, ST_CLEAN_BLOCKS, ST_FREE_BLOCKS,
	ST_CLEANED_BLOCKS, ST_JOURNAL_COMMITS, ST_JOURNAL_BLOCKS,
	ST_JOURNAL_BYTES, ST_CHECKPOINTS, ST_FLUSHES, ST_FUAS, ST_DISCARDS,
	ST_READAHEADS, ST_DIRECT_FLUSHES,
	ST_SSD_READ_BYTES, ST_SSD_WRITE_BYTES, ST_ORIGIN_READ_BYTES,
	ST_ORIGIN_WRITE_BYTES, ST_SSD_READ_ERRORS, ST_SSD_WRITE_ERRORS,
	ST_ORIGIN_READ_ERRORS, ST_ORIGIN_WRITE_ERRORS,
	NR_ST
};

/* Numeric settings at the top of the directory, in output order. */
enum {
	SE_BLOCK_SIZE, SE_CACHE_BLOCKS, SE_RAM_PER_BLOCK, SE_SEQ_CUTOFF,
	SE_DIRTY_HIGH, SE_DIRTY_LOW, SE_WB_IDLE_MS, SE_WB_RATE, SE_WB_YIELD,
	SE_WB_BACKOFF_MS, SE_ERROR_LIMIT, SE_ERROR_HALFLIFE_MS, SE_READAHEAD_KB,
	NR_SE
};

struct ssdc_hist {
	unsigned int n;				/* buckets, the last unbounded */
	uint64_t le_us[SSDC_MAX_BUCKETS];	/* upper bounds */
	uint64_t count[SSDC_MAX_BUCKETS];
	uint64_t sum_us;
};

struct ssdc_cache_stats {
	char name[128];
	char disk[32];			/* "dm-0" */
	char state[32], health[32], mode[32], policy[32], writeback[32];
	char origin[64], cache[64];
	uint64_t set[NR_SE];
	uint64_t st[NR_ST];
	struct ssdc_hist lat[2];	/* reads from the SSD, from the origin */
	double when;			/* seconds, monotonic */
};

extern const char *const ssdc_stat_names[NR_ST];

/*
 * Reads device @name's statistics. Returns 0, an SSDC_DM_* failure, or
 * SSDC_NO_SYSFS with a reason in @err.
 */
#define SSDC_NO_SYSFS	(-10)
int ssdc_read_stats(const char *name, struct ssdc_cache_stats *s, char *err, size_t len);

void ssdc_print_text(FILE *f, const struct ssdc_cache_stats *s);
void ssdc_print_json(FILE *f, const struct ssdc_cache_stats *s, unsigned int n);
void ssdc_print_prometheus(FILE *f, const struct ssdc_cache_stats *s, unsigned int n);

/* `ssdcachectl top`. */
int ssdc_top(char **names, unsigned int n, unsigned int iterations, double interval);

#endif
