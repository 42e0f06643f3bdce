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
 */
#include <linux/jiffies.h>

#include "ssdcache.h"

/* A stream idle for longer than this is forgotten. */
#define SSDC_STREAM_TIMEOUT	(5 * HZ)

bool ssdc_seq_bypass(struct ssdcache *sc, struct bio *bio)
{
	u64 cutoff = READ_ONCE(sc->seq_cutoff);
	sector_t start = bio->bi_iter.bi_sector;
	unsigned long now = jiffies, flags;
	struct ssdc_stream *st, *oldest = NULL;
	bool bypass;
	int i;

	if (!cutoff)
		return false;
	spin_lock_irqsave(&sc->seq_lock, flags);
	for (i = 0; i < SSDC_SEQ_STREAMS; i++) {
		st = &sc->streams[i];
		if (st->bytes && time_before(now, st->last + SSDC_STREAM_TIMEOUT)) {
			if (st->next == start)
				goto found;
			if (start > st->start && start < st->next &&
			    bio_end_sector(bio) == st->next) {
				bypass = st->bypass;	/* the rest of a bio */
				goto out;
			}
		}
		if (!oldest || time_before(st->last, oldest->last))
			oldest = st;
	}
	st = oldest;
	st->bytes = 0;
found:
	st->bytes += bio->bi_iter.bi_size;
	st->start = start;
	st->next = bio_end_sector(bio);
	st->last = now;
	st->bypass = st->bytes > cutoff;
	bypass = st->bypass;
out:
	spin_unlock_irqrestore(&sc->seq_lock, flags);
	return bypass;
}
