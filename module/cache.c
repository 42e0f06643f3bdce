// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the cache in RAM. Sets, slots, lookup and replacement.
 *
 * The cache is set-associative: an origin block hashes to one set of
 * SSDCACHE_ASSOC slots and can live only there. RAM per cache block: the
 * u64 slot word and a u16 policy stamp, plus each set's header shared by
 * its SSDCACHE_ASSOC slots and one bit per map page.
 *
 * Every slot change happens under its set's lock, which is taken with
 * interrupts off because bio completions also release slots.
 */
#include <linux/hash.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "ssdcache.h"

int ssdc_cache_alloc(struct ssdcache *sc)
{
	u32 i;

	sc->slots = kvcalloc(sc->nr_blocks, sizeof(*sc->slots), GFP_KERNEL);
	sc->stamps = kvcalloc(sc->nr_blocks, sizeof(*sc->stamps), GFP_KERNEL);
	sc->sets = kvcalloc(sc->nr_sets, sizeof(*sc->sets), GFP_KERNEL);
	sc->dirty_pages = kvcalloc(BITS_TO_LONGS(sc->map_pages),
				   sizeof(unsigned long), GFP_KERNEL);
	if (!sc->slots || !sc->stamps || !sc->sets || !sc->dirty_pages) {
		ssdc_cache_free(sc);
		return -ENOMEM;
	}
	for (i = 0; i < sc->nr_sets; i++)
		spin_lock_init(&sc->sets[i].lock);
	atomic64_set(&sc->used, 0);
	return 0;
}

void ssdc_cache_free(struct ssdcache *sc)
{
	kvfree(sc->slots);
	kvfree(sc->stamps);
	kvfree(sc->sets);
	kvfree(sc->dirty_pages);
	sc->slots = NULL;
	sc->stamps = NULL;
	sc->sets = NULL;
	sc->dirty_pages = NULL;
}

/* The set of an origin block: a hash, so neighbours spread over sets. */
u32 ssdc_set_of(struct ssdcache *sc, u64 oblock)
{
	return reciprocal_scale(hash_64(oblock, 32), sc->nr_sets);
}

/*
 * The slot holding @oblock (VALID or FILLING) in @set, or -1. Caller
 * holds the set lock.
 */
long ssdc_lookup(struct ssdcache *sc, u32 set, u64 oblock)
{
	u64 first = (u64)set * SSDCACHE_ASSOC, s;

	for (s = first; s < first + SSDCACHE_ASSOC; s++) {
		u64 v = sc->slots[s];
		enum ssdc_slot_state st = ssdc_slot_state(v);

		if ((st == SSDC_SLOT_VALID || st == SSDC_SLOT_FILLING) &&
		    ssdc_slot_oblock(v) == oblock)
			return s;
	}
	return -1;
}

/*
 * Does @set hold an EVICTING slot for @oblock whose invalid entry is not
 * yet durable? Then the SSD's map may still call @oblock VALID: a write to
 * it must wait for the next commit, and no new copy may be installed.
 * Caller holds the set lock.
 */
bool ssdc_evicting_locked(struct ssdcache *sc, u32 set, u64 oblock)
{
	u64 first = (u64)set * SSDCACHE_ASSOC, s;

	for (s = first; s < first + SSDCACHE_ASSOC; s++) {
		u64 v = sc->slots[s];

		if (ssdc_slot_state(v) == SSDC_SLOT_EVICTING &&
		    !(v & SSDC_SF_WRITTEN) && ssdc_slot_oblock(v) == oblock)
			return true;
	}
	return false;
}

/* Takes a FREE slot of @set, or returns -1. Caller holds the set lock. */
long ssdc_take_free(struct ssdcache *sc, u32 set)
{
	u64 first = (u64)set * SSDCACHE_ASSOC, s;

	for (s = first; s < first + SSDCACHE_ASSOC; s++) {
		if (ssdc_slot_state(sc->slots[s]) == SSDC_SLOT_FREE)
			return s;
	}
	return -1;
}

/*
 * Records an access to @slot for the replacement policy: LRU stamps every
 * access, FIFO only the insertion. Caller holds the set lock.
 */
void ssdc_touch(struct ssdcache *sc, u32 set, u64 slot, bool insert)
{
	struct ssdc_set *st = &sc->sets[set];

	if (insert || READ_ONCE(sc->policy) == SSDC_POLICY_LRU)
		sc->stamps[slot] = ++st->clock;
}

/*
 * Makes a VALID slot invalid (EVICTING: its on-disk entry is still valid
 * until the next commit). A FILLING slot is marked CANCEL instead, so its
 * fill ends without installing. Returns true if the caller must wait for
 * a commit before the origin block may be written. Caller holds the lock.
 */
bool ssdc_invalidate_locked(struct ssdcache *sc, u32 set, u64 slot)
{
	u64 v = sc->slots[slot];

	if (ssdc_slot_state(v) == SSDC_SLOT_FILLING) {
		sc->slots[slot] = v | SSDC_SF_CANCEL;
		return false;
	}
	/* Keep oblock and the readers count; clear state and flags. */
	v &= ~(SSDC_SLOT_STATE_MASK | SSDC_SF_A | SSDC_SF_B);
	sc->slots[slot] = v | ((u64)SSDC_SLOT_EVICTING << SSDC_SLOT_STATE_SHIFT);
	atomic64_dec(&sc->used);
	ssdc_meta_dirty(sc, slot, false);
	return true;
}

/*
 * Makes a FILLING slot VALID once its data is on the SSD. Its entry may
 * reach the SSD only after an origin flush that began after this point:
 * the slot is UNSYNCED, tagged with the parity of the current epoch (see
 * meta.c). Caller holds the set lock.
 */
void ssdc_make_valid_locked(struct ssdcache *sc, u64 slot, u64 oblock)
{
	u64 v = ssdc_slot_make(oblock, SSDC_SLOT_VALID) | SSDC_SF_UNSYNCED;

	if (READ_ONCE(sc->sync_epoch) & 1)
		v |= SSDC_SF_PARITY;
	sc->slots[slot] = v;
	ssdc_meta_dirty(sc, slot, true);
}

/*
 * Evicts the policy's victim among @set's VALID slots that no read is
 * using, so that a FREE slot appears after the next commit. Caller holds
 * the set lock.
 */
void ssdc_evict_one(struct ssdcache *sc, u32 set)
{
	u64 first = (u64)set * SSDCACHE_ASSOC, s;
	u16 clock = sc->sets[set].clock, best_age = 0;
	long victim = -1;

	for (s = first; s < first + SSDCACHE_ASSOC; s++) {
		u64 v = sc->slots[s];
		u16 age = clock - sc->stamps[s];

		if (ssdc_slot_state(v) != SSDC_SLOT_VALID || ssdc_slot_readers(v))
			continue;
		if (victim < 0 || age > best_age) {
			victim = s;
			best_age = age;
		}
	}
	if (victim < 0)
		return;
	ssdc_invalidate_locked(sc, set, victim);
	ssdc_count(sc, SSDC_C_EVICTIONS);
}

/*
 * Might the SSD's map hold a VALID entry for this slot word? True for
 * VALID slots and for EVICTING ones whose invalid entry is not durable.
 */
bool ssdc_slot_maybe_on_disk(u64 v)
{
	enum ssdc_slot_state st = ssdc_slot_state(v);

	return st == SSDC_SLOT_VALID ||
	       (st == SSDC_SLOT_EVICTING && !(v & SSDC_SF_WRITTEN));
}

/*
 * Ends a read from @slot. The last reader of an EVICTING slot whose
 * invalid entry is already on disk frees it.
 */
void ssdc_slot_release_reader(struct ssdcache *sc, u64 slot)
{
	struct ssdc_set *st = &sc->sets[ssdc_slot_set(slot)];
	unsigned long flags;
	u64 v;

	spin_lock_irqsave(&st->lock, flags);
	v = sc->slots[slot] - (1ULL << SSDC_SLOT_READERS_SHIFT);
	if (!ssdc_slot_readers(v) && ssdc_slot_state(v) == SSDC_SLOT_EVICTING &&
	    (v & SSDC_SF_WRITTEN))
		v = ssdc_slot_make(0, SSDC_SLOT_FREE);
	sc->slots[slot] = v;
	spin_unlock_irqrestore(&st->lock, flags);
}

/*
 * Invalidates every cached origin block in [first, last]. Returns true if
 * the SSD's map may still hold one of them as VALID: the caller must then
 * wait for a commit.
 */
bool ssdc_invalidate_range(struct ssdcache *sc, u64 first, u64 last)
{
	unsigned long flags;
	bool wait = false;
	u64 b, s;
	u32 set;

	if (last - first >= sc->nr_blocks) {
		/* Cheaper to look at every slot than at every block. */
		for (set = 0; set < sc->nr_sets; set++) {
			spin_lock_irqsave(&sc->sets[set].lock, flags);
			for (s = (u64)set * SSDCACHE_ASSOC;
			     s < (u64)(set + 1) * SSDCACHE_ASSOC; s++) {
				u64 v = sc->slots[s];
				enum ssdc_slot_state st = ssdc_slot_state(v);

				if (ssdc_slot_oblock(v) < first || ssdc_slot_oblock(v) > last)
					continue;
				if (st == SSDC_SLOT_VALID || st == SSDC_SLOT_FILLING)
					wait |= ssdc_invalidate_locked(sc, set, s);
				else if (st == SSDC_SLOT_EVICTING && !(v & SSDC_SF_WRITTEN))
					wait = true;
			}
			spin_unlock_irqrestore(&sc->sets[set].lock, flags);
		}
		return wait;
	}
	for (b = first; b <= last; b++) {
		long slot;

		set = ssdc_set_of(sc, b);
		spin_lock_irqsave(&sc->sets[set].lock, flags);
		slot = ssdc_lookup(sc, set, b);
		if (slot >= 0)
			wait |= ssdc_invalidate_locked(sc, set, slot);
		wait |= ssdc_evicting_locked(sc, set, b);
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
	}
	return wait;
}
