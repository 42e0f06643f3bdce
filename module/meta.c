// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the block map and its commits.
 *
 * What a map entry says changes in RAM first (cache.c flags the slot
 * CHANGED); a commit writes the changes as records to the journal
 * (journal.c); a checkpoint rewrites the map pages that changed, so the
 * journal can be reused. An entry goes to the SSD only when it is true
 * after any crash (Documentation/ssdcache.rst, "Crash behaviour"):
 *
 *  - A VALID entry reaches the journal only after its data is durable on
 *    the SSD and, for a clean entry, on the origin: such slots are
 *    UNSYNCED, tagged with the sync epoch in which they changed; a commit
 *    bumps the epoch and flushes both devices (the origin only if it was
 *    written since its last flush), so the slots of the epoch before are
 *    then durable, and writes its records with REQ_FUA.
 *  - A dirty block rewritten in place keeps its entry: it is UNSYNCED
 *    (data not durable) but not CHANGED, and costs no record; the commit
 *    that flushes its epoch clears the flag.
 *  - An origin block whose entry on the SSD is VALID is written to the
 *    origin only after a commit made that entry invalid: such writes wait
 *    in sc->deferred, and a slot is reused only after its invalid entry
 *    is durable.
 *  - Within a set, a commit journals invalid entries before valid ones,
 *    so no prefix of the journal maps an origin block twice.
 *
 * Flushes and FUA writes wait in sc->waiters and complete after the next
 * commit (an empty flush goes to the SSD alone when no change of a dirty
 * entry waits: see durable_gen); deferred writes go from there to
 * sc->released, which issue_fn() submits. Commits run on the instance's
 * ordered workqueue: at
 * once when a flush or FUA write waits or SSDC_COMMIT_RECORDS changes
 * wait, when a write is deferred while at most SSDC_RELEASED_LOW released
 * ones are left to submit, soon after evictions, and every
 * SSDC_COMMIT_INTERVAL_MS while UNSYNCED slots wait. Only a commit that
 * bios wait for syncs at once; others sync at most every
 * SSDC_COMMIT_INTERVAL_MS (sync_due()).
 */
#include <linux/bitmap.h>
#include <linux/blkdev.h>
#include <linux/crc32c.h>
#include <linux/slab.h>

#include "ssdcache.h"

sector_t ssdc_copy_sector(struct ssdcache *sc, u64 pg, unsigned int copy)
{
	return sc->map_start + (copy * sc->map_pages + pg) * SSDCACHE_META_BLOCK_SECTORS;
}

/* Checks a map page's header; false if torn, stale or misplaced. */
static bool page_ok(struct ssdcache *sc, u64 pg, struct ssdcache_disk_map_hdr *hdr)
{
	return ssdcache_map_page_ok(hdr, pg, sc->sb.cache_uuid,
				    ssdc_csum(hdr, SSDCACHE_META_BLOCK_SIZE, &hdr->csum));
}

/*
 * Which of page @pg's two copies @c0 and @c1 a load uses: the sound one
 * with the higher checkpoint sequence; -1 if neither is sound.
 */
int ssdc_pick_copy(struct ssdcache *sc, u64 pg, void *c0, void *c1)
{
	struct ssdcache_disk_map_hdr *h0 = c0, *h1 = c1;
	bool ok0 = page_ok(sc, pg, h0), ok1 = page_ok(sc, pg, h1);

	if (!ok0 && !ok1)
		return -1;
	return ok1 && (!ok0 || le64_to_cpu(h1->seq) > le64_to_cpu(h0->seq));
}

/* Reads or writes @n metadata blocks at @sector from commit_buf[first..]. */
int ssdc_rw_bufs(struct ssdcache *sc, sector_t sector, unsigned int first,
		 unsigned int n, blk_opf_t opf)
{
	struct bio *bio;
	unsigned int i;
	int r;

	bio = bio_alloc(sc->cache->bdev, n, opf, GFP_NOIO);
	bio->bi_iter.bi_sector = sector;
	for (i = 0; i < n; i++)
		__bio_add_page(bio, sc->commit_buf[first + i], SSDCACHE_META_BLOCK_SIZE, 0);
	ssdc_count_bio(sc, true, bio);
	r = submit_bio_wait(bio);
	if (r)
		ssdc_count_error(sc, true, op_is_write(opf));
	bio_put(bio);
	return r;
}

int ssdc_meta_format(struct ssdcache *sc)
{
	u64 pg = 0;
	int r;

	r = ssdc_meta_init(sc);
	if (r)
		return r;
	while (pg < sc->map_pages) {
		unsigned int n = min_t(u64, SSDC_MAP_BATCH, sc->map_pages - pg), i;

		for (i = 0; i < n; i++)
			ssdc_build_page(sc, pg + i, page_address(sc->commit_buf[i]), 0, true);
		r = ssdc_rw_bufs(sc, ssdc_copy_sector(sc, pg, 0), 0, n, REQ_OP_WRITE);
		if (r)
			return r;
		pg += n;
	}
	return blkdev_issue_flush(sc->cache->bdev);
}

/* Is @e a sound map entry for slot @slot? NULL if so, else why not. */
const char *ssdc_check_entry(struct ssdcache *sc, u64 slot, u64 e)
{
	return ssdcache_entry_problem(slot, e, sc->nr_blocks, sc->origin_blocks,
				      sc->set_shift);
}

/* Sets slot @slot from a checked map entry @e (load and replay only). */
void ssdc_set_entry(struct ssdcache *sc, u64 slot, u64 e)
{
	u64 old = sc->slots[slot], v = 0;

	if (ssdc_slot_state(old) == SSDC_SLOT_VALID)
		atomic64_dec(&sc->used);
	if (ssdc_slot_dirty(old))
		atomic64_dec(&sc->dirty);
	if (e) {
		v = ssdc_slot_make(e & SSDCACHE_MAP_OBLOCK_MASK, SSDC_SLOT_VALID);
		atomic64_inc(&sc->used);
		if (e & SSDCACHE_MAP_DIRTY) {
			v |= SSDC_SF_DIRTY;
			ssdc_note_dirty_set(sc, slot);
			atomic64_inc(&sc->dirty);
		}
	}
	ssdc_slot_write(sc, slot, v);
}

/* Loads one page's entries into the slots; error string on corruption. */
static const char *load_page(struct ssdcache *sc, u64 pg, void *buf)
{
	__le64 *entries = buf + sizeof(struct ssdcache_disk_map_hdr);
	u64 first = pg * SSDCACHE_MAP_ENTRIES_PER_PAGE;
	unsigned int i;

	for (i = 0; i < SSDCACHE_MAP_ENTRIES_PER_PAGE; i++) {
		u64 e = le64_to_cpu(entries[i]);
		const char *bad;

		/* The last page's tail is padding: zero, and no slot of ours. */
		if (first + i >= sc->nr_blocks && !e)
			continue;
		bad = ssdc_check_entry(sc, first + i, e);
		if (bad)
			return bad;
		ssdc_set_entry(sc, first + i, e);
	}
	return NULL;
}

/*
 * No origin block may be mapped twice in a set. Two slots of one block
 * have one tag: only a VALID slot whose tag an earlier one had is looked
 * up, and it is a second copy if the lookup (the first VALID slot of its
 * block) is not itself. About six such slots in a full set of 56 (the
 * pairs among 56 tags of 256 values), where comparing every pair took
 * 1,540 compares: with millions of sets, seconds at every load.
 */
static bool set_has_duplicates(struct ssdcache *sc, u32 set)
{
	DECLARE_BITMAP(seen, U8_MAX + 1);
	u64 first = (u64)set * SSDCACHE_ASSOC, s;

	bitmap_zero(seen, U8_MAX + 1);
	for (s = first; s < first + SSDCACHE_ASSOC; s++) {
		u64 v = sc->slots[s];

		if (ssdc_slot_state(v) != SSDC_SLOT_VALID)
			continue;
		if (__test_and_set_bit(sc->tags[s], seen) &&
		    ssdc_lookup(sc, set, ssdc_slot_oblock(v)) != (long)s)
			return true;
	}
	return false;
}

/* Loads the newer valid copy of pages [pg, pg + n) (n <= SSDC_MAP_BATCH / 2). */
static int load_pages(struct ssdcache *sc, u64 pg, unsigned int n, u64 *torn,
		      char **error)
{
	unsigned int i;
	int r;

	r = ssdc_rw_bufs(sc, ssdc_copy_sector(sc, pg, 0), 0, n, REQ_OP_READ);
	if (!r)
		r = ssdc_rw_bufs(sc, ssdc_copy_sector(sc, pg, 1), SSDC_MAP_BATCH / 2, n,
				 REQ_OP_READ);
	if (r) {
		*error = "Cannot read the block map";
		return r;
	}
	for (i = 0; i < n; i++) {
		void *c0 = page_address(sc->commit_buf[i]);
		void *c1 = page_address(sc->commit_buf[SSDC_MAP_BATCH / 2 + i]);
		int copy = ssdc_pick_copy(sc, pg + i, c0, c1);
		struct ssdcache_disk_map_hdr *hdr = copy ? c1 : c0;
		const char *bad;

		if (copy < 0) {
			(*torn)++;
			set_bit(pg + i, sc->ckpt_pages);
			continue;
		}
		sc->ckpt_seq = max_t(u64, sc->ckpt_seq, le64_to_cpu(hdr->seq));
		if (copy)
			set_bit(pg + i, sc->map_cur);
		bad = load_page(sc, pg + i, hdr);
		if (bad) {
			DMERR("%s: block map page %llu: %s", ssdcache_name(sc), pg + i, bad);
			*error = "Block map is corrupted";
			return -EINVAL;
		}
	}
	return 0;
}

int ssdc_meta_load(struct ssdcache *sc, char **error)
{
	u64 pg = 0, torn = 0;
	u32 set;
	int r;

	r = ssdc_meta_init(sc);
	if (r) {
		*error = "Cannot allocate metadata buffers";
		return r;
	}
	while (pg < sc->map_pages) {
		unsigned int n = min_t(u64, SSDC_MAP_BATCH / 2, sc->map_pages - pg);

		r = load_pages(sc, pg, n, &torn, error);
		if (r)
			return r;
		pg += n;
	}
	if (torn) {
		/* Both copies bad: not a crash (a torn write leaves one). */
		DMERR("%s: %llu block map pages have no valid copy", ssdcache_name(sc), torn);
		*error = "Block map is corrupted: pages with no valid copy";
		return -EINVAL;
	}
	r = ssdc_journal_replay(sc, error);
	if (r)
		return r;
	for (set = 0; set < sc->nr_sets; set++) {
		if (!(set % 4096))
			cond_resched();
		if (set_has_duplicates(sc, set)) {
			DMERR("%s: set %u maps an origin block twice", ssdcache_name(sc), set);
			*error = "Block map is corrupted: origin block mapped twice";
			return -EINVAL;
		}
	}
	/* Fold the journal into the map and start it afresh. */
	r = ssdc_checkpoint(sc);
	if (r) {
		*error = "Cannot write the block map after recovery";
		return r;
	}
	DMINFO("%s: loaded %llu cached blocks of %llu, %llu dirty",
	       ssdcache_name(sc), (u64)atomic64_read(&sc->used), sc->nr_blocks,
	       (u64)atomic64_read(&sc->dirty));
	return 0;
}

/* Slots turned UNSYNCED: a commit must sync them soon. Any context. */
void ssdc_meta_unsynced(struct ssdcache *sc)
{
	if (!READ_ONCE(sc->valid_pending))
		WRITE_ONCE(sc->valid_pending, true);
	queue_delayed_work(sc->wq, &sc->commit_work,
			   msecs_to_jiffies(SSDC_COMMIT_INTERVAL_MS));
}

/*
 * Asks for a commit within @delay_ms (0: now). Any context. The delay
 * runs on a timer of its own: commit_work, queued already for the
 * periodic sync (up to SSDC_COMMIT_INTERVAL_MS away while fills come in),
 * would not be brought forward by queueing it again, and an evicted
 * block's slot would wait that long to be free.
 */
void ssdc_meta_kick(struct ssdcache *sc, unsigned long delay_ms)
{
	if (!delay_ms)
		mod_delayed_work(sc->wq, &sc->commit_work, 0);
	else
		queue_delayed_work(sc->wq, &sc->soon_work, msecs_to_jiffies(delay_ms));
}

static void soon_fn(struct work_struct *work)
{
	struct ssdcache *sc = container_of(to_delayed_work(work), struct ssdcache,
					   soon_work);

	ssdc_meta_kick(sc, 0);
}

/*
 * Queues @bio on @list for the next commit, and asks for it now unless
 * @list is the deferred writes' and enough released writes are still to
 * be issued: the commit then waits until issue_fn() is down to
 * SSDC_RELEASED_LOW of them. A write that waits for one goes to the
 * origin behind those anyway, and one commit (one journal block) serves
 * all that came meanwhile: on an origin that takes one request at a
 * time, write-through writes to cached blocks otherwise cost a commit
 * each.
 */
static void park(struct ssdcache *sc, struct bio_list *list, struct bio *bio)
{
	unsigned long flags;
	bool now;

	spin_lock_irqsave(&sc->defer_lock, flags);
	bio_list_add(list, bio);
	now = list != &sc->deferred || sc->nr_released <= SSDC_RELEASED_LOW;
	spin_unlock_irqrestore(&sc->defer_lock, flags);
	if (now)
		ssdc_meta_kick(sc, 0);
}

/* Parks a write until the next commit is durable, then issues it. */
void ssdc_meta_defer(struct ssdcache *sc, struct bio *bio)
{
	park(sc, &sc->deferred, bio);
}

/* Completes @bio (a flush, or a FUA write that is done) after the next commit. */
void ssdc_meta_wait(struct ssdcache *sc, struct bio *bio)
{
	park(sc, &sc->waiters, bio);
}

/*
 * The commit that made slots of @set PENDING is durable: they are now
 * WRITTEN, and free unless an I/O still pins them.
 */
static void free_written(struct ssdcache *sc, u32 set)
{
	struct ssdc_set *st = &sc->sets[set];
	u64 s, end = (u64)(set + 1) * SSDCACHE_ASSOC;
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	for (s = (u64)set * SSDCACHE_ASSOC; ssdc_set_evicting(st) && s < end; s++) {
		u64 v = sc->slots[s];

		if (ssdc_slot_state(v) != SSDC_SLOT_EVICTING || !(v & SSDC_SF_PENDING))
			continue;
		ssdc_slot_write(sc, s, (v & ~SSDC_SF_PENDING) | SSDC_SF_WRITTEN);
		/* WRITTEN before the pins are read: pairs with ssdc_unpin(). */
		smp_mb();
		ssdc_free_unpinned_locked(sc, s);
	}
	spin_unlock_irqrestore(&st->lock, flags);
}

/* Frees what the durable commit made PENDING, set by set. Under commit_lock. */
static void free_pending(struct ssdcache *sc)
{
	u32 set;

	for_each_set_bit(set, sc->pending_sets, sc->nr_sets) {
		clear_bit(set, sc->pending_sets);
		free_written(sc, set);
	}
}

/* Records gathered for the journal, in commit_buf. */
struct ssdc_jbatch {
	unsigned int blk;	/* full blocks */
	unsigned int nrec;	/* records in block blk */
	unsigned long flushed;	/* the epoch this commit flushed, or ULONG_MAX */
	bool kept_dirty;	/* a dirty slot's record waits for a later commit */
};

static unsigned int batch_room(struct ssdc_jbatch *jb)
{
	return (SSDC_MAP_BATCH - jb->blk) * SSDCACHE_JOURNAL_RECORDS - jb->nrec;
}

/*
 * Adds a record of @slot's entry @e, and marks the slot's map page for
 * the next checkpoint, which must write what the record says before it
 * moves the journal's tail past it. The change that made the record
 * marked the page too, but a checkpoint may have come between the two:
 * it wrote the entry as it was durable then (a slot still NEW is
 * invalid there) and cleared the mark. Caller holds commit_lock, as every
 * checkpoint does.
 */
static void add_record(struct ssdcache *sc, struct ssdc_jbatch *jb, u64 slot, u64 e)
{
	struct ssdcache_disk_jrec *rec = page_address(sc->commit_buf[jb->blk]) +
					 sizeof(struct ssdcache_disk_jhdr);
	ssdc_mark(ssdc_slot_page(slot), sc->ckpt_pages);
	rec[jb->nrec].block = cpu_to_le64(slot);
	rec[jb->nrec].entry = cpu_to_le64(e);
	if (++jb->nrec == SSDCACHE_JOURNAL_RECORDS) {
		jb->blk++;
		jb->nrec = 0;
	}
}

/* Writes the gathered records as one commit, after making room for it. */
static int flush_batch(struct ssdcache *sc, struct ssdc_jbatch *jb)
{
	unsigned int blocks = jb->blk + !!jb->nrec;
	int r;

	if (!blocks)
		return 0;
	r = ssdc_journal_write(sc, blocks, jb->nrec ? jb->nrec : SSDCACHE_JOURNAL_RECORDS);
	jb->blk = 0;
	jb->nrec = 0;
	return r;
}

/*
 * May the VALID slot word @v be journaled in this commit? Yes if it is
 * synced, or if it changed before this commit's flushes (its epoch parity
 * is the flushed epoch's).
 */
static bool valid_writable(u64 v, unsigned long flushed)
{
	if (!(v & SSDC_SF_UNSYNCED))
		return true;
	return flushed != ULONG_MAX && !!(v & SSDC_SF_PARITY) == (flushed & 1);
}

/*
 * Journals @set's CHANGED slots: invalid entries first, then valid ones;
 * clears UNSYNCED where this commit's flushes made the data durable.
 * Returns true if some slot must wait for a later commit. Only the slots
 * of the set's commit bits are looked at: mark_commit_slot() in cache.c
 * sets the bit of every slot that becomes CHANGED or UNSYNCED, and the
 * bits of the slots that wait stay set. A set with slots made PENDING is
 * marked for free_pending().
 */
static bool gather_set(struct ssdcache *sc, struct ssdc_jbatch *jb, u32 set)
{
	struct ssdc_set *st = &sc->sets[set];
	u64 first = (u64)set * SSDCACHE_ASSOC, marked, m, keep = 0;
	unsigned long flags;
	bool pending = false;

	spin_lock_irqsave(&st->lock, flags);
	marked = st->commit;
	for (m = marked; m; m &= m - 1) {
		u64 s = first + __ffs64(m), v = sc->slots[s];

		if (!(v & SSDC_SF_CHANGED) || ssdc_slot_state(v) == SSDC_SLOT_VALID)
			continue;
		v &= ~SSDC_SF_CHANGED;
		if (ssdc_slot_state(v) == SSDC_SLOT_EVICTING && !(v & SSDC_SF_WRITTEN)) {
			v |= SSDC_SF_PENDING;
			pending = true;
		}
		ssdc_slot_write(sc, s, v);
		add_record(sc, jb, s, 0);
	}
	for (m = marked; m; m &= m - 1) {
		u64 s = first + __ffs64(m), v = sc->slots[s];
		bool record = v & SSDC_SF_CHANGED;

		if (!(v & (SSDC_SF_CHANGED | SSDC_SF_UNSYNCED)) ||
		    ssdc_slot_state(v) != SSDC_SLOT_VALID)
			continue;
		if (!valid_writable(v, jb->flushed)) {
			keep |= m & -m;
			if (record && (v & SSDC_SF_DIRTY))
				jb->kept_dirty = true;
			continue;
		}
		v &= ~(SSDC_SF_CHANGED | SSDC_SF_UNSYNCED | SSDC_SF_NEW | SSDC_SF_PARITY);
		ssdc_slot_write(sc, s, v);
		/* Only UNSYNCED (rewritten in place): durable now, same entry. */
		if (record)
			add_record(sc, jb, s, ssdc_durable_entry(v));
	}
	st->commit = keep;
	spin_unlock_irqrestore(&st->lock, flags);
	if (pending)
		set_bit(set, sc->pending_sets);
	return keep != 0;
}

/*
 * Journals every CHANGED slot that may be, set by set: each set's bit is
 * cleared before gather_set() takes its lock (see mark_commit_slot()),
 * and set again if some of its slots wait.
 */
static int journal_changes(struct ssdcache *sc, struct ssdc_jbatch *jb)
{
	u32 set = 0;
	int r;

	for (;;) {
		set = find_next_bit(sc->commit_sets, sc->nr_sets, set);
		if (set >= sc->nr_sets)
			break;
		clear_bit(set, sc->commit_sets);
		if (batch_room(jb) < SSDCACHE_ASSOC) {
			r = flush_batch(sc, jb);
			if (r)
				return r;
		}
		/* A full journal: checkpoint while commit_buf is free. */
		if (!jb->blk && !jb->nrec && !ssdc_journal_room(sc, SSDC_MAP_BATCH)) {
			r = ssdc_checkpoint(sc);
			if (r)
				return r;
		}
		if (gather_set(sc, jb, set))
			set_bit(set, sc->commit_sets);
		set++;
	}
	return flush_batch(sc, jb);
}

/*
 * Metadata can no longer be written: stop caching. With no dirty block,
 * the superblocks are wiped so the stale map is never loaded; dirty
 * blocks keep them, so that their data can be recovered by a new load.
 */
void ssdc_meta_fail(struct ssdcache *sc, int r, const char *what)
{
	WRITE_ONCE(sc->failed, true);
	DMERR("%s: %s failed (%d): cache disabled, I/O goes to the origin",
	      ssdcache_name(sc), what, r);
	if (atomic64_read(&sc->dirty)) {
		DMERR("%s: %llu dirty blocks stay on the cache device: reload it to recover them",
		      ssdcache_name(sc), (u64)atomic64_read(&sc->dirty));
		return;
	}
	if (ssdc_wipe_sbs(sc)) {
		DMERR("%s: cannot wipe the superblocks: writes to cached blocks now fail",
		      ssdcache_name(sc));
	} else {
		WRITE_ONCE(sc->sb_wiped, true);
		DMERR("%s: superblocks wiped: the cache device must be formatted again",
		      ssdcache_name(sc));
	}
}

/*
 * The next released write, or NULL; asks for a commit when few are left
 * and writes wait for one (see park()).
 */
static struct bio *next_released(struct ssdcache *sc)
{
	struct bio *bio;
	bool kick;

	spin_lock_irq(&sc->defer_lock);
	bio = bio_list_pop(&sc->released);
	if (bio)
		sc->nr_released--;
	kick = sc->nr_released <= SSDC_RELEASED_LOW && !bio_list_empty(&sc->deferred);
	spin_unlock_irq(&sc->defer_lock);
	if (kick)
		ssdc_meta_kick(sc, 0);
	return bio;
}

/*
 * Issues the writes commits released, on a workqueue of its own: submitting
 * to an origin that takes few requests at a time blocks until earlier
 * ones complete (at a queue depth of one, 14 writes held the commit
 * worker 70 ms), and the next commit, which flushes and FUA writes wait
 * for, must not wait behind that. Unbound: woken when the origin takes
 * the next request, the worker runs on whichever CPU is free.
 *
 * A run of writes that follow one another on the origin (the blocks of
 * one large write, deferred one by one) is issued under a plug, to reach
 * the origin merged again; the plug ends where the run does. Unrelated
 * writes held in one plug reach the origin only when it is flushed: on
 * an origin that takes one request at a time, that left it idle between
 * them, and write-through writes to cached blocks ran at 0.86x the raw
 * HDD's rate (Documentation/performance.rst).
 */
static void issue_fn(struct work_struct *work)
{
	struct ssdcache *sc = container_of(work, struct ssdcache, issue_work);
	struct blk_plug plug;
	sector_t next = 0;
	struct bio *bio;

	blk_start_plug(&plug);
	while ((bio = next_released(sc))) {
		if (next && bio->bi_iter.bi_sector != next) {
			blk_finish_plug(&plug);
			blk_start_plug(&plug);
		}
		next = bio_end_sector(bio);
		ssdc_issue_write(sc, bio);
	}
	blk_finish_plug(&plug);
}

/*
 * Completes the bios that waited for a commit and hands the writes that
 * waited for one to issue_fn().
 */
static void complete_waiters(struct ssdcache *sc, struct bio_list *waiters,
			     struct bio_list *writes, blk_status_t status)
{
	struct bio *bio;

	while ((bio = bio_list_pop(waiters))) {
		if (status)
			bio->bi_status = status;
		bio_endio(bio);
	}
	if (bio_list_empty(writes))
		return;
	spin_lock_irq(&sc->defer_lock);
	sc->nr_released += bio_list_size(writes);
	bio_list_merge(&sc->released, writes);
	spin_unlock_irq(&sc->defer_lock);
	queue_work(sc->issue_wq, &sc->issue_work);
}

/*
 * Flushes the origin, unless no write to it completed since its last
 * flush: a database's fsync in write-back mode then costs no origin
 * flush. Every origin write bumps origin_writes with a fully ordered
 * atomic before anything depends on its completion, so a write whose
 * slot is tagged with the epoch before a commit's bump is counted (the
 * smp_mb() after the bump pairs with it). Commits and the cleaner both
 * flush this way; origin_flushed only grows.
 */
int ssdc_flush_origin(struct ssdcache *sc)
{
	s64 done = atomic64_read(&sc->origin_writes);
	s64 old = atomic64_read(&sc->origin_flushed);
	int r;

	if (done == old)
		return 0;
	r = blkdev_issue_flush(sc->origin->bdev);
	if (r)
		return r;
	while (old < done && !atomic64_try_cmpxchg(&sc->origin_flushed, &old, done))
		;
	return 0;
}

/*
 * Whether a commit syncs: flushes both devices, so that the UNSYNCED
 * slots of the epoch before can be journaled. Always for bios that wait
 * for it and when quiescing; otherwise (@lazy) at most every
 * SSDC_COMMIT_INTERVAL_MS. Commits that run only to journal the
 * invalidations that writes wait for (write-through writes to cached
 * blocks) or to keep up with changes then cost no flush of the origin,
 * and the new VALID entries they leave wait a little longer.
 */
static bool sync_due(struct ssdcache *sc, bool waiters, bool lazy)
{
	if (waiters)
		return true;
	if (!READ_ONCE(sc->valid_pending))
		return false;
	return !lazy || time_after_eq(jiffies, sc->last_sync +
				      msecs_to_jiffies(SSDC_COMMIT_INTERVAL_MS));
}

static int run_commit(struct ssdcache *sc, bool lazy)
{
	struct ssdc_jbatch jb = { .flushed = ULONG_MAX };
	struct bio_list writes, waiters;
	blk_status_t status = BLK_STS_OK;
	s64 gen;
	int r = 0;

	mutex_lock(&sc->commit_lock);
	/*
	 * Each change counted in gen marked its set before it was counted
	 * (mark_pages() in cache.c): this commit journals it, unless it
	 * keeps it for a later one.
	 */
	gen = atomic64_read(&sc->change_gen);
	/* gen before the set marks: pairs with mark_pages(). */
	smp_mb();
	spin_lock_irq(&sc->defer_lock);
	writes = sc->deferred;
	bio_list_init(&sc->deferred);
	waiters = sc->waiters;
	bio_list_init(&sc->waiters);
	spin_unlock_irq(&sc->defer_lock);

	if (READ_ONCE(sc->failed)) {
		/* Dirty data can no longer be made durable. */
		if (atomic64_read(&sc->dirty))
			status = BLK_STS_IOERR;
		else if (!bio_list_empty(&waiters) && blkdev_issue_flush(sc->origin->bdev))
			status = BLK_STS_IOERR;
		goto out;
	}
	/*
	 * UNSYNCED slots, or bios that need everything before them durable:
	 * flush. Slots that change from here on get the new epoch's parity
	 * and wait for the next commit.
	 */
	if (sync_due(sc, !bio_list_empty(&waiters), lazy)) {
		WRITE_ONCE(sc->valid_pending, false);
		sc->last_sync = jiffies;
		jb.flushed = sc->sync_epoch;
		WRITE_ONCE(sc->sync_epoch, jb.flushed + 1);
		/*
		 * The new epoch is visible before the flushes are issued and
		 * before the set marks are read (see update_unsynced()).
		 */
		smp_mb();
		r = ssdc_flush_origin(sc);
		if (r)
			goto fail;
		r = blkdev_issue_flush(sc->cache->bdev);
		if (r)
			goto fail;
	}
	atomic_set(&sc->changes, 0);
	r = journal_changes(sc, &jb);
	if (r)
		goto fail;
	/* Every change counted in gen is journaled: see mark_pages(). */
	if (!jb.kept_dirty)
		WRITE_ONCE(sc->durable_gen, gen);
	free_pending(sc);
	ssdc_count(sc, SSDC_C_COMMITS);
	if (ssdc_checkpoint_due(sc)) {
		r = ssdc_checkpoint(sc);
		if (r)
			goto fail;
	}
	goto out;
fail:
	status = BLK_STS_IOERR;
	ssdc_meta_fail(sc, r, "metadata commit");
out:
	mutex_unlock(&sc->commit_lock);
	complete_waiters(sc, &waiters, &writes, status);
	return r;
}

/* A commit that syncs whatever waits: see sync_due(). */
int ssdc_meta_commit(struct ssdcache *sc)
{
	return run_commit(sc, false);
}

static void commit_fn(struct work_struct *work)
{
	struct ssdcache *sc = container_of(to_delayed_work(work), struct ssdcache,
					   commit_work);

	run_commit(sc, true);
	if (READ_ONCE(sc->valid_pending))
		ssdc_meta_unsynced(sc);
}

/* An array of @n pages; NULL if any allocation fails. */
struct page **ssdc_alloc_pages(unsigned int n)
{
	struct page **pages = kcalloc(n, sizeof(*pages), GFP_KERNEL);
	unsigned int i;

	for (i = 0; pages && i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i]) {
			ssdc_free_pages(pages, n);
			return NULL;
		}
	}
	return pages;
}

void ssdc_free_pages(struct page **pages, unsigned int n)
{
	unsigned int i;

	if (!pages)
		return;
	for (i = 0; i < n; i++)
		if (pages[i])
			__free_page(pages[i]);
	kfree(pages);
}

int ssdc_meta_init(struct ssdcache *sc)
{
	if (sc->wq)
		return 0;
	mutex_init(&sc->commit_lock);
	atomic64_set(&sc->origin_writes, 0);
	atomic64_set(&sc->origin_flushed, -1);	/* unknown: the first flush is real */
	sc->last_sync = jiffies;
	spin_lock_init(&sc->defer_lock);
	bio_list_init(&sc->deferred);
	bio_list_init(&sc->waiters);
	bio_list_init(&sc->released);
	sc->nr_released = 0;
	INIT_WORK(&sc->issue_work, issue_fn);
	INIT_DELAYED_WORK(&sc->commit_work, commit_fn);
	INIT_DELAYED_WORK(&sc->soon_work, soon_fn);
	sc->commit_buf = ssdc_alloc_pages(SSDC_MAP_BATCH);
	if (!sc->commit_buf)
		return -ENOMEM;
	sc->wq = alloc_ordered_workqueue("ssdcache-%s", WQ_MEM_RECLAIM,
					 ssdcache_name(sc));
	sc->issue_wq = alloc_workqueue("ssdcache-issue-%s", WQ_UNBOUND | WQ_MEM_RECLAIM,
				       1, ssdcache_name(sc));
	if (!sc->wq || !sc->issue_wq) {
		ssdc_meta_exit(sc);
		return -ENOMEM;
	}
	return 0;
}

void ssdc_meta_exit(struct ssdcache *sc)
{
	if (sc->wq) {
		/* soon_work queues commit_work: stopped first. */
		cancel_delayed_work_sync(&sc->soon_work);
		cancel_delayed_work_sync(&sc->commit_work);
		destroy_workqueue(sc->wq);
		sc->wq = NULL;
	}
	if (sc->issue_wq) {
		destroy_workqueue(sc->issue_wq);
		sc->issue_wq = NULL;
	}
	ssdc_free_pages(sc->commit_buf, SSDC_MAP_BATCH);
	sc->commit_buf = NULL;
}
