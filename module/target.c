// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: the device-mapper target.
 *
 * This version is the pass-through foundation: every bio is remapped to
 * the origin device unchanged. The table line is
 *
 *     ssdcache <origin_dev>
 *
 * and the target must cover the whole origin.
 */
#include <linux/module.h>
#include <linux/slab.h>

#include "ssdcache.h"

#define SSDCACHE_VERSION_MAJOR 0
#define SSDCACHE_VERSION_MINOR 1
#define SSDCACHE_VERSION_PATCH 0

static int ssdcache_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct ssdcache *sc;
	sector_t origin_sectors;
	int r;

	if (argc != 1) {
		ti->error = "Invalid argument count: expected <origin_dev>";
		return -EINVAL;
	}

	sc = kzalloc(sizeof(*sc), GFP_KERNEL);
	if (!sc) {
		ti->error = "Cannot allocate ssdcache context";
		return -ENOMEM;
	}
	sc->ti = ti;

	r = dm_get_device(ti, argv[0], dm_table_get_mode(ti->table), &sc->origin);
	if (r) {
		ti->error = "Cannot open origin device";
		DMERR("%s: cannot open origin device %s: %d",
		      ssdcache_name(sc), argv[0], r);
		goto bad_free;
	}

	origin_sectors = bdev_nr_sectors(sc->origin->bdev);
	if (ti->len != origin_sectors) {
		ti->error = "Target length differs from the origin size";
		DMERR("%s: target is %llu sectors but origin %s has %llu",
		      ssdcache_name(sc), (unsigned long long)ti->len,
		      sc->origin->name, (unsigned long long)origin_sectors);
		r = -EINVAL;
		goto bad_put;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->private = sc;
	return 0;

bad_put:
	dm_put_device(ti, sc->origin);
bad_free:
	kfree(sc);
	return r;
}

static void ssdcache_dtr(struct dm_target *ti)
{
	struct ssdcache *sc = ti->private;

	dm_put_device(ti, sc->origin);
	kfree(sc);
}

static int ssdcache_map(struct dm_target *ti, struct bio *bio)
{
	struct ssdcache *sc = ti->private;

	bio_set_dev(bio, sc->origin->bdev);
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	return DM_MAPIO_REMAPPED;
}

static void ssdcache_status(struct dm_target *ti, status_type_t type,
			    unsigned int status_flags, char *result,
			    unsigned int maxlen)
{
	struct ssdcache *sc = ti->private;
	unsigned int sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%u passthrough", SSDCACHE_FORMAT_VERSION);
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s", sc->origin->name);
		break;
	case STATUSTYPE_IMA:
		DMEMIT("target_name=%s,target_version=%u.%u.%u,origin_name=%s;",
		       SSDCACHE_TARGET_NAME, SSDCACHE_VERSION_MAJOR,
		       SSDCACHE_VERSION_MINOR, SSDCACHE_VERSION_PATCH,
		       sc->origin->name);
		break;
	}
}

static int ssdcache_message(struct dm_target *ti, unsigned int argc,
			    char **argv, char *result, unsigned int maxlen)
{
	struct ssdcache *sc = ti->private;
	int r;

	r = ssdcache_selftest_message(sc, argc, argv);
	if (r != -ENOTTY)
		return r;

	DMERR("%s: unrecognised message \"%s\"", ssdcache_name(sc),
	      argc ? argv[0] : "");
	return -EINVAL;
}

static int ssdcache_iterate_devices(struct dm_target *ti,
				    iterate_devices_callout_fn fn, void *data)
{
	struct ssdcache *sc = ti->private;

	return fn(ti, sc->origin, 0, ti->len, data);
}

static struct target_type ssdcache_target = {
	.name = SSDCACHE_TARGET_NAME,
	.version = { SSDCACHE_VERSION_MAJOR, SSDCACHE_VERSION_MINOR,
		     SSDCACHE_VERSION_PATCH },
	.module = THIS_MODULE,
	.ctr = ssdcache_ctr,
	.dtr = ssdcache_dtr,
	.map = ssdcache_map,
	.status = ssdcache_status,
	.message = ssdcache_message,
	.iterate_devices = ssdcache_iterate_devices,
};

static int __init dm_ssdcache_init(void)
{
	int r;

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
