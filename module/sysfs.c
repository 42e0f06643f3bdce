// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: /sys/block/dm-N/ssdcache/.
 *
 * One directory per mapped device, not per table: a table reload builds a
 * new ssdcache instance while the old one is still live, and both must not
 * own the same directory. So the directory is shared by every instance of
 * the device; it shows the one resumed last ("live"), appears at the first
 * resume and goes with the last instance's destructor. A new instance
 * starts from its predecessor's counters. A table with two ssdcache
 * targets shows the one resumed last.
 *
 * A show or store runs under sysfs_lock with the live instance, which a
 * destructor clears under the same lock before it frees anything; the
 * directory itself is removed outside the lock, since kobject_del() waits
 * for shows and stores under way.
 */
#include <linux/blkdev.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "ssdcache.h"

struct ssdc_sysfs {
	struct kobject kobj;
	struct list_head list;		/* in sysfs_dirs */
	struct mapped_device *md;
	struct ssdcache *live;		/* NULL while none is */
	unsigned int users;		/* instances that attached */
};

static DEFINE_MUTEX(sysfs_lock);	/* protects sysfs_dirs and the fields */
static LIST_HEAD(sysfs_dirs);

struct ssdc_attr {
	struct attribute attr;
	ssize_t (*show)(struct ssdcache *sc, const struct ssdc_attr *a, char *buf);
	ssize_t (*store)(struct ssdcache *sc, const struct ssdc_attr *a,
			 const char *buf, size_t len);
	int id;
};

/* ---- the cache's settings and state ---- */

enum {
	INFO_STATE, INFO_WRITEBACK, INFO_BLOCK_SIZE, INFO_CACHE_BLOCKS,
	INFO_ORIGIN, INFO_CACHE, INFO_RAM_PER_BLOCK, INFO_HEALTH, INFO_BACKOFF,
};

static const char *state_name(struct ssdcache *sc)
{
	if (READ_ONCE(sc->failed))
		return "failed";
	return dm_suspended(sc->ti) ? "suspended" : "running";
}

static ssize_t info_show(struct ssdcache *sc, const struct ssdc_attr *a, char *buf)
{
	switch (a->id) {
	case INFO_STATE:
		return sysfs_emit(buf, "%s\n", state_name(sc));
	case INFO_WRITEBACK:
		return sysfs_emit(buf, "%s\n", ssdc_wb_state(sc));
	case INFO_BLOCK_SIZE:
		return sysfs_emit(buf, "%llu\n",
				  (unsigned long long)sc->block_sectors << SECTOR_SHIFT);
	case INFO_CACHE_BLOCKS:
		return sysfs_emit(buf, "%llu\n", sc->nr_blocks);
	case INFO_ORIGIN:
		return sysfs_emit(buf, "%s\n", sc->origin->name);
	case INFO_CACHE:
		return sysfs_emit(buf, "%s\n", sc->cache->name);
	case INFO_RAM_PER_BLOCK:
		return sysfs_emit(buf, "%u\n", ssdc_ram_per_block(sc));
	case INFO_HEALTH:
		return sysfs_emit(buf, "%s\n", ssdc_health_state(sc));
	case INFO_BACKOFF:
		return sysfs_emit(buf, "%u\n", READ_ONCE(sc->wb_backoff_ms));
	}
	return -EINVAL;
}

enum {
	TUN_MODE, TUN_POLICY, TUN_SEQ_CUTOFF, TUN_DIRTY_HIGH, TUN_DIRTY_LOW,
	TUN_IDLE_MS, TUN_RATE, TUN_YIELD, TUN_ERROR_LIMIT, TUN_ERROR_HALFLIFE,
	TUN_READAHEAD,
};

static ssize_t tunable_show(struct ssdcache *sc, const struct ssdc_attr *a, char *buf)
{
	switch (a->id) {
	case TUN_MODE:
		return sysfs_emit(buf, "%s\n", ssdc_mode_name(READ_ONCE(sc->mode)));
	case TUN_POLICY:
		return sysfs_emit(buf, "%s\n", ssdc_policy_name(READ_ONCE(sc->policy)));
	case TUN_SEQ_CUTOFF:
		return sysfs_emit(buf, "%llu\n", READ_ONCE(sc->seq_cutoff));
	case TUN_DIRTY_HIGH:
		return sysfs_emit(buf, "%u\n", READ_ONCE(sc->wb_high));
	case TUN_DIRTY_LOW:
		return sysfs_emit(buf, "%u\n", READ_ONCE(sc->wb_low));
	case TUN_IDLE_MS:
		return sysfs_emit(buf, "%u\n", READ_ONCE(sc->wb_idle_ms));
	case TUN_RATE:
		return sysfs_emit(buf, "%u\n", READ_ONCE(sc->wb_rate));
	case TUN_YIELD:
		return sysfs_emit(buf, "%u\n", READ_ONCE(sc->wb_yield));
	case TUN_ERROR_LIMIT:
		return sysfs_emit(buf, "%u\n", READ_ONCE(sc->err_limit));
	case TUN_ERROR_HALFLIFE:
		return sysfs_emit(buf, "%u\n", READ_ONCE(sc->err_halflife_ms));
	case TUN_READAHEAD:
		return sysfs_emit(buf, "%u\n", READ_ONCE(sc->ra_kb));
	}
	return -EINVAL;
}

/* The same checks as the message of the same name: a bad value changes nothing. */
static ssize_t tunable_store(struct ssdcache *sc, const struct ssdc_attr *a,
			     const char *buf, size_t len)
{
	char *val = kstrndup(buf, len, GFP_KERNEL);
	int r;

	if (!val)
		return -ENOMEM;
	r = ssdc_set_tunable(sc, a->attr.name, strim(val));
	kfree(val);
	if (r == -ENOTTY)
		r = -EINVAL;
	return r ? r : len;
}

#define SSDC_ATTR(_name, _mode, _show, _store, _id)			\
	static struct ssdc_attr attr_##_name = {			\
		.attr = { .name = #_name, .mode = _mode },		\
		.show = _show, .store = _store, .id = _id,		\
	}
#define INFO_ATTR(_name, _id)	SSDC_ATTR(_name, 0444, info_show, NULL, _id)
#define TUNABLE_ATTR(_name, _id) \
	SSDC_ATTR(_name, 0644, tunable_show, tunable_store, _id)

INFO_ATTR(state, INFO_STATE);
INFO_ATTR(writeback, INFO_WRITEBACK);
INFO_ATTR(block_size, INFO_BLOCK_SIZE);
INFO_ATTR(cache_blocks, INFO_CACHE_BLOCKS);
INFO_ATTR(origin, INFO_ORIGIN);
INFO_ATTR(cache, INFO_CACHE);
INFO_ATTR(ram_per_block, INFO_RAM_PER_BLOCK);
INFO_ATTR(health, INFO_HEALTH);
INFO_ATTR(writeback_backoff_ms, INFO_BACKOFF);
TUNABLE_ATTR(mode, TUN_MODE);
TUNABLE_ATTR(policy, TUN_POLICY);
TUNABLE_ATTR(sequential_cutoff, TUN_SEQ_CUTOFF);
TUNABLE_ATTR(dirty_high, TUN_DIRTY_HIGH);
TUNABLE_ATTR(dirty_low, TUN_DIRTY_LOW);
TUNABLE_ATTR(writeback_idle_ms, TUN_IDLE_MS);
TUNABLE_ATTR(writeback_rate, TUN_RATE);
TUNABLE_ATTR(writeback_yield, TUN_YIELD);
TUNABLE_ATTR(error_limit, TUN_ERROR_LIMIT);
TUNABLE_ATTR(error_halflife_ms, TUN_ERROR_HALFLIFE);
TUNABLE_ATTR(readahead_kb, TUN_READAHEAD);

static struct attribute *top_attrs[] = {
	&attr_state.attr, &attr_writeback.attr, &attr_block_size.attr,
	&attr_cache_blocks.attr, &attr_origin.attr, &attr_cache.attr,
	&attr_ram_per_block.attr, &attr_mode.attr, &attr_policy.attr,
	&attr_sequential_cutoff.attr, &attr_dirty_high.attr,
	&attr_dirty_low.attr, &attr_writeback_idle_ms.attr,
	&attr_writeback_rate.attr, &attr_writeback_yield.attr,
	&attr_health.attr, &attr_writeback_backoff_ms.attr,
	&attr_error_limit.attr, &attr_error_halflife_ms.attr,
	&attr_readahead_kb.attr,
	NULL,
};

static const struct attribute_group top_group = {
	.attrs = top_attrs,
};

/* ---- stats/ ---- */

enum { STAT_HIT_RATIO, STAT_LAT_SSD, STAT_LAT_ORIGIN };

static ssize_t stat_show(struct ssdcache *sc, const struct ssdc_attr *a, char *buf)
{
	struct ssdc_stats *t = kmalloc(sizeof(*t), GFP_KERNEL);
	ssize_t r;

	if (!t)
		return -ENOMEM;
	ssdc_stats_sum(sc, t);
	r = sysfs_emit(buf, "%llu\n", ssdc_stat_value(sc, t, a->id));
	kfree(t);
	return r;
}

static ssize_t derived_show(struct ssdcache *sc, const struct ssdc_attr *a, char *buf)
{
	struct ssdc_stats *t = kmalloc(sizeof(*t), GFP_KERNEL);
	ssize_t r;

	if (!t)
		return -ENOMEM;
	ssdc_stats_sum(sc, t);
	if (a->id == STAT_HIT_RATIO)
		r = ssdc_hit_ratio_show(t, buf, PAGE_SIZE);
	else
		r = ssdc_latency_show(t, a->id == STAT_LAT_SSD ? SSDC_LAT_SSD :
				      SSDC_LAT_ORIGIN, buf, PAGE_SIZE);
	kfree(t);
	return r;
}

/* Writing 1 zeroes every counter and histogram, like "reset_stats". */
static ssize_t reset_store(struct ssdcache *sc, const struct ssdc_attr *a,
			   const char *buf, size_t len)
{
	bool v;

	if (kstrtobool(buf, &v) || !v)
		return -EINVAL;
	ssdc_stats_reset(sc);
	return len;
}

SSDC_ATTR(read_hit_ratio, 0444, derived_show, NULL, STAT_HIT_RATIO);
SSDC_ATTR(read_latency_ssd_us, 0444, derived_show, NULL, STAT_LAT_SSD);
SSDC_ATTR(read_latency_origin_us, 0444, derived_show, NULL, STAT_LAT_ORIGIN);
SSDC_ATTR(reset, 0200, NULL, reset_store, 0);

/* One file per named statistic, filled in by ssdc_sysfs_init(). */
static struct ssdc_attr stat_attrs[SSDC_NR_STATS];
static struct attribute *stats_attrs[SSDC_NR_STATS + 5];

static const struct attribute_group stats_group = {
	.name = "stats",
	.attrs = stats_attrs,
};

static const struct attribute_group *ssdc_groups[] = {
	&top_group, &stats_group, NULL,
};

void ssdc_sysfs_init(void)
{
	unsigned int i;

	for (i = 0; i < SSDC_NR_STATS; i++) {
		stat_attrs[i].attr.name = ssdc_stat_name(i);
		stat_attrs[i].attr.mode = 0444;
		sysfs_attr_init(&stat_attrs[i].attr);
		stat_attrs[i].show = stat_show;
		stat_attrs[i].id = i;
		stats_attrs[i] = &stat_attrs[i].attr;
	}
	stats_attrs[i++] = &attr_read_hit_ratio.attr;
	stats_attrs[i++] = &attr_read_latency_ssd_us.attr;
	stats_attrs[i++] = &attr_read_latency_origin_us.attr;
	stats_attrs[i++] = &attr_reset.attr;
	stats_attrs[i] = NULL;
}

/* ---- the directory ---- */

static ssize_t ssdc_attr_show(struct kobject *kobj, struct attribute *attr, char *buf)
{
	struct ssdc_sysfs *d = container_of(kobj, struct ssdc_sysfs, kobj);
	struct ssdc_attr *a = container_of(attr, struct ssdc_attr, attr);
	ssize_t r = -EIO;

	mutex_lock(&sysfs_lock);
	if (!d->live)
		r = -ENODEV;
	else if (a->show)
		r = a->show(d->live, a, buf);
	mutex_unlock(&sysfs_lock);
	return r;
}

static ssize_t ssdc_attr_store(struct kobject *kobj, struct attribute *attr,
			       const char *buf, size_t len)
{
	struct ssdc_sysfs *d = container_of(kobj, struct ssdc_sysfs, kobj);
	struct ssdc_attr *a = container_of(attr, struct ssdc_attr, attr);
	ssize_t r = -EIO;

	mutex_lock(&sysfs_lock);
	if (!d->live)
		r = -ENODEV;
	else if (a->store)
		r = a->store(d->live, a, buf, len);
	mutex_unlock(&sysfs_lock);
	return r;
}

static const struct sysfs_ops ssdc_sysfs_ops = {
	.show = ssdc_attr_show,
	.store = ssdc_attr_store,
};

static void ssdc_sysfs_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct ssdc_sysfs, kobj));
}

static const struct kobj_type ssdc_ktype = {
	.sysfs_ops = &ssdc_sysfs_ops,
	.default_groups = ssdc_groups,
	.release = ssdc_sysfs_release,
};

static struct ssdc_sysfs *find_dir(struct mapped_device *md)
{
	struct ssdc_sysfs *d;

	list_for_each_entry(d, &sysfs_dirs, list)
		if (d->md == md)
			return d;
	return NULL;
}

/* Makes @sc the instance its device's directory shows; creates it if need be. */
int ssdc_sysfs_attach(struct ssdcache *sc)
{
	struct mapped_device *md = dm_table_get_md(sc->ti->table);
	struct ssdc_sysfs *d;
	int r = 0;

	mutex_lock(&sysfs_lock);
	d = find_dir(md);
	if (!d) {
		d = kzalloc(sizeof(*d), GFP_KERNEL);
		if (!d) {
			r = -ENOMEM;
			goto out;
		}
		r = kobject_init_and_add(&d->kobj, &ssdc_ktype,
					 &disk_to_dev(dm_disk(md))->kobj, "%s",
					 SSDCACHE_TARGET_NAME);
		if (r) {
			kobject_put(&d->kobj);
			goto out;
		}
		d->md = md;
		list_add(&d->list, &sysfs_dirs);
		kobject_uevent(&d->kobj, KOBJ_ADD);
	}
	/* Counters survive a table reload: carry on from the last instance. */
	if (d->live && d->live != sc)
		r = ssdc_stats_inherit(sc, d->live);
	if (r)
		goto out;
	d->users++;
	d->live = sc;
	sc->sysfs = d;
out:
	mutex_unlock(&sysfs_lock);
	return r;
}

/* @sc goes away; so does the directory if no other instance uses it. */
void ssdc_sysfs_detach(struct ssdcache *sc)
{
	struct ssdc_sysfs *d = sc->sysfs, *gone = NULL;

	if (!d)
		return;
	mutex_lock(&sysfs_lock);
	if (d->live == sc)
		d->live = NULL;
	if (!--d->users) {
		list_del(&d->list);
		gone = d;
	}
	sc->sysfs = NULL;
	mutex_unlock(&sysfs_lock);
	if (gone) {
		kobject_uevent(&gone->kobj, KOBJ_REMOVE);
		kobject_del(&gone->kobj);
		kobject_put(&gone->kobj);
	}
}
