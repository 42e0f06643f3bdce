// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the metadata journal and checkpoints.
 *
 * The journal is a ring of metadata blocks on the SSD. A commit appends
 * one or more blocks of records (meta.c gathers them) at the head, with
 * REQ_FUA. The superblock names the tail: where replay starts, and the
 * seq of the commit expected there. Replay applies commits with
 * consecutive seqs and stops at the first block that is torn, stale or
 * foreign.
 *
 * A checkpoint writes every map page that changed since the last one,
 * each to its other copy, then a superblock whose tail is the head: the
 * journal before it is no longer needed. It runs when the journal is half
 * full, and at load, which also starts the journal with a seq that no
 * block on the SSD can carry yet.
 */
#include <linux/bitmap.h>
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/slab.h>

#include "ssdcache.h"

#define JOURNAL_WRITE	(REQ_OP_WRITE | REQ_SYNC | REQ_FUA)

static sector_t jblock_sector(struct ssdcache *sc, u64 blk)
{
	return sc->j_start + blk * SSDCACHE_META_BLOCK_SECTORS;
}

static u64 journal_used(struct ssdcache *sc)
{
	return (sc->j_head + sc->j_blocks - sc->j_tail) % sc->j_blocks;
}

/* Can a commit of @blocks blocks be appended? One block stays unused. */
bool ssdc_journal_room(struct ssdcache *sc, unsigned int blocks)
{
	return journal_used(sc) + blocks < sc->j_blocks;
}

bool ssdc_checkpoint_due(struct ssdcache *sc)
{
	return journal_used(sc) >= sc->j_blocks / 2;
}

static void fill_header(struct ssdcache *sc, void *buf, unsigned int index,
			unsigned int count, unsigned int nr)
{
	struct ssdcache_disk_jhdr *h = buf;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(SSDCACHE_JOURNAL_MAGIC);
	h->seq = cpu_to_le64(sc->j_seq);
	memcpy(h->cache_uuid, sc->sb.cache_uuid, SSDCACHE_UUID_LEN);
	h->nr_records = cpu_to_le32(nr);
	h->index = cpu_to_le16(index);
	h->count = cpu_to_le16(count);
	if (nr < SSDCACHE_JOURNAL_RECORDS)
		memset(buf + sizeof(*h) + nr * sizeof(struct ssdcache_disk_jrec), 0,
		       (SSDCACHE_JOURNAL_RECORDS - nr) * sizeof(struct ssdcache_disk_jrec));
	h->csum = cpu_to_le32(ssdc_csum(buf, SSDCACHE_META_BLOCK_SIZE, &h->csum));
}

/*
 * Appends commit_buf[0..blocks) as one commit; the last block holds
 * @last_records records, the others full. Checkpoints first if the ring
 * is full: that is what a full journal costs, a wait for the checkpoint.
 */
int ssdc_journal_write(struct ssdcache *sc, unsigned int blocks,
		       unsigned int last_records)
{
	unsigned int i, n1;
	int r;

	if (!ssdc_journal_room(sc, blocks)) {
		/* The checkpoint needs commit_buf: it holds our records. */
		return -ENOSPC;
	}
	for (i = 0; i < blocks; i++)
		fill_header(sc, page_address(sc->commit_buf[i]), i, blocks,
			    i == blocks - 1 ? last_records : SSDCACHE_JOURNAL_RECORDS);
	n1 = min_t(u64, blocks, sc->j_blocks - sc->j_head);
	r = ssdc_rw_bufs(sc, jblock_sector(sc, sc->j_head), 0, n1, JOURNAL_WRITE);
	if (!r && n1 < blocks)
		r = ssdc_rw_bufs(sc, jblock_sector(sc, 0), n1, blocks - n1, JOURNAL_WRITE);
	if (r)
		return r;
	sc->j_head = (sc->j_head + blocks) % sc->j_blocks;
	sc->j_seq++;
	this_cpu_add(sc->stats->c[SSDC_C_JOURNAL_BLOCKS], blocks);
	return 0;
}

/* Is journal block @buf block @index of commit @seq? Sets *count. */
static bool jblock_ok(struct ssdcache *sc, void *buf, u64 seq, unsigned int index,
		      unsigned int *count)
{
	struct ssdcache_disk_jhdr *h = buf;

	return ssdcache_jblock_ok(h, seq, index, sc->sb.cache_uuid,
				  ssdc_csum(buf, SSDCACHE_META_BLOCK_SIZE, &h->csum), count);
}

/*
 * Reads the commit @seq at @pos into commit_buf. Returns its length in
 * blocks, 0 if there is none (the end of the journal), or an error.
 */
static int read_commit(struct ssdcache *sc, u64 pos, u64 seq)
{
	unsigned int count = 0, i;
	int r;

	for (i = 0; i == 0 || i < count; i++) {
		r = ssdc_rw_bufs(sc, jblock_sector(sc, (pos + i) % sc->j_blocks), i, 1,
				 REQ_OP_READ);
		if (r)
			return r;
		if (!jblock_ok(sc, page_address(sc->commit_buf[i]), seq, i, &count))
			return 0;
	}
	return count;
}

static const char *apply_commit(struct ssdcache *sc, unsigned int count)
{
	unsigned int b, i;

	for (b = 0; b < count; b++) {
		void *buf = page_address(sc->commit_buf[b]);
		struct ssdcache_disk_jhdr *h = buf;
		struct ssdcache_disk_jrec *rec = buf + sizeof(*h);

		for (i = 0; i < le32_to_cpu(h->nr_records); i++) {
			u64 slot = le64_to_cpu(rec[i].block);
			u64 e = le64_to_cpu(rec[i].entry);
			const char *bad = ssdc_check_entry(sc, slot, e);

			if (bad)
				return bad;
			ssdc_set_entry(sc, slot, e);
			set_bit(ssdc_slot_page(slot), sc->ckpt_pages);
		}
	}
	return NULL;
}

int ssdc_journal_replay(struct ssdcache *sc, char **error)
{
	u64 pos = sc->j_tail, seq = sc->j_seq, blocks = 0, commits = 0;
	int r;

	for (;;) {
		const char *bad;

		r = read_commit(sc, pos, seq);
		if (r < 0) {
			*error = "Cannot read the journal";
			return r;
		}
		if (!r || blocks + r >= sc->j_blocks)
			break;
		bad = apply_commit(sc, r);
		if (bad) {
			DMERR("%s: journal commit %llu: %s", ssdcache_name(sc), seq, bad);
			*error = "Journal is corrupted";
			return -EINVAL;
		}
		pos = (pos + r) % sc->j_blocks;
		blocks += r;
		commits++;
		seq++;
	}
	/*
	 * A torn commit may have left blocks with seq @seq after @pos: the
	 * next commit gets a seq that no block on the SSD carries.
	 */
	sc->j_head = pos;
	sc->j_seq = seq + 1;
	DMINFO("%s: replayed %llu journal commits (%llu blocks)",
	       ssdcache_name(sc), commits, blocks);
	return 0;
}

static void ckpt_end_io(struct bio *bio)
{
	complete(bio->bi_private);
}

/*
 * Writes checkpoint pages commit_buf[0..n) for pages @pgs, each to its
 * other copy, in page order under a plug: pages next to each other in
 * the same copy go as one request. Every bio is chained to the first
 * before any is submitted; the first completes last and reports any error.
 */
static int write_ckpt_pages(struct ssdcache *sc, const u64 *pgs, unsigned int n)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct bio *bios[SSDC_MAP_BATCH];
	struct blk_plug plug;
	unsigned int i;
	int r;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned int copy = !test_bit(pgs[i], sc->map_cur);

		bios[i] = bio_alloc(sc->cache->bdev, 1, REQ_OP_WRITE, GFP_NOIO);
		bios[i]->bi_iter.bi_sector = ssdc_copy_sector(sc, pgs[i], copy);
		__bio_add_page(bios[i], sc->commit_buf[i], SSDCACHE_META_BLOCK_SIZE, 0);
		if (i)
			bio_chain(bios[i], bios[0]);
	}
	bios[0]->bi_private = &done;
	bios[0]->bi_end_io = ckpt_end_io;
	blk_start_plug(&plug);
	for (i = 0; i < n; i++) {
		ssdc_count_bio(sc, true, bios[i]);
		submit_bio(bios[i]);
	}
	blk_finish_plug(&plug);
	wait_for_completion_io(&done);
	r = blk_status_to_errno(bios[0]->bi_status);
	if (r)
		ssdc_count_error(sc, true, true);
	bio_put(bios[0]);
	return r;
}

/*
 * Builds map page @pg for checkpoint @seq: the entries true after any
 * crash, or all invalid if @empty.
 */
void ssdc_build_page(struct ssdcache *sc, u64 pg, void *buf, u64 seq, bool empty)
{
	struct ssdcache_disk_map_hdr *hdr = buf;
	__le64 *entries = buf + sizeof(*hdr);
	u32 set = pg * SSDCACHE_SETS_PER_PAGE, end;
	unsigned long flags;
	unsigned int i = 0;
	u64 s;

	memset(buf, 0, SSDCACHE_META_BLOCK_SIZE);
	hdr->magic = cpu_to_le32(SSDCACHE_MAP_MAGIC);
	hdr->page = cpu_to_le64(pg);
	hdr->seq = cpu_to_le64(seq);
	memcpy(hdr->cache_uuid, sc->sb.cache_uuid, SSDCACHE_UUID_LEN);
	end = min_t(u32, set + SSDCACHE_SETS_PER_PAGE, sc->nr_sets);
	for (; !empty && set < end; set++) {
		spin_lock_irqsave(&sc->sets[set].lock, flags);
		for (s = (u64)set * SSDCACHE_ASSOC;
		     s < (u64)(set + 1) * SSDCACHE_ASSOC; s++, i++)
			entries[i] = cpu_to_le64(ssdc_durable_entry(sc->slots[s]));
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	}
	hdr->csum = cpu_to_le32(ssdc_csum(buf, SSDCACHE_META_BLOCK_SIZE, &hdr->csum));
}

/*
 * Writes the changed map pages and a superblock that moves the journal's
 * tail to its head. Caller holds commit_lock (or is the constructor) and
 * commit_buf holds nothing it needs.
 */
int ssdc_checkpoint(struct ssdcache *sc)
{
	u64 seq = sc->ckpt_seq + 1, pg = 0, pgs[SSDC_MAP_BATCH];
	unsigned long *written;
	unsigned int n = 0;
	int r = 0;

	written = bitmap_zalloc(sc->map_pages, GFP_NOIO);
	if (!written)
		return -ENOMEM;
	for (;;) {
		pg = find_next_bit(sc->ckpt_pages, sc->map_pages, pg);
		if (n == SSDC_MAP_BATCH || (n && pg >= sc->map_pages)) {
			r = write_ckpt_pages(sc, pgs, n);
			if (r)
				goto out;
			n = 0;
		}
		if (pg >= sc->map_pages)
			break;
		clear_bit(pg, sc->ckpt_pages);
		ssdc_build_page(sc, pg, page_address(sc->commit_buf[n]), seq, false);
		set_bit(pg, written);
		pgs[n++] = pg++;
	}
	sc->sb.journal_tail = cpu_to_le64(sc->j_head);
	sc->sb.journal_seq = cpu_to_le64(sc->j_seq);
	sc->sb.ckpt_seq = cpu_to_le64(seq);
	sc->sb.mode = cpu_to_le32(READ_ONCE(sc->mode));
	r = ssdc_write_sb(sc);
	if (r)
		goto out;
	bitmap_xor(sc->map_cur, sc->map_cur, written, sc->map_pages);
	sc->j_tail = sc->j_head;
	sc->ckpt_seq = seq;
	ssdc_count(sc, SSDC_C_CHECKPOINTS);
out:
	/* Bit by bit: writers set bits of ckpt_pages meanwhile (cache.c). */
	if (r)
		for_each_set_bit(pg, written, sc->map_pages)
			set_bit(pg, sc->ckpt_pages);
	bitmap_free(written);
	return r;
}
