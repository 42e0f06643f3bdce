// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: sequential cutoff.
 *
 * Large sequential I/O (a backup, a table scan, a log) would flush the
 * hot set out of the cache for data read once. Like bcache, ssdcache
 * tracks recent streams: a bio that starts where a recent stream ended
 * extends it, and once a stream has moved more than sequential_cutoff
 * bytes, its bios bypass the cache. Streams are matched by position, not
 * by task, so they also work for I/O submitted from kernel threads.
 *
 * A bio that is not bypassed is handled one cache block at a time, and
 * device-mapper maps the rest of it again as a new bio: such a rest (it
 * starts inside the stream's last bio and ends where that bio ended) is
 * not a new stream, and gets the decision its bio got. Counting rests as
 * streams would overwrite the real one, which then never reached the
 * cutoff with bios of more than one block.
 *
 * Every bio of a cache with a cutoff comes here, random ones too, so
 * finding its stream costs the same however many streams there are: the
 * streams are hashed by where they end (a bio extends the stream found
 * under its start, a rest is found under its end) and kept in the order
 * of their last use, the least recently used one taken for a new stream.
 * Walking all the streams instead took about 350 instructions a bio.
 */
#include <linux/hash.h>
#include <linux/jiffies.h>

#include "ssdcache.h"

/* A stream idle for longer than this is forgotten. */
#define SSDC_STREAM_TIMEOUT	(5 * HZ)

void ssdc_seq_init(struct ssdcache *sc)
{
	int i;

	spin_lock_init(&sc->seq_lock);
	INIT_LIST_HEAD(&sc->seq_lru);
	for (i = 0; i < ARRAY_SIZE(sc->seq_hash); i++)
		INIT_HLIST_HEAD(&sc->seq_hash[i]);
	for (i = 0; i < SSDC_SEQ_STREAMS; i++) {
		INIT_HLIST_NODE(&sc->streams[i].hash);
		list_add_tail(&sc->streams[i].lru, &sc->seq_lru);
	}
}

static struct hlist_head *seq_bucket(struct ssdcache *sc, sector_t next)
{
	return &sc->seq_hash[hash_64(next, SSDC_SEQ_HASH_BITS)];
}

/* The live stream that ends at @next, or NULL. Caller holds seq_lock. */
static struct ssdc_stream *stream_ending(struct ssdcache *sc, sector_t next,
					 unsigned long now)
{
	struct ssdc_stream *st;

	hlist_for_each_entry(st, seq_bucket(sc, next), hash) {
		if (st->next == next && st->bytes &&
		    time_before(now, st->last + SSDC_STREAM_TIMEOUT))
			return st;
	}
	return NULL;
}

/* ssdc_seq_bypass() with a cutoff: tracks @bio's stream. */
bool ssdc_seq_track(struct ssdcache *sc, struct bio *bio, u64 cutoff)
{
	sector_t start = bio->bi_iter.bi_sector, end = bio_end_sector(bio);
	unsigned long now = jiffies, flags;
	struct ssdc_stream *st;
	bool bypass;

	spin_lock_irqsave(&sc->seq_lock, flags);
	st = stream_ending(sc, start, now);
	if (!st) {
		st = stream_ending(sc, end, now);
		if (st && start > st->start && start < st->next) {
			bypass = st->bypass;	/* the rest of a bio */
			goto out;
		}
		/* A new stream, in place of the least recently used one. */
		st = list_last_entry(&sc->seq_lru, struct ssdc_stream, lru);
		st->bytes = 0;
	}
	st->bytes += bio->bi_iter.bi_size;
	st->start = start;
	st->next = end;
	st->last = now;
	st->bypass = st->bytes > cutoff;
	hlist_del_init(&st->hash);
	hlist_add_head(&st->hash, seq_bucket(sc, end));
	list_move(&st->lru, &sc->seq_lru);
	bypass = st->bypass;
out:
	spin_unlock_irqrestore(&sc->seq_lock, flags);
	return bypass;
}
