// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: writeback ("the cleaner").
 *
 * Dirty blocks are written back to the origin in batches, in origin-LBA
 * order from a cursor that sweeps the origin like an elevator; adjacent
 * blocks go out as one bio, and blocks in adjacent slots (a run written
 * as one request) are read from the SSD as one. A batch is: claim
 * (CLEANING, pinned), read from the SSD, write to the origin, flush the
 * origin, then mark clean the blocks nobody wrote meanwhile (a write
 * clears CLEANING). Only synced dirty blocks are claimed, so their data
 * is durable on the SSD and a clean entry is true as soon as the origin
 * flush is done.
 *
 * When it runs: above the high watermark until the low one, when the
 * origin has been idle for wb_idle_ms, after a "flush" message until
 * nothing is dirty, and always outside write-back mode (draining) or when
 * degraded (health.c). A "flush" message first commits the journal, so
 * that the blocks written before it are synced and cleanable at once
 * rather than after the next timed commit.
 *
 * A batch started only because the origin was idle gets out of the way
 * (with wb_yield on): it reads and writes SSDC_WB_IDLE_RUNS runs at a
 * time, and once a foreground bio has come since the batch was claimed
 * it copies no more; the blocks it did not copy stay dirty, neither
 * cleaned nor failed. Otherwise a foreground burst after an idle gap would queue
 * behind up to a whole batch of scattered writes to a slow origin.
 *
 * Finding the blocks: one scan keeps the cleanable blocks nearest the
 * cursor, SSDC_WB_CANDS_BATCHES batches' worth, in order (the
 * candidates); the batches after it take theirs from these, each block
 * checked again as it is claimed. A scan reads only the sets marked in
 * dirty_sets (a bit per set, set with a set's dirty block, see
 * ssdc_note_dirty_set(), and cleared here when a scan finds the set
 * without one), so a few dirty blocks in a cache of millions cost a scan
 * of their sets, and a scan comes once per SSDC_WB_CANDS_BATCHES batches,
 * not once per batch. The candidates are scanned again when used up, after
 * SSDC_WB_CANDS_MS (blocks synced since then may lie nearer), when the
 * cursor moved other than by a batch, after a "flush" message or a
 * resume, and after a batch that skipped or failed blocks.
 *
 * A block whose writeback failed (SSD read, origin write or flush) stays
 * dirty and is tried again. A batch that cleaned nothing doubles the
 * pause before the next one (wb_backoff_ms, 100 ms up to 10 s); a batch
 * that cleaned anything ends the backoff.
 */
#include <linux/bitops.h>
#include <linux/blkdev.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "ssdcache.h"

#define SSDC_WB_POLL_MS		500	/* re-check while blocks are dirty */
#define SSDC_WB_YIELD_MS	20	/* pause while foreground I/O runs */
#define SSDC_WB_IDLE_RUNS	4	/* origin writes in flight, idle batch */
#define SSDC_WB_CANDS_BATCHES	16	/* candidates kept by a scan, in batches */
#define SSDC_WB_CANDS_MS	1000	/* how long a scan's candidates serve */
#define SSDC_WB_SCAN_SETS	1024	/* sets scanned between reschedules */

/* Why the cleaner runs: not at all, because the origin is idle, or must. */
enum wb_due { WB_NOT_DUE, WB_IDLE, WB_MUST };

struct wb_item {
	u64 slot;
	u64 oblock;
	u64 key;		/* distance from the cursor, wrapping */
	blk_status_t status;
	bool skipped;		/* not copied: the batch gave way */
};

struct ssdc_wb_batch {
	struct ssdcache *sc;
	atomic_t pending;
	struct completion done;
	unsigned int n;
	unsigned int tried;	/* items not skipped, once finished */
	bool yield;		/* stop at the first foreground bio */
	unsigned long fg_seen;	/* sc->last_fg when it was claimed */
	/* The candidates: the last scan's blocks, sorted by key. */
	struct wb_item *cands;
	unsigned int nr_cands;
	unsigned int next_cand;	/* the first not taken yet */
	u64 cands_cursor;	/* sc->wb_cursor they follow */
	unsigned long cands_stamp; /* jiffies of their scan */
	atomic_t rescan;	/* set: scan before the next batch */
	struct wb_item items[];
};

static unsigned int batch_max(struct ssdcache *sc)
{
	return max_t(unsigned int, 1, SSDC_WB_BATCH_BYTES >>
		     (sc->block_shift + SECTOR_SHIFT));
}

static unsigned int block_pages(struct ssdcache *sc)
{
	return DIV_ROUND_UP(sc->block_sectors << SECTOR_SHIFT, PAGE_SIZE);
}

/* Is slot word @v a dirty block the cleaner may take now? */
static bool cleanable(struct ssdcache *sc, u64 slot, u64 v)
{
	return ssdc_slot_dirty(v) && !ssdc_pinned(sc, slot) &&
	       !(v & (SSDC_SF_UNSYNCED | SSDC_SF_CLEANING));
}

static unsigned int cands_max(struct ssdcache *sc)
{
	return batch_max(sc) * SSDC_WB_CANDS_BATCHES;
}

/* Sifts item @i of max-heap @h (by key, @n items) down into place. */
static void heap_down(struct wb_item *h, unsigned int n, unsigned int i)
{
	for (;;) {
		unsigned int l = 2 * i + 1, m = i;

		if (l < n && h[l].key > h[m].key)
			m = l;
		if (l + 1 < n && h[l + 1].key > h[m].key)
			m = l + 1;
		if (m == i)
			return;
		swap(h[i], h[m]);
		i = m;
	}
}

static void heap_up(struct wb_item *h, unsigned int i)
{
	while (i && h[(i - 1) / 2].key < h[i].key) {
		swap(h[i], h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

/* Keeps the @max items nearest the cursor in max-heap @h of *@n items. */
static void consider(struct wb_item *h, unsigned int *n, unsigned int max,
		     u64 slot, u64 oblock, u64 key)
{
	struct wb_item it = { .slot = slot, .oblock = oblock, .key = key };

	if (*n < max) {
		h[*n] = it;
		heap_up(h, (*n)++);
	} else if (key < h[0].key) {
		h[0] = it;
		heap_down(h, max, 0);
	}
}

static int cmp_key(const void *a, const void *b)
{
	const struct wb_item *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * Clears @set's mark in dirty_sets if it holds no dirty block, under its
 * lock, so that a block made dirty meanwhile keeps (or sets again) it.
 */
static void forget_clean_set(struct ssdcache *sc, u32 set)
{
	u64 s = (u64)set * SSDCACHE_ASSOC, end = s + SSDCACHE_ASSOC;
	struct ssdc_set *st = &sc->sets[set];
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	while (s < end && !ssdc_slot_dirty(sc->slots[s]))
		s++;
	if (s == end)
		clear_bit(set, sc->dirty_sets);
	spin_unlock_irqrestore(&st->lock, flags);
}

/*
 * Scans the sets marked in dirty_sets for the candidates: the cleanable
 * blocks nearest the cursor. A marked set found without a dirty block
 * loses its mark.
 */
static void scan_cands(struct ssdcache *sc, struct ssdc_wb_batch *b)
{
	u64 cursor = READ_ONCE(sc->wb_cursor);
	unsigned int n = 0, seen = 0, max = cands_max(sc);
	unsigned long set;

	for_each_set_bit(set, sc->dirty_sets, sc->nr_sets) {
		u64 s = (u64)set * SSDCACHE_ASSOC, end = s + SSDCACHE_ASSOC;
		bool dirty = false;

		for (; s < end; s++) {
			u64 v = READ_ONCE(sc->slots[s]), ob = ssdc_slot_oblock(v);

			dirty |= ssdc_slot_dirty(v);
			if (cleanable(sc, s, v))
				consider(b->cands, &n, max, s, ob,
					 (ob - cursor) & SSDCACHE_MAP_OBLOCK_MASK);
		}
		if (!dirty)
			forget_clean_set(sc, set);
		if (!(++seen & (SSDC_WB_SCAN_SETS - 1)))
			cond_resched();
	}
	sort(b->cands, n, sizeof(*b->cands), cmp_key, NULL);
	b->nr_cands = n;
	b->next_cand = 0;
	b->cands_cursor = cursor;
	b->cands_stamp = jiffies;
}

static bool cands_stale(struct ssdcache *sc, struct ssdc_wb_batch *b)
{
	return atomic_xchg(&b->rescan, 0) || b->next_cand >= b->nr_cands ||
	       READ_ONCE(sc->wb_cursor) != b->cands_cursor ||
	       time_after(jiffies, b->cands_stamp + msecs_to_jiffies(SSDC_WB_CANDS_MS));
}

/* Claims the candidates that are still cleanable, up to a batch. */
static unsigned int claim_cands(struct ssdcache *sc, struct ssdc_wb_batch *b)
{
	unsigned int max = batch_max(sc), kept = 0;
	unsigned long flags;

	while (kept < max && b->next_cand < b->nr_cands) {
		struct wb_item *it = &b->cands[b->next_cand++];
		struct ssdc_set *st = &sc->sets[ssdc_slot_set(it->slot)];
		u64 v;

		spin_lock_irqsave(&st->lock, flags);
		v = sc->slots[it->slot];
		if (cleanable(sc, it->slot, v) && ssdc_slot_oblock(v) == it->oblock) {
			ssdc_pin(sc, it->slot);
			ssdc_slot_write(sc, it->slot, v | SSDC_SF_CLEANING);
			b->items[kept++] = *it;
		}
		spin_unlock_irqrestore(&st->lock, flags);
	}
	return kept;
}

/* Chooses and claims the next batch; returns its size. */
static unsigned int claim_batch(struct ssdcache *sc, struct ssdc_wb_batch *b)
{
	bool scanned = cands_stale(sc, b);

	if (scanned)
		scan_cands(sc, b);
	b->n = claim_cands(sc, b);
	/* Older candidates that all went: a new scan may find more. */
	if (!b->n && !scanned) {
		scan_cands(sc, b);
		b->n = claim_cands(sc, b);
	}
	return b->n;
}

static struct page *item_page(struct ssdcache *sc, unsigned int item, unsigned int p)
{
	return sc->wb_pages[item * block_pages(sc) + p];
}

static struct bio *batch_bio(struct ssdcache *sc, struct block_device *bdev,
			     unsigned int nr_items, blk_opf_t opf)
{
	return bio_alloc_bioset(bdev, nr_items * block_pages(sc), opf, GFP_NOIO, &sc->bs);
}

static void add_item_pages(struct ssdcache *sc, struct bio *bio, unsigned int item)
{
	unsigned int p, bytes = sc->block_sectors << SECTOR_SHIFT;

	for (p = 0; p < block_pages(sc); p++)
		__bio_add_page(bio, item_page(sc, item, p),
			       min_t(unsigned int, PAGE_SIZE, bytes - p * PAGE_SIZE), 0);
}

static void wait_batch(struct ssdc_wb_batch *b)
{
	if (!atomic_dec_and_test(&b->pending))
		wait_for_completion(&b->done);
}

static void start_batch_io(struct ssdc_wb_batch *b)
{
	atomic_set(&b->pending, 1);
	reinit_completion(&b->done);
}

/* The number of items from item @i, before @to, whose slots follow its slot. */
static unsigned int slot_run(struct ssdc_wb_batch *b, unsigned int i, unsigned int to)
{
	unsigned int n = 1;

	while (i + n < to && b->items[i + n].slot == b->items[i].slot + n)
		n++;
	return n;
}

/* bi_private of a bio for the @n items from item @first (at most 64 Ki each). */
static void *run_private(unsigned int first, unsigned int n)
{
	return (void *)(unsigned long)(first | (n << 16));
}

/* The bio's items: *@first and their number. */
static unsigned int run_items(struct bio *bio, unsigned int *first)
{
	unsigned long v = (unsigned long)bio->bi_private;

	*first = v & 0xffff;
	return v >> 16;
}

/*
 * Ends a bio of a batch's items: each takes its status, an error counted
 * once against the SSD (a read) or the origin (a write).
 */
static void items_end_io(struct bio *bio, bool ssd)
{
	struct ssdcache *sc = container_of(bio->bi_pool, struct ssdcache, bs);
	struct ssdc_wb_batch *b = sc->wb_batch;
	unsigned int first, n = run_items(bio, &first), i;

	if (bio->bi_status) {
		ssdc_count_error(sc, ssd, !ssd);
		for (i = first; i < first + n; i++)
			b->items[i].status = bio->bi_status;
	}
	bio_put(bio);
	if (atomic_dec_and_test(&b->pending))
		complete(&b->done);
}

static void read_end_io(struct bio *bio)
{
	items_end_io(bio, true);
}

static void run_end_io(struct bio *bio)
{
	ssdc_origin_written(container_of(bio->bi_pool, struct ssdcache, bs));
	items_end_io(bio, false);
}

/*
 * Sends the @n items from item @i to or from @sector of the SSD (@ssd) or
 * the origin in one bio: a read of adjacent slots, or a write of adjacent
 * origin blocks.
 */
static void submit_items(struct ssdcache *sc, struct ssdc_wb_batch *b, bool ssd,
			 sector_t sector, unsigned int i, unsigned int n)
{
	struct block_device *bdev = ssd ? sc->cache->bdev : sc->origin->bdev;
	struct bio *bio = batch_bio(sc, bdev, n, ssd ? REQ_OP_READ : REQ_OP_WRITE);
	unsigned int j;

	bio->bi_iter.bi_sector = sector;
	for (j = 0; j < n; j++)
		add_item_pages(sc, bio, i + j);
	bio->bi_end_io = ssd ? read_end_io : run_end_io;
	bio->bi_private = run_private(i, n);
	atomic_inc(&b->pending);
	ssdc_count_bio(sc, ssd, bio);
	submit_bio_noacct(bio);
}

/* Reads the @n items from item @i, in adjacent slots, in one bio. */
static void read_run(struct ssdcache *sc, struct ssdc_wb_batch *b,
		     unsigned int i, unsigned int n)
{
	submit_items(sc, b, true, ssdc_slot_sector(sc, b->items[i].slot), i, n);
}

/*
 * Reads claimed items [@from, @to) from the SSD: items in adjacent slots
 * (a run written as one request) in one read. A run whose read failed is
 * read again block by block, so that a bad block holds back only itself.
 */
static void read_items(struct ssdcache *sc, struct ssdc_wb_batch *b,
		       unsigned int from, unsigned int to)
{
	unsigned int i, j, n;
	bool again = false;

	start_batch_io(b);
	for (i = from; i < to; i += n) {
		n = slot_run(b, i, to);
		read_run(sc, b, i, n);
	}
	wait_batch(b);
	for (i = from; i < to; i += n) {
		n = slot_run(b, i, to);
		if (n == 1 || !b->items[i].status)
			continue;
		if (!again)
			start_batch_io(b);
		again = true;
		for (j = i; j < i + n; j++) {
			b->items[j].status = BLK_STS_OK;
			read_run(sc, b, j, 1);
		}
	}
	if (again)
		wait_batch(b);
}

/* Has a yielding batch seen foreground I/O since it was claimed? */
static bool give_way(struct ssdcache *sc, struct ssdc_wb_batch *b)
{
	return b->yield && READ_ONCE(sc->last_fg) != b->fg_seen;
}

/* Marks the items from @i on as not copied. */
static void skip_rest(struct ssdc_wb_batch *b, unsigned int i)
{
	for (; i < b->n; i++)
		b->items[i].skipped = true;
}

/* Writes the run of @n blocks from item @i to the origin. */
static void write_run(struct ssdcache *sc, struct ssdc_wb_batch *b,
		      unsigned int i, unsigned int n)
{
	submit_items(sc, b, false, b->items[i].oblock << sc->block_shift, i, n);
}

/* Writes items [@i, @to) read well to the origin, merging adjacent ones. */
static unsigned int write_items(struct ssdcache *sc, struct ssdc_wb_batch *b,
				unsigned int i, unsigned int to)
{
	unsigned int n, runs = 0;

	start_batch_io(b);
	while (i < to) {
		if (b->items[i].status) {
			i++;
			continue;
		}
		for (n = 1; i + n < to && !b->items[i + n].status &&
		     b->items[i + n].oblock == b->items[i].oblock + n; n++)
			;
		write_run(sc, b, i, n);
		runs++;
		i += n;
	}
	wait_batch(b);
	return runs;
}

/* The end of the @runs runs of adjacent blocks from item @i. */
static unsigned int chunk_end(struct ssdc_wb_batch *b, unsigned int i, unsigned int runs)
{
	while (i < b->n && runs--) {
		do
			i++;
		while (i < b->n && b->items[i].oblock == b->items[i - 1].oblock + 1);
	}
	return i;
}

/*
 * Copies the batch from the SSD to the origin: at once, or for a
 * yielding batch SSDC_WB_IDLE_RUNS runs at a time (read, then written),
 * stopping before the next chunk once foreground I/O has come. Returns
 * the runs written.
 */
static unsigned int copy_batch(struct ssdcache *sc, struct ssdc_wb_batch *b)
{
	unsigned int i, end, runs = 0;

	for (i = 0; i < b->n; i = end) {
		if (i && give_way(sc, b)) {
			skip_rest(b, i);
			break;
		}
		end = b->yield ? chunk_end(b, i, SSDC_WB_IDLE_RUNS) : b->n;
		read_items(sc, b, i, end);
		runs += write_items(sc, b, i, end);
	}
	return runs;
}

/*
 * Ends the batch: clean what went well and was not rewritten meanwhile,
 * and release what was skipped. Returns the number of blocks that failed.
 */
static unsigned int finish_batch(struct ssdcache *sc, struct ssdc_wb_batch *b,
				 blk_status_t flush)
{
	unsigned long flags;
	unsigned int i, cleaned = 0, failed = 0, done = 0, skipped = 0;

	for (i = 0; i < b->n; i++) {
		struct wb_item *it = &b->items[i];
		struct ssdc_set *st = &sc->sets[ssdc_slot_set(it->slot)];
		u64 v;

		spin_lock_irqsave(&st->lock, flags);
		ssdc_unpin_locked(sc, it->slot);
		v = sc->slots[it->slot];
		if (it->skipped) {
			ssdc_slot_write(sc, it->slot, v & ~SSDC_SF_CLEANING);
		} else if (!it->status && !flush && (v & SSDC_SF_CLEANING)) {
			ssdc_slot_update(sc, it->slot, v & ~(SSDC_SF_CLEANING | SSDC_SF_DIRTY));
			atomic64_dec(&sc->dirty);
			cleaned++;
		} else {
			ssdc_slot_write(sc, it->slot, v & ~SSDC_SF_CLEANING);
			failed += it->status || flush;
		}
		spin_unlock_irqrestore(&st->lock, flags);
		if (it->skipped)
			skipped++;
		else
			done = i + 1;
	}
	b->tried = b->n - skipped;
	this_cpu_add(sc->stats->c[SSDC_C_CLEANED], cleaned);
	/*
	 * A "flush" is done when nothing is dirty: end it now, or it would
	 * still be on (the cleaner does not run again while nothing is
	 * dirty) and would clean the next dirty block at once.
	 */
	if (!atomic64_read(&sc->dirty))
		WRITE_ONCE(sc->wb_flush_all, false);
	if (failed)
		DMERR_LIMIT("%s: writeback of %u blocks failed; they stay dirty",
			    ssdcache_name(sc), failed);
	/* Resume after the last block tried: a skipped one comes first. */
	if (done) {
		b->cands_cursor = (b->items[done - 1].oblock + 1) & SSDCACHE_MAP_OBLOCK_MASK;
		WRITE_ONCE(sc->wb_cursor, b->cands_cursor);
	}
	/* Skipped and failed blocks come before the candidates left. */
	if (skipped || failed)
		atomic_set(&b->rescan, 1);
	/* Journal the clean entries soon, so clean blocks can be evicted. */
	ssdc_meta_kick(sc, SSDC_EVICT_COMMIT_DELAY_MS);
	return failed;
}

/*
 * Cleans one batch; true if it was claimed and every block it tried
 * failed. A batch due only to idleness yields to foreground I/O
 * (wb_yield).
 */
static bool clean_one_batch(struct ssdcache *sc, enum wb_due due)
{
	struct ssdc_wb_batch *b = sc->wb_batch;
	blk_status_t flush = BLK_STS_OK;

	b->yield = due == WB_IDLE && READ_ONCE(sc->wb_yield);
	b->fg_seen = READ_ONCE(sc->last_fg);
	if (!claim_batch(sc, b))
		return false;
	/* Nothing written (every read failed): no flush. */
	if (copy_batch(sc, b) && ssdc_flush_origin(sc)) {
		ssdc_count_error(sc, false, true);
		flush = BLK_STS_IOERR;
	}
	return finish_batch(sc, b, flush) == b->tried;
}

/* The pause after a batch that cleaned nothing: doubles, up to a limit. */
static unsigned long backoff(struct ssdcache *sc)
{
	unsigned int ms = READ_ONCE(sc->wb_backoff_ms);

	ms = clamp_t(unsigned int, ms * 2, SSDC_WB_BACKOFF_MIN_MS, SSDC_WB_BACKOFF_MAX_MS);
	WRITE_ONCE(sc->wb_backoff_ms, ms);
	return ms;
}

/* Should the cleaner run now, and why? */
static enum wb_due clean_due(struct ssdcache *sc)
{
	u64 dirty = atomic64_read(&sc->dirty);
	u64 high = div_u64(sc->nr_blocks * READ_ONCE(sc->wb_high), 100);
	u64 low = div_u64(sc->nr_blocks * READ_ONCE(sc->wb_low), 100);
	unsigned int idle = READ_ONCE(sc->wb_idle_ms);

	if (!dirty) {
		WRITE_ONCE(sc->wb_flush_all, false);
		sc->wb_draining = false;
		return WB_NOT_DUE;
	}
	if (READ_ONCE(sc->wb_flush_all) || READ_ONCE(sc->degraded) ||
	    READ_ONCE(sc->mode) != SSDCACHE_MODE_WRITEBACK)
		return WB_MUST;
	if (dirty >= high)
		sc->wb_draining = true;
	if (sc->wb_draining && dirty > low)
		return WB_MUST;
	sc->wb_draining = false;
	if (idle && time_after(jiffies, READ_ONCE(sc->last_fg) + msecs_to_jiffies(idle)))
		return WB_IDLE;
	return WB_NOT_DUE;
}

/* The pause after a batch of @n blocks: rate limit and yielding. */
static unsigned long pause_ms(struct ssdcache *sc, unsigned int n)
{
	unsigned int rate = READ_ONCE(sc->wb_rate);
	unsigned long ms = rate ? DIV_ROUND_UP(n * 1000UL, rate) : 0;

	if (READ_ONCE(sc->wb_yield) && !READ_ONCE(sc->wb_flush_all) &&
	    !READ_ONCE(sc->degraded) &&
	    time_before(jiffies, READ_ONCE(sc->last_fg) + msecs_to_jiffies(SSDC_WB_YIELD_MS)))
		ms = max_t(unsigned long, ms, SSDC_WB_YIELD_MS);
	return ms;
}

/*
 * After a "flush" message: one commit that syncs the dirty blocks not yet
 * synced (written with no flush or FUA since), so that the batches after
 * it can take them. A failed commit fails the cache (meta.c).
 */
static void flush_sync(struct ssdcache *sc)
{
	if (!READ_ONCE(sc->wb_flush_sync))
		return;
	WRITE_ONCE(sc->wb_flush_sync, false);
	if (READ_ONCE(sc->wb_flush_all) && READ_ONCE(sc->valid_pending) &&
	    !ssdc_meta_commit(sc))
		atomic_set(&sc->wb_batch->rescan, 1);
}

static void wb_fn(struct work_struct *work)
{
	struct ssdcache *sc = container_of(to_delayed_work(work), struct ssdcache, wb_work);
	unsigned long delay = SSDC_WB_POLL_MS;
	enum wb_due due;

	if (READ_ONCE(sc->wb_stopped) || READ_ONCE(sc->failed))
		return;
	due = clean_due(sc);
	if (due == WB_MUST)
		flush_sync(sc);
	if (due != WB_NOT_DUE && !READ_ONCE(sc->failed)) {
		if (clean_one_batch(sc, due)) {
			delay = backoff(sc);
		} else {
			WRITE_ONCE(sc->wb_backoff_ms, 0);
			delay = sc->wb_batch->n ? pause_ms(sc, sc->wb_batch->tried) :
				SSDC_WB_POLL_MS;
		}
	}
	if (atomic64_read(&sc->dirty) && !READ_ONCE(sc->wb_stopped))
		queue_delayed_work(sc->wb_wq, &sc->wb_work, msecs_to_jiffies(delay));
}

/*
 * Wakes the cleaner up now, unless it is backing off after failures: its
 * next try is queued already, and kicks (say, from every eviction that
 * finds only dirty blocks) must not turn the backoff into a busy loop.
 * Any context.
 */
void ssdc_wb_kick(struct ssdcache *sc)
{
	if (sc->wb_wq && !READ_ONCE(sc->wb_stopped) && !READ_ONCE(sc->wb_backoff_ms))
		mod_delayed_work(sc->wb_wq, &sc->wb_work, 0);
}

/* At resume: a fresh start, without the backoff of earlier failures. */
void ssdc_wb_start(struct ssdcache *sc)
{
	WRITE_ONCE(sc->wb_backoff_ms, 0);
	atomic_set(&sc->wb_batch->rescan, 1);
	WRITE_ONCE(sc->wb_stopped, false);
	ssdc_wb_kick(sc);
}

/* Stops the cleaner and waits for a batch under way. */
void ssdc_wb_stop(struct ssdcache *sc)
{
	WRITE_ONCE(sc->wb_stopped, true);
	if (sc->wb_wq)
		cancel_delayed_work_sync(&sc->wb_work);
}

const char *ssdc_wb_state(struct ssdcache *sc)
{
	if (!atomic64_read(&sc->dirty))
		return "clean";
	if (READ_ONCE(sc->wb_flush_all) || READ_ONCE(sc->degraded))
		return "flushing";
	if (READ_ONCE(sc->mode) != SSDCACHE_MODE_WRITEBACK)
		return "draining";
	return "dirty";
}

/* The "flush" and "flush cancel" messages; -ENOTTY for any other. */
int ssdc_wb_message(struct ssdcache *sc, unsigned int argc, char **argv)
{
	if (argc == 1 && !strcasecmp(argv[0], "flush")) {
		atomic_set(&sc->wb_batch->rescan, 1);
		WRITE_ONCE(sc->wb_flush_sync, true);
		WRITE_ONCE(sc->wb_flush_all, true);
		ssdc_wb_kick(sc);
		return 0;
	}
	if (argc == 2 && !strcasecmp(argv[0], "flush") && !strcasecmp(argv[1], "cancel")) {
		WRITE_ONCE(sc->wb_flush_sync, false);
		WRITE_ONCE(sc->wb_flush_all, false);
		return 0;
	}
	return -ENOTTY;
}

int ssdc_wb_init(struct ssdcache *sc)
{
	unsigned int nr = batch_max(sc) * block_pages(sc);

	sc->wb_high = SSDC_WB_DIRTY_HIGH;
	sc->wb_low = SSDC_WB_DIRTY_LOW;
	sc->wb_idle_ms = SSDC_WB_IDLE_MS;
	sc->wb_yield = 1;
	sc->wb_stopped = true;
	sc->last_fg = jiffies;
	INIT_DELAYED_WORK(&sc->wb_work, wb_fn);
	sc->wb_batch = kzalloc(struct_size(sc->wb_batch, items, batch_max(sc)), GFP_KERNEL);
	sc->wb_pages = ssdc_alloc_pages(nr);
	if (!sc->wb_batch || !sc->wb_pages)
		goto fail;
	sc->wb_batch->cands = kvcalloc(cands_max(sc), sizeof(*sc->wb_batch->cands),
				       GFP_KERNEL);
	if (!sc->wb_batch->cands)
		goto fail;
	init_completion(&sc->wb_batch->done);
	sc->wb_wq = alloc_ordered_workqueue("ssdcache-wb-%s", WQ_MEM_RECLAIM,
					    ssdcache_name(sc));
	if (!sc->wb_wq)
		goto fail;
	return 0;
fail:
	ssdc_wb_exit(sc);
	return -ENOMEM;
}

void ssdc_wb_exit(struct ssdcache *sc)
{
	unsigned int nr = batch_max(sc) * block_pages(sc);

	if (sc->wb_wq) {
		ssdc_wb_stop(sc);
		destroy_workqueue(sc->wb_wq);
		sc->wb_wq = NULL;
	}
	ssdc_free_pages(sc->wb_pages, nr);
	sc->wb_pages = NULL;
	if (sc->wb_batch)
		kvfree(sc->wb_batch->cands);
	kfree(sc->wb_batch);
	sc->wb_batch = NULL;
}
