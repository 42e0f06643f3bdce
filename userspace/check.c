// SPDX-License-Identifier: GPL-2.0
/*
 * ssdcachectl check and dump: the cache's metadata read offline, with the
 * rules the module applies at load (module/superblock.c, meta.c,
 * journal.c): the newest valid superblock, its geometry, the newer valid
 * copy of every map page, the journal replayed from its tail, and no
 * origin block mapped twice. Nothing is written.
 */
#include <endian.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "disk.h"

#define MAX_REPORTS	20	/* problems printed in full */

struct meta {
	const struct ssdc_dev *dev;
	struct ssdcache_disk_sb sb;
	uint64_t nr, origin_blocks, map_pages, jblocks, map_start;
	uint32_t nr_sets, bs;
	uint64_t *map;			/* entries after replay */
	uint64_t commits, jblocks_used, torn_pages;
	unsigned int problems;
	int warned;
	void *buf;			/* one aligned metadata block */
	FILE *log;			/* where problems go */
};

static void problem(struct meta *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct meta *m, const char *fmt, ...)
{
	va_list ap;

	if (m->problems++ >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	fprintf(m->log, "error: ");
	vfprintf(m->log, fmt, ap);
	fprintf(m->log, "\n");
	va_end(ap);
}

static const char *bad_entry(const struct meta *m, uint64_t slot, uint64_t e)
{
	return ssdcache_entry_problem(slot, e, m->nr, m->origin_blocks,
				      le32toh(m->sb.set_shift));
}

/* The module's check_sb(), without the origin device. */
static const char *bad_geometry(const struct meta *m)
{
	const char *bad = ssdcache_sb_problem(&m->sb);

	if (bad)
		return bad;
	if (le64toh(m->sb.cache_sectors) > m->dev->sectors)
		return "the device is smaller than when it was formatted";
	return NULL;
}

static const char *const copy_state[] = {
	[SSDC_SB_OK] = "valid", [SSDC_SB_NONE] = "no ssdcache magic",
	[SSDC_SB_CORRUPT] = "wrong checksum", [SSDC_SB_IOERR] = "unreadable",
};

/* Reads the superblocks; returns CHECK_* for a fatal problem, else 0. */
static int load_sb(struct meta *m, FILE *out)
{
	struct ssdcache_disk_sb *c = m->buf;
	int i, r, valid = 0;

	for (i = 0; i < 2; i++) {
		r = ssdc_read_sb_copy(m->dev, i, c);
		if (r == SSDC_SB_IOERR)
			return CHECK_OPERATIONAL;
		fprintf(out, "superblock %c: %s", 'A' + i, copy_state[r]);
		if (r == SSDC_SB_OK)
			fprintf(out, ", seq %" PRIu64, (uint64_t)le64toh(c->seq));
		fprintf(out, "\n");
		if (r == SSDC_SB_OK && (!valid || le64toh(c->seq) > le64toh(m->sb.seq))) {
			m->sb = *c;
			valid = 1;
		} else if (r != SSDC_SB_OK) {
			m->warned = 1;
		}
	}
	if (!valid) {
		problem(m, "no valid superblock");
		return CHECK_ERRORS;
	}
	m->nr = le64toh(m->sb.nr_blocks);
	m->bs = le32toh(m->sb.block_sectors);
	m->map_pages = le64toh(m->sb.map_pages);
	m->jblocks = le64toh(m->sb.journal_blocks);
	m->map_start = le64toh(m->sb.map_start);
	m->nr_sets = (uint32_t)(m->nr / SSDCACHE_ASSOC);
	m->origin_blocks = m->bs ? le64toh(m->sb.origin_sectors) / m->bs : 0;
	if (bad_geometry(m)) {
		problem(m, "superblock: %s", bad_geometry(m));
		return CHECK_ERRORS;
	}
	return 0;
}

static int page_ok(const struct meta *m, uint64_t pg, const struct ssdcache_disk_map_hdr *h)
{
	return ssdcache_map_page_ok(h, pg, m->sb.cache_uuid, ssdc_meta_csum(h, &h->csum));
}

/* The newer valid copy of map page @pg into m->map. */
static int load_page(struct meta *m, uint64_t pg)
{
	const struct ssdcache_disk_map_hdr *h = m->buf;
	uint64_t chosen[SSDCACHE_MAP_ENTRIES_PER_PAGE], best_seq = 0, i;
	int copy, found = 0;

	for (copy = 0; copy < 2; copy++) {
		if (ssdc_read_meta(m->dev, m->map_start + (copy * m->map_pages + pg) *
				   SSDCACHE_META_BLOCK_SECTORS, m->buf))
			return CHECK_OPERATIONAL;
		if (!page_ok(m, pg, h) || (found && le64toh(h->seq) <= best_seq))
			continue;
		found = 1;
		best_seq = le64toh(h->seq);
		for (i = 0; i < SSDCACHE_MAP_ENTRIES_PER_PAGE; i++)
			chosen[i] = le64toh(((const uint64_t *)(h + 1))[i]);
	}
	if (!found) {
		m->torn_pages++;
		problem(m, "block map page %" PRIu64 ": no valid copy", pg);
		return 0;
	}
	for (i = 0; i < SSDCACHE_MAP_ENTRIES_PER_PAGE; i++) {
		uint64_t slot = pg * SSDCACHE_MAP_ENTRIES_PER_PAGE + i;
		const char *bad;

		if (slot >= m->nr && !chosen[i])
			continue;	/* the last page's padding */
		bad = bad_entry(m, slot, chosen[i]);
		if (bad)
			problem(m, "block map page %" PRIu64 ", cache block %" PRIu64 ": %s", pg,
				slot, bad);
		else
			m->map[slot] = chosen[i];
	}
	return 0;
}

/* Is journal block m->buf block @index of commit @seq? Sets *count. */
static int jblock_ok(const struct meta *m, uint64_t seq, unsigned int index,
		     unsigned int *count)
{
	const struct ssdcache_disk_jhdr *h = m->buf;

	return ssdcache_jblock_ok(h, seq, index, m->sb.cache_uuid, ssdc_meta_csum(h, &h->csum),
				  count);
}

/* Replays the journal into m->map, as the module does at load. */
static int replay(struct meta *m, FILE *dump)
{
	uint64_t pos = le64toh(m->sb.journal_tail), seq = le64toh(m->sb.journal_seq);
	unsigned int count, i, r;

	for (;;) {
		uint64_t records = 0;

		count = 0;
		for (i = 0; i == 0 || i < count; i++) {
			if (ssdc_read_meta(m->dev, SSDCACHE_JOURNAL_SECTOR + ((pos + i) % m->jblocks) *
					   SSDCACHE_META_BLOCK_SECTORS, m->buf))
				return CHECK_OPERATIONAL;
			if (!jblock_ok(m, seq, i, &count))
				return 0;	/* the end of the journal */
		}
		if (m->jblocks_used + count >= m->jblocks)
			return 0;
		/* Valid: apply its records, block by block (read again). */
		for (i = 0; i < count; i++) {
			const struct ssdcache_disk_jhdr *h = m->buf;
			const struct ssdcache_disk_jrec *rec = (const void *)(h + 1);

			if (ssdc_read_meta(m->dev, SSDCACHE_JOURNAL_SECTOR + ((pos + i) % m->jblocks) *
					   SSDCACHE_META_BLOCK_SECTORS, m->buf))
				return CHECK_OPERATIONAL;
			for (r = 0; r < le32toh(h->nr_records); r++, records++) {
				uint64_t slot = le64toh(rec[r].block), e = le64toh(rec[r].entry);
				const char *bad = bad_entry(m, slot, e);

				if (bad) {
					problem(m, "journal commit %" PRIu64 ", record for cache block %" PRIu64 ": %s",
						seq, slot, bad);
					return CHECK_ERRORS;
				}
				m->map[slot] = e;
			}
		}
		if (dump)
			fprintf(dump, "journal commit %" PRIu64 ": %u blocks at %" PRIu64 ", %" PRIu64 " records\n",
				seq, count, pos, records);
		pos = (pos + count) % m->jblocks;
		m->jblocks_used += count;
		m->commits++;
		seq++;
	}
}

static void find_duplicates(struct meta *m)
{
	uint64_t set, a, b;

	for (set = 0; set < m->nr_sets; set++) {
		uint64_t first = set * SSDCACHE_ASSOC;

		for (a = first; a < first + SSDCACHE_ASSOC; a++) {
			if (!m->map[a])
				continue;
			for (b = a + 1; b < first + SSDCACHE_ASSOC; b++)
				if (m->map[b] && ((m->map[a] ^ m->map[b]) & SSDCACHE_MAP_OBLOCK_MASK) == 0)
					problem(m, "origin block %" PRIu64 " is mapped twice (cache blocks %" PRIu64 " and %" PRIu64 ")",
						(uint64_t)(m->map[a] & SSDCACHE_MAP_OBLOCK_MASK), a, b);
		}
	}
}

/* Loads everything; returns a CHECK_* code. */
static int load(struct meta *m, FILE *out, FILE *journal_dump)
{
	uint64_t pg;
	int r = load_sb(m, out);

	if (r)
		return r;
	m->map = calloc(m->nr, sizeof(*m->map));
	if (!m->map)
		return CHECK_OPERATIONAL;
	for (pg = 0; pg < m->map_pages; pg++) {
		r = load_page(m, pg);
		if (r)
			return r;
	}
	if (m->problems)
		return CHECK_ERRORS;
	r = replay(m, journal_dump);
	if (r)
		return r;
	find_duplicates(m);
	return m->problems ? CHECK_ERRORS : CHECK_CLEAN;
}

static void summary(const struct meta *m, FILE *out)
{
	char id[SSDC_PRINTABLE_ID_LEN];
	uint64_t i, used = 0, dirty = 0;

	for (i = 0; i < m->nr; i++) {
		used += !!m->map[i];
		dirty += !!(m->map[i] & SSDCACHE_MAP_DIRTY);
	}
	fprintf(out, "cache of %s: %" PRIu64 " blocks of %u bytes, %" PRIu64 " in use, %" PRIu64 " dirty\n",
		ssdc_printable(m->sb.origin_id, SSDCACHE_ORIGIN_ID_LEN, id, sizeof(id)), m->nr,
		m->bs << 9, used, dirty);
	fprintf(out, "journal: %" PRIu64 " commits (%" PRIu64 " blocks) to replay\n",
		m->commits, m->jblocks_used);
	if (le32toh(m->sb.flags) & SSDCACHE_SB_DEGRADED)
		fprintf(out, "degraded: too many cache device errors; no new data is cached until 'ssdcachectl clear-degraded'\n");
}

static int init_meta(const struct ssdc_dev *d, struct meta *m, FILE *log)
{
	memset(m, 0, sizeof(*m));
	m->log = log;
	m->dev = d;
	return posix_memalign(&m->buf, 4096, SSDCACHE_META_BLOCK_SIZE) ? CHECK_OPERATIONAL : 0;
}

static void free_meta(struct meta *m)
{
	free(m->map);
	free(m->buf);
}

/* check on device (or image) @d, named @label in the report on @out. */
static int check_dev(const struct ssdc_dev *d, const char *label, FILE *out)
{
	struct meta m;
	int r = init_meta(d, &m, out);

	if (r)
		return r;
	r = load(&m, out, NULL);
	if (r == CHECK_OPERATIONAL)
		fprintf(stderr, "ssdcachectl check: %s: cannot read the metadata\n", label);
	if (r == CHECK_CLEAN || r == CHECK_ERRORS) {
		if (m.map)
			summary(&m, out);
		if (m.problems > MAX_REPORTS)
			fprintf(out, "(%u more problems not shown)\n", m.problems - MAX_REPORTS);
		if (r == CHECK_CLEAN)
			fprintf(out, "%s: clean%s\n", label,
				m.warned ? " (one superblock copy is bad; the next write replaces it)" : "");
		else
			fprintf(out, "%s: %u problems; the module will refuse to load this cache\n",
				label, m.problems);
	}
	free_meta(&m);
	return r;
}

/* Opens @path for check or dump; says why not. */
static int open_dev(const char *path, struct ssdc_dev *d)
{
	char err[512];

	if (!ssdc_dev_open(path, d, err, sizeof(err)))
		return 0;
	fprintf(stderr, "ssdcachectl: %s\n", err);
	return CHECK_OPERATIONAL;
}

int ssdc_check(const char *path)
{
	struct ssdc_dev d;
	int r = open_dev(path, &d);

	if (r)
		return r;
	r = check_dev(&d, path, stdout);
	ssdc_dev_close(&d);
	return r;
}

/* A JSON string's contents: quotes, backslashes and control bytes escaped. */
static void json_str(FILE *out, const char *s, size_t max)
{
	size_t i;

	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
}

static void json_sb(const struct ssdcache_disk_sb *sb, FILE *out)
{
	char uuid[40];
	int i;

	for (i = 0; i < SSDCACHE_UUID_LEN; i++)
		sprintf(uuid + 2 * i, "%02x", sb->cache_uuid[i]);
	fprintf(out, "{\"seq\": %" PRIu64 ", \"cache_uuid\": \"%s\", \"origin_id\": \"",
		(uint64_t)le64toh(sb->seq), uuid);
	json_str(out, sb->origin_id, SSDCACHE_ORIGIN_ID_LEN);
	fprintf(out, "\", "
		"\"origin_sectors\": %" PRIu64 ", \"cache_sectors\": %" PRIu64 ", "
		"\"block_size\": %u, \"nr_blocks\": %" PRIu64 ", \"journal_blocks\": %" PRIu64 ", "
		"\"map_pages\": %" PRIu64 ", \"data_start\": %" PRIu64 ", \"mode\": %u, \"flags\": %u, "
		"\"journal_tail\": %" PRIu64 ", \"journal_seq\": %" PRIu64 ", \"ckpt_seq\": %" PRIu64 "}",
		(uint64_t)le64toh(sb->origin_sectors), (uint64_t)le64toh(sb->cache_sectors),
		le32toh(sb->block_sectors) << 9, (uint64_t)le64toh(sb->nr_blocks),
		(uint64_t)le64toh(sb->journal_blocks), (uint64_t)le64toh(sb->map_pages),
		(uint64_t)le64toh(sb->data_start), le32toh(sb->mode), le32toh(sb->flags),
		(uint64_t)le64toh(sb->journal_tail), (uint64_t)le64toh(sb->journal_seq),
		(uint64_t)le64toh(sb->ckpt_seq));
}

/* dump of device (or image) @d on @out; problems go to @err (text: @out). */
static int dump_dev(const struct ssdc_dev *d, int json, FILE *out, FILE *err)
{
	struct meta m;
	uint64_t i;
	int r = init_meta(d, &m, json ? err : out), first = 1;

	if (r)
		return r;
	r = load(&m, json ? err : out, json ? NULL : out);
	if (!m.map) {
		free_meta(&m);
		return r ? r : CHECK_ERRORS;
	}
	if (json) {
		fprintf(out, "{\"superblock\": ");
		json_sb(&m.sb, out);
		fprintf(out, ", \"journal\": {\"commits\": %" PRIu64 ", \"blocks\": %" PRIu64 "}, \"map\": [",
			m.commits, m.jblocks_used);
	} else {
		summary(&m, out);
		fprintf(out, "cache_block origin_block state\n");
	}
	for (i = 0; i < m.nr; i++) {
		int dirty = !!(m.map[i] & SSDCACHE_MAP_DIRTY);
		uint64_t ob = m.map[i] & SSDCACHE_MAP_OBLOCK_MASK;

		if (!m.map[i])
			continue;
		if (json)
			fprintf(out, "%s{\"block\": %" PRIu64 ", \"origin_block\": %" PRIu64 ", \"dirty\": %s}",
				first ? "" : ", ", i, ob, dirty ? "true" : "false");
		else
			fprintf(out, "%" PRIu64 " %" PRIu64 " %s\n", i, ob, dirty ? "dirty" : "clean");
		first = 0;
	}
	if (json)
		fprintf(out, "]}\n");
	free_meta(&m);
	return r;
}

int ssdc_dump(const char *path, int json)
{
	struct ssdc_dev d;
	int r = open_dev(path, &d);

	if (r)
		return r;
	r = dump_dev(&d, json, stdout, stderr);
	ssdc_dev_close(&d);
	return r;
}

int ssdc_check_image(int fd, uint64_t sectors, FILE *out)
{
	struct ssdc_dev d = { .fd = fd, .sectors = sectors };

	snprintf(d.path, sizeof(d.path), "image");
	return check_dev(&d, "image", out);
}

int ssdc_dump_image(int fd, uint64_t sectors, int json, FILE *out)
{
	struct ssdc_dev d = { .fd = fd, .sectors = sectors };

	snprintf(d.path, sizeof(d.path), "image");
	return dump_dev(&d, json, out, out);
}
