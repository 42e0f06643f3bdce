// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the cache in RAM. Sets, slots, lookup and replacement.
 *
 * The cache is set-associative: an origin block hashes to one set of
 * SSDCACHE_ASSOC slots and can live only there. RAM per cache block: the
 * u64 slot word, a u8 lookup tag and a u16 policy stamp, plus each set's
 * header shared by its SSDCACHE_ASSOC slots and a few bits per map page.
 *
 * A lookup (inline, in ssdcache.h) compares the tags of a set's slots
 * eight at a time, as one 64-bit word, and reads the slot words only
 * where a tag matches: a lookup then costs a few words' work instead of
 * SSDCACHE_ASSOC slot compares. Each set also keeps its FREE slots as
 * bits and its FREE or EVICTING ones as a count, kept by
 * ssdc_slot_write() with the tags, so that an insertion finds a free
 * slot without reading the slot words.
 *
 * Every slot change happens under its set's lock, which is taken with
 * interrupts off because bio completions also change slots. A change of
 * what the slot's map entry should say goes through ssdc_slot_update(),
 * which flags it for the next journal commit (meta.c).
 */
#include <linux/bitops.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "ssdcache.h"

/*
 * Kernel RAM that the tables below take for @sc's geometry, in bytes:
 * per block, a slot word, a tag and a stamp; per set, its header and
 * three bitmap bits; per map page, two bitmap bits.
 */
u64 ssdc_ram_bytes(const struct ssdcache *sc)
{
	return sc->nr_blocks * (sizeof(*sc->slots) + sizeof(*sc->tags) +
				sizeof(*sc->stamps) + sizeof(*sc->pins)) +
	       (u64)sc->nr_sets * sizeof(*sc->sets) +
	       3 * BITS_TO_LONGS(sc->nr_sets) * sizeof(unsigned long) +
	       2 * BITS_TO_LONGS(sc->map_pages) * sizeof(unsigned long);
}

/*
 * A zeroed table of @n entries of @size bytes. With a large cache one
 * is gigabytes (8 bytes per block: 8 GiB for a 4 TiB cache of 4 KiB
 * blocks), past the INT_MAX that kvmalloc() refuses with a warning:
 * those come from vmalloc. Neither warns when RAM runs short, nor calls
 * the OOM killer, which would kill some other program (a database) for
 * RAM that is not charged to it: the table line fails instead.
 */
void *ssdc_table_alloc(size_t n, size_t size)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_ZERO | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	size_t bytes;

	if (check_mul_overflow(n, size, &bytes))
		return NULL;
	if (bytes <= INT_MAX)
		return kvmalloc(bytes, gfp);
	return __vmalloc(bytes, gfp);
}

/*
 * Whether the tables of @sc fit in the RAM the kernel calls available
 * (MemAvailable): a table line for a cache whose map would not fit is
 * refused before anything is allocated or written, with the figures.
 */
static int check_ram(struct ssdcache *sc, char **error)
{
	u64 need = ssdc_ram_bytes(sc);
	u64 avail = (u64)si_mem_available() << PAGE_SHIFT;

	if (need <= avail)
		return 0;
	DMERR("%s: %llu blocks of %llu bytes need %llu MiB of RAM (%u each), %llu MiB available",
	      ssdcache_name(sc), sc->nr_blocks, (u64)sc->block_sectors << SECTOR_SHIFT,
	      need >> 20, ssdc_ram_per_block(sc), avail >> 20);
	*error = "Not enough RAM for the cache's block map (see the kernel log)";
	return -ENOMEM;
}

/*
 * Allocates the in-RAM cache for @sc's geometry, every slot FREE. On
 * failure sets @error and returns an error, nothing allocated.
 */
int ssdc_cache_alloc(struct ssdcache *sc, char **error)
{
	size_t page_longs = BITS_TO_LONGS(sc->map_pages);
	size_t set_longs = BITS_TO_LONGS(sc->nr_sets);
	u32 i;
	int r;

	r = check_ram(sc, error);
	if (r)
		return r;
	sc->slots = ssdc_table_alloc(sc->nr_blocks, sizeof(*sc->slots));
	/* All zero: an all-zero slot word's tag is ssdc_tag_of(0), 0. */
	sc->tags = ssdc_table_alloc(sc->nr_blocks, sizeof(*sc->tags));
	sc->stamps = ssdc_table_alloc(sc->nr_blocks, sizeof(*sc->stamps));
	/* All zero: no pins (atomic_t of 0). */
	sc->pins = ssdc_table_alloc(sc->nr_blocks, sizeof(*sc->pins));
	sc->sets = ssdc_table_alloc(sc->nr_sets, sizeof(*sc->sets));
	sc->dirty_sets = ssdc_table_alloc(set_longs, sizeof(unsigned long));
	sc->commit_sets = ssdc_table_alloc(set_longs, sizeof(unsigned long));
	sc->pending_sets = ssdc_table_alloc(set_longs, sizeof(unsigned long));
	sc->ckpt_pages = ssdc_table_alloc(page_longs, sizeof(unsigned long));
	sc->map_cur = ssdc_table_alloc(page_longs, sizeof(unsigned long));
	if (!sc->slots || !sc->tags || !sc->stamps || !sc->pins || !sc->sets ||
	    !sc->dirty_sets || !sc->commit_sets || !sc->pending_sets ||
	    !sc->ckpt_pages || !sc->map_cur) {
		ssdc_cache_free(sc);
		DMERR("%s: cannot allocate %llu MiB of kernel RAM for %llu cache blocks",
		      ssdcache_name(sc), ssdc_ram_bytes(sc) >> 20, sc->nr_blocks);
		*error = "Cannot allocate RAM for the cache's block map";
		return -ENOMEM;
	}
	/* Every slot word is 0: FREE. */
	for (i = 0; i < sc->nr_sets; i++) {
		spin_lock_init(&sc->sets[i].lock);
		sc->sets[i].free = GENMASK_ULL(SSDCACHE_ASSOC - 1, 0);
		sc->sets[i].open = SSDCACHE_ASSOC;
		if (!(i % 65536))
			cond_resched();
	}
	atomic64_set(&sc->used, 0);
	atomic64_set(&sc->dirty, 0);
	return 0;
}

void ssdc_cache_free(struct ssdcache *sc)
{
	kvfree(sc->slots);
	kvfree(sc->tags);
	kvfree(sc->stamps);
	kvfree(sc->pins);
	kvfree(sc->sets);
	kvfree(sc->dirty_sets);
	kvfree(sc->commit_sets);
	kvfree(sc->pending_sets);
	kvfree(sc->ckpt_pages);
	kvfree(sc->map_cur);
	sc->slots = NULL;
	sc->tags = NULL;
	sc->stamps = NULL;
	sc->pins = NULL;
	sc->sets = NULL;
	sc->dirty_sets = NULL;
	sc->commit_sets = NULL;
	sc->pending_sets = NULL;
	sc->ckpt_pages = NULL;
	sc->map_cur = NULL;
}

/*
 * @slot's word went from @old to @v, another oblock or state: its tag and
 * its set's free bits and open count follow (ssdc_slot_write()). Caller
 * holds the set lock.
 */
void ssdc_slot_moved(struct ssdcache *sc, u64 slot, u64 old, u64 v)
{
	struct ssdc_set *st = &sc->sets[ssdc_slot_set(slot)];
	u64 bit = BIT_ULL(slot % SSDCACHE_ASSOC);

	sc->tags[slot] = ssdc_tag_of(ssdc_slot_oblock(v));
	if (ssdc_slot_state(v) == SSDC_SLOT_FREE)
		st->free |= bit;
	else
		st->free &= ~bit;
	st->open += (int)ssdc_slot_open(v) - (int)ssdc_slot_open(old);
}

/*
 * Whether @slot is FREE, by its set's free bits. A slot they call FREE
 * that is not would be handed out while it holds a block: that would be
 * a bug here, and it warns, and the slot is not taken.
 */
static bool slot_free(struct ssdcache *sc, u64 slot)
{
	if (!(sc->sets[ssdc_slot_set(slot)].free & BIT_ULL(slot % SSDCACHE_ASSOC)))
		return false;
	return !WARN_ON_ONCE(ssdc_slot_state(sc->slots[slot]) != SSDC_SLOT_FREE);
}

/* Takes a FREE slot of @set, or returns -1. Caller holds the set lock. */
long ssdc_take_free(struct ssdcache *sc, u32 set)
{
	u64 free = sc->sets[set].free, s;

	if (!free)
		return -1;
	s = (u64)set * SSDCACHE_ASSOC + __ffs64(free);
	return slot_free(sc, s) ? (long)s : -1;
}

/*
 * The slot after @oblock's run's block before it, or before its run's
 * block after it, if FREE; else -1. Caller holds the set lock.
 */
static long free_neighbour(struct ssdcache *sc, u32 set, u64 oblock)
{
	u64 first = (u64)set * SSDCACHE_ASSOC, mask = BIT_ULL(sc->set_shift) - 1;
	long s;

	if (!sc->sets[set].free)
		return -1;
	if (oblock & mask) {
		s = ssdc_lookup(sc, set, oblock - 1);
		if (s >= 0 && (u64)s + 1 < first + SSDCACHE_ASSOC && slot_free(sc, s + 1))
			return s + 1;
	}
	if ((oblock + 1) & mask) {
		s = ssdc_lookup(sc, set, oblock + 1);
		if (s >= 0 && (u64)s > first && slot_free(sc, s - 1))
			return s - 1;
	}
	return -1;
}

/*
 * How many FREE slots of @set follow one another from @slot, at most
 * @max. Caller holds the set lock.
 */
static unsigned int free_run(struct ssdcache *sc, u32 set, u64 slot, unsigned int max)
{
	/* Bits past the set's last slot are 0: a run ends there. */
	u64 ones = ~(sc->sets[set].free >> (slot % SSDCACHE_ASSOC));
	unsigned int n = min_t(unsigned int, __ffs64(ones), max), i;

	for (i = 0; i < n; i++) {
		if (!slot_free(sc, slot + i))
			return i;
	}
	return n;
}

/*
 * Takes a FREE slot of @set for @oblock, the first of up to @want that a
 * write of blocks from @oblock would fill in a row, or returns -1, so
 * that a run written or read in one request finds its blocks in adjacent
 * slots (io.c). First choice: the free_neighbour(), if @want free slots
 * start there; then the first @want free slots in a row; else the start
 * of the longest such row (the neighbour's if as long). With @want 1,
 * the neighbour or else the first free slot. Taking the first free slot
 * for a write of several blocks would split it into one SSD request per
 * hole in a nearly full set; and the clean copies such a write replaces
 * free their slots together, in a row for the next one. Caller holds the
 * set lock.
 */
long ssdc_take_free_for(struct ssdcache *sc, u32 set, u64 oblock, unsigned int want)
{
	u64 first = (u64)set * SSDCACHE_ASSOC, free = sc->sets[set].free, rest;
	long best = free_neighbour(sc, set, oblock);
	unsigned int best_n = best >= 0 ? free_run(sc, set, best, want) : 0, n, i = 0;

	/* Each row of FREE slots in turn, from its first. */
	while (best_n < want && (rest = free >> i)) {
		i += __ffs64(rest);
		n = free_run(sc, set, first + i, want);
		if (n > best_n) {
			best = first + i;
			best_n = n;
		}
		i += max(n, 1U);
		if (i >= SSDCACHE_ASSOC)
			break;
	}
	return best;
}

/*
 * Makes @slot, just inserted, look older than any slot accessed in the
 * set's last half clock turn: the policy's next victim unless read.
 * Caller holds the set lock.
 */
void ssdc_touch_cold(struct ssdcache *sc, u32 set, u64 slot)
{
	sc->stamps[slot] = sc->sets[set].clock - (U16_MAX / 2 + 1);
}

/*
 * Marks @slot (its bit in its set's commit bits) and its set for the next
 * commit, which looks at the marked slots of each marked set (see
 * meta.c). Caller holds the set lock, under which the commit reads and
 * clears the set's bits.
 */
static void mark_commit_slot(struct ssdcache *sc, u64 slot)
{
	u32 set = ssdc_slot_set(slot);

	sc->sets[set].commit |= BIT_ULL(slot % SSDCACHE_ASSOC);
	/*
	 * A commit clears a set's bit before it takes the set's lock to read
	 * its commit bits, and this runs under that lock: a bit found set is
	 * a read still to come, which sees this change.
	 */
	ssdc_mark(set, sc->commit_sets);
}

/*
 * Sets @slot's word to @v, a change of what its map entry should say:
 * the slot is journaled by the next commit and its page written by the
 * next checkpoint. Caller holds the set lock. A change to a dirty entry
 * (@dirty) is one a flush must make durable: it bumps change_gen, so
 * that the next flush goes through a commit. The others (clean copies
 * made, cleaned or evicted) may wait for a later commit: a crash before
 * it only forgets a clean copy or keeps one whose slot is not reused
 * until its invalid entry is durable; a write that waits for one (an
 * origin write over a clean copy) completes only after that commit.
 */
static void mark_pages(struct ssdcache *sc, u64 slot, bool dirty)
{
	mark_commit_slot(sc, slot);
	ssdc_mark(ssdc_slot_page(slot), sc->ckpt_pages);
	if (dirty) {
		/* The set's mark before the count: pairs with run_commit() (meta.c). */
		smp_mb__before_atomic();
		atomic64_inc(&sc->change_gen);
	}
	/*
	 * Enough records wait for a commit: do not let it grow until the
	 * timer. A slot CHANGED already is a record counted already.
	 */
	if (!(sc->slots[slot] & SSDC_SF_CHANGED) &&
	    atomic_inc_return(&sc->changes) == SSDC_COMMIT_RECORDS)
		ssdc_meta_kick(sc, 0);
}

void ssdc_slot_update(struct ssdcache *sc, u64 slot, u64 v)
{
	mark_pages(sc, slot, v & SSDC_SF_DIRTY);
	ssdc_slot_write(sc, slot, v | SSDC_SF_CHANGED);
}

/*
 * The last pin of @slot is gone and it looked EVICTING and WRITTEN: free
 * it, unless it changed in between (the lock's holder freed it first).
 */
void ssdc_free_released(struct ssdcache *sc, u64 slot)
{
	struct ssdc_set *st = &sc->sets[ssdc_slot_set(slot)];
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	ssdc_free_unpinned_locked(sc, slot);
	spin_unlock_irqrestore(&st->lock, flags);
}

/*
 * Makes a clean VALID slot invalid (EVICTING: its on-disk entry is still
 * valid until the next commit). A FILLING slot is marked CANCEL instead,
 * so its fill ends without installing. A dirty slot is never invalidated:
 * its data exists nowhere else. Returns true if the caller must wait for
 * a commit before the origin block may be written to the origin. Caller
 * holds the lock.
 */
bool ssdc_invalidate_locked(struct ssdcache *sc, u32 set, u64 slot)
{
	u64 v = sc->slots[slot];

	if (ssdc_slot_state(v) == SSDC_SLOT_FILLING) {
		ssdc_slot_write(sc, slot, v | SSDC_SF_CANCEL);
		return false;
	}
	if (WARN_ON_ONCE(v & SSDC_SF_DIRTY))
		return true;
	/* Keep oblock; clear state and flags. */
	v &= ~(SSDC_SLOT_STATE_MASK | SSDC_SF_ALL);
	ssdc_slot_update(sc, slot, v | ((u64)SSDC_SLOT_EVICTING << SSDC_SLOT_STATE_SHIFT));
	atomic64_dec(&sc->used);
	return true;
}

/*
 * Sets @slot to VALID slot word @v, tagged as not durable in the current
 * sync epoch. The set is marked before the epoch is read, and a commit
 * bumps the epoch before it looks at the marks (with full barriers on
 * both sides): so if this reads the epoch that commit flushes, that
 * commit sees the set, and then the slot under the set lock. A slot
 * can thus never keep the parity of an epoch older than the last one
 * flushed, and a flush or FUA write queued after this returns waits for a
 * commit that syncs the slot (and journals it if @record: its entry
 * changes). Caller holds the set lock.
 */
static void update_unsynced(struct ssdcache *sc, u64 slot, u64 v, bool record)
{
	if (record) {
		mark_pages(sc, slot, v & SSDC_SF_DIRTY);
		v |= SSDC_SF_CHANGED;
	} else {
		mark_commit_slot(sc, slot);
	}
	/* Pairs with the smp_mb() after the epoch bump in ssdc_meta_commit(). */
	smp_mb__after_atomic();
	v = (v & ~SSDC_SF_PARITY) | SSDC_SF_UNSYNCED;
	if (READ_ONCE(sc->sync_epoch) & 1)
		v |= SSDC_SF_PARITY;
	ssdc_slot_write(sc, slot, v);
}

/*
 * Makes a FILLING slot VALID (clean or dirty) once its data is on the
 * SSD. Its entry may reach the SSD only after flushes that began after
 * this point: the slot is UNSYNCED and NEW, tagged with the parity of the
 * current epoch (see meta.c). Caller holds the set lock.
 */
void ssdc_make_valid_locked(struct ssdcache *sc, u64 slot, u64 oblock, bool dirty)
{
	u64 v = ssdc_slot_make(oblock, SSDC_SLOT_VALID) | SSDC_SF_NEW;

	if (dirty) {
		v |= SSDC_SF_DIRTY;
		ssdc_note_dirty_set(sc, slot);
		/* The cleaner stops polling while nothing is dirty: wake it. */
		if (atomic64_inc_return(&sc->dirty) == 1)
			ssdc_wb_kick(sc);
	}
	v |= sc->slots[slot] & ~(SSDC_SLOT_STATE_MASK | SSDC_SF_ALL | SSDCACHE_MAP_OBLOCK_MASK);
	update_unsynced(sc, slot, v, true);
	ssdc_meta_unsynced(sc);
}

/*
 * A dirty slot's data was rewritten in place: it is durable only after
 * the next flush, and until then not a candidate for writeback. Its map
 * entry says what it said, so there is nothing new to journal: the slot
 * is only UNSYNCED, which the next commit that flushes clears (a
 * database's log block, rewritten by every transaction, would otherwise
 * cost a journal record each time). An entry not journaled yet stays
 * CHANGED. Caller holds the set lock.
 */
void ssdc_mark_unsynced_locked(struct ssdcache *sc, u64 slot)
{
	u64 v = sc->slots[slot];

	update_unsynced(sc, slot, v, v & SSDC_SF_CHANGED);
	ssdc_meta_unsynced(sc);
}

/*
 * Evicts the policy's victim among @set's clean VALID slots that no I/O
 * is using, so that a FREE slot appears after the next commit. Dirty
 * slots are left to writeback. Caller holds the set lock.
 */
void ssdc_evict_one(struct ssdcache *sc, u32 set)
{
	u64 first = (u64)set * SSDCACHE_ASSOC, s;
	u16 clock = sc->sets[set].clock, best_age = 0;
	long victim = -1;

	sc->sets[set].was_full = true;

	for (s = first; s < first + SSDCACHE_ASSOC; s++) {
		u64 v = sc->slots[s];
		u16 age = clock - sc->stamps[s];

		if (ssdc_slot_state(v) != SSDC_SLOT_VALID || ssdc_pinned(sc, s) ||
		    (v & SSDC_SF_DIRTY))
			continue;
		if (victim < 0 || age > best_age) {
			victim = s;
			best_age = age;
		}
	}
	if (victim < 0) {
		ssdc_wb_kick(sc);
		return;
	}
	ssdc_invalidate_locked(sc, set, victim);
	ssdc_count(sc, SSDC_C_EVICTIONS);
}

/*
 * A full set: its policy's victim evicted, so that a slot is free once
 * the eviction is committed, soon. Caller holds the set lock.
 */
void ssdc_evict_for_next(struct ssdcache *sc, u32 set)
{
	ssdc_evict_one(sc, set);
	ssdc_meta_kick(sc, SSDC_EVICT_COMMIT_DELAY_MS);
}

/*
 * Called once a slot of @set was taken: if the set has none left FREE or
 * on its way to FREE (EVICTING), evicts the policy's victim now, so that
 * the set's next insertion (a fill, a write-back write) finds a free slot
 * after the commit this asks for. Evicting only when an insertion found
 * no room left that insertion uncached (a fill dropped, a write sent to
 * the origin): in a full cache, about every other one. Caller holds the
 * set lock.
 */
void ssdc_evict_ahead(struct ssdcache *sc, u32 set)
{
	if (!sc->sets[set].open)
		ssdc_evict_for_next(sc, set);
}

/*
 * Invalidates one block for a write or discard to the origin; see
 * ssdc_invalidate_range(). Returns 1 if a commit must come first, 0 if
 * not, -1 if the block is dirty (and then left alone).
 */
static int invalidate_block(struct ssdcache *sc, u32 set, u64 s)
{
	u64 v = sc->slots[s];

	if (ssdc_slot_dirty(v))
		return -1;
	switch (ssdc_slot_state(v)) {
	case SSDC_SLOT_VALID:
	case SSDC_SLOT_FILLING:
		return ssdc_invalidate_locked(sc, set, s);
	case SSDC_SLOT_EVICTING:
		return ssdc_evicting_unwritten(v);
	default:
		return 0;
	}
}

/*
 * Calls @fn for every slot in use (not FREE) that holds an origin block in
 * [first, last], under its set's lock, until @fn returns true. A range of
 * fewer blocks than the cache has sets is walked block by block, in order
 * (each block reads its set's SSDCACHE_ASSOC slot words); else every slot
 * is looked at once, which is cheaper: a block-by-block walk of a range
 * as large as the cache read SSDCACHE_ASSOC times as many slot words, and
 * in a cache of a few TiB took tens of seconds. Process context: the
 * whole walk gives the CPU up now and then.
 */
void ssdc_walk_range(struct ssdcache *sc, u64 first, u64 last, ssdc_walk_fn fn, void *arg)
{
	unsigned long flags;
	bool stop = false;
	u64 b, s, end;
	u32 set;

	if (last - first >= sc->nr_sets) {
		for (set = 0; set < sc->nr_sets && !stop; set++) {
			if (!(set % 4096))
				cond_resched();
			spin_lock_irqsave(&sc->sets[set].lock, flags);
			end = (u64)(set + 1) * SSDCACHE_ASSOC;
			for (s = (u64)set * SSDCACHE_ASSOC; s < end && !stop; s++) {
				u64 v = sc->slots[s];

				if (ssdc_slot_state(v) != SSDC_SLOT_FREE &&
				    ssdc_slot_oblock(v) >= first && ssdc_slot_oblock(v) <= last)
					stop = fn(sc, set, s, arg);
			}
			spin_unlock_irqrestore(&sc->sets[set].lock, flags);
		}
		return;
	}
	for (b = first; b <= last && !stop; b++) {
		set = ssdc_set_of(sc, b);
		spin_lock_irqsave(&sc->sets[set].lock, flags);
		end = (u64)(set + 1) * SSDCACHE_ASSOC;
		for (s = (u64)set * SSDCACHE_ASSOC; s < end && !stop; s++) {
			u64 v = sc->slots[s];

			if (ssdc_slot_state(v) != SSDC_SLOT_FREE && ssdc_slot_oblock(v) == b)
				stop = fn(sc, set, s, arg);
		}
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	}
}

/*
 * The lowest dirty origin block in @set that lies in [first, last], or
 * U64_MAX, under the set's lock.
 */
static u64 set_first_dirty(struct ssdcache *sc, u32 set, u64 first, u64 last)
{
	u64 s = (u64)set * SSDCACHE_ASSOC, end = s + SSDCACHE_ASSOC;
	u64 best = U64_MAX;
	unsigned long flags;

	spin_lock_irqsave(&sc->sets[set].lock, flags);
	for (; s < end; s++) {
		u64 v = sc->slots[s], ob = ssdc_slot_oblock(v);

		if (ssdc_slot_dirty(v) && ob >= first && ob <= last)
			best = min(best, ob);
	}
	spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	return best;
}

/*
 * The lowest dirty origin block in [first, last], or U64_MAX. Only the
 * sets marked in dirty_sets can hold one: a set is marked under its lock
 * as its block is made dirty, before that write completes, and loses its
 * mark only under its lock when it holds none (ssdc_note_dirty_set()).
 * So a write that completed before this call has its mark seen here;
 * one that did not is concurrent with the caller's I/O, which may then
 * see the origin's older data, as it would have a moment earlier.
 */
u64 ssdc_first_dirty(struct ssdcache *sc, u64 first, u64 last)
{
	u64 best = U64_MAX, b;
	unsigned long set;

	/* Blocks in order: the first found ends a short range's walk. */
	if (last - first < sc->nr_blocks) {
		for (b = first; b <= last && best == U64_MAX; b++) {
			set = ssdc_set_of(sc, b);
			if (test_bit(set, sc->dirty_sets))
				best = set_first_dirty(sc, set, b, b);
		}
		return best;
	}
	for_each_set_bit(set, sc->dirty_sets, sc->nr_sets)
		best = min(best, set_first_dirty(sc, set, first, last));
	return best;
}

static bool invalidate_one(struct ssdcache *sc, u32 set, u64 s, void *arg)
{
	bool *wait = arg;

	if (invalidate_block(sc, set, s) > 0)
		*wait = true;
	return false;
}

/*
 * Invalidates the clean cached origin blocks in [first, last]. Dirty
 * blocks are kept. With @dirty_at, the range stops before the first dirty
 * block, whose number is stored there (U64_MAX if none): a write must not
 * reach the origin past it. Returns true if the SSD's map may still hold
 * an invalidated block as VALID: the caller must then wait for a commit.
 */
bool ssdc_invalidate_range(struct ssdcache *sc, u64 first, u64 last, u64 *dirty_at)
{
	bool wait = false;

	if (dirty_at) {
		*dirty_at = atomic64_read(&sc->dirty) ?
			    ssdc_first_dirty(sc, first, last) : U64_MAX;
		if (*dirty_at == first)
			return false;
		if (*dirty_at != U64_MAX)
			last = *dirty_at - 1;
	}
	ssdc_walk_range(sc, first, last, invalidate_one, &wait);
	return wait;
}
