// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the SSD's health, and the degraded state.
 *
 * Every failed SSD I/O adds one to an error score that halves every
 * error_halflife_ms (like bcache's io_error_limit and io_error_halflife).
 * When the score reaches error_limit, the cache degrades: no new data
 * goes to the SSD (no fills, no write-through copies, no new dirty
 * blocks), clean copies are no longer read, and the cleaner writes every
 * dirty block back. Dirty blocks are still read from the SSD, the only
 * place that has them; a write to one waits for its writeback (io.c).
 *
 * The state is latched: it is recorded in the superblock, survives a
 * reload, and is left only by the "clear_degraded" message.
 */
#include "ssdcache.h"

/* Halves the score once per elapsed half-life. err_lock held. */
static void decay_locked(struct ssdcache *sc, unsigned long now)
{
	unsigned long life = msecs_to_jiffies(READ_ONCE(sc->err_halflife_ms));
	unsigned long halves;

	if (!life)
		return;
	halves = (now - sc->err_stamp) / life;
	if (!halves)
		return;
	sc->err_score = halves >= 32 ? 0 : sc->err_score >> halves;
	sc->err_stamp += halves * life;
}

/* Counts one failed SSD I/O; degrades at the limit. Any context. */
void ssdc_ssd_error(struct ssdcache *sc)
{
	unsigned int limit = READ_ONCE(sc->err_limit), score;
	bool degrade = false;
	unsigned long flags;

	spin_lock_irqsave(&sc->err_lock, flags);
	decay_locked(sc, jiffies);
	if (sc->err_score < UINT_MAX)
		sc->err_score++;
	score = sc->err_score;
	/* Not before the cache serves I/O (format, load): it refuses then. */
	if (limit && score >= limit && !sc->degraded && !READ_ONCE(sc->failed) &&
	    READ_ONCE(sc->loaded)) {
		WRITE_ONCE(sc->degraded, true);
		degrade = true;
	}
	spin_unlock_irqrestore(&sc->err_lock, flags);
	if (!degrade)
		return;
	DMERR("%s: %u errors on cache device %s: degraded, no new data is cached",
	      ssdcache_name(sc), score, sc->cache->name);
	DMERR("%s: writing back %llu dirty blocks; \"clear_degraded\" ends the state",
	      ssdcache_name(sc), (u64)atomic64_read(&sc->dirty));
	queue_work(sc->wq, &sc->degrade_work);
	ssdc_wb_kick(sc);
}

/* Writes the superblock with the DEGRADED flag set as sc->degraded says. */
static int record_state(struct ssdcache *sc)
{
	u32 flags;
	int r;

	mutex_lock(&sc->commit_lock);
	flags = le32_to_cpu(sc->sb.flags) & ~SSDCACHE_SB_DEGRADED;
	if (READ_ONCE(sc->degraded))
		flags |= SSDCACHE_SB_DEGRADED;
	if (READ_ONCE(sc->failed) || flags == le32_to_cpu(sc->sb.flags)) {
		mutex_unlock(&sc->commit_lock);
		return 0;
	}
	sc->sb.flags = cpu_to_le32(flags);
	r = ssdc_write_sb(sc);
	if (r)
		ssdc_meta_fail(sc, r, "superblock write");
	mutex_unlock(&sc->commit_lock);
	return r;
}

static void degrade_fn(struct work_struct *work)
{
	record_state(container_of(work, struct ssdcache, degrade_work));
}

static int clear_degraded(struct ssdcache *sc)
{
	unsigned long flags;

	if (READ_ONCE(sc->failed)) {
		DMERR("%s: the cache has failed: reload it instead", ssdcache_name(sc));
		return -EIO;
	}
	if (!READ_ONCE(sc->degraded))
		return 0;
	/* A degrade_work still queued then finds nothing to change. */
	spin_lock_irqsave(&sc->err_lock, flags);
	sc->err_score = 0;
	sc->err_stamp = jiffies;
	WRITE_ONCE(sc->degraded, false);
	spin_unlock_irqrestore(&sc->err_lock, flags);
	if (record_state(sc))
		return -EIO;
	DMINFO("%s: degraded state cleared by the operator", ssdcache_name(sc));
	return 0;
}

/* The "clear_degraded" message; -ENOTTY for any other. */
int ssdc_health_message(struct ssdcache *sc, unsigned int argc, char **argv)
{
	if (argc == 1 && !strcasecmp(argv[0], "clear_degraded"))
		return clear_degraded(sc);
	return -ENOTTY;
}

/* "ok", "degraded" or "failed", as in the status line. */
const char *ssdc_health_state(struct ssdcache *sc)
{
	if (READ_ONCE(sc->failed))
		return "failed";
	return READ_ONCE(sc->degraded) ? "degraded" : "ok";
}

void ssdc_health_init(struct ssdcache *sc)
{
	spin_lock_init(&sc->err_lock);
	sc->err_stamp = jiffies;
	sc->err_limit = SSDC_ERROR_LIMIT;
	sc->err_halflife_ms = SSDC_ERROR_HALFLIFE_MS;
	INIT_WORK(&sc->degrade_work, degrade_fn);
}

/* After a load: a cache that was degraded still is. */
void ssdc_health_load(struct ssdcache *sc)
{
	if (!(le32_to_cpu(sc->sb.flags) & SSDCACHE_SB_DEGRADED))
		return;
	WRITE_ONCE(sc->degraded, true);
	DMWARN("%s: degraded (recorded on %s): nothing new is cached until \"clear_degraded\"",
	       ssdcache_name(sc), sc->cache->name);
}

/* Before a suspend: the state is on the SSD. */
void ssdc_health_quiesce(struct ssdcache *sc)
{
	flush_work(&sc->degrade_work);
}
