// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: test-only hooks, built only with CONFIG_SSDCACHE_SELFTEST=y.
 *
 * They let the test harness prove that its own checks can fail, for
 * example that a kernel warning in the guest log fails the run, and check
 * invariants that no I/O can see until it is too late. A normal build
 * does not contain this file.
 */
#include <linux/bug.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "ssdcache.h"

/* Mismatches reported in the kernel log, at most, per check. */
#define VERIFY_REPORT	10

/*
 * Compares map page @pg as a load would pick it on the SSD with the
 * entries RAM holds for its slots; returns the number of mismatches.
 * Slots with a change not yet journaled (CHANGED) are skipped: the SSD
 * may lag them. Caller holds commit_lock, just after a checkpoint, so
 * the journal holds nothing and the pages cannot change.
 */
static u64 compare_page(struct ssdcache *sc, u64 pg, u64 *reported)
{
	void *c0 = page_address(sc->commit_buf[0]);
	void *c1 = page_address(sc->commit_buf[1]);
	u64 first = pg * SSDCACHE_MAP_ENTRIES_PER_PAGE, bad = 0, s;
	unsigned long flags;
	__le64 *entries;
	int copy;

	if (ssdc_rw_bufs(sc, ssdc_copy_sector(sc, pg, 0), 0, 1, REQ_OP_READ) ||
	    ssdc_rw_bufs(sc, ssdc_copy_sector(sc, pg, 1), 1, 1, REQ_OP_READ)) {
		DMERR("%s: verify_map: page %llu: read error", ssdcache_name(sc), pg);
		return 1;
	}
	copy = ssdc_pick_copy(sc, pg, c0, c1);
	if (copy < 0 || copy != !!test_bit(pg, sc->map_cur)) {
		DMERR("%s: verify_map: page %llu: a load would use copy %d, RAM says %d",
		      ssdcache_name(sc), pg, copy, !!test_bit(pg, sc->map_cur));
		return 1;
	}
	entries = (copy ? c1 : c0) + sizeof(struct ssdcache_disk_map_hdr);
	for (s = first; s < min_t(u64, first + SSDCACHE_MAP_ENTRIES_PER_PAGE,
				  sc->nr_blocks); s++) {
		u32 set = ssdc_slot_set(s);
		u64 v, disk = le64_to_cpu(entries[s - first]);

		spin_lock_irqsave(&sc->sets[set].lock, flags);
		v = sc->slots[s];
		spin_unlock_irqrestore(&sc->sets[set].lock, flags);
		if ((v & SSDC_SF_CHANGED) || disk == ssdc_durable_entry(v))
			continue;
		bad++;
		if ((*reported)++ < VERIFY_REPORT)
			DMERR("%s: verify_map: slot %llu: SSD %llx, RAM %llx (word %llx)",
			      ssdcache_name(sc), s, disk, ssdc_durable_entry(v), v);
	}
	return bad;
}

/*
 * Compares each set's free bits and open count with its slot words, and
 * checks that every slot for the next commit (CHANGED, or VALID and
 * UNSYNCED) has its commit bit and that a set with commit bits is marked
 * in commit_sets; returns the number of sets that fail. Caller holds
 * commit_lock: no commit is between clearing a set's mark and reading
 * its bits.
 */
static u64 compare_sets(struct ssdcache *sc, u64 *reported)
{
	unsigned long flags;
	u64 bad = 0;
	u32 set;

	for (set = 0; set < sc->nr_sets; set++) {
		struct ssdc_set *st = &sc->sets[set];
		u64 free = 0, commit = 0, s, first = (u64)set * SSDCACHE_ASSOC;
		unsigned int open = 0;

		spin_lock_irqsave(&st->lock, flags);
		for (s = first; s < first + SSDCACHE_ASSOC; s++) {
			u64 v = sc->slots[s];

			if (ssdc_slot_state(v) == SSDC_SLOT_FREE)
				free |= BIT_ULL(s - first);
			open += ssdc_slot_open(v);
			if ((v & SSDC_SF_CHANGED) ||
			    (ssdc_slot_state(v) == SSDC_SLOT_VALID && (v & SSDC_SF_UNSYNCED)))
				commit |= BIT_ULL(s - first);
		}
		if (free != st->free || open != st->open) {
			bad++;
			if ((*reported)++ < VERIFY_REPORT)
				DMERR("%s: verify_map: set %u: free %llx open %u, slots: %llx %u",
				      ssdcache_name(sc), set, st->free, st->open, free, open);
		} else if (commit & ~st->commit) {
			bad++;
			if ((*reported)++ < VERIFY_REPORT)
				DMERR("%s: verify_map: set %u: slots %llx not marked for a commit",
				      ssdcache_name(sc), set, commit & ~st->commit);
		} else if (st->commit && !test_bit(set, sc->commit_sets)) {
			bad++;
			if ((*reported)++ < VERIFY_REPORT)
				DMERR("%s: verify_map: set %u: commit bits %llx, set not marked",
				      ssdcache_name(sc), set, st->commit);
		}
		spin_unlock_irqrestore(&st->lock, flags);
	}
	return bad;
}

/*
 * "selftest_verify_map": checkpoints, then checks that the block map a
 * load would read from the SSD says what RAM says for every slot with no
 * change under way, and that every set's free bits and open count agree
 * with its slots. Fails with -EUCLEAN on any mismatch, which the kernel
 * log details. Works with I/O running; quietest when suspended.
 */
static int compare_map(struct ssdcache *sc)
{
	u64 pg, bad = 0, reported = 0;
	int r;

	mutex_lock(&sc->commit_lock);
	if (!sc->loaded || READ_ONCE(sc->failed)) {
		mutex_unlock(&sc->commit_lock);
		DMERR("%s: verify_map: the cache is not loaded or has failed",
		      ssdcache_name(sc));
		return -EINVAL;
	}
	r = ssdc_checkpoint(sc);
	for (pg = 0; !r && pg < sc->map_pages; pg++)
		bad += compare_page(sc, pg, &reported);
	bad += compare_sets(sc, &reported);
	mutex_unlock(&sc->commit_lock);
	if (r) {
		DMERR("%s: verify_map: checkpoint failed (%d)", ssdcache_name(sc), r);
		return r;
	}
	if (bad) {
		DMERR("%s: verify_map: %llu mismatches in %llu map pages",
		      ssdcache_name(sc), bad, sc->map_pages);
		return -EUCLEAN;
	}
	DMINFO("%s: verify_map: %llu map pages agree with RAM",
	       ssdcache_name(sc), sc->map_pages);
	return 0;
}

/*
 * "selftest_big_table": a table of more than INT_MAX bytes, which
 * kvmalloc() refuses with a warning, as the slot words of a cache of
 * 2^28 blocks (1 TiB of 4 KiB blocks) take: allocated zeroed, its last
 * entry written, freed.
 */
static int alloc_big_table(struct ssdcache *sc)
{
	size_t n = (size_t)INT_MAX / sizeof(u64) + 1;
	u64 *t = ssdc_table_alloc(n, sizeof(u64));
	bool zero;

	if (!t) {
		DMERR("%s: big_table: %zu bytes not allocated", ssdcache_name(sc),
		      n * sizeof(u64));
		return -ENOMEM;
	}
	zero = !t[0] && !t[n / 2] && !t[n - 1];
	t[n - 1] = 1;
	kvfree(t);
	if (!zero) {
		DMERR("%s: big_table: not zeroed", ssdcache_name(sc));
		return -EUCLEAN;
	}
	DMINFO("%s: big_table: %zu bytes allocated, zeroed and freed",
	       ssdcache_name(sc), n * sizeof(u64));
	return 0;
}

int ssdcache_selftest_message(struct ssdcache *sc, unsigned int argc,
			      char **argv)
{
	if (argc == 1 && !strcasecmp(argv[0], "selftest_warn")) {
		WARN(1, "%s: deliberate warning requested by the test suite\n",
		     ssdcache_name(sc));
		return 0;
	}
	if (argc == 1 && !strcasecmp(argv[0], "selftest_verify_map"))
		return compare_map(sc);
	if (argc == 1 && !strcasecmp(argv[0], "selftest_big_table"))
		return alloc_big_table(sc);
	return -ENOTTY;
}
