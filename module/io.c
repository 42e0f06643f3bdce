// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the I/O paths.
 *
 * Reads:  hit  -> the SSD (the slot is pinned while the read runs; an
 *                 SSD error invalidates it and retries from the origin)
 *         miss -> the origin, with the uncached blocks after it (one
 *                 request); each whole block read is then copied and
 *                 installed in the background (a "fill"), unless a write
 *                 to its set started or ran meanwhile.
 * Writes: to a dirty block, in place on the SSD, in any mode. Else in
 *         write-back mode, a whole-block write goes to a free slot, which
 *         becomes dirty (the clean copy, if any, is invalidated); a write
 *         of several whole blocks whose first has no free slot goes to
 *         the origin whole, as a sequential one does (wb_room()). Else the
 *         cached copy is invalidated first (and the write waits for that
 *         to be durable, see meta.c); then the origin is written, and in
 *         write-through mode a whole-block write is also written to a free
 *         slot, completing when both are done. An SSD failure there only
 *         drops the copy. No new copy is made while another write to the
 *         origin may overlap it (may_copy_write_locked()). Outside
 *         write-back mode, whole blocks that are not dirty go to the
 *         origin together, up to SSDC_WRITE_RUN (map_run_write()).
 * Writes to the SSD with REQ_FUA, and flushes, complete after the next
 * commit (meta.c). Large sequential I/O (seqcut.c) and discards go to the
 * origin whole, after invalidating what they cover; dirty blocks are
 * never invalidated: a sequential bio stops before the first one (dm
 * resubmits the rest), and a discard leaves them cached.
 *
 * Degraded (health.c): clean copies are not read, nothing new is written
 * to the SSD, and a write to a dirty block waits until the cleaner has
 * written it back (at most SSDC_DEGRADED_WRITE_WAIT_MS, then EIO).
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/slab.h>

#include "ssdcache.h"

/* A write of more than one block (a range write) has set = SSDC_NO_SET. */
#define SSDC_NO_SET	U32_MAX

/* Sends @bio to the origin; a write with data is counted at its end. */
static void remap_origin(struct ssdcache *sc, struct bio *bio)
{
	bio_set_dev(bio, sc->origin->bdev);
	if (op_is_write(bio_op(bio)) && bio_sectors(bio))
		ssdc_pb(bio)->origin_write = 1;
}

/*
 * A write to the origin counts in the set of every block it may cover
 * while it runs, and bumps the set's wgen when it starts and ends: a fill
 * of a block of that set neither starts then nor installs data read
 * before (the data may be stale). The caller holds the set's lock.
 */
static void set_writes_locked(struct ssdc_set *st, int delta)
{
	st->writes_inflight += delta;
	st->wgen++;
}

/* A range write: it goes to the origin, so it counts in origin_inflight too. */
static void set_writes(struct ssdcache *sc, u32 set, int delta)
{
	struct ssdc_set *st = &sc->sets[set];
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	set_writes_locked(st, delta);
	st->origin_inflight += delta;
	spin_unlock_irqrestore(&st->lock, flags);
}

/*
 * The same for origin blocks [first, last]. A range of more than
 * SSDC_RANGE_PER_SET blocks (a discard may cover the whole device, and
 * its end runs in interrupt context) counts once in long_writes instead,
 * which holds back the fills of every set.
 *
 * Ordering: the counter is raised before the generation (a fill that sees
 * the new generation sees the write), and both before the range's copies
 * are invalidated under their set locks; a fill installs under its set's
 * lock, so it either sees the new generation or is invalidated.
 */
static void range_writes(struct ssdcache *sc, u64 first, u64 last, int delta)
{
	u64 b;

	if (last - first >= SSDC_RANGE_PER_SET) {
		if (delta > 0) {
			atomic_inc(&sc->long_writes);
			/* Pairs with the smp_rmb() in map_read(). */
			smp_mb__after_atomic();
			atomic_inc(&sc->long_wgen);
		} else {
			atomic_inc(&sc->long_wgen);
			/* Pairs with the smp_rmb() in map_read(). */
			smp_mb__after_atomic();
			atomic_dec(&sc->long_writes);
		}
		return;
	}
	for (b = first; b <= last; b++)
		set_writes(sc, ssdc_set_of(sc, b), delta);
}

/*
 * Whether a write may put a new copy of a block of set @st (locked) on the
 * SSD: no other write to the origin that may cover the block is under way
 * (@own: this write is one, and counted). Two overlapping writes reach
 * the origin in either order; a copy of one beside the other's origin
 * write could end up clean and differ from the origin (a write-through
 * copy, or a write-back block that the cleaner writes back before the
 * other write lands). Such a write goes to the origin alone.
 */
static bool may_copy_write_locked(struct ssdcache *sc, struct ssdc_set *st, u32 own)
{
	return st->origin_inflight == own && !atomic_read(&sc->long_writes);
}

/*
 * Frees @slot, taken (FILLING) for a copy that did not become valid.
 * Caller holds the set lock.
 */
static void release_slot_locked(struct ssdcache *sc, u64 slot)
{
	ssdc_slot_write(sc, slot, ssdc_slot_make(0, SSDC_SLOT_FREE));
	atomic64_dec(&sc->used);
}

/*
 * The end of a write-through copy in @slot of @oblock, under its set's
 * lock: valid if the write (both halves) went well, else free again.
 */
static void copy_end_locked(struct ssdcache *sc, u64 slot, u64 oblock, bool ok)
{
	u64 v = sc->slots[slot];

	if (ok && !(v & (SSDC_SF_CANCEL | SSDC_SF_SSD_ERR)))
		ssdc_make_valid_locked(sc, slot, oblock, false);
	else
		release_slot_locked(sc, slot);
}

/* Whether sets[n] is one of sets[0..n-1]. */
static bool set_seen(const u32 *sets, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (sets[i] == sets[n])
			return true;
	return false;
}

/*
 * The end of a run write: each block's set, and the copies made. The
 * write counted once in the origin_inflight of each of its sets.
 */
static void run_end(struct ssdcache *sc, struct ssdc_bio *pb, bool ok)
{
	u32 sets[SSDC_WRITE_RUN];
	unsigned long flags;
	unsigned int i;

	for (i = 0; i < pb->nblocks; i++) {
		u64 b = pb->oblock + i;
		struct ssdc_set *st;

		sets[i] = ssdc_set_of(sc, b);
		st = &sc->sets[sets[i]];
		spin_lock_irqsave(&st->lock, flags);
		set_writes_locked(st, -1);
		if (!set_seen(sets, i))
			st->origin_inflight--;
		if (pb->run_installed & BIT(i))
			copy_end_locked(sc, pb->run_slot[i], b, ok);
		spin_unlock_irqrestore(&st->lock, flags);
	}
	pb->run = 0;
}

/* The end of a write; a write-through copy it installed becomes valid. */
static void write_end(struct ssdcache *sc, struct ssdc_bio *pb, bool ok)
{
	struct ssdc_set *st;
	unsigned long flags;

	if (pb->run) {
		run_end(sc, pb, ok);
		return;
	}
	if (pb->set == SSDC_NO_SET) {
		range_writes(sc, pb->oblock, pb->last, -1);
		return;
	}
	st = &sc->sets[pb->set];
	spin_lock_irqsave(&st->lock, flags);
	set_writes_locked(st, -1);
	if (pb->origin_held) {
		st->origin_inflight--;
		pb->origin_held = 0;
	}
	if (pb->installed)
		copy_end_locked(sc, pb->slot, pb->oblock, ok);
	spin_unlock_irqrestore(&st->lock, flags);
}

static bool on_disk(struct ssdcache *sc, u32 set, u64 slot, void *arg)
{
	bool *unsafe = arg;

	*unsafe = ssdc_slot_maybe_on_disk(sc->slots[slot]);
	return *unsafe;
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
	bool unsafe = false;

	if (!READ_ONCE(sc->sb_wiped))
		ssdc_walk_range(sc, first, last, on_disk, &unsafe);
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
		ssdc_pb(bio)->rejected = 1;
		bio_io_error(bio);
		return;
	}
	remap_origin(sc, bio);
	ssdc_count_bio(sc, false, bio);
	submit_bio_noacct(bio);
}

/* ---- write-through install ---- */

static void wt_ssd_end_io(struct bio *clone)
{
	struct ssdc_clone *c = container_of(clone, struct ssdc_clone, bio);
	struct bio *parent = clone->bi_private;
	struct ssdcache *sc = ssdc_pb(parent)->sc;
	unsigned long flags;
	unsigned int i;

	if (clone->bi_status) {
		for (i = 0; i < c->nr; i++) {
			u64 slot = c->slot + i;
			struct ssdc_set *st = &sc->sets[ssdc_slot_set(slot)];

			spin_lock_irqsave(&st->lock, flags);
			ssdc_slot_write(sc, slot, sc->slots[slot] | SSDC_SF_SSD_ERR);
			spin_unlock_irqrestore(&st->lock, flags);
		}
		ssdc_count_error(sc, true, true);
	}
	bio_put(clone);
	bio_endio(parent);	/* drops the reference taken for this clone */
}

/* Frees a slot reserve_slot() gave, for a copy that could not start. */
static void unreserve_slot(struct ssdcache *sc, u64 slot)
{
	struct ssdc_set *st = &sc->sets[ssdc_slot_set(slot)];
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	release_slot_locked(sc, slot);
	spin_unlock_irqrestore(&st->lock, flags);
}

/*
 * Sends a copy of @bio's @nr blocks from block @skip on to the adjacent
 * slots from @slot; the bio completes once the copy is written too. False
 * if no clone could be had.
 */
static bool copy_to_slots(struct ssdcache *sc, struct bio *bio, u64 slot,
			  unsigned int skip, unsigned int nr, gfp_t gfp)
{
	struct bio *clone = bio_alloc_clone(sc->cache->bdev, bio, gfp, &sc->bs);
	struct ssdc_clone *c;

	if (!clone)
		return false;
	c = container_of(clone, struct ssdc_clone, bio);
	c->slot = slot;
	c->nr = nr;
	if (skip)
		bio_advance(clone, (u64)skip << (sc->block_shift + SECTOR_SHIFT));
	clone->bi_iter.bi_size = nr << (sc->block_shift + SECTOR_SHIFT);
	clone->bi_opf &= ~(REQ_FUA | REQ_PREFLUSH);
	clone->bi_iter.bi_sector = ssdc_slot_sector(sc, slot);
	clone->bi_end_io = wt_ssd_end_io;
	clone->bi_private = bio;
	bio_inc_remaining(bio);
	ssdc_count_bio(sc, true, clone);
	submit_bio_noacct(clone);
	return true;
}

/* Reserves a FREE slot for @oblock; evicts for next time if there is none. */
static long reserve_slot(struct ssdcache *sc, u32 set, u64 oblock)
{
	unsigned long flags;
	long slot;

	spin_lock_irqsave(&sc->sets[set].lock, flags);
	/*
	 * A copy whose eviction is not durable yet, or another write to the
	 * origin under way: install none for now.
	 */
	if (ssdc_evicting_locked(sc, set, oblock) || ssdc_lookup(sc, set, oblock) >= 0 ||
	    !may_copy_write_locked(sc, &sc->sets[set], 1)) {
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
		return -1;
	}
	slot = ssdc_take_free_for(sc, set, oblock, 1);
	if (slot >= 0) {
		ssdc_slot_write(sc, slot, ssdc_slot_make(oblock, SSDC_SLOT_FILLING));
		ssdc_touch(sc, set, slot, true);
		atomic64_inc(&sc->used);
		ssdc_evict_ahead(sc, set);
	} else {
		ssdc_evict_for_next(sc, set);
	}
	spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	return slot;
}

/* Also writes a whole-block write-through write to a fresh slot. */
static void wt_install(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb)
{
	long slot = reserve_slot(sc, pb->set, pb->oblock);

	if (slot < 0)
		return;
	/* Set after the copy is sent: read at the bio's end, after its submission. */
	if (copy_to_slots(sc, bio, slot, 0, 1, GFP_NOIO)) {
		pb->slot = slot;
		pb->installed = 1;
	} else {
		unreserve_slot(sc, slot);
	}
}

/* How many of a run write's reserved slots from block @i on are adjacent. */
static unsigned int wt_adjacent(struct ssdc_bio *pb, unsigned int i)
{
	unsigned int n = 1;

	while (i + n < pb->nblocks && (pb->run_installed & BIT(i + n)) &&
	       pb->run_slot[i + n] == pb->run_slot[i] + n)
		n++;
	return n;
}

/*
 * The same for each block of a run write: slots are reserved for all
 * first (each next to its block's neighbour where free), and the blocks
 * whose slots are adjacent go to the SSD in one clone. The clones after
 * the first come from the same bio_set before any is sent (dm queues our
 * submissions until map returns): they must not wait for its reserve;
 * blocks that get none are just not copied. run_installed is read at the
 * bio's end, after its submission: it may mark the reservations first.
 */
static void wt_install_run(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb)
{
	gfp_t gfp = GFP_NOIO;
	unsigned int i, n, k;

	for (i = 0; i < pb->nblocks; i++) {
		u64 b = pb->oblock + i;
		long slot = reserve_slot(sc, ssdc_set_of(sc, b), b);

		if (slot >= 0) {
			pb->run_slot[i] = slot;
			pb->run_installed |= BIT(i);
		}
	}
	for (i = 0; i < pb->nblocks; i += n) {
		n = 1;
		if (!(pb->run_installed & BIT(i)))
			continue;
		n = wt_adjacent(pb, i);
		if (copy_to_slots(sc, bio, pb->run_slot[i], i, n, gfp)) {
			gfp = GFP_NOWAIT | __GFP_NOWARN;
			continue;
		}
		for (k = i; k < i + n; k++)
			unreserve_slot(sc, pb->run_slot[k]);
		pb->run_installed &= ~GENMASK(i + n - 1, i);
	}
}

/* ---- write-back writes ---- */

/*
 * The slots of a write to them that is done (or failed, or could not
 * start). @ended: the write ends here too; it counts out of its set under
 * the same lock (what write_end() does for it).
 */
static void wb_slot_done(struct ssdcache *sc, struct ssdc_bio *pb, blk_status_t status,
			 bool ended)
{
	struct ssdc_set *st = &sc->sets[pb->set];
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&st->lock, flags);
	if (ended)
		set_writes_locked(st, -1);
	for (i = 0; i < pb->nblocks; i++) {
		u64 slot = pb->slot + i, v = sc->slots[slot];

		if (i < pb->nrewrite) {
			ssdc_unpin_locked(sc, slot);
			if (!status)
				ssdc_mark_unsynced_locked(sc, slot);
		} else if (!status && !(v & SSDC_SF_CANCEL)) {
			ssdc_make_valid_locked(sc, slot, pb->oblock + i, true);
		} else {
			release_slot_locked(sc, slot);
		}
	}
	spin_unlock_irqrestore(&st->lock, flags);
	if (status) {
		ssdc_count_error(sc, true, true);
		DMERR_LIMIT("%s: write to cache block %llu failed (%d)",
			    ssdcache_name(sc), pb->slot, blk_status_to_errno(status));
	}
}

/* A cloned write to a slot is done: the bio completes, after a commit if FUA. */
static void wb_write_done(struct ssdcache *sc, struct bio *bio, blk_status_t status)
{
	wb_slot_done(sc, ssdc_pb(bio), status, false);
	if (status) {
		bio->bi_status = status;
		bio_endio(bio);
	} else if (bio->bi_opf & REQ_FUA) {
		ssdc_count(sc, SSDC_C_FUA);
		ssdc_meta_wait(sc, bio);
	} else {
		bio_endio(bio);
	}
}

static void wb_write_end_io(struct bio *clone)
{
	struct bio *bio = clone->bi_private;
	blk_status_t status = clone->bi_status;

	bio_put(clone);
	wb_write_done(ssdc_pb(bio)->sc, bio, status);
}

/*
 * Sends @bio to slot pb->slot, which the caller reserved or pinned. A
 * plain write goes itself: ssdc_end_io() records the slot. A FUA write
 * (dm never maps data with REQ_PREFLUSH) goes as a clone, so that the
 * bio completes only once a commit has made the slot durable too.
 */
static int cache_write(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb)
{
	sector_t sector = ssdc_slot_sector(sc, pb->slot) +
		(bio->bi_iter.bi_sector & (sc->block_sectors - 1));
	struct bio *clone;

	if (!(bio->bi_opf & (REQ_FUA | REQ_PREFLUSH))) {
		pb->kind = SSDC_BIO_WB_REMAP;
		bio_set_dev(bio, sc->cache->bdev);
		bio->bi_iter.bi_sector = sector;
		ssdc_count_bio(sc, true, bio);
		return DM_MAPIO_REMAPPED;
	}
	pb->kind = SSDC_BIO_WB_WRITE;
	clone = bio_alloc_clone(sc->cache->bdev, bio, GFP_NOIO, &sc->bs);
	if (!clone) {
		wb_write_done(sc, bio, BLK_STS_RESOURCE);
		return DM_MAPIO_SUBMITTED;
	}
	clone->bi_opf &= ~(REQ_FUA | REQ_PREFLUSH);
	clone->bi_iter.bi_sector = sector;
	clone->bi_end_io = wb_write_end_io;
	clone->bi_private = bio;
	ssdc_count_bio(sc, true, clone);
	submit_bio_noacct(clone);
	return DM_MAPIO_SUBMITTED;
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

	if ((pb->whole_block || pb->run) && bio_op(bio) == REQ_OP_WRITE &&
	    READ_ONCE(sc->mode) == SSDCACHE_MODE_WRITETHROUGH && ssdc_may_cache(sc)) {
		if (pb->run)
			wt_install_run(sc, bio, pb);
		else
			wt_install(sc, bio, pb);
	}
	remap_origin(sc, bio);
	ssdc_count_bio(sc, false, bio);
	submit_bio_noacct(bio);
}

/* route_block_write(): map again once the cleaner wrote the block back. */
#define SSDC_ROUTE_WAIT_CLEAN	(-2)

/*
 * Extends a rewrite of the dirty block in @slot over the dirty blocks
 * after it in the slots after it, up to @max blocks in all: one SSD
 * request. Returns the number of blocks. Caller holds the set lock.
 */
static unsigned int rewrite_run(struct ssdcache *sc, u32 set, u64 slot, u64 oblock,
				unsigned int max)
{
	u64 end = (u64)(set + 1) * SSDCACHE_ASSOC;
	unsigned int n;

	for (n = 1; n < max && slot + n < end; n++) {
		u64 v = sc->slots[slot + n];

		if (ssdc_slot_oblock(v) != oblock + n || !ssdc_slot_dirty(v))
			break;
		ssdc_pin(sc, slot + n);
		ssdc_slot_write(sc, slot + n, v & ~SSDC_SF_CLEANING);
		ssdc_touch(sc, set, slot + n, false);
	}
	ssdc_count_add(sc, SSDC_C_WRITE_HITS, n - 1);
	return n;
}

/*
 * Extends a write-back write to the slots from @slot, @n blocks long so
 * far, over the blocks after them whose slots after them are free, up to
 * @max blocks in all: one SSD request. A block that is dirty, or that
 * another write-back write is writing, ends the run; a clean copy is
 * invalidated, as for the first block. Returns the number of blocks.
 * Caller holds the set lock.
 */
static unsigned int fresh_run(struct ssdcache *sc, u32 set, u64 slot, u64 oblock,
			      unsigned int n, unsigned int max)
{
	u64 end = (u64)(set + 1) * SSDCACHE_ASSOC;
	unsigned int from = n, hits = 0;

	for (; n < max && slot + n < end; n++) {
		u64 b = oblock + n;
		long old;

		if (ssdc_slot_state(sc->slots[slot + n]) != SSDC_SLOT_FREE ||
		    ssdc_set_of(sc, b) != set)
			break;
		old = ssdc_lookup(sc, set, b);
		if (old >= 0 && (sc->slots[old] & SSDC_SF_DIRTY))
			break;
		if (old >= 0) {
			ssdc_invalidate_locked(sc, set, old);
			hits++;
		}
		ssdc_slot_write(sc, slot + n, SSDC_SF_DIRTY | ssdc_slot_make(b, SSDC_SLOT_FILLING));
		ssdc_touch(sc, set, slot + n, true);
		atomic64_inc(&sc->used);
	}
	ssdc_count_add(sc, SSDC_C_WRITE_HITS, hits);
	ssdc_count_add(sc, SSDC_C_WRITE_MISSES, n - from - hits);
	return n;
}

/* Of @max blocks from @oblock, those in its run: in its set, as one request. */
static unsigned int run_left(struct ssdcache *sc, u64 oblock, unsigned int max)
{
	u64 left = BIT_ULL(sc->set_shift) - (oblock & (BIT_ULL(sc->set_shift) - 1));

	return min_t(u64, max, left);
}

/*
 * May a write-back write of whole blocks take fresh slots for them? Not
 * a partial block (its slot would hold bytes the origin has), not while
 * degraded, not beside an origin write of the set (may_copy_write_locked()).
 * Caller holds the set lock.
 */
static bool may_take_fresh(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb, u32 set)
{
	return READ_ONCE(sc->mode) == SSDCACHE_MODE_WRITEBACK && pb->whole_block &&
	       bio_op(bio) == REQ_OP_WRITE && !READ_ONCE(sc->degraded) &&
	       may_copy_write_locked(sc, &sc->sets[set], 0);
}

/*
 * Where a write of up to @max whole blocks (1: one block, maybe partial)
 * goes, decided under the set lock: 1 if to pb->nblocks adjacent slots
 * from pb->slot (dirty blocks rewritten in place, or fresh slots in
 * write-back mode), -1 if it must be mapped again later (or
 * SSDC_ROUTE_WAIT_CLEAN), 0 if to the origin (*wait: after a commit).
 * *hit tells whether the first block was cached.
 */
static int route_block_write(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb,
			     unsigned int max, bool *wait, bool *hit)
{
	u32 set = pb->set;
	long slot = ssdc_lookup(sc, set, pb->oblock), fresh;
	u64 v = slot >= 0 ? sc->slots[slot] : 0;

	*hit = slot >= 0;
	if (slot >= 0 && ssdc_slot_state(v) == SSDC_SLOT_FILLING && (v & SSDC_SF_DIRTY))
		return -1;	/* another write-back write to it is under way */
	if (slot >= 0 && ssdc_slot_dirty(v)) {
		if (READ_ONCE(sc->degraded))
			return SSDC_ROUTE_WAIT_CLEAN;
		ssdc_pin(sc, slot);
		ssdc_slot_write(sc, slot, v & ~SSDC_SF_CLEANING);
		pb->slot = slot;
		ssdc_touch(sc, set, slot, false);
		pb->nrewrite = rewrite_run(sc, set, slot, pb->oblock, max);
		pb->nblocks = pb->nrewrite;
		/* A log's tail block rewritten, the blocks after it new: one request. */
		if (pb->nblocks < max && may_take_fresh(sc, bio, pb, set)) {
			pb->nblocks = fresh_run(sc, set, slot, pb->oblock, pb->nblocks, max);
			if (pb->nblocks > pb->nrewrite)
				ssdc_evict_ahead(sc, set);
		}
		return 1;
	}
	if (may_take_fresh(sc, bio, pb, set)) {
		fresh = ssdc_take_free_for(sc, set, pb->oblock, run_left(sc, pb->oblock, max));
		if (fresh >= 0) {
			if (slot >= 0)
				ssdc_invalidate_locked(sc, set, slot);
			ssdc_slot_write(sc, fresh, SSDC_SF_DIRTY |
					ssdc_slot_make(pb->oblock, SSDC_SLOT_FILLING));
			ssdc_touch(sc, set, fresh, true);
			atomic64_inc(&sc->used);
			pb->slot = fresh;
			pb->nblocks = fresh_run(sc, set, fresh, pb->oblock, 1, max);
			ssdc_evict_ahead(sc, set);
			return 1;
		}
		/* Full: make room for next time, write this one around. */
		ssdc_evict_for_next(sc, set);
	}
	*wait = (slot >= 0 && ssdc_invalidate_locked(sc, set, slot)) ||
		ssdc_evicting_locked(sc, set, pb->oblock);
	return 0;
}

/*
 * Degraded: a write to a dirty block is mapped again until the cleaner
 * has written the block back (the cursor is moved to it); then it goes
 * to the origin like any other. True once that has taken too long (say
 * the SSD cannot read the block): the write then fails, and the block
 * stays as it was.
 */
static bool writeback_wait_over(struct ssdcache *sc, struct ssdc_bio *pb, u64 oblock)
{
	if (!pb->wait_since) {
		pb->wait_since = jiffies;
	} else if (time_after(jiffies, pb->wait_since +
			      msecs_to_jiffies(SSDC_DEGRADED_WRITE_WAIT_MS))) {
		DMERR_LIMIT("%s: degraded: block %llu not written back in time: write failed",
			    ssdcache_name(sc), oblock);
		return true;
	}
	WRITE_ONCE(sc->wb_cursor, oblock);
	ssdc_wb_kick(sc);
	return false;
}

/* Shortens @bio to end at origin block @b (exclusive). */
static void cut_before_block(struct ssdcache *sc, struct bio *bio, u64 b)
{
	dm_accept_partial_bio(bio, (b << sc->block_shift) - bio->bi_iter.bi_sector);
}

/* Shortens @bio to its first cache block; true if it then covers it whole. */
static bool cut_to_first_block(struct ssdcache *sc, struct bio *bio)
{
	sector_t off = bio->bi_iter.bi_sector & (sc->block_sectors - 1);
	sector_t len = bio_sectors(bio);

	if (off + len > sc->block_sectors) {
		len = sc->block_sectors - off;
		dm_accept_partial_bio(bio, len);
	}
	return !off && len == sc->block_sectors;
}

/*
 * A write within one cache block, or (@max > 1) of @max whole blocks
 * from @oblock, not cut yet: as many of them as adjacent slots of one set
 * take go to the SSD as one request, else the first block goes alone.
 */
static int map_block_write(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb,
			   u64 oblock, unsigned int max)
{
	u32 set = ssdc_set_of(sc, oblock);
	unsigned long flags;
	bool wait = false, hit;
	int where;

	pb->kind = SSDC_BIO_WRITE;
	pb->oblock = oblock;
	pb->set = set;
	spin_lock_irqsave(&sc->sets[set].lock, flags);
	set_writes_locked(&sc->sets[set], 1);
	where = route_block_write(sc, bio, pb, max, &wait, &hit);
	if (!where) {
		sc->sets[set].origin_inflight++;
		pb->origin_held = 1;
	}
	spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	if (where > 0 && pb->nblocks > 1) {
		if (((sector_t)pb->nblocks << sc->block_shift) < bio_sectors(bio))
			dm_accept_partial_bio(bio, pb->nblocks << sc->block_shift);
	} else {
		cut_to_first_block(sc, bio);
		pb->nblocks = 1;
	}
	if (where < 0) {
		write_end(sc, pb, false);
		pb->kind = SSDC_BIO_PASS;
		if (where == SSDC_ROUTE_WAIT_CLEAN && writeback_wait_over(sc, pb, oblock)) {
			pb->rejected = 1;
			bio_io_error(bio);
			return DM_MAPIO_SUBMITTED;
		}
		ssdc_requeue(sc, bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (hit)
		ssdc_count(sc, SSDC_C_WRITE_HITS);
	else
		ssdc_count(sc, SSDC_C_WRITE_MISSES);
	if (where > 0)
		return cache_write(sc, bio, pb);
	if (wait)
		ssdc_meta_defer(sc, bio);
	else
		ssdc_issue_write(sc, bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * Adds origin block @b of @set to a run write: counted as a one-block
 * write that goes to the origin would be (in origin_inflight only if
 * @first_in_set), its cached copy invalidated (*wait if that must be
 * durable first). False, and nothing done, if the block is dirty or a
 * write-back write to it is under way: the run stops before it.
 */
static bool run_add_block(struct ssdcache *sc, u64 b, u32 set, bool first_in_set,
			  bool *wait, bool *hit)
{
	struct ssdc_set *st = &sc->sets[set];
	unsigned long flags;
	long slot;

	spin_lock_irqsave(&st->lock, flags);
	slot = ssdc_lookup(sc, set, b);
	if (slot >= 0 && (sc->slots[slot] & SSDC_SF_DIRTY)) {
		spin_unlock_irqrestore(&st->lock, flags);
		return false;
	}
	set_writes_locked(st, 1);
	if (first_in_set)
		st->origin_inflight++;
	if ((slot >= 0 && ssdc_invalidate_locked(sc, set, slot)) ||
	    ssdc_evicting_locked(sc, set, b))
		*wait = true;
	spin_unlock_irqrestore(&st->lock, flags);
	*hit = slot >= 0;
	return true;
}

/*
 * A write-through or write-around write of whole blocks from @first: up
 * to SSDC_WRITE_RUN of them, none dirty, go to the origin as one write (a
 * disk charges per request; cut into blocks, a 128 KiB write took 32 of
 * them), each also copied to a slot in write-through mode. A block the
 * run cannot take starts the rest, which dm maps again.
 */
static int map_run_write(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb, u64 first)
{
	unsigned int max = min_t(u64, min_t(u64, bio_sectors(bio) >> sc->block_shift,
					    SSDC_WRITE_RUN), sc->origin_blocks - first);
	unsigned int n, hits = 0;
	u32 sets[SSDC_WRITE_RUN];
	bool wait = false, hit;

	for (n = 0; n < max; n++) {
		sets[n] = ssdc_set_of(sc, first + n);
		if (!run_add_block(sc, first + n, sets[n], !set_seen(sets, n), &wait, &hit))
			break;
		hits += hit;
	}
	if (!n) {
		pb->whole_block = cut_to_first_block(sc, bio);
		return map_block_write(sc, bio, pb, first, 1);
	}
	pb->kind = SSDC_BIO_WRITE;
	pb->oblock = first;
	pb->set = SSDC_NO_SET;
	pb->run = 1;
	pb->nblocks = n;
	if (((sector_t)n << sc->block_shift) < bio_sectors(bio))
		dm_accept_partial_bio(bio, n << sc->block_shift);
	ssdc_count_add(sc, SSDC_C_WRITE_HITS, hits);
	ssdc_count_add(sc, SSDC_C_WRITE_MISSES, n - hits);
	if (wait)
		ssdc_meta_defer(sc, bio);
	else
		ssdc_issue_write(sc, bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * A write or discard of origin blocks [first, last] that goes to the
 * origin whole. A write stops before the first dirty block; if that is
 * the first block, the bio is cut to it and written like any other.
 */
static int map_range_write(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb,
			   u64 first, u64 last)
{
	bool discard = bio_op(bio) == REQ_OP_DISCARD;
	u64 dirty_at = U64_MAX;
	bool wait;

	pb->kind = SSDC_BIO_WRITE;
	pb->oblock = first;
	pb->last = last;
	pb->set = SSDC_NO_SET;
	range_writes(sc, first, last, 1);
	wait = ssdc_invalidate_range(sc, first, last, discard ? NULL : &dirty_at);
	if (dirty_at == first) {
		write_end(sc, pb, false);
		if (bio_op(bio) != REQ_OP_WRITE)
			return DM_MAPIO_KILL;
		pb->whole_block = cut_to_first_block(sc, bio);
		return map_block_write(sc, bio, pb, first, 1);
	}
	if (dirty_at != U64_MAX)
		cut_before_block(sc, bio, dirty_at);
	if (!discard) {
		ssdc_count(sc, SSDC_C_WRITE_MISSES);
		ssdc_count(sc, SSDC_C_BYPASSED_WRITES);
	}
	if (wait)
		ssdc_meta_defer(sc, bio);
	else
		ssdc_issue_write(sc, bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * The most blocks one origin read may take, for a run of misses or a
 * readahead chunk: at most SSDC_READ_RUN, and no more than the origin
 * takes in one request, which the block layer would otherwise split
 * (null_blk takes 255 sectors: 31 blocks of 4 KiB, one request where 32
 * made two).
 */
unsigned int ssdc_read_run_max(struct ssdcache *sc)
{
	unsigned int max = queue_max_sectors(bdev_get_queue(sc->origin->bdev));

	return clamp_t(unsigned int, max >> sc->block_shift, 1, SSDC_READ_RUN);
}

/*
 * Extends a miss read of whole block @oblock over the blocks after it
 * that the bio covers whole and that are not cached, up to
 * ssdc_read_run_max(): one origin read instead of one per block (a disk
 * charges per request). Records each block's fill decision and its
 * set's wgen. Returns the number of blocks.
 */
static unsigned int miss_run(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb,
			     u64 oblock)
{
	unsigned int max = min_t(u64, bio_sectors(bio) >> sc->block_shift,
				 ssdc_read_run_max(sc));
	unsigned long flags;
	unsigned int n;

	for (n = 1; n < max; n++) {
		u32 set = ssdc_set_of(sc, oblock + n);
		struct ssdc_set *st = &sc->sets[set];
		bool cached;

		spin_lock_irqsave(&st->lock, flags);
		cached = ssdc_lookup(sc, set, oblock + n) >= 0;
		if (!cached) {
			pb->wgen[n] = st->wgen;
			if (ssdc_may_fill_locked(sc, st))
				pb->fills |= BIT(n);
		}
		spin_unlock_irqrestore(&st->lock, flags);
		if (cached)
			break;
	}
	return n;
}

/* May a hit read serve slot word @v, and pin it? */
static bool hit_ok(struct ssdcache *sc, u64 v)
{
	return ssdc_slot_state(v) == SSDC_SLOT_VALID &&
	       (ssdc_may_cache(sc) || (v & SSDC_SF_DIRTY));
}

/*
 * Extends a hit read of whole block @oblock, pinned in @slot, over the
 * blocks after it that the bio covers whole and that the slots after it
 * hold, pinning them: one SSD request. Returns the number of blocks.
 * Caller holds the set lock.
 */
static unsigned int hit_run(struct ssdcache *sc, struct bio *bio, u32 set, u64 slot,
			    u64 oblock)
{
	unsigned int max = min_t(u64, bio_sectors(bio) >> sc->block_shift, SSDC_SLOT_RUN);
	u64 end = (u64)(set + 1) * SSDCACHE_ASSOC;
	unsigned int n;

	for (n = 1; n < max && slot + n < end; n++) {
		u64 v = sc->slots[slot + n];

		if (ssdc_slot_oblock(v) != oblock + n || !hit_ok(sc, v))
			break;
		ssdc_pin(sc, slot + n);
		ssdc_touch(sc, set, slot + n, false);
	}
	return n;
}

/*
 * A read of the block at the bio's start: from the SSD if cached, with
 * the blocks after it that the slots after it hold (hit_run()), else
 * from the origin, with the uncached blocks after it (miss_run()).
 * Inline: every read's map runs it, and a call of its own saved and
 * restored its registers on every hit.
 */
static __always_inline int map_read(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb,
				    u64 oblock)
{
	u32 set = ssdc_set_of(sc, oblock);
	struct ssdc_set *st = &sc->sets[set];
	sector_t off = bio->bi_iter.bi_sector & (sc->block_sectors - 1);
	bool whole = !off && bio_sectors(bio) >= sc->block_sectors;
	/* Whole, and more than one block: a run may follow the first. */
	bool more = whole && bio_sectors(bio) > sc->block_sectors;
	unsigned int n = 1;
	unsigned long flags;
	long slot;
	u64 v;

	spin_lock_irqsave(&st->lock, flags);
	slot = ssdc_lookup(sc, set, oblock);
	v = slot >= 0 ? sc->slots[slot] : 0;
	if (slot >= 0 && hit_ok(sc, v)) {
		ssdc_pin(sc, slot);
		ssdc_touch(sc, set, slot, false);
		if (more)
			n = hit_run(sc, bio, set, slot, oblock);
		spin_unlock_irqrestore(&st->lock, flags);
		if (n > 1 && ((sector_t)n << sc->block_shift) < bio_sectors(bio))
			dm_accept_partial_bio(bio, n << sc->block_shift);
		else if (n == 1)
			cut_to_first_block(sc, bio);
		pb->kind = SSDC_BIO_HIT_READ;
		pb->slot = slot;
		pb->nblocks = n;
		pb->iter = bio->bi_iter;
		ssdc_count_add(sc, SSDC_C_READ_HITS, n);
		bio_set_dev(bio, sc->cache->bdev);
		bio->bi_iter.bi_sector = ssdc_slot_sector(sc, slot) + off;
		ssdc_count_bio(sc, true, bio);
		return DM_MAPIO_REMAPPED;
	}
	pb->kind = SSDC_BIO_MISS_READ;
	pb->set = set;
	pb->oblock = oblock;
	pb->wgen[0] = st->wgen;
	pb->long_wgen = atomic_read(&sc->long_wgen);
	/* long_wgen before long_writes: pairs with range_writes(). */
	smp_rmb();
	if (slot < 0 && whole && ssdc_may_fill_locked(sc, st))
		pb->fills = 1;
	spin_unlock_irqrestore(&st->lock, flags);
	if (slot < 0 && more)
		n = miss_run(sc, bio, pb, oblock);
	if (n > 1)
		dm_accept_partial_bio(bio, n << sc->block_shift);
	else
		cut_to_first_block(sc, bio);
	pb->nblocks = n;
	pb->iter = bio->bi_iter;
	ssdc_count_add(sc, SSDC_C_READ_MISSES, n);
	if (slot < 0 && whole && ssdc_read_ahead(sc, bio))
		return DM_MAPIO_SUBMITTED;
	remap_origin(sc, bio);
	ssdc_count_bio(sc, false, bio);
	return DM_MAPIO_REMAPPED;
}

/*
 * A read that bypasses the cache goes to the origin, but never past a
 * dirty block: it stops before the first one, or is cut to it.
 */
static int map_bypass_read(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb,
			   u64 first, u64 last)
{
	u64 d = atomic64_read(&sc->dirty) ? ssdc_first_dirty(sc, first, last) : U64_MAX;

	if (d == first)
		return map_read(sc, bio, pb, first);
	if (d != U64_MAX)
		cut_before_block(sc, bio, d);
	ssdc_count(sc, SSDC_C_READ_MISSES);
	ssdc_count(sc, SSDC_C_BYPASSED_READS);
	remap_origin(sc, bio);
	ssdc_count_bio(sc, false, bio);
	return DM_MAPIO_REMAPPED;
}

/*
 * Is every change of a dirty entry that a write completed so far made
 * durable by a commit, and no origin write done since the origin's last
 * flush? Then an empty flush has only the SSD's own data to make
 * durable, and goes to the SSD without a commit: so does a database's
 * fsync after it rewrote a dirty log block in place (no entry changes),
 * or after reads made clean copies (their entries may wait: see
 * mark_pages() in cache.c). A write counts its changes of dirty entries
 * (change_gen) before it completes, and the flush that must cover it is
 * mapped after that.
 */
static bool flush_without_commit(struct ssdcache *sc)
{
	/* Reads after those of the completions this flush follows. */
	smp_mb();
	return !READ_ONCE(sc->failed) && !READ_ONCE(sc->degraded) &&
	       atomic64_read(&sc->change_gen) == READ_ONCE(sc->durable_gen) &&
	       atomic64_read(&sc->origin_writes) == atomic64_read(&sc->origin_flushed);
}

/* An empty flush: through a commit when the SSD holds data of its own. */
static int map_flush(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb)
{
	if (READ_ONCE(sc->mode) != SSDCACHE_MODE_WRITEBACK &&
	    !atomic64_read(&sc->dirty) && !READ_ONCE(sc->failed)) {
		remap_origin(sc, bio);
		return DM_MAPIO_REMAPPED;
	}
	if (flush_without_commit(sc)) {
		ssdc_count(sc, SSDC_C_DIRECT_FLUSHES);
		pb->kind = SSDC_BIO_SSD_FLUSH;
		bio_set_dev(bio, sc->cache->bdev);
		return DM_MAPIO_REMAPPED;
	}
	ssdc_count(sc, SSDC_C_FLUSHES);
	ssdc_meta_wait(sc, bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * Would a write-back write of whole block @oblock go to the SSD: is it
 * dirty already, or is there a free slot in its set? If not, a victim
 * is evicted for next time, as route_block_write() does, and the
 * multi-block write goes to the origin whole (map_range_write()), as
 * one request: cut into blocks, each written around while the cache was
 * full, a 1 MiB write made up to 256 4 KiB requests to the origin. A
 * guess: the set may change before the write is mapped, and the path it
 * takes decides under the lock again.
 */
static bool wb_room(struct ssdcache *sc, u64 oblock)
{
	u32 set = ssdc_set_of(sc, oblock);
	struct ssdc_set *st = &sc->sets[set];
	unsigned long flags;
	bool room;
	long slot;

	if (READ_ONCE(sc->degraded))
		return true;	/* as before: block by block */
	spin_lock_irqsave(&st->lock, flags);
	slot = ssdc_lookup(sc, set, oblock);
	room = (slot >= 0 && ssdc_slot_dirty(sc->slots[slot])) ||
	       ssdc_take_free(sc, set) >= 0;
	if (!room)
		ssdc_evict_for_next(sc, set);
	spin_unlock_irqrestore(&st->lock, flags);
	return room;
}

/*
 * How many whole blocks from origin block @first a write-back write of
 * @len sectors may send to the SSD as one request.
 */
static unsigned int wb_run_max(struct ssdcache *sc, u64 first, sector_t len)
{
	return min_t(u64, min_t(u64, len >> sc->block_shift, SSDC_SLOT_RUN),
		     sc->origin_blocks - first);
}

/* The last origin block that [@sector, @sector + @len) touches. */
static u64 last_block(struct ssdcache *sc, sector_t sector, sector_t len)
{
	return min_t(u64, (sector + len - 1) >> sc->block_shift,
		     sc->origin_blocks ? sc->origin_blocks - 1 : 0);
}

static void note_foreground(struct ssdcache *sc)
{
	unsigned long now = jiffies;

	if (READ_ONCE(sc->last_fg) != now)
		WRITE_ONCE(sc->last_fg, now);
}

/*
 * Maps a bio whose sector is already relative to the target. A @requeued
 * bio was mapped before and is at most one cache block: it is neither
 * counted again nor subject to the sequential cutoff, and never cut
 * (dm_accept_partial_bio() is for the map function only).
 */
static int map_bio(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb, bool requeued)
{
	sector_t sector = bio->bi_iter.bi_sector, len = bio_sectors(bio);
	u64 first, last, start = 0;
	unsigned long since = requeued ? pb->wait_since : 0;

	/* A requeued read keeps the time it was first mapped. */
	if (bio_op(bio) == REQ_OP_READ)
		start = requeued ? pb->start_ns : ssdc_clock_ns();
	memset(pb, 0, offsetof(struct ssdc_bio, wgen));
	pb->sc = sc;
	pb->start_ns = start;
	pb->wait_since = since;
	switch (bio_op(bio)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		if (len)
			break;
		return map_flush(sc, bio, pb);
	default:
		goto origin;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		note_foreground(sc);
		if (!requeued)
			ssdc_count(sc, SSDC_C_DISCARDS);
		if (READ_ONCE(sc->failed)) {
			failed_write(sc, bio);
			return DM_MAPIO_SUBMITTED;
		}
		if (!len)
			goto origin;
		first = sector >> sc->block_shift;
		last = last_block(sc, sector, len);
		if (first >= sc->origin_blocks)
			goto origin;
		return map_range_write(sc, bio, pb, first, last);
	}

	note_foreground(sc);
	first = sector >> sc->block_shift;
	if ((READ_ONCE(sc->failed) && bio_data_dir(bio) == WRITE) ||
	    first >= sc->origin_blocks) {
		/* Not cached: a miss (a partial block at the origin's end). */
		ssdc_count(sc, bio_data_dir(bio) == READ ? SSDC_C_READ_MISSES :
			   SSDC_C_WRITE_MISSES);
		if (bio_data_dir(bio) == WRITE && first < sc->origin_blocks) {
			failed_write(sc, bio);
			return DM_MAPIO_SUBMITTED;
		}
		goto origin;
	}

	if (!requeued && ssdc_seq_bypass(sc, bio)) {
		last = last_block(sc, sector, len);
		if (bio_data_dir(bio) == READ)
			return map_bypass_read(sc, bio, pb, first, last);
		return map_range_write(sc, bio, pb, first, last);
	}

	/* A block (or a run of missed ones) at a time; dm maps the rest again. */
	if (bio_data_dir(bio) == READ)
		return map_read(sc, bio, pb, first);
	if (!requeued && bio_op(bio) == REQ_OP_WRITE && !(sector & (sc->block_sectors - 1)) &&
	    len >= 2 * sc->block_sectors) {
		if (READ_ONCE(sc->mode) != SSDCACHE_MODE_WRITEBACK)
			return map_run_write(sc, bio, pb, first);
		if (!wb_room(sc, first)) {
			last = last_block(sc, sector, len);
			return map_range_write(sc, bio, pb, first, last);
		}
		/* Whole blocks, cut where the slots end (map_block_write()). */
		pb->whole_block = 1;
		return map_block_write(sc, bio, pb, first, wb_run_max(sc, first, len));
	}
	pb->whole_block = cut_to_first_block(sc, bio);
	return map_block_write(sc, bio, pb, first, 1);
origin:
	remap_origin(sc, bio);
	ssdc_count_bio(sc, false, bio);
	return DM_MAPIO_REMAPPED;
}

int ssdc_map(struct dm_target *ti, struct bio *bio)
{
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	return map_bio(ti->private, bio, ssdc_pb(bio), false);
}

/* Maps @bio again from the fill worker, a little later. */
void ssdc_requeue(struct ssdcache *sc, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->fill_lock, flags);
	bio_list_add(&sc->requeued, bio);
	spin_unlock_irqrestore(&sc->fill_lock, flags);
	queue_delayed_work(sc->fill_wq, &sc->requeue_work, 1);
}

static void requeue_fn(struct work_struct *work)
{
	struct ssdcache *sc = container_of(to_delayed_work(work), struct ssdcache,
					   requeue_work);
	struct blk_plug plug;
	struct bio_list todo;
	struct bio *bio;

	spin_lock_irq(&sc->fill_lock);
	todo = sc->requeued;
	bio_list_init(&sc->requeued);
	spin_unlock_irq(&sc->fill_lock);
	blk_start_plug(&plug);
	while ((bio = bio_list_pop(&todo))) {
		switch (map_bio(sc, bio, ssdc_pb(bio), true)) {
		case DM_MAPIO_REMAPPED:
			submit_bio_noacct(bio);
			break;
		case DM_MAPIO_KILL:
			bio_io_error(bio);
			break;
		default:
			break;
		}
	}
	blk_finish_plug(&plug);
}

/* ---- fills ---- */

void ssdc_fill_free(struct ssdc_fill *f)
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

/*
 * Copies @iter's bytes of @bio from (@to_bio) or to the buffer that
 * @pages make, at its byte @pos: the buffer's pages are cut where the
 * bio's segments are not.
 */
void ssdc_copy_bio(struct bio *bio, struct bvec_iter iter, struct page **pages,
		   size_t pos, bool to_bio)
{
	struct bvec_iter it;
	struct bio_vec bv;

	/* bv must stay intact: the iterator advances by bv.bv_len. */
	__bio_for_each_segment(bv, bio, it, iter) {
		unsigned int len = bv.bv_len, off = bv.bv_offset;

		while (len) {
			unsigned int n = min_t(size_t, len, PAGE_SIZE - offset_in_page(pos));
			struct bio_vec part = { bv.bv_page, n, off };
			void *buf = page_address(pages[pos >> PAGE_SHIFT]) + offset_in_page(pos);

			if (to_bio)
				memcpy_to_bvec(&part, buf);
			else
				memcpy_from_bvec(buf, &part);
			pos += n;
			off += n;
			len -= n;
		}
	}
}

/*
 * A fill of origin block @oblock, with room for @nr_pages pages, its set's
 * write generations as seen when its read was mapped; NULL if memory is
 * short.
 */
struct ssdc_fill *ssdc_fill_new(struct ssdcache *sc, u64 oblock, u32 wgen,
				u32 long_wgen, unsigned int nr_pages)
{
	struct ssdc_fill *f;

	f = kzalloc(struct_size(f, pages, nr_pages), GFP_ATOMIC | __GFP_NOWARN);
	if (!f)
		return NULL;
	f->sc = sc;
	f->oblock = oblock;
	f->set = ssdc_set_of(sc, oblock);
	f->wgen = wgen;
	f->long_wgen = long_wgen;
	f->nr_pages = nr_pages;
	return f;
}

/*
 * Copies block @i of a completed miss read into a fill; NULL if memory
 * is short.
 */
static struct ssdc_fill *copy_fill(struct ssdcache *sc, struct bio *bio,
				   struct ssdc_bio *pb, unsigned int i)
{
	size_t total = sc->block_sectors << SECTOR_SHIFT;
	unsigned int nr = DIV_ROUND_UP(total, PAGE_SIZE);
	struct bvec_iter iter = pb->iter;
	struct ssdc_fill *f;
	unsigned int p;

	if (WARN_ON_ONCE(iter.bi_size < (i + 1) * total))
		return NULL;
	bio_advance_iter(bio, &iter, i * total);
	iter.bi_size = total;
	f = ssdc_fill_new(sc, pb->oblock + i, pb->wgen[i], pb->long_wgen, nr);
	if (!f)
		return NULL;
	for (p = 0; p < nr; p++) {
		f->pages[p] = alloc_page(GFP_ATOMIC | __GFP_NOWARN);
		if (!f->pages[p]) {
			ssdc_fill_free(f);
			return NULL;
		}
	}
	ssdc_copy_bio(bio, iter, f->pages, 0, false);
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
		ssdc_make_valid_locked(sc, f->slot, f->oblock, false);
		ssdc_count(sc, SSDC_C_FILLS);
	} else {
		release_slot_locked(sc, f->slot);
		if (bio->bi_status)
			ssdc_count_error(sc, true, true);
	}
	spin_unlock_irqrestore(&st->lock, flags);
	bio_put(bio);
	ssdc_fill_free(f);
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
	if (st->wgen == f->wgen && atomic_read(&sc->long_wgen) == f->long_wgen &&
	    ssdc_may_cache(sc) && !(f->ahead && st->was_full) &&
	    ssdc_lookup(sc, f->set, f->oblock) < 0 &&
	    !ssdc_evicting_locked(sc, f->set, f->oblock)) {
		slot = ssdc_take_free_for(sc, f->set, f->oblock, 1);
		if (slot >= 0) {
			ssdc_slot_write(sc, slot, ssdc_slot_make(f->oblock, SSDC_SLOT_FILLING));
			ssdc_touch(sc, f->set, slot, true);
			/* Read ahead, not asked for: the first to go. */
			if (f->ahead)
				ssdc_touch_cold(sc, f->set, slot);
			atomic64_inc(&sc->used);
			/* Read ahead never evicts (readahead.c). */
			if (!f->ahead)
				ssdc_evict_ahead(sc, f->set);
		} else if (!f->ahead) {
			ssdc_evict_one(sc, f->set);
		}
	}
	spin_unlock_irqrestore(&st->lock, flags);
	if (slot < 0) {
		if (!READ_ONCE(sc->failed) && !f->ahead)
			ssdc_meta_kick(sc, SSDC_EVICT_COMMIT_DELAY_MS);
		ssdc_fill_free(f);
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
	ssdc_count_bio(sc, true, bio);
	submit_bio_noacct(bio);
}

static void fill_fn(struct work_struct *work)
{
	struct ssdcache *sc = container_of(work, struct ssdcache, fill_work);
	struct bio_list retries;
	struct blk_plug plug;
	struct ssdc_fill *f;
	struct bio *bio;
	LIST_HEAD(todo);

	spin_lock_irq(&sc->fill_lock);
	list_splice_init(&sc->fills, &todo);
	retries = sc->retries;
	bio_list_init(&sc->retries);
	spin_unlock_irq(&sc->fill_lock);
	blk_start_plug(&plug);
	while ((bio = bio_list_pop(&retries)))
		submit_bio_noacct(bio);
	while ((f = list_first_entry_or_null(&todo, struct ssdc_fill, list))) {
		list_del(&f->list);
		install_fill(sc, f);
	}
	blk_finish_plug(&plug);
}

/*
 * Queues a fill for each block of a completed miss read that may have one,
 * up to SSDC_MAX_FILLS in flight. Whatever it queued, the work runs: a
 * fill left on the list without it would hold fills_inflight up for ever,
 * and the next suspend would wait for it in ssdc_io_drain().
 */
static void queue_fills(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb)
{
	struct ssdc_fill *f;
	bool queued = false;
	unsigned int i;

	for (i = 0; i < pb->nblocks; i++) {
		if (!(pb->fills & BIT(i)))
			continue;
		if (!ssdc_fill_room(sc))
			break;
		f = copy_fill(sc, bio, pb, i);
		if (!f)
			break;
		ssdc_fill_add(sc, f);
		queued = true;
	}
	if (queued)
		ssdc_fill_kick(sc);
}

/* Is there room for one more fill in flight? */
bool ssdc_fill_room(struct ssdcache *sc)
{
	return atomic_read(&sc->fills_inflight) < SSDC_MAX_FILLS;
}

/* Queues fill @f; the caller runs ssdc_fill_kick() after its last. */
void ssdc_fill_add(struct ssdcache *sc, struct ssdc_fill *f)
{
	unsigned long flags;

	atomic_inc(&sc->fills_inflight);
	spin_lock_irqsave(&sc->fill_lock, flags);
	list_add_tail(&f->list, &sc->fills);
	spin_unlock_irqrestore(&sc->fill_lock, flags);
}

void ssdc_fill_kick(struct ssdcache *sc)
{
	queue_work(sc->fill_wq, &sc->fill_work);
}

/* ---- completion ---- */

/*
 * An SSD read failed: drop the copies, unpin them, and have the fill
 * worker send the read to the origin (bios are not resubmitted from
 * completion context). None of its blocks was dirty (hit_dirty()).
 */
static int retry_from_origin(struct ssdcache *sc, struct bio *bio,
			     struct ssdc_bio *pb)
{
	u32 set = ssdc_slot_set(pb->slot);
	unsigned long flags;
	unsigned int i;

	ssdc_count_error(sc, true, false);
	spin_lock_irqsave(&sc->sets[set].lock, flags);
	for (i = 0; i < pb->nblocks; i++) {
		u64 v = sc->slots[pb->slot + i];

		if (ssdc_slot_state(v) == SSDC_SLOT_VALID && !(v & SSDC_SF_DIRTY))
			ssdc_invalidate_locked(sc, set, pb->slot + i);
	}
	spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	ssdc_unpin_run(sc, pb->slot, pb->nblocks);
	ssdc_meta_kick(sc, SSDC_EVICT_COMMIT_DELAY_MS);
	ssdc_origin_retry(sc, bio);
	return DM_ENDIO_INCOMPLETE;
}

/*
 * Sends read @bio, as mapped, to the origin alone, from the fill worker
 * (bios are not submitted from completion context).
 */
void ssdc_origin_retry(struct ssdcache *sc, struct bio *bio)
{
	struct ssdc_bio *pb = ssdc_pb(bio);
	unsigned long flags;

	pb->kind = SSDC_BIO_PASS;
	bio->bi_iter = pb->iter;
	bio->bi_status = BLK_STS_OK;
	remap_origin(sc, bio);
	ssdc_count_bio(sc, false, bio);
	spin_lock_irqsave(&sc->fill_lock, flags);
	bio_list_add(&sc->retries, bio);
	spin_unlock_irqrestore(&sc->fill_lock, flags);
	ssdc_fill_kick(sc);
}

/* Counts a failed bio we sent to the origin, and times origin reads. */
static void origin_done(struct ssdcache *sc, struct bio *bio,
			struct ssdc_bio *pb, blk_status_t error)
{
	if (error && !pb->rejected)
		ssdc_count_error(sc, false, op_is_write(bio_op(bio)));
	else if (!error && pb->start_ns)
		ssdc_account_latency(sc, SSDC_LAT_ORIGIN, pb->start_ns);
}

/*
 * Of a hit read's slots, still pinned: 0 if none is dirty, else 1 + the
 * index of the last dirty one. A pinned dirty slot stays dirty: the
 * cleaner does not take it.
 */
static unsigned int hit_dirty(struct ssdcache *sc, struct ssdc_bio *pb)
{
	struct ssdc_set *st = &sc->sets[ssdc_slot_set(pb->slot)];
	unsigned int i, dirty = 0;
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	for (i = 0; i < pb->nblocks; i++)
		if (ssdc_slot_dirty(sc->slots[pb->slot + i]))
			dirty = i + 1;
	spin_unlock_irqrestore(&st->lock, flags);
	return dirty;
}

/*
 * A hit read failed: a clean copy is read again from the origin; a dirty
 * block exists only on the SSD, and so does a block of a failed cache.
 */
static int hit_failed(struct ssdcache *sc, struct bio *bio, struct ssdc_bio *pb,
		      blk_status_t *error)
{
	unsigned int dirty = hit_dirty(sc, pb);

	if (!READ_ONCE(sc->failed) && !dirty) {
		*error = BLK_STS_OK;
		return retry_from_origin(sc, bio, pb);
	}
	ssdc_unpin_run(sc, pb->slot, pb->nblocks);
	ssdc_count_error(sc, true, false);
	if (dirty)
		DMERR_LIMIT("%s: read of dirty cache block %llu failed",
			    ssdcache_name(sc), pb->slot + dirty - 1);
	else
		DMERR_LIMIT("%s: read of cache block %llu failed, and the cache has failed",
			    ssdcache_name(sc), pb->slot);
	return DM_ENDIO_DONE;
}

int ssdc_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct ssdcache *sc = ti->private;
	struct ssdc_bio *pb = ssdc_pb(bio);

	/* Counted before the slot changes: see ssdc_flush_origin() in meta.c. */
	if (pb->origin_write)
		ssdc_origin_written(sc);

	switch (pb->kind) {
	case SSDC_BIO_HIT_READ:
		if (unlikely(*error))
			return hit_failed(sc, bio, pb, error);
		ssdc_unpin_run(sc, pb->slot, pb->nblocks);
		ssdc_account_latency(sc, SSDC_LAT_SSD, pb->start_ns);
		break;
	case SSDC_BIO_MISS_READ:
		origin_done(sc, bio, pb, *error);
		if (!*error && pb->fills)
			queue_fills(sc, bio, pb);
		break;
	case SSDC_BIO_WRITE:
		origin_done(sc, bio, pb, *error);
		write_end(sc, pb, !*error);
		break;
	case SSDC_BIO_WB_REMAP:
		/* A write to its slot alone: no origin half, no copy. */
		wb_slot_done(sc, pb, *error, true);
		break;
	case SSDC_BIO_WB_WRITE:
		write_end(sc, pb, !*error);
		break;
	case SSDC_BIO_SSD_FLUSH:
		/*
		 * The caller sees the error. The next commit that syncs
		 * flushes the SSD again, and fails the cache if that fails.
		 */
		if (*error) {
			ssdc_count_error(sc, true, true);
			ssdc_meta_unsynced(sc);
		}
		break;
	default:
		origin_done(sc, bio, pb, *error);
		break;
	}
	return DM_ENDIO_DONE;
}

int ssdc_io_init(struct ssdcache *sc)
{
	int r;

	sc->ra_kb = SSDC_READAHEAD_KB;
	INIT_WORK(&sc->fill_work, fill_fn);
	spin_lock_init(&sc->fill_lock);
	INIT_LIST_HEAD(&sc->fills);
	bio_list_init(&sc->retries);
	bio_list_init(&sc->requeued);
	INIT_DELAYED_WORK(&sc->requeue_work, requeue_fn);
	atomic_set(&sc->fills_inflight, 0);
	atomic_set(&sc->long_writes, 0);
	atomic_set(&sc->long_wgen, 0);
	init_waitqueue_head(&sc->fills_wait);
	r = bioset_init(&sc->bs, BIO_POOL_SIZE, offsetof(struct ssdc_clone, bio),
			BIOSET_NEED_BVECS);
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
	flush_delayed_work(&sc->requeue_work);
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
