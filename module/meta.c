// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the block map on the SSD, and its commits.
 *
 * The map is rewritten page by page, never trusted without its checksum.
 * Changes to slots mark their page dirty; a commit writes the dirty pages.
 * Two rules keep the cache from ever serving data that differs from the
 * origin after a crash (Documentation/ssdcache.rst, "Crash behaviour"):
 *
 *  - A VALID entry reaches the SSD only after its data is durable on the
 *    SSD and on the origin: a commit that carries new VALID entries first
 *    flushes the origin, then the cache device, then writes the pages.
 *  - An origin block whose entry on the SSD is VALID is written only after
 *    a commit made that entry invalid: such writes wait in sc->deferred,
 *    and a slot is reused only after its invalid entry is durable.
 *
 * Commits run on the instance's ordered workqueue: at once when a write
 * waits, soon after evictions, and every SSDC_COMMIT_INTERVAL_MS while
 * new VALID entries wait.
 */
#include <linux/bitmap.h>
#include <linux/blkdev.h>
#include <linux/crc32c.h>
#include <linux/slab.h>

#include "ssdcache.h"

#define SSDC_MAP_BATCH	32	/* map pages per bio */

static sector_t page_sector(struct ssdcache *sc, u64 pg)
{
	return sc->map_start + pg * SSDCACHE_META_BLOCK_SECTORS;
}

/* Checks a map page's header; false if torn, stale or misplaced. */
static bool page_ok(struct ssdcache *sc, u64 pg, struct ssdcache_disk_map_hdr *hdr)
{
	return le32_to_cpu(hdr->magic) == SSDCACHE_MAP_MAGIC &&
	       le64_to_cpu(hdr->page) == pg &&
	       !memcmp(hdr->cache_uuid, sc->sb.cache_uuid, SSDCACHE_UUID_LEN) &&
	       le32_to_cpu(hdr->csum) ==
			ssdc_csum(hdr, SSDCACHE_META_BLOCK_SIZE, &hdr->csum);
}

/*
 * May the VALID slot word @v go to the SSD in this commit? Yes if its
 * data was already synced, or if it became VALID before the origin flush
 * of this commit (its epoch parity is the flushed epoch's). @flushed is
 * the epoch this commit flushed, or ULONG_MAX if it flushed none.
 */
static bool valid_writable(u64 v, unsigned long flushed)
{
	if (!(v & SSDC_SF_UNSYNCED))
		return true;
	return flushed != ULONG_MAX && !!(v & SSDC_SF_PARITY) == (flushed & 1);
}

/*
 * Builds map page @pg from the slots (all invalid if @empty). EVICTING
 * slots written here are marked PENDING: once this commit is durable,
 * they become WRITTEN and may be reused. VALID slots that may not be written yet
 * leave the page dirty for the next commit.
 */
static void build_page(struct ssdcache *sc, u64 pg, void *buf, bool empty,
		       unsigned long flushed)
{
	struct ssdcache_disk_map_hdr *hdr = buf;
	__le64 *entries = buf + sizeof(*hdr);
	u32 set = pg * SSDCACHE_SETS_PER_PAGE, end;
	unsigned long flags;
	unsigned int i = 0;
	bool again = false;
	u64 s;

	memset(buf, 0, SSDCACHE_META_BLOCK_SIZE);
	hdr->magic = cpu_to_le32(SSDCACHE_MAP_MAGIC);
	hdr->page = cpu_to_le64(pg);
	hdr->seq = cpu_to_le64(sc->commit_seq);
	memcpy(hdr->cache_uuid, sc->sb.cache_uuid, SSDCACHE_UUID_LEN);
	end = min_t(u32, set + SSDCACHE_SETS_PER_PAGE, sc->nr_sets);
	for (; !empty && set < end; set++) {
		spin_lock_irqsave(&sc->sets[set].lock, flags);
		for (s = (u64)set * SSDCACHE_ASSOC;
		     s < (u64)(set + 1) * SSDCACHE_ASSOC; s++, i++) {
			u64 v = sc->slots[s];

			switch (ssdc_slot_state(v)) {
			case SSDC_SLOT_VALID:
				if (!valid_writable(v, flushed)) {
					again = true;
					break;
				}
				sc->slots[s] = v & ~(SSDC_SF_UNSYNCED | SSDC_SF_PARITY);
				entries[i] = cpu_to_le64(ssdc_slot_oblock(v) |
							 SSDCACHE_MAP_VALID);
				break;
			case SSDC_SLOT_EVICTING:
				if (!(v & SSDC_SF_WRITTEN))
					sc->slots[s] = v | SSDC_SF_PENDING;
				break;
			default:
				break;
			}
		}
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	}
	if (again)
		set_bit(pg, sc->dirty_pages);
	hdr->csum = cpu_to_le32(ssdc_csum(buf, SSDCACHE_META_BLOCK_SIZE, &hdr->csum));
}

/* Reads or writes @n consecutive map pages from @first via commit_buf. */
static int rw_pages(struct ssdcache *sc, u64 first, unsigned int n, blk_opf_t opf)
{
	struct bio *bio;
	unsigned int i;
	int r;

	bio = bio_alloc(sc->cache->bdev, n, opf, GFP_NOIO);
	bio->bi_iter.bi_sector = page_sector(sc, first);
	for (i = 0; i < n; i++)
		__bio_add_page(bio, sc->commit_buf[i], SSDCACHE_META_BLOCK_SIZE, 0);
	r = submit_bio_wait(bio);
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
			build_page(sc, pg + i, page_address(sc->commit_buf[i]), true,
				   ULONG_MAX);
		r = rw_pages(sc, pg, n, REQ_OP_WRITE);
		if (r)
			return r;
		pg += n;
	}
	return blkdev_issue_flush(sc->cache->bdev);
}

/* Loads one page's entries into the slots; error string on corruption. */
static const char *load_page(struct ssdcache *sc, u64 pg, void *buf, u64 *valid)
{
	__le64 *entries = buf + sizeof(struct ssdcache_disk_map_hdr);
	u64 first = pg * SSDCACHE_MAP_ENTRIES_PER_PAGE;
	unsigned int i;

	for (i = 0; i < SSDCACHE_MAP_ENTRIES_PER_PAGE; i++) {
		u64 e = le64_to_cpu(entries[i]), slot = first + i, oblock;
		u32 set;

		if (!e)
			continue;
		if (slot >= sc->nr_blocks)
			return "Block map is corrupted: entry past the last cache block";
		if (e & SSDCACHE_MAP_DIRTY)
			return "Block map has dirty entries: write-back caches need a newer module";
		if (!(e & SSDCACHE_MAP_VALID) ||
		    (e & ~(SSDCACHE_MAP_VALID | SSDCACHE_MAP_OBLOCK_MASK)))
			return "Block map is corrupted: unknown entry flags";
		oblock = e & SSDCACHE_MAP_OBLOCK_MASK;
		if (oblock >= sc->origin_blocks)
			return "Block map is corrupted: origin block out of range";
		set = ssdc_slot_set(slot);
		if (ssdc_set_of(sc, oblock) != set)
			return "Block map is corrupted: block in the wrong set";
		if (ssdc_lookup(sc, set, oblock) >= 0)
			return "Block map is corrupted: origin block mapped twice";
		sc->slots[slot] = ssdc_slot_make(oblock, SSDC_SLOT_VALID);
		(*valid)++;
	}
	return NULL;
}

int ssdc_meta_load(struct ssdcache *sc, char **error)
{
	u64 pg = 0, valid = 0, torn = 0;
	int r;

	r = ssdc_meta_init(sc);
	if (r) {
		*error = "Cannot allocate metadata buffers";
		return r;
	}
	while (pg < sc->map_pages) {
		unsigned int n = min_t(u64, SSDC_MAP_BATCH, sc->map_pages - pg), i;

		r = rw_pages(sc, pg, n, REQ_OP_READ);
		if (r) {
			*error = "Cannot read the block map";
			return r;
		}
		for (i = 0; i < n; i++) {
			void *buf = page_address(sc->commit_buf[i]);
			const char *bad;

			if (!page_ok(sc, pg + i, buf)) {
				/* Torn by a crash (or rotten): its blocks are lost. */
				torn++;
				set_bit(pg + i, sc->dirty_pages);
				continue;
			}
			bad = load_page(sc, pg + i, buf, &valid);
			if (bad) {
				*error = (char *)bad;
				return -EINVAL;
			}
		}
		pg += n;
	}
	atomic64_set(&sc->used, valid);
	if (torn)
		DMWARN("%s: %llu unreadable block map pages: their blocks are dropped",
		       ssdcache_name(sc), torn);
	DMINFO("%s: loaded %llu cached blocks of %llu", ssdcache_name(sc),
	       valid, sc->nr_blocks);
	return 0;
}

/* Marks @slot's map page for the next commit. Any context. */
void ssdc_meta_dirty(struct ssdcache *sc, u64 slot, bool new_valid)
{
	set_bit(ssdc_slot_page(slot), sc->dirty_pages);
	if (new_valid) {
		WRITE_ONCE(sc->valid_pending, true);
		queue_delayed_work(sc->wq, &sc->commit_work,
				   msecs_to_jiffies(SSDC_COMMIT_INTERVAL_MS));
	}
}

/* Asks for a commit within @delay_ms (0: now). Any context. */
void ssdc_meta_kick(struct ssdcache *sc, unsigned long delay_ms)
{
	if (!delay_ms)
		mod_delayed_work(sc->wq, &sc->commit_work, 0);
	else
		queue_delayed_work(sc->wq, &sc->commit_work, msecs_to_jiffies(delay_ms));
}

/* Parks a write until the next commit is durable, then issues it. */
void ssdc_meta_defer(struct ssdcache *sc, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->defer_lock, flags);
	bio_list_add(&sc->deferred, bio);
	spin_unlock_irqrestore(&sc->defer_lock, flags);
	ssdc_meta_kick(sc, 0);
}

/*
 * The commit that wrote page @pg is durable: its PENDING slots are now
 * WRITTEN, and free unless a read still uses them.
 */
static void free_written(struct ssdcache *sc, u64 pg)
{
	u32 set = pg * SSDCACHE_SETS_PER_PAGE;
	u32 end = min_t(u32, set + SSDCACHE_SETS_PER_PAGE, sc->nr_sets);
	unsigned long flags;
	u64 s;

	for (; set < end; set++) {
		spin_lock_irqsave(&sc->sets[set].lock, flags);
		for (s = (u64)set * SSDCACHE_ASSOC;
		     s < (u64)(set + 1) * SSDCACHE_ASSOC; s++) {
			u64 v = sc->slots[s];

			if (ssdc_slot_state(v) != SSDC_SLOT_EVICTING ||
			    !(v & SSDC_SF_PENDING))
				continue;
			if (ssdc_slot_readers(v))
				sc->slots[s] = (v & ~SSDC_SF_PENDING) | SSDC_SF_WRITTEN;
			else
				sc->slots[s] = ssdc_slot_make(0, SSDC_SLOT_FREE);
		}
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	}
}

/* Writes every dirty map page, in runs of consecutive pages. */
static int write_dirty_pages(struct ssdcache *sc, unsigned long *written,
			     unsigned long flushed)
{
	u64 pg = 0, run_start = 0;
	unsigned int n = 0;
	int r;

	for (;;) {
		pg = find_next_bit(sc->dirty_pages, sc->map_pages, pg);
		if (n && (pg != run_start + n || n == SSDC_MAP_BATCH || pg >= sc->map_pages)) {
			r = rw_pages(sc, run_start, n, REQ_OP_WRITE);
			if (r)
				return r;
			n = 0;
		}
		if (pg >= sc->map_pages)
			return 0;
		if (!test_and_clear_bit(pg, sc->dirty_pages))
			continue;
		if (!n)
			run_start = pg;
		build_page(sc, pg, page_address(sc->commit_buf[n++]), false, flushed);
		set_bit(pg, written);
		pg++;
	}
}

int ssdc_meta_commit(struct ssdcache *sc)
{
	unsigned long flushed = ULONG_MAX;
	struct bio_list waiters;
	unsigned long *written = NULL;
	u64 pg;
	int r = 0;

	mutex_lock(&sc->commit_lock);
	spin_lock_irq(&sc->defer_lock);
	waiters = sc->deferred;
	bio_list_init(&sc->deferred);
	spin_unlock_irq(&sc->defer_lock);

	if (READ_ONCE(sc->failed))
		goto out;
	written = bitmap_zalloc(sc->map_pages, GFP_NOIO);
	if (!written) {
		r = -ENOMEM;
		goto fail;
	}
	/*
	 * New VALID entries: their data must be durable on the origin before
	 * they are written. Slots that turn VALID from here on get the new
	 * epoch's parity and wait for the next commit's flush.
	 */
	if (xchg(&sc->valid_pending, false)) {
		flushed = sc->sync_epoch;
		WRITE_ONCE(sc->sync_epoch, flushed + 1);
		/* The new epoch is visible before the flush is issued. */
		smp_mb();
		r = blkdev_issue_flush(sc->origin->bdev);
		if (r)
			goto fail;
	}
	/* ... and on the SSD (fill and write-through data writes). */
	r = blkdev_issue_flush(sc->cache->bdev);
	if (r)
		goto fail;
	sc->commit_seq++;
	r = write_dirty_pages(sc, written, flushed);
	if (!r)
		r = blkdev_issue_flush(sc->cache->bdev);
	if (r)
		goto fail;
	for_each_set_bit(pg, written, sc->map_pages)
		free_written(sc, pg);
	ssdc_count(sc, SSDC_C_COMMITS);
	goto out;
fail:
	/*
	 * The map on the SSD may now be stale. Stop caching: every I/O goes
	 * to the origin, which always holds every acknowledged write.
	 */
	WRITE_ONCE(sc->failed, true);
	DMERR("%s: block map commit failed (%d): cache disabled, I/O goes to the origin",
	      ssdcache_name(sc), r);
	if (ssdc_wipe_sbs(sc)) {
		DMERR("%s: cannot wipe the superblocks: writes to cached blocks now fail",
		      ssdcache_name(sc));
	} else {
		WRITE_ONCE(sc->sb_wiped, true);
		DMERR("%s: superblocks wiped: the cache device must be formatted again",
		      ssdcache_name(sc));
	}
out:
	mutex_unlock(&sc->commit_lock);
	bitmap_free(written);
	if (!bio_list_empty(&waiters)) {
		struct bio *bio;

		while ((bio = bio_list_pop(&waiters)))
			ssdc_issue_write(sc, bio);
	}
	return r;
}

static void commit_fn(struct work_struct *work)
{
	struct ssdcache *sc = container_of(to_delayed_work(work), struct ssdcache,
					   commit_work);

	ssdc_meta_commit(sc);
	if (READ_ONCE(sc->valid_pending))
		ssdc_meta_kick(sc, SSDC_COMMIT_INTERVAL_MS);
}

int ssdc_meta_init(struct ssdcache *sc)
{
	unsigned int i;

	if (sc->wq)
		return 0;
	mutex_init(&sc->commit_lock);
	spin_lock_init(&sc->defer_lock);
	bio_list_init(&sc->deferred);
	INIT_DELAYED_WORK(&sc->commit_work, commit_fn);
	sc->commit_buf = kcalloc(SSDC_MAP_BATCH, sizeof(*sc->commit_buf), GFP_KERNEL);
	if (!sc->commit_buf)
		return -ENOMEM;
	for (i = 0; i < SSDC_MAP_BATCH; i++) {
		sc->commit_buf[i] = alloc_page(GFP_KERNEL);
		if (!sc->commit_buf[i])
			goto fail;
	}
	sc->wq = alloc_ordered_workqueue("ssdcache-%s", WQ_MEM_RECLAIM,
					 ssdcache_name(sc));
	if (!sc->wq)
		goto fail;
	return 0;
fail:
	ssdc_meta_exit(sc);
	return -ENOMEM;
}

void ssdc_meta_exit(struct ssdcache *sc)
{
	unsigned int i;

	if (sc->wq) {
		cancel_delayed_work_sync(&sc->commit_work);
		destroy_workqueue(sc->wq);
		sc->wq = NULL;
	}
	if (sc->commit_buf) {
		for (i = 0; i < SSDC_MAP_BATCH; i++)
			if (sc->commit_buf[i])
				__free_page(sc->commit_buf[i]);
		kfree(sc->commit_buf);
		sc->commit_buf = NULL;
	}
}
