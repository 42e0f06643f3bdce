// SPDX-License-Identifier: GPL-2.0
/* ssdcachectl: reading and printing a cache's statistics. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dm.h"
#include "stats.h"

const char *const ssdc_stat_names[NR_ST] = {
	"reads", "writes", "read_hits", "read_misses", "write_hits",
	"write_misses", "bypassed_reads", "bypassed_writes", "promotions",
	"evictions", "dirty_blocks", "clean_blocks", "free_blocks",
	"cleaned_blocks", "journal_commits", "journal_blocks",
	"journal_bytes", "checkpoints", "flushes", "fuas", "discards",
	"readaheads", "direct_flushes",
	"ssd_read_bytes", "ssd_write_bytes", "origin_read_bytes",
	"origin_write_bytes", "ssd_read_errors", "ssd_write_errors",
	"origin_read_errors", "origin_write_errors",
};

/* Prometheus help; gauges are the block counts, the rest are counters. */
static const char *const stat_help[NR_ST] = {
	"Reads mapped, per cache block piece (hits + misses)",
	"Writes mapped, per cache block piece (hits + misses)",
	"Reads served from the SSD",
	"Reads sent to the origin (bypassed ones included)",
	"Writes to a block the cache held",
	"Writes to a block the cache did not hold",
	"Reads of a sequential stream over the cutoff, sent to the origin",
	"Writes of a sequential stream over the cutoff, sent to the origin",
	"Blocks copied into the cache after a read miss",
	"Blocks evicted to make room",
	"Cache blocks newer than the origin",
	"Cache blocks holding the origin's data",
	"Cache blocks holding nothing",
	"Dirty blocks written back to the origin",
	"Metadata journal commits",
	"Metadata journal blocks written",
	"Metadata journal bytes written",
	"Block map checkpoints",
	"Flushes that went through a commit",
	"FUA writes that went through a commit",
	"Discards",
	"Read misses that read their whole readahead chunk",
	"Flushes sent to the SSD alone: nothing to commit",
	"Bytes read from the SSD",
	"Bytes written to the SSD (metadata included)",
	"Bytes read from the origin",
	"Bytes written to the origin",
	"Failed reads from the SSD",
	"Failed writes to the SSD",
	"Failed reads from the origin",
	"Failed writes to the origin",
};

static const char *const set_names[NR_SE] = {
	"block_size", "cache_blocks", "ram_per_block", "sequential_cutoff",
	"dirty_high", "dirty_low", "writeback_idle_ms", "writeback_rate",
	"writeback_yield", "writeback_backoff_ms", "error_limit", "error_halflife_ms",
	"readahead_kb",
};

static const char *const hist_names[2] = {
	"read_latency_ssd_us", "read_latency_origin_us",
};

static int is_gauge(int i)
{
	return i == ST_DIRTY_BLOCKS || i == ST_CLEAN_BLOCKS || i == ST_FREE_BLOCKS;
}

/* Reads sysfs file @dir/@file into @buf, without its newline. */
static int read_file(const char *dir, const char *file, char *buf, size_t len)
{
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return 0;
}

static int read_u64(const char *dir, const char *file, uint64_t *v)
{
	char buf[64], *end;
	int r = read_file(dir, file, buf, sizeof(buf));

	if (r)
		return r;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return (errno || end == buf || *end) ? -EINVAL : 0;
}

/* A histogram file: "<le> <count>" lines, the last "inf", then "sum_us". */
static int read_hist(const char *dir, const char *file, struct ssdc_hist *h)
{
	char buf[4096], *line, *save = NULL;
	int r = read_file(dir, file, buf, sizeof(buf));

	memset(h, 0, sizeof(*h));
	if (r)
		return r;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[32];
		uint64_t v;

		if (sscanf(line, "%31s %" SCNu64, key, &v) != 2)
			return -EINVAL;
		if (!strcmp(key, "sum_us")) {
			h->sum_us = v;
			continue;
		}
		if (h->n == SSDC_MAX_BUCKETS)
			return -EINVAL;
		h->le_us[h->n] = strcmp(key, "inf") ? strtoull(key, NULL, 10) : UINT64_MAX;
		h->count[h->n++] = v;
	}
	return h->n ? 0 : -EINVAL;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int read_dir(const char dir[static 128], struct ssdc_cache_stats *s, char *err, size_t len)
{
	char sdir[160];
	const char *bad = NULL;
	int i;

	if (read_file(dir, "state", s->state, sizeof(s->state)) ||
	    read_file(dir, "health", s->health, sizeof(s->health)) ||
	    read_file(dir, "mode", s->mode, sizeof(s->mode)) ||
	    read_file(dir, "policy", s->policy, sizeof(s->policy)) ||
	    read_file(dir, "writeback", s->writeback, sizeof(s->writeback)) ||
	    read_file(dir, "origin", s->origin, sizeof(s->origin)) ||
	    read_file(dir, "cache", s->cache, sizeof(s->cache)))
		bad = "state";
	for (i = 0; !bad && i < NR_SE; i++)
		if (read_u64(dir, set_names[i], &s->set[i]))
			bad = set_names[i];
	snprintf(sdir, sizeof(sdir), "%s/stats", dir);
	for (i = 0; !bad && i < NR_ST; i++)
		if (read_u64(sdir, ssdc_stat_names[i], &s->st[i]))
			bad = ssdc_stat_names[i];
	for (i = 0; !bad && i < 2; i++)
		if (read_hist(sdir, hist_names[i], &s->lat[i]))
			bad = hist_names[i];
	if (bad) {
		snprintf(err, len, "cannot read %s in %s", bad, dir);
		return SSDC_NO_SYSFS;
	}
	return 0;
}

int ssdc_read_stats(const char *name, struct ssdc_cache_stats *s, char *err, size_t len)
{
	char link[64], target[PATH_MAX], dir[128];
	unsigned int major, minor;
	const char *base;
	ssize_t n;
	int r;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	r = ssdc_devnum(name, &major, &minor);
	if (r)
		return r;
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major, minor);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0) {
		snprintf(err, len, "no %s", link);
		return SSDC_NO_SYSFS;
	}
	target[n] = 0;
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= sizeof(s->disk)) {
		snprintf(err, len, "unexpected device name in %s", link);
		return SSDC_NO_SYSFS;
	}
	memcpy(s->disk, base, strlen(base) + 1);
	snprintf(dir, sizeof(dir), "%s/ssdcache", link);
	if (access(dir, F_OK)) {
		snprintf(err, len, "no %s (was the device ever resumed?)", dir);
		return SSDC_NO_SYSFS;
	}
	s->when = now_seconds();
	return read_dir(dir, s, err, len);
}

static double hit_ratio(const struct ssdc_cache_stats *s)
{
	return s->st[ST_READS] ? (double)s->st[ST_READ_HITS] / s->st[ST_READS] : 0.0;
}

void ssdc_print_text(FILE *f, const struct ssdc_cache_stats *s)
{
	int i, h;

	fprintf(f, "%s (%s)\n", s->name, s->disk);
	fprintf(f, "  %-22s %s\n  %-22s %s\n  %-22s %s\n  %-22s %s\n  %-22s %s\n",
		"state", s->state, "health", s->health, "mode", s->mode,
		"policy", s->policy, "writeback", s->writeback);
	fprintf(f, "  %-22s %s\n  %-22s %s\n", "origin", s->origin, "cache", s->cache);
	for (i = 0; i < NR_SE; i++)
		fprintf(f, "  %-22s %" PRIu64 "\n", set_names[i], s->set[i]);
	for (i = 0; i < NR_ST; i++)
		fprintf(f, "  %-22s %" PRIu64 "\n", ssdc_stat_names[i], s->st[i]);
	fprintf(f, "  %-22s %.4f\n", "read_hit_ratio", hit_ratio(s));
	for (h = 0; h < 2; h++) {
		fprintf(f, "  %s:", hist_names[h]);
		for (i = 0; i < (int)s->lat[h].n; i++) {
			if (!s->lat[h].count[i])
				continue;
			if (s->lat[h].le_us[i] == UINT64_MAX)
				fprintf(f, " inf:%" PRIu64, s->lat[h].count[i]);
			else
				fprintf(f, " <%" PRIu64 ":%" PRIu64, s->lat[h].le_us[i],
					s->lat[h].count[i]);
		}
		fprintf(f, " sum_us:%" PRIu64 "\n", s->lat[h].sum_us);
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_hist(FILE *f, const struct ssdc_hist *h)
{
	unsigned int i;

	fprintf(f, "{\"buckets\": [");
	for (i = 0; i < h->n; i++) {
		fprintf(f, "%s{\"le_us\": ", i ? ", " : "");
		if (h->le_us[i] == UINT64_MAX)
			fprintf(f, "null");
		else
			fprintf(f, "%" PRIu64, h->le_us[i]);
		fprintf(f, ", \"count\": %" PRIu64 "}", h->count[i]);
	}
	fprintf(f, "], \"sum_us\": %" PRIu64 "}", h->sum_us);
}

static void json_one(FILE *f, const struct ssdc_cache_stats *s)
{
	static const char *const text[] = { "state", "health", "mode", "policy",
					    "writeback", "origin", "cache" };
	const char *val[] = { s->state, s->health, s->mode, s->policy, s->writeback,
			      s->origin, s->cache };
	unsigned int i;

	fprintf(f, "{\"name\": ");
	json_string(f, s->name);
	fprintf(f, ", \"device\": ");
	json_string(f, s->disk);
	for (i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		fprintf(f, ", \"%s\": ", text[i]);
		json_string(f, val[i]);
	}
	fprintf(f, ", \"settings\": {");
	for (i = 0; i < NR_SE; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", set_names[i], s->set[i]);
	fprintf(f, "}, \"counters\": {");
	for (i = 0; i < NR_ST; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", ssdc_stat_names[i], s->st[i]);
	fprintf(f, "}, \"read_hit_ratio\": %.6f, \"latency\": {\"ssd_read\": ", hit_ratio(s));
	json_hist(f, &s->lat[0]);
	fprintf(f, ", \"origin_read\": ");
	json_hist(f, &s->lat[1]);
	fprintf(f, "}}");
}

/* {"version": 1, "caches": [...]} on one line. */
void ssdc_print_json(FILE *f, const struct ssdc_cache_stats *s, unsigned int n)
{
	unsigned int i;

	fprintf(f, "{\"version\": 1, \"caches\": [");
	for (i = 0; i < n; i++) {
		if (i)
			fprintf(f, ", ");
		json_one(f, &s[i]);
	}
	fprintf(f, "]}\n");
}

/* A label value: backslash, quote and newline escaped. */
static void prom_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fprintf(f, "\\n");
		else
			fputc(*s, f);
	}
}

static void prom_head(FILE *f, const char *metric, const char *type, const char *help)
{
	fprintf(f, "# HELP ssdcache_%s %s\n# TYPE ssdcache_%s %s\n", metric, help,
		metric, type);
}

static void prom_sample(FILE *f, const char *metric, const struct ssdc_cache_stats *s,
			const char *extra, double v)
{
	fprintf(f, "ssdcache_%s{cache=\"", metric);
	prom_label(f, s->name);
	fprintf(f, "\"%s} %.17g\n", extra ? extra : "", v);
}

static void prom_hist(FILE *f, const struct ssdc_cache_stats *s, unsigned int n, int h)
{
	static const char *const metric[2] = { "ssd_read_latency_seconds",
					       "origin_read_latency_seconds" };
	static const char *const help[2] = { "Latency of reads served from the SSD",
					     "Latency of reads served from the origin" };
	char m[80], le[64];
	unsigned int c, i;

	prom_head(f, metric[h], "histogram", help[h]);
	for (c = 0; c < n; c++) {
		const struct ssdc_hist *hs = &s[c].lat[h];
		uint64_t cum = 0;

		snprintf(m, sizeof(m), "%s_bucket", metric[h]);
		for (i = 0; i < hs->n; i++) {
			cum += hs->count[i];
			if (hs->le_us[i] == UINT64_MAX)
				snprintf(le, sizeof(le), ",le=\"+Inf\"");
			else
				snprintf(le, sizeof(le), ",le=\"%g\"", hs->le_us[i] / 1e6);
			prom_sample(f, m, &s[c], le, cum);
		}
		snprintf(m, sizeof(m), "%s_sum", metric[h]);
		prom_sample(f, m, &s[c], NULL, hs->sum_us / 1e6);
		snprintf(m, sizeof(m), "%s_count", metric[h]);
		prom_sample(f, m, &s[c], NULL, cum);
	}
}

/* node_exporter textfile format: HELP and TYPE once per metric. */
void ssdc_print_prometheus(FILE *f, const struct ssdc_cache_stats *s, unsigned int n)
{
	char m[80], extra[512];
	unsigned int c, i;

	prom_head(f, "info", "gauge", "Cache state and mode, as labels; always 1");
	for (c = 0; c < n; c++) {
		snprintf(extra, sizeof(extra),
			 ",device=\"%s\",state=\"%s\",health=\"%s\",mode=\"%s\",policy=\"%s\",writeback=\"%s\"",
			 s[c].disk, s[c].state, s[c].health, s[c].mode, s[c].policy,
			 s[c].writeback);
		prom_sample(f, "info", &s[c], extra, 1);
	}
	for (i = 0; i < NR_SE; i++) {
		prom_head(f, set_names[i], "gauge", "Setting of the same name in sysfs");
		for (c = 0; c < n; c++)
			prom_sample(f, set_names[i], &s[c], NULL, s[c].set[i]);
	}
	for (i = 0; i < NR_ST; i++) {
		snprintf(m, sizeof(m), "%s%s", ssdc_stat_names[i], is_gauge(i) ? "" : "_total");
		prom_head(f, m, is_gauge(i) ? "gauge" : "counter", stat_help[i]);
		for (c = 0; c < n; c++)
			prom_sample(f, m, &s[c], NULL, s[c].st[i]);
	}
	prom_head(f, "read_hit_ratio", "gauge", "Read hits over reads since the last reset");
	for (c = 0; c < n; c++)
		prom_sample(f, "read_hit_ratio", &s[c], NULL, hit_ratio(&s[c]));
	prom_hist(f, s, n, 0);
	prom_hist(f, s, n, 1);
}
