// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the device-mapper target.
 *
 *   ssdcache <origin_dev> <cache_dev> <mode> [<#opt_args> <opt_args>...]
 *
 * See args.c for the arguments and Documentation/ssdcache.rst for the
 * status line and the messages.
 */
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "ssdcache.h"

#define SSDCACHE_VERSION_MAJOR 0
#define SSDCACHE_VERSION_MINOR 3
#define SSDCACHE_VERSION_PATCH 0

static void ssdc_destroy(struct ssdcache *sc)
{
	ssdc_wb_exit(sc);
	ssdc_io_exit(sc);
	ssdc_meta_exit(sc);
	ssdc_cache_free(sc);
	free_percpu(sc->stats);
	if (sc->cache)
		dm_put_device(sc->ti, sc->cache);
	if (sc->origin)
		dm_put_device(sc->ti, sc->origin);
	kfree(sc);
}

/*
 * device-mapper claims devices for all its tables with one holder, so a
 * device already used by another table opens fine: count the claims. One
 * claim counts once on a partition and twice on a whole device (see
 * bd_finish_claiming()). A reload of this same mapped device reuses its
 * claim and adds none.
 */
static bool claimed_elsewhere(struct block_device *bdev)
{
	int ours = bdev_is_partition(bdev) ? 1 : 2;

	return READ_ONCE(bdev->bd_holders) > ours;
}

static int open_devices(struct ssdcache *sc, struct ssdc_args *args)
{
	struct dm_target *ti = sc->ti;
	int r;

	r = dm_get_device(ti, args->origin_path, dm_table_get_mode(ti->table),
			  &sc->origin);
	if (r) {
		ti->error = "Cannot open origin device";
		DMERR("%s: cannot open origin device %s: %d",
		      ssdcache_name(sc), args->origin_path, r);
		return r;
	}
	r = dm_get_device(ti, args->cache_path, SSDC_OPEN_RW,
			  &sc->cache);
	if (r) {
		ti->error = "Cannot open cache device";
		DMERR("%s: cannot open cache device %s: %d",
		      ssdcache_name(sc), args->cache_path, r);
		return r;
	}
	if (claimed_elsewhere(sc->origin->bdev)) {
		ti->error = "Origin device is in use by another device";
		return -EBUSY;
	}
	if (claimed_elsewhere(sc->cache->bdev)) {
		ti->error = "Cache device is in use by another device";
		return -EBUSY;
	}
	if (bdev_whole(sc->origin->bdev) == bdev_whole(sc->cache->bdev)) {
		ti->error = "Origin and cache are the same device";
		return -EINVAL;
	}
	if (ti->len != bdev_nr_sectors(sc->origin->bdev)) {
		ti->error = "Target length differs from the origin size";
		DMERR("%s: target is %llu sectors but origin %s has %llu",
		      ssdcache_name(sc), (unsigned long long)ti->len,
		      sc->origin->name,
		      (unsigned long long)bdev_nr_sectors(sc->origin->bdev));
		return -EINVAL;
	}
	return 0;
}

static int ssdcache_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct ssdc_args args;
	struct ssdcache *sc;
	int r;

	r = ssdc_parse_args(ti, argc, argv, &args);
	if (r)
		return r;
	sc = kzalloc(sizeof(*sc), GFP_KERNEL);
	if (!sc) {
		ti->error = "Cannot allocate ssdcache context";
		return -ENOMEM;
	}
	sc->ti = ti;
	sc->mode = args.mode;
	sc->policy = args.policy;
	sc->seq_cutoff = args.seq_cutoff;
	ssdc_seq_init(sc);
	ssdc_health_init(sc);
	sc->stats = alloc_percpu(struct ssdc_stats);
	if (!sc->stats) {
		ti->error = "Cannot allocate statistics";
		r = -ENOMEM;
		goto bad;
	}
	r = open_devices(sc, &args);
	if (r)
		goto bad;
	if (args.format) {
		r = ssdc_format(sc, &args, &ti->error);
		sc->loaded = true;
	} else {
		/* The map is loaded at the first resume: see ssdcache_preresume(). */
		r = ssdc_load_sb(sc, &args, &ti->error);
		if (!r)
			r = ssdc_cache_alloc(sc, &ti->error);
		if (!r)
			r = ssdc_meta_init(sc);
	}
	if (r)
		goto bad;
	r = ssdc_io_init(sc);
	if (!r)
		r = ssdc_wb_init(sc);
	if (r) {
		ti->error = "Cannot allocate I/O resources";
		goto bad;
	}
	ssdc_tunables_apply_args(sc, &args);

	ti->num_flush_bios = 1;
	/*
	 * Advertise a volatile write cache even over devices without one: in
	 * write-back mode a completed write is durable only after a commit,
	 * which REQ_PREFLUSH and REQ_FUA ask for.
	 */
	ti->flush_supported = true;
	ti->num_discard_bios = 1;
	/*
	 * No REQ_OP_WRITE_ZEROES: the block layer then writes zero pages,
	 * which take the normal write path (dirty blocks included).
	 */
	ti->num_write_zeroes_bios = 0;
	ti->per_io_data_size = sizeof(struct ssdc_bio);
	ti->private = sc;
	return 0;
bad:
	if (r == -ENOMEM && !ti->error)
		ti->error = "Out of memory";
	ssdc_destroy(sc);
	return r;
}

/* Brings the SSD up to date: no I/O of ours is under way afterwards. */
static void quiesce(struct ssdcache *sc)
{
	ssdc_wb_stop(sc);
	ssdc_io_drain(sc);
	ssdc_health_quiesce(sc);
	ssdc_meta_commit(sc);
	/* Slots still UNSYNCED then (a write racing the last commit): again. */
	if (READ_ONCE(sc->valid_pending))
		ssdc_meta_commit(sc);
	/* Leave a short journal for the next load. */
	mutex_lock(&sc->commit_lock);
	if (sc->loaded && !READ_ONCE(sc->failed) && ssdc_checkpoint(sc))
		ssdc_meta_fail(sc, -EIO, "checkpoint");
	mutex_unlock(&sc->commit_lock);
}

/*
 * Nothing is written here: the table's last suspend (device-mapper always
 * suspends a table before it is destroyed or replaced) wrote everything,
 * and a table that replaces this one may already be using the cache.
 */
static void ssdcache_dtr(struct dm_target *ti)
{
	struct ssdcache *sc = ti->private;

	ssdc_sysfs_detach(sc);
	ssdc_destroy(sc);
}

/* Kernel RAM per cache block, in bytes, rounded up. */
unsigned int ssdc_ram_per_block(const struct ssdcache *sc)
{
	return DIV_ROUND_UP_ULL(ssdc_ram_bytes(sc), sc->nr_blocks);
}

static void emit_table(struct ssdcache *sc, char *result, unsigned int maxlen,
		       unsigned int *szp)
{
	unsigned int sz = *szp;

	DMEMIT("%s %s %s 24 block_size %llu policy %s sequential_cutoff %llu origin_id %s",
	       sc->origin->name, sc->cache->name, ssdc_mode_name(sc->mode),
	       (unsigned long long)sc->block_sectors << SECTOR_SHIFT,
	       ssdc_policy_name(sc->policy), sc->seq_cutoff, sc->sb.origin_id);
	DMEMIT(" dirty_high %u dirty_low %u", READ_ONCE(sc->wb_high), READ_ONCE(sc->wb_low));
	DMEMIT(" writeback_idle_ms %u writeback_rate %u writeback_yield %u",
	       READ_ONCE(sc->wb_idle_ms), READ_ONCE(sc->wb_rate), READ_ONCE(sc->wb_yield));
	DMEMIT(" error_limit %u error_halflife_ms %u readahead_kb %u",
	       READ_ONCE(sc->err_limit), READ_ONCE(sc->err_halflife_ms),
	       READ_ONCE(sc->ra_kb));
	*szp = sz;
}

static void ssdcache_status(struct dm_target *ti, status_type_t type,
			    unsigned int status_flags, char *result,
			    unsigned int maxlen)
{
	struct ssdcache *sc = ti->private;
	struct ssdc_stats t;
	unsigned int sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		ssdc_stats_sum(sc, &t);
		DMEMIT("%u %s %llu %llu/%llu %llu %llu %llu %llu %llu %llu %llu %u %s %llu %s",
		       le32_to_cpu(sc->sb.version), ssdc_mode_name(sc->mode),
		       (unsigned long long)sc->block_sectors << SECTOR_SHIFT,
		       (u64)atomic64_read(&sc->used), sc->nr_blocks,
		       (u64)atomic64_read(&sc->dirty),
		       t.c[SSDC_C_READ_HITS], t.c[SSDC_C_READ_MISSES],
		       t.c[SSDC_C_WRITE_HITS], t.c[SSDC_C_WRITE_MISSES],
		       t.c[SSDC_C_BYPASSED_READS], t.c[SSDC_C_BYPASSED_WRITES],
		       ssdc_ram_per_block(sc),
		       ssdc_policy_name(sc->policy), sc->seq_cutoff,
		       ssdc_health_state(sc));
		DMEMIT(" %s %llu %llu %llu %llu %llu %llu %u %u %u %u %u",
		       ssdc_wb_state(sc), t.c[SSDC_C_CLEANED], t.c[SSDC_C_COMMITS],
		       t.c[SSDC_C_JOURNAL_BLOCKS], t.c[SSDC_C_CHECKPOINTS],
		       t.c[SSDC_C_FLUSHES], t.c[SSDC_C_FUA],
		       READ_ONCE(sc->wb_high), READ_ONCE(sc->wb_low),
		       READ_ONCE(sc->wb_idle_ms), READ_ONCE(sc->wb_rate),
		       READ_ONCE(sc->wb_yield));
		break;
	case STATUSTYPE_TABLE:
		emit_table(sc, result, maxlen, &sz);
		break;
	case STATUSTYPE_IMA:
		DMEMIT("target_name=%s,target_version=%u.%u.%u,",
		       SSDCACHE_TARGET_NAME, SSDCACHE_VERSION_MAJOR,
		       SSDCACHE_VERSION_MINOR, SSDCACHE_VERSION_PATCH);
		DMEMIT("origin_name=%s,cache_name=%s,mode=%s;", sc->origin->name,
		       sc->cache->name, ssdc_mode_name(sc->mode));
		break;
	}
}

/*
 * Sets tunable @key to @val, for a message or a sysfs file: 0, -EINVAL
 * for a bad value (nothing changes), -ENOTTY if @key is no tunable.
 */
int ssdc_set_tunable(struct ssdcache *sc, const char *key, const char *val)
{
	enum ssdcache_mode mode;
	enum ssdc_policy policy;
	u64 v;

	if (!strcasecmp(key, "policy")) {
		if (ssdc_parse_policy(val, &policy)) {
			DMERR("%s: unknown policy \"%s\" (lru, fifo)", ssdcache_name(sc), val);
			return -EINVAL;
		}
		WRITE_ONCE(sc->policy, policy);
		return 0;
	}
	if (!strcasecmp(key, "sequential_cutoff")) {
		if (kstrtou64(val, 10, &v)) {
			DMERR("%s: invalid sequential_cutoff \"%s\"", ssdcache_name(sc), val);
			return -EINVAL;
		}
		WRITE_ONCE(sc->seq_cutoff, v);
		return 0;
	}
	if (!strcasecmp(key, "mode")) {
		if (ssdc_parse_mode(val, &mode)) {
			DMERR("%s: unknown mode \"%s\" (writethrough, writearound, writeback)",
			      ssdcache_name(sc), val);
			return -EINVAL;
		}
		/*
		 * At once for new writes. Leaving write-back, the dirty blocks
		 * are written back in the background ("draining" in status);
		 * they are served from the SSD until then, as in any mode.
		 */
		WRITE_ONCE(sc->mode, mode);
		ssdc_wb_kick(sc);
		return 0;
	}
	return ssdc_tunable_set(sc, key, val);
}

static int ssdcache_message(struct dm_target *ti, unsigned int argc,
			    char **argv, char *result, unsigned int maxlen)
{
	struct ssdcache *sc = ti->private;
	int r;

	r = ssdcache_selftest_message(sc, argc, argv);
	if (r != -ENOTTY)
		return r;
	r = ssdc_wb_message(sc, argc, argv);
	if (r != -ENOTTY)
		return r;
	r = ssdc_health_message(sc, argc, argv);
	if (r != -ENOTTY)
		return r;
	if (argc == 1 && !strcasecmp(argv[0], "reset_stats")) {
		ssdc_stats_reset(sc);
		return 0;
	}
	if (argc == 2) {
		r = ssdc_set_tunable(sc, argv[0], argv[1]);
		if (r != -ENOTTY)
			return r;
	}
	DMERR("%s: unrecognised message \"%s\"", ssdcache_name(sc),
	      argc ? argv[0] : "");
	return -EINVAL;
}

static void ssdcache_postsuspend(struct dm_target *ti)
{
	quiesce(ti->private);
}

/*
 * The first resume loads the map and replays the journal. Not earlier: on
 * a table reload, the table this one replaces is live until it has been
 * suspended, and its last commit must be seen. Its destructor, which runs
 * after this, writes nothing.
 */
static int ssdcache_preresume(struct dm_target *ti)
{
	struct ssdcache *sc = ti->private;
	char *error = NULL;
	int r;

	if (sc->loaded)
		return 0;
	r = ssdc_reread_sb(sc, &error);
	if (!r)
		r = ssdc_meta_load(sc, &error);
	if (r) {
		DMERR("%s: cannot load the cache on %s: %s", ssdcache_name(sc),
		      sc->cache->name, error ? error : "error");
		return r;
	}
	sc->loaded = true;
	ssdc_health_load(sc);
	return 0;
}

static void ssdcache_resume(struct dm_target *ti)
{
	struct ssdcache *sc = ti->private;
	unsigned int noio;

	/*
	 * Statistics are no reason to refuse I/O: a failure is only logged.
	 * No allocation here may wait for I/O to this suspended device.
	 */
	if (!sc->sysfs) {
		noio = memalloc_noio_save();
		if (ssdc_sysfs_attach(sc))
			DMWARN("%s: no sysfs directory for the cache", ssdcache_name(sc));
		memalloc_noio_restore(noio);
	}
	ssdc_wb_start(sc);
}

static int ssdcache_iterate_devices(struct dm_target *ti,
				    iterate_devices_callout_fn fn, void *data)
{
	struct ssdcache *sc = ti->private;
	int r;

	r = fn(ti, sc->origin, 0, ti->len, data);
	if (!r)
		r = fn(ti, sc->cache, 0, bdev_nr_sectors(sc->cache->bdev), data);
	return r;
}

/*
 * A write of part of a cache block evicts its clean copy in every mode,
 * and goes to the origin unless the block is dirty on the SSD (io.c),
 * where a whole block stays cached, in write-back mode on the SSD alone.
 * So the cache block is advertised as the unit to write: software that
 * sizes its writes by the device then writes whole blocks (MariaDB's redo
 * log with O_DIRECT takes the physical block size, mkfs.xfs its sector
 * size). The physical block size at most a page, which no tool finds too
 * large; the logical block size stays the devices', so that a filesystem
 * made on the origin alone still mounts.
 */
static void ssdcache_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct ssdcache *sc = ti->private;
	unsigned int bytes = (unsigned int)sc->block_sectors << SECTOR_SHIFT;

	limits->physical_block_size = max_t(unsigned int, limits->physical_block_size,
					    min_t(unsigned int, bytes, PAGE_SIZE));
	limits->io_min = max(limits->io_min, bytes);
}

static struct target_type ssdcache_target = {
	.name = SSDCACHE_TARGET_NAME,
	.version = { SSDCACHE_VERSION_MAJOR, SSDCACHE_VERSION_MINOR,
		     SSDCACHE_VERSION_PATCH },
	.module = THIS_MODULE,
	.ctr = ssdcache_ctr,
	.dtr = ssdcache_dtr,
	.map = ssdc_map,
	.end_io = ssdc_end_io,
	.postsuspend = ssdcache_postsuspend,
	.preresume = ssdcache_preresume,
	.resume = ssdcache_resume,
	.status = ssdcache_status,
	.message = ssdcache_message,
	.iterate_devices = ssdcache_iterate_devices,
	.io_hints = ssdcache_io_hints,
};

static int __init dm_ssdcache_init(void)
{
	int r;

	ssdc_sysfs_init();
	r = dm_register_target(&ssdcache_target);
	if (r)
		DMERR("cannot register the target: %d", r);
	return r;
}

static void __exit dm_ssdcache_exit(void)
{
	dm_unregister_target(&ssdcache_target);
}

module_init(dm_ssdcache_init);
module_exit(dm_ssdcache_exit);

MODULE_DESCRIPTION(DM_NAME " SSD cache target for slow block devices");
MODULE_AUTHOR("The ssdcache developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(__stringify(SSDCACHE_VERSION_MAJOR) "."
	       __stringify(SSDCACHE_VERSION_MINOR) "."
	       __stringify(SSDCACHE_VERSION_PATCH));
