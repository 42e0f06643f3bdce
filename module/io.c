// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the I/O paths.
 *
 * Reads:  hit  -> the SSD (the slot is pinned while the read runs; an
 *                 SSD error invalidates it and retries from the origin)
 *         miss -> the origin; a whole-block read is then copied and
 *                 installed in the background (a "fill"), unless a write
 *                 to the same set started or ran meanwhile.
 * Writes: the cached copy is invalidated first (and the write waits for
 *         that to be durable, see meta.c); then the origin is written,
 *         and in write-through mode a whole-block write is also written
 *         to a free slot, completing when both are done. An SSD failure
 *         there only drops the copy.
 * Large sequential I/O (seqcut.c), discards and write-zeroes go to the
 * origin whole, after invalidating what they cover.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/slab.h>

#include "ssdcache.h"

/* Writes that span blocks (set = SSDC_NO_SET) are counted globally. */
#define SSDC_NO_SET	U32_MAX

struct ssdc_fill {
	struct list_head list;
	struct ssdcache *sc;
	u64 oblock;
	u64 slot;
	u32 set;
	u32 wgen;
	u32 gwgen;
	unsigned int nr_pages;
	struct page *pages[];
};

static void remap_origin(struct ssdcache *sc, struct bio *bio)
{
	bio_set_dev(bio, sc->origin->bdev);
}

/* Start/end of a write: fills of blocks it may cover must not install. */
static void write_begin(struct ssdcache *sc, u32 set)
{
	unsigned long flags;

	if (set == SSDC_NO_SET) {
		atomic_inc(&sc->gwrites_inflight);
		atomic_inc(&sc->gwgen);
		return;
	}
	spin_lock_irqsave(&sc->sets[set].lock, flags);
	sc->sets[set].writes_inflight++;
	sc->sets[set].wgen++;
	spin_unlock_irqrestore(&sc->sets[set].lock, flags);
}

static void write_end(struct ssdcache *sc, struct ssdc_bio *pb, bool ok)
{
	struct ssdc_set *st;
	unsigned long flags;

	if (pb->set == SSDC_NO_SET) {
		atomic_inc(&sc->gwgen);
		atomic_dec(&sc->gwrites_inflight);
		return;
	}
	st = &sc->sets[pb->set];
	spin_lock_irqsave(&st->lock, flags);
	st->writes_inflight--;
	st->wgen++;
	if (pb->installed) {
		u64 v = sc->slots[pb->slot];

		if (ok && !(v & (SSDC_SF_CANCEL | SSDC_SF_SSD_ERR))) {
			ssdc_make_valid_locked(sc, pb->slot, pb->oblock);
		} else {
			sc->slots[pb->slot] = ssdc_slot_make(0, SSDC_SLOT_FREE);
			atomic64_dec(&sc->used);
		}
	}
	spin_unlock_irqrestore(&st->lock, flags);
}

/*
 * In the failed state, the map on the SSD can no longer be changed. An
 * origin block it may still hold as VALID must not be written, or a later
 * load of that map would serve the old data: such writes fail. The origin
 * still holds every acknowledged write; other blocks stay writable. Once
 * the superblocks are wiped, no map can be loaded and everything passes.
 */
static bool failed_write_unsafe(struct ssdcache *sc, u64 first, u64 last)
{
	unsigned long flags;
	bool unsafe = false;
	u64 b, s;
	u32 set;

	if (READ_ONCE(sc->sb_wiped))
		return false;
	if (last - first >= sc->nr_blocks) {
		for (s = 0; s < sc->nr_blocks && !unsafe; s++) {
			u64 v = READ_ONCE(sc->slots[s]);

			unsafe = ssdc_slot_maybe_on_disk(v) &&
				 ssdc_slot_oblock(v) >= first && ssdc_slot_oblock(v) <= last;
		}
		return unsafe;
	}
	for (b = first; b <= last && !unsafe; b++) {
		set = ssdc_set_of(sc, b);
		spin_lock_irqsave(&sc->sets[set].lock, flags);
		for (s = (u64)set * SSDCACHE_ASSOC; s < (u64)(set + 1) * SSDCACHE_ASSOC; s++) {
			u64 v = sc->slots[s];

			if (ssdc_slot_maybe_on_disk(v) && ssdc_slot_oblock(v) == b)
				unsafe = true;
		}
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	}
	return unsafe;
}

/* A write in the failed state: to the origin if safe, else an error. */
static void failed_write(struct ssdcache *sc, struct bio *bio)
{
	sector_t sector = bio->bi_iter.bi_sector;
	u64 first = sector >> sc->block_shift;
	u64 last = (bio_end_sector(bio) - 1) >> sc->block_shift;

	if (bio_sectors(bio) && first < sc->origin_blocks &&
	    failed_write_unsafe(sc, first, min_t(u64, last, sc->origin_blocks - 1))) {
		bio_io_error(bio);
		return;
	}
	remap_origin(sc, bio);
	submit_bio_noacct(bio);
}

/* ---- write-through install ---- */

static void wt_ssd_end_io(struct bio *clone)
{
	struct bio *parent = clone->bi_private;
	struct ssdc_bio *pb = ssdc_pb(parent);
	struct ssdcache *sc = pb->sc;
	unsigned long flags;

	if (clone->bi_status) {
		struct ssdc_set *st = &sc->sets[pb->set];

		spin_lock_irqsave(&st->lock, flags);
		sc->slots[pb->slot] |= SSDC_SF_SSD_ERR;
		spin_unlock_irqrestore(&st->lock, flags);
		ssdc_count(sc, SSDC_C_SSD_ERRORS);
	}
	bio_put(clone);
	bio_endio(parent);	/* drops the reference taken for this clone */
}

/* Reserves a FREE slot for @oblock; evicts for next time if there is none. */
static long reserve_slot(struct ssdcache *sc, u32 set, u64 oblock)
{
	unsigned long flags;
	long slot;

	spin_lock_irqsave(&sc->sets[set].lock, flags);
	/* A copy whose eviction is not durable yet: install none for now. */
	if (ssdc_evicting_locked(sc, set, oblock) || ssdc_lookup(sc, set, oblock) >= 0) {
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
		return -1;
	}
	slot = ssdc_take_free(sc, set);
	if (slot >= 0) {
		sc->slots[slot] = ssdc_slot_make(oblock, SSDC_SLOT_FILLING);
		ssdc_touch(sc, set, slot, true);
		atomic64_inc(&sc->used);
	} else {
		ssdc_evict_one(sc, set);
	}
	spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	if (slot < 0)
		ssdc_meta_kick(sc, SSDC_EVICT_COMMIT_DELAY_MS);
	return slot;
}

/* Also writes a whole-block write-through write to a fresh slot. */
static void wt_install(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb)
{
	struct bio *clone;
	long slot = reserve_slot(sc, pb->set, pb->oblock);

	if (slot < 0)
		return;
	clone = bio_alloc_clone(sc->cache->bdev, bio, GFP_NOIO, &sc->bs);
	if (!clone) {
		unsigned long flags;

		spin_lock_irqsave(&sc->sets[pb->set].lock, flags);
		sc->slots[slot] = ssdc_slot_make(0, SSDC_SLOT_FREE);
		atomic64_dec(&sc->used);
		spin_unlock_irqrestore(&sc->sets[pb->set].lock, flags);
		return;
	}
	pb->slot = slot;
	pb->installed = 1;
	clone->bi_opf &= ~(REQ_FUA | REQ_PREFLUSH);
	clone->bi_iter.bi_sector = ssdc_slot_sector(sc, slot);
	clone->bi_end_io = wt_ssd_end_io;
	clone->bi_private = bio;
	bio_inc_remaining(bio);
	submit_bio_noacct(clone);
}

/*
 * Second half of a write, once any cached copy is durably invalid: to the
 * origin, and in write-through mode also to the SSD. Runs from map or
 * after a commit (meta.c).
 */
void ssdc_issue_write(struct ssdcache *sc, struct bio *bio)
{
	struct ssdc_bio *pb = ssdc_pb(bio);

	if (READ_ONCE(sc->failed)) {
		failed_write(sc, bio);
		return;
	}

	if (pb->whole_block && bio_op(bio) == REQ_OP_WRITE &&
	    READ_ONCE(sc->mode) == SSDCACHE_MODE_WRITETHROUGH &&
	    !READ_ONCE(sc->failed))
		wt_install(sc, bio, pb);
	remap_origin(sc, bio);
	submit_bio_noacct(bio);
}

/* A write (or discard) to origin blocks [first, last]. */
static int map_write(struct ssdcache *sc, struct bio *bio, u64 first, u64 last)
{
	struct ssdc_bio *pb = ssdc_pb(bio);
	unsigned long flags;
	bool wait;

	pb->kind = SSDC_BIO_WRITE;
	pb->oblock = first;
	if (first == last) {
		u32 set = ssdc_set_of(sc, first);
		long slot;

		pb->set = set;
		write_begin(sc, set);
		spin_lock_irqsave(&sc->sets[set].lock, flags);
		slot = ssdc_lookup(sc, set, first);
		wait = slot >= 0 && ssdc_invalidate_locked(sc, set, slot);
		wait |= ssdc_evicting_locked(sc, set, first);
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
		if (slot >= 0)
			ssdc_count(sc, SSDC_C_WRITE_HITS);
		else
			ssdc_count(sc, SSDC_C_WRITE_MISSES);
	} else {
		pb->set = SSDC_NO_SET;
		write_begin(sc, SSDC_NO_SET);
		wait = ssdc_invalidate_range(sc, first, last);
	}
	if (wait)
		ssdc_meta_defer(sc, bio);
	else
		ssdc_issue_write(sc, bio);
	return DM_MAPIO_SUBMITTED;
}

static int map_read(struct ssdcache *sc, struct bio *bio, u64 oblock)
{
	struct ssdc_bio *pb = ssdc_pb(bio);
	u32 set = ssdc_set_of(sc, oblock);
	struct ssdc_set *st = &sc->sets[set];
	unsigned long flags;
	long slot;
	u64 v;

	spin_lock_irqsave(&st->lock, flags);
	slot = ssdc_lookup(sc, set, oblock);
	v = slot >= 0 ? sc->slots[slot] : 0;
	if (slot >= 0 && ssdc_slot_state(v) == SSDC_SLOT_VALID &&
	    ssdc_slot_readers(v) < SSDC_SLOT_READERS_MAX) {
		sc->slots[slot] = v + (1ULL << SSDC_SLOT_READERS_SHIFT);
		ssdc_touch(sc, set, slot, false);
		spin_unlock_irqrestore(&st->lock, flags);
		pb->kind = SSDC_BIO_HIT_READ;
		pb->slot = slot;
		pb->iter = bio->bi_iter;
		ssdc_count(sc, SSDC_C_READ_HITS);
		bio_set_dev(bio, sc->cache->bdev);
		bio->bi_iter.bi_sector = ssdc_slot_sector(sc, slot) +
			(bio->bi_iter.bi_sector & (sc->block_sectors - 1));
		return DM_MAPIO_REMAPPED;
	}
	pb->kind = SSDC_BIO_MISS_READ;
	pb->fill = slot < 0 && pb->whole_block && !st->writes_inflight &&
		   !atomic_read(&sc->gwrites_inflight) && !READ_ONCE(sc->failed);
	pb->set = set;
	pb->oblock = oblock;
	pb->wgen = st->wgen;
	pb->gwgen = atomic_read(&sc->gwgen);
	pb->iter = bio->bi_iter;
	spin_unlock_irqrestore(&st->lock, flags);
	ssdc_count(sc, SSDC_C_READ_MISSES);
	remap_origin(sc, bio);
	return DM_MAPIO_REMAPPED;
}

int ssdc_map(struct dm_target *ti, struct bio *bio)
{
	struct ssdcache *sc = ti->private;
	struct ssdc_bio *pb = ssdc_pb(bio);
	sector_t sector, off, len;
	u64 first, last;

	memset(pb, 0, sizeof(*pb));
	pb->sc = sc;
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	sector = bio->bi_iter.bi_sector;
	len = bio_sectors(bio);

	switch (bio_op(bio)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		if (len)
			break;
		fallthrough;	/* an empty flush */
	default:
		remap_origin(sc, bio);
		return DM_MAPIO_REMAPPED;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		if (READ_ONCE(sc->failed)) {
			failed_write(sc, bio);
			return DM_MAPIO_SUBMITTED;
		}
		if (!len)
			goto origin;
		first = sector >> sc->block_shift;
		last = min_t(u64, (sector + len - 1) >> sc->block_shift,
			     sc->origin_blocks ? sc->origin_blocks - 1 : 0);
		if (first >= sc->origin_blocks)
			goto origin;
		return map_write(sc, bio, first, last);
	}

	if (bio_data_dir(bio) == READ)
		ssdc_count(sc, SSDC_C_READS);
	else
		ssdc_count(sc, SSDC_C_WRITES);
	first = sector >> sc->block_shift;
	if (READ_ONCE(sc->failed) && bio_data_dir(bio) == WRITE) {
		failed_write(sc, bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (READ_ONCE(sc->failed) || first >= sc->origin_blocks)
		goto origin;

	if (ssdc_seq_bypass(sc, bio)) {
		if (bio_data_dir(bio) == READ) {
			ssdc_count(sc, SSDC_C_BYPASSED_READS);
			goto origin;
		}
		ssdc_count(sc, SSDC_C_BYPASSED_WRITES);
		last = min_t(u64, (sector + len - 1) >> sc->block_shift,
			     sc->origin_blocks - 1);
		return map_write(sc, bio, first, last);
	}

	/* One cache block at a time; dm resubmits the rest of the bio. */
	off = sector & (sc->block_sectors - 1);
	if (off + len > sc->block_sectors) {
		len = sc->block_sectors - off;
		dm_accept_partial_bio(bio, len);
	}
	pb->whole_block = !off && len == sc->block_sectors;
	if (bio_data_dir(bio) == READ)
		return map_read(sc, bio, first);
	return map_write(sc, bio, first, first);
origin:
	remap_origin(sc, bio);
	return DM_MAPIO_REMAPPED;
}

/* ---- fills ---- */

static void free_fill(struct ssdc_fill *f)
{
	unsigned int i;

	for (i = 0; i < f->nr_pages; i++)
		if (f->pages[i])
			__free_page(f->pages[i]);
	kfree(f);
}

static void fill_done(struct ssdcache *sc)
{
	if (atomic_dec_and_test(&sc->fills_inflight))
		wake_up(&sc->fills_wait);
}

/* Copies a completed miss read into a fill; NULL if memory is short. */
static struct ssdc_fill *copy_fill(struct ssdcache *sc, struct bio *bio,
				   struct ssdc_bio *pb)
{
	size_t total = sc->block_sectors << SECTOR_SHIFT;
	unsigned int nr = DIV_ROUND_UP(total, PAGE_SIZE);
	struct ssdc_fill *f;
	struct bvec_iter it;
	struct bio_vec bv;
	size_t done = 0;
	unsigned int i;

	if (WARN_ON_ONCE(pb->iter.bi_size != total))
		return NULL;
	f = kzalloc(struct_size(f, pages, nr), GFP_ATOMIC | __GFP_NOWARN);
	if (!f)
		return NULL;
	f->nr_pages = nr;
	for (i = 0; i < nr; i++) {
		f->pages[i] = alloc_page(GFP_ATOMIC | __GFP_NOWARN);
		if (!f->pages[i]) {
			free_fill(f);
			return NULL;
		}
	}
	/* bv must stay intact: the iterator advances by bv.bv_len. */
	__bio_for_each_segment(bv, bio, it, pb->iter) {
		unsigned int len = bv.bv_len, off = bv.bv_offset;

		while (len && done < total) {
			size_t in_page = PAGE_SIZE - offset_in_page(done);
			unsigned int n = min_t(size_t, len, in_page);
			struct bio_vec part = { bv.bv_page, n, off };

			memcpy_from_bvec(page_address(f->pages[done >> PAGE_SHIFT]) +
					 offset_in_page(done), &part);
			done += n;
			off += n;
			len -= n;
		}
	}
	f->sc = sc;
	f->oblock = pb->oblock;
	f->set = pb->set;
	f->wgen = pb->wgen;
	f->gwgen = pb->gwgen;
	return f;
}

static void fill_write_end_io(struct bio *bio)
{
	struct ssdc_fill *f = bio->bi_private;
	struct ssdcache *sc = f->sc;
	struct ssdc_set *st = &sc->sets[f->set];
	unsigned long flags;
	u64 v;

	spin_lock_irqsave(&st->lock, flags);
	v = sc->slots[f->slot];
	if (!bio->bi_status && !(v & SSDC_SF_CANCEL)) {
		ssdc_make_valid_locked(sc, f->slot, f->oblock);
		ssdc_count(sc, SSDC_C_FILLS);
	} else {
		sc->slots[f->slot] = ssdc_slot_make(0, SSDC_SLOT_FREE);
		atomic64_dec(&sc->used);
		if (bio->bi_status)
			ssdc_count(sc, SSDC_C_SSD_ERRORS);
	}
	spin_unlock_irqrestore(&st->lock, flags);
	bio_put(bio);
	free_fill(f);
	fill_done(sc);
}

/* Installs one fill, unless a write made its data stale. */
static void install_fill(struct ssdcache *sc, struct ssdc_fill *f)
{
	struct ssdc_set *st = &sc->sets[f->set];
	unsigned long flags;
	struct bio *bio;
	unsigned int i;
	long slot = -1;

	spin_lock_irqsave(&st->lock, flags);
	if (st->wgen == f->wgen && atomic_read(&sc->gwgen) == f->gwgen &&
	    !READ_ONCE(sc->failed) && ssdc_lookup(sc, f->set, f->oblock) < 0 &&
	    !ssdc_evicting_locked(sc, f->set, f->oblock)) {
		slot = ssdc_take_free(sc, f->set);
		if (slot >= 0) {
			sc->slots[slot] = ssdc_slot_make(f->oblock, SSDC_SLOT_FILLING);
			ssdc_touch(sc, f->set, slot, true);
			atomic64_inc(&sc->used);
		} else {
			ssdc_evict_one(sc, f->set);
		}
	}
	spin_unlock_irqrestore(&st->lock, flags);
	if (slot < 0) {
		if (!READ_ONCE(sc->failed))
			ssdc_meta_kick(sc, SSDC_EVICT_COMMIT_DELAY_MS);
		free_fill(f);
		fill_done(sc);
		return;
	}
	f->slot = slot;
	bio = bio_alloc_bioset(sc->cache->bdev, f->nr_pages, REQ_OP_WRITE, GFP_NOIO, &sc->bs);
	bio->bi_iter.bi_sector = ssdc_slot_sector(sc, slot);
	for (i = 0; i < f->nr_pages; i++)
		__bio_add_page(bio, f->pages[i],
			       min_t(unsigned int, PAGE_SIZE,
				     (sc->block_sectors << SECTOR_SHIFT) - i * PAGE_SIZE), 0);
	bio->bi_end_io = fill_write_end_io;
	bio->bi_private = f;
	submit_bio_noacct(bio);
}

static void fill_fn(struct work_struct *work)
{
	struct ssdcache *sc = container_of(work, struct ssdcache, fill_work);
	struct bio_list retries;
	struct ssdc_fill *f;
	struct bio *bio;
	LIST_HEAD(todo);

	spin_lock_irq(&sc->fill_lock);
	list_splice_init(&sc->fills, &todo);
	retries = sc->retries;
	bio_list_init(&sc->retries);
	spin_unlock_irq(&sc->fill_lock);
	while ((bio = bio_list_pop(&retries)))
		submit_bio_noacct(bio);
	while ((f = list_first_entry_or_null(&todo, struct ssdc_fill, list))) {
		list_del(&f->list);
		install_fill(sc, f);
	}
}

static void queue_fill(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb)
{
	struct ssdc_fill *f;
	unsigned long flags;

	if (atomic_read(&sc->fills_inflight) >= SSDC_MAX_FILLS)
		return;
	f = copy_fill(sc, bio, pb);
	if (!f)
		return;
	atomic_inc(&sc->fills_inflight);
	spin_lock_irqsave(&sc->fill_lock, flags);
	list_add_tail(&f->list, &sc->fills);
	spin_unlock_irqrestore(&sc->fill_lock, flags);
	queue_work(sc->fill_wq, &sc->fill_work);
}

/* ---- completion ---- */

/*
 * An SSD read failed: drop the copy, and have the fill worker send the
 * read to the origin (bios are not resubmitted from completion context).
 */
static int retry_from_origin(struct ssdcache *sc, struct bio *bio,
			     struct ssdc_bio *pb)
{
	u32 set = ssdc_slot_set(pb->slot);
	unsigned long flags;

	ssdc_count(sc, SSDC_C_SSD_ERRORS);
	spin_lock_irqsave(&sc->sets[set].lock, flags);
	if (ssdc_slot_state(sc->slots[pb->slot]) == SSDC_SLOT_VALID)
		ssdc_invalidate_locked(sc, set, pb->slot);
	spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	ssdc_meta_kick(sc, SSDC_EVICT_COMMIT_DELAY_MS);

	pb->kind = SSDC_BIO_PASS;
	bio->bi_iter = pb->iter;
	bio->bi_status = BLK_STS_OK;
	remap_origin(sc, bio);
	spin_lock_irqsave(&sc->fill_lock, flags);
	bio_list_add(&sc->retries, bio);
	spin_unlock_irqrestore(&sc->fill_lock, flags);
	queue_work(sc->fill_wq, &sc->fill_work);
	return DM_ENDIO_INCOMPLETE;
}

int ssdc_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct ssdcache *sc = ti->private;
	struct ssdc_bio *pb = ssdc_pb(bio);

	switch (pb->kind) {
	case SSDC_BIO_HIT_READ:
		ssdc_slot_release_reader(sc, pb->slot);
		if (*error && !READ_ONCE(sc->failed)) {
			*error = BLK_STS_OK;
			return retry_from_origin(sc, bio, pb);
		}
		break;
	case SSDC_BIO_MISS_READ:
		if (!*error && pb->fill)
			queue_fill(sc, bio, pb);
		break;
	case SSDC_BIO_WRITE:
		write_end(sc, pb, !*error);
		break;
	default:
		break;
	}
	return DM_ENDIO_DONE;
}

int ssdc_io_init(struct ssdcache *sc)
{
	int r;

	INIT_WORK(&sc->fill_work, fill_fn);
	spin_lock_init(&sc->fill_lock);
	INIT_LIST_HEAD(&sc->fills);
	bio_list_init(&sc->retries);
	atomic_set(&sc->fills_inflight, 0);
	init_waitqueue_head(&sc->fills_wait);
	atomic_set(&sc->gwgen, 0);
	atomic_set(&sc->gwrites_inflight, 0);
	r = bioset_init(&sc->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS);
	if (r)
		return r;
	sc->fill_wq = alloc_workqueue("ssdcache-fill-%s", WQ_MEM_RECLAIM, 0,
				      ssdcache_name(sc));
	if (!sc->fill_wq) {
		bioset_exit(&sc->bs);
		return -ENOMEM;
	}
	return 0;
}

/* Waits until no fill is queued or writing. */
void ssdc_io_drain(struct ssdcache *sc)
{
	if (!sc->fill_wq)
		return;
	flush_workqueue(sc->fill_wq);
	wait_event(sc->fills_wait, !atomic_read(&sc->fills_inflight));
}

void ssdc_io_exit(struct ssdcache *sc)
{
	if (sc->fill_wq) {
		ssdc_io_drain(sc);
		destroy_workqueue(sc->fill_wq);
		sc->fill_wq = NULL;
	}
	bioset_exit(&sc->bs);
}
