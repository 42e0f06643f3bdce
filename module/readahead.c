// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: readahead while the cache warms up.
 *
 * A disk charges per request: a random read of 64 KiB costs an HDD about
 * what one of 4 KiB does (a seek and a turn), and a null_blk HDD model
 * exactly that. So while at least 1/SSDC_READAHEAD_FREE of the cache's
 * blocks are free, a miss that covers less than its aligned chunk of
 * readahead_kb reads the whole chunk in one origin request, and every
 * block of it that is not cached is filled, the others "cold": they take
 * only a free slot (never evict), only in a set that never had to evict
 * (was_full), and are the first the policy evicts, unless a read uses
 * them first. Its SSD writes are thus bounded by what the cache would
 * hold anyway, and a full set's free slots, which its evictions make for
 * the blocks asked for, are left to them.
 *
 * The blocks asked for are copied into the bio from the chunk's pages,
 * which the fills then own. Each block's fill is decided, and its set's
 * wgen recorded, as for a miss (io.c): a write to its set under way or
 * started meanwhile drops it. If the chunk's read fails (a bad sector
 * anywhere in it), the bio is read again from the origin alone.
 *
 * A chunk read ahead lately is not read again: the next blocks of a
 * sequential reader miss until their fills are in, and would otherwise
 * each read the whole chunk. The chunks are remembered in a small table
 * by hash, without a lock: a lost or stale entry costs one chunk read
 * more or less, never data.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "ssdcache.h"

struct ssdc_ahead {
	struct ssdcache *sc;
	struct bio *orig;	/* the bio mapped; its blocks are in the chunk */
	u64 base;		/* the chunk's first block */
	u32 long_wgen;
	unsigned int nblocks;	/* blocks read */
	unsigned int bpp;	/* pages per block */
	u32 fills;		/* bitmap: blocks to install */
	u32 wgen[SSDC_READ_RUN];
	struct page *pages[];	/* block i's at [i * bpp, (i + 1) * bpp) */
};

/*
 * The chunk in blocks: a power of two, no more than one origin read takes
 * (ssdc_read_run_max(): a chunk the block layer splits costs the disk two
 * requests); 0 if off.
 */
static unsigned int chunk_blocks(struct ssdcache *sc)
{
	u64 kb = READ_ONCE(sc->ra_kb);
	u64 n = (kb << 10) >> (sc->block_shift + SECTOR_SHIFT);

	n = min_t(u64, n, ssdc_read_run_max(sc));
	if (n < 2 || (sc->block_sectors << SECTOR_SHIFT) < PAGE_SIZE)
		return 0;
	return rounddown_pow_of_two(n);
}

static bool cache_has_room(struct ssdcache *sc)
{
	u64 used = atomic64_read(&sc->used);

	return used * SSDC_READAHEAD_FREE <= sc->nr_blocks * (SSDC_READAHEAD_FREE - 1);
}

static void free_ahead(struct ssdc_ahead *ra)
{
	unsigned int i;

	for (i = 0; i < ra->nblocks * ra->bpp; i++)
		if (ra->pages[i])
			__free_page(ra->pages[i]);
	kfree(ra);
}

static struct ssdc_ahead *alloc_ahead(struct ssdcache *sc, unsigned int nblocks)
{
	unsigned int bpp = (sc->block_sectors << SECTOR_SHIFT) >> PAGE_SHIFT, i;
	struct ssdc_ahead *ra;

	ra = kzalloc(struct_size(ra, pages, nblocks * bpp), GFP_NOWAIT | __GFP_NOWARN);
	if (!ra)
		return NULL;
	ra->sc = sc;
	ra->nblocks = nblocks;
	ra->bpp = bpp;
	for (i = 0; i < nblocks * bpp; i++) {
		ra->pages[i] = alloc_page(GFP_NOWAIT | __GFP_NOWARN);
		if (!ra->pages[i]) {
			free_ahead(ra);
			return NULL;
		}
	}
	return ra;
}

/*
 * Decides the fill of each block of the chunk: those of the bio as map
 * did (@pb), the others now. Returns whether any other block may be
 * filled: if none, reading the chunk gains nothing.
 */
static bool decide_fills(struct ssdcache *sc, struct ssdc_ahead *ra,
			 struct ssdc_bio *pb)
{
	unsigned int first = pb->oblock - ra->base, i;
	bool gain = false;

	ra->long_wgen = pb->long_wgen;
	for (i = 0; i < ra->nblocks; i++) {
		u64 oblock = ra->base + i;
		u32 set = ssdc_set_of(sc, oblock);
		struct ssdc_set *st = &sc->sets[set];
		unsigned long flags;

		if (i >= first && i < first + pb->nblocks) {
			if (pb->fills & BIT(i - first))
				ra->fills |= BIT(i);
			ra->wgen[i] = pb->wgen[i - first];
			continue;
		}
		spin_lock_irqsave(&st->lock, flags);
		if (!st->was_full && ssdc_lookup(sc, set, oblock) < 0 &&
		    ssdc_may_fill_locked(sc, st)) {
			ra->fills |= BIT(i);
			ra->wgen[i] = st->wgen;
			gain = true;
		}
		spin_unlock_irqrestore(&st->lock, flags);
	}
	return gain;
}

/* Queues a fill for each block that may have one; it takes the pages. */
static void queue_ahead_fills(struct ssdcache *sc, struct ssdc_ahead *ra,
			      struct ssdc_bio *pb)
{
	unsigned int first = pb->oblock - ra->base, i, p;
	bool queued = false;
	struct ssdc_fill *f;

	for (i = 0; i < ra->nblocks; i++) {
		if (!(ra->fills & BIT(i)))
			continue;
		if (!ssdc_fill_room(sc))
			break;
		f = ssdc_fill_new(sc, ra->base + i, ra->wgen[i], ra->long_wgen, ra->bpp);
		if (!f)
			break;
		f->ahead = i < first || i >= first + pb->nblocks;
		for (p = 0; p < ra->bpp; p++) {
			f->pages[p] = ra->pages[i * ra->bpp + p];
			ra->pages[i * ra->bpp + p] = NULL;
		}
		ssdc_fill_add(sc, f);
		queued = true;
	}
	if (queued)
		ssdc_fill_kick(sc);
}

static void ahead_end_io(struct bio *abio)
{
	struct ssdc_ahead *ra = abio->bi_private;
	struct ssdcache *sc = ra->sc;
	struct bio *orig = ra->orig;
	struct ssdc_bio *pb = ssdc_pb(orig);
	blk_status_t status = abio->bi_status;

	bio_put(abio);
	if (status) {
		/* Perhaps a block not asked for: the bio's own, alone. */
		free_ahead(ra);
		ssdc_origin_retry(sc, orig);
		return;
	}
	ssdc_copy_bio(orig, pb->iter, ra->pages,
		      (size_t)(pb->oblock - ra->base) << (sc->block_shift + SECTOR_SHIFT), true);
	/* Before the bio ends: a suspend waits for it, then for its fills. */
	queue_ahead_fills(sc, ra, pb);
	free_ahead(ra);
	bio_endio(orig);
}

/*
 * Reads the aligned chunk around miss @bio (mapped, whole blocks, see
 * map_read()) instead, if readahead is on, the cache has room and memory
 * is at hand. Returns whether it did: then the bio ends with the chunk.
 */
bool ssdc_read_ahead(struct ssdcache *sc, struct bio *bio)
{
	struct ssdc_bio *pb = ssdc_pb(bio);
	unsigned int chunk = chunk_blocks(sc), i;
	struct ssdc_ahead *ra;
	struct bio *abio;
	u64 base, end, *recent;

	if (chunk <= pb->nblocks || !cache_has_room(sc))
		return false;
	base = round_down(pb->oblock, chunk);
	end = min_t(u64, base + chunk, sc->origin_blocks);
	if (pb->oblock + pb->nblocks > end || end - base <= pb->nblocks)
		return false;
	recent = &sc->ra_recent[hash_64(base, SSDC_READAHEAD_RECENT_BITS)];
	if (READ_ONCE(*recent) == base + 1)
		return false;
	ra = alloc_ahead(sc, end - base);
	if (!ra)
		return false;
	ra->orig = bio;
	ra->base = base;
	if (!decide_fills(sc, ra, pb))
		goto no;
	abio = bio_alloc_bioset(sc->origin->bdev, ra->nblocks * ra->bpp,
				REQ_OP_READ, GFP_NOWAIT | __GFP_NOWARN, &sc->bs);
	if (!abio)
		goto no;
	bio_clone_blkg_association(abio, bio);
	abio->bi_ioprio = bio->bi_ioprio;
	abio->bi_iter.bi_sector = base << sc->block_shift;
	for (i = 0; i < ra->nblocks * ra->bpp; i++)
		__bio_add_page(abio, ra->pages[i], PAGE_SIZE, 0);
	abio->bi_end_io = ahead_end_io;
	abio->bi_private = ra;
	WRITE_ONCE(*recent, base + 1);
	pb->kind = SSDC_BIO_PASS;
	ssdc_count(sc, SSDC_C_READAHEADS);
	ssdc_count_bio(sc, false, abio);
	submit_bio_noacct(abio);
	return true;
no:
	free_ahead(ra);
	return false;
}
