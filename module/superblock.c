// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ssdcache: superblocks, geometry, format and load.
 *
 * Format writes the empty block map first and the two superblocks last,
 * so a format that is interrupted leaves no valid superblock behind (load
 * then refuses the device) rather than a superblock over a stale map.
 */
#include <linux/blkdev.h>
#include <linux/crc32c.h>
#include <linux/gfp.h>
#include <linux/random.h>
#include <linux/string.h>

#include "ssdcache.h"

/* crc32c of a metadata block, computed with its csum field as zero. */
u32 ssdc_csum(const void *block, unsigned int len, __le32 *csum_field)
{
	__le32 saved = *csum_field;
	u32 crc;

	*csum_field = 0;
	crc = crc32c(SSDCACHE_CRC_SEED, block, len);
	*csum_field = saved;
	return crc;
}

/*
 * Synchronous I/O of one metadata block. @buf is a kmalloc'ed buffer of
 * SSDCACHE_META_BLOCK_SIZE bytes, which kmalloc aligns to a page.
 */
int ssdc_rw_block(struct block_device *bdev, sector_t sector, void *buf,
		  blk_opf_t opf)
{
	struct bio_vec bv;
	struct bio bio;
	int r;

	bio_init(&bio, bdev, &bv, 1, opf);
	bio.bi_iter.bi_sector = sector;
	__bio_add_page(&bio, virt_to_page(buf), SSDCACHE_META_BLOCK_SIZE,
		       offset_in_page(buf));
	r = submit_bio_wait(&bio);
	bio_uninit(&bio);
	return r;
}

/* Reads superblock copy @sector; returns 0 and fills @sb if it is valid. */
static int read_sb(struct ssdcache *sc, sector_t sector,
		   struct ssdcache_disk_sb *sb, bool *is_ours)
{
	int r = ssdc_rw_block(sc->cache->bdev, sector, sb, REQ_OP_READ);

	*is_ours = false;
	if (r)
		return r;
	if (le64_to_cpu(sb->magic) != SSDCACHE_MAGIC)
		return -ENOENT;
	*is_ours = true;
	if (le32_to_cpu(sb->csum) != ssdc_csum(sb, sizeof(*sb), &sb->csum))
		return -EBADMSG;
	return 0;
}

/*
 * Reads both copies into @best. Returns 0 with the newest valid copy,
 * -ENOENT if neither copy carries our magic, -EBADMSG if copies carry it
 * but none is valid, or an I/O error.
 */
static int read_best_sb(struct ssdcache *sc, struct ssdcache_disk_sb *best)
{
	static const sector_t where[] = { SSDCACHE_SB_SECTOR_A, SSDCACHE_SB_SECTOR_B };
	struct ssdcache_disk_sb *sb;
	bool found = false, ours, any_ours = false;
	unsigned int i;
	int r = 0;

	sb = kmalloc(sizeof(*sb), GFP_KERNEL);
	if (!sb)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(where); i++) {
		r = read_sb(sc, where[i], sb, &ours);
		any_ours |= ours;
		if (r == -EIO)
			break;
		if (r)
			continue;
		if (!found || le64_to_cpu(sb->seq) > le64_to_cpu(best->seq)) {
			memcpy(best, sb, sizeof(*sb));
			found = true;
		}
	}
	kfree(sb);
	if (r == -EIO)
		return r;
	if (found)
		return 0;
	return any_ours ? -EBADMSG : -ENOENT;
}

/* Writes @sb (a metadata block buffer) at @sector with PREFLUSH and FUA. */
static int write_sb_block(struct ssdcache *sc, sector_t sector,
			  const struct ssdcache_disk_sb *sb)
{
	void *buf = kmemdup(sb, sizeof(*sb), GFP_NOIO);
	int r;

	if (!buf)
		return -ENOMEM;
	r = ssdc_rw_block(sc->cache->bdev, sector, buf,
			  REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA);
	kfree(buf);
	ssdc_count_io(sc, true, true, SSDCACHE_META_BLOCK_SIZE);
	if (r)
		ssdc_count_error(sc, true, true);
	return r;
}

/* Writes the superblock to the copy that is not the newest. */
int ssdc_write_sb(struct ssdcache *sc)
{
	struct ssdcache_disk_sb *sb = &sc->sb;
	u64 seq = le64_to_cpu(sb->seq) + 1;

	sb->seq = cpu_to_le64(seq);
	sb->csum = cpu_to_le32(ssdc_csum(sb, sizeof(*sb), &sb->csum));
	return write_sb_block(sc, (seq & 1) ? SSDCACHE_SB_SECTOR_A : SSDCACHE_SB_SECTOR_B, sb);
}

/* Zeroes both superblock copies: the device then holds no cache. */
int ssdc_wipe_sbs(struct ssdcache *sc)
{
	struct ssdcache_disk_sb *zero = kzalloc(sizeof(*zero), GFP_NOIO);
	int r;

	if (!zero)
		return -ENOMEM;
	r = write_sb_block(sc, SSDCACHE_SB_SECTOR_A, zero);
	if (!r)
		r = write_sb_block(sc, SSDCACHE_SB_SECTOR_B, zero);
	kfree(zero);
	return r;
}

/*
 * Metadata blocks for the journal of a cache of @cache_sectors with blocks
 * of @bs sectors: four times the map pages (a checkpoint, due when half
 * the journal is used, then writes at most one map page per two journal
 * blocks), and at least ~0.1% of the cache; 1 MiB to 64 MiB. With a
 * journal as small as the map, a database's fsyncs, one small commit
 * each, checkpointed every few hundred commits, and a checkpoint wrote
 * most map pages: about as many map page writes as data writes.
 */
static u64 journal_blocks_for(sector_t cache_sectors, unsigned int bs)
{
	u64 pages = div64_u64(cache_sectors, bs) / SSDCACHE_MAP_ENTRIES_PER_PAGE;
	u64 blocks = max_t(u64, 4 * pages,
			   (cache_sectors >> 10) / SSDCACHE_META_BLOCK_SECTORS);

	return clamp_t(u64, blocks, 256, 16384);
}

/*
 * Lays out a cache of @cache_sectors with blocks of @bs sectors, runs of
 * 2^@set_shift blocks sharing a set, into sc->sb. Returns -ENOSPC when
 * not even two sets of blocks fit.
 */
static int compute_geometry(struct ssdcache *sc, sector_t cache_sectors,
			    unsigned int bs, u32 set_shift)
{
	struct ssdcache_disk_sb *sb = &sc->sb;
	u64 jblocks = journal_blocks_for(cache_sectors, bs);
	sector_t map_start = SSDCACHE_JOURNAL_SECTOR +
			     jblocks * SSDCACHE_META_BLOCK_SECTORS;
	sector_t data_start;
	u64 nr, pages;

	if (cache_sectors <= map_start + bs)
		return -ENOSPC;
	/* Each block costs bs sectors of data and 2/504 of a map page. */
	nr = div64_u64((u64)(cache_sectors - map_start - bs) * SSDCACHE_MAP_ENTRIES_PER_PAGE,
		       (u64)bs * SSDCACHE_MAP_ENTRIES_PER_PAGE + 2 * SSDCACHE_META_BLOCK_SECTORS);
	nr = rounddown(nr, SSDCACHE_ASSOC);
	for (;;) {
		if (nr < 2 * SSDCACHE_ASSOC)
			return -ENOSPC;
		pages = DIV_ROUND_UP_ULL(nr, SSDCACHE_MAP_ENTRIES_PER_PAGE);
		data_start = ALIGN(map_start + 2 * pages * SSDCACHE_META_BLOCK_SECTORS, bs);
		if (data_start + nr * bs <= cache_sectors)
			break;
		nr -= SSDCACHE_ASSOC;
	}
	sb->cache_sectors = cpu_to_le64(cache_sectors);
	sb->block_sectors = cpu_to_le32(bs);
	sb->assoc = cpu_to_le32(SSDCACHE_ASSOC);
	sb->nr_blocks = cpu_to_le64(nr);
	sb->journal_start = cpu_to_le64(SSDCACHE_JOURNAL_SECTOR);
	sb->journal_blocks = cpu_to_le64(jblocks);
	sb->map_start = cpu_to_le64(map_start);
	sb->map_pages = cpu_to_le64(pages);
	sb->data_start = cpu_to_le64(data_start);
	sb->set_shift = cpu_to_le32(set_shift);
	return 0;
}

/* Fills the in-RAM geometry from sc->sb (already validated). */
static void apply_geometry(struct ssdcache *sc)
{
	struct ssdcache_disk_sb *sb = &sc->sb;

	sc->block_sectors = le32_to_cpu(sb->block_sectors);
	sc->block_shift = ilog2(sc->block_sectors);
	sc->nr_blocks = le64_to_cpu(sb->nr_blocks);
	sc->nr_sets = sc->nr_blocks / SSDCACHE_ASSOC;
	sc->set_shift = le32_to_cpu(sb->set_shift);
	sc->data_start = le64_to_cpu(sb->data_start);
	sc->map_start = le64_to_cpu(sb->map_start);
	sc->map_pages = le64_to_cpu(sb->map_pages);
	sc->j_start = le64_to_cpu(sb->journal_start);
	sc->j_blocks = le64_to_cpu(sb->journal_blocks);
	sc->j_tail = le64_to_cpu(sb->journal_tail);
	sc->j_head = sc->j_tail;
	sc->j_seq = le64_to_cpu(sb->journal_seq);
	sc->ckpt_seq = le64_to_cpu(sb->ckpt_seq);
	/* A partial block at the end of the origin is never cached. */
	sc->origin_blocks = bdev_nr_sectors(sc->origin->bdev) >> sc->block_shift;
}

static void origin_identity(struct ssdcache *sc, struct ssdc_args *args,
			    char id[SSDCACHE_ORIGIN_ID_LEN])
{
	memset(id, 0, SSDCACHE_ORIGIN_ID_LEN);
	if (args->origin_id)
		strscpy(id, args->origin_id, SSDCACHE_ORIGIN_ID_LEN);
	else
		snprintf(id, SSDCACHE_ORIGIN_ID_LEN, "%pg", sc->origin->bdev);
}

static int check_block_size(struct ssdcache *sc, unsigned int bytes, char **error)
{
	if (bytes < bdev_logical_block_size(sc->cache->bdev) ||
	    bytes < bdev_logical_block_size(sc->origin->bdev)) {
		*error = "block_size is smaller than a device's logical block size";
		return -EINVAL;
	}
	return 0;
}

/*
 * The set_shift of a new cache: runs of run_size bytes (from block_size
 * to 32 blocks), else of SSDCACHE_RUN_BYTES, or single blocks as large.
 */
static int run_shift(struct ssdc_args *args, u32 *shift, char **error)
{
	unsigned int bs = args->block_size;
	unsigned int run = args->run_size ?: max_t(unsigned int, bs, SSDCACHE_RUN_BYTES);

	if (run < bs || run / bs > BIT(SSDCACHE_MAX_SET_SHIFT)) {
		*error = "Invalid run_size: from block_size to 32 blocks";
		return -EINVAL;
	}
	*shift = ilog2(run / bs);
	return 0;
}

int ssdc_format(struct ssdcache *sc, struct ssdc_args *args, char **error)
{
	struct ssdcache_disk_sb *old;
	u32 shift;
	int r;

	r = check_block_size(sc, args->block_size, error);
	if (!r)
		r = run_shift(args, &shift, error);
	if (r)
		return r;
	old = kmalloc(sizeof(*old), GFP_KERNEL);
	if (!old)
		return -ENOMEM;
	r = read_best_sb(sc, old);
	kfree(old);
	if (r == -EIO) {
		*error = "Cannot read the cache device";
		return r;
	}
	if (r != -ENOENT && !args->force) {
		*error = "Cache device holds an ssdcache superblock: add 'force' to format it";
		return -EEXIST;
	}

	memset(&sc->sb, 0, sizeof(sc->sb));
	r = compute_geometry(sc, bdev_nr_sectors(sc->cache->bdev),
			     args->block_size >> SECTOR_SHIFT, shift);
	if (r) {
		*error = "Cache device too small for its own metadata";
		return r;
	}
	sc->sb.magic = cpu_to_le64(SSDCACHE_MAGIC);
	sc->sb.version = cpu_to_le32(SSDCACHE_FORMAT_VERSION);
	get_random_bytes(sc->sb.cache_uuid, SSDCACHE_UUID_LEN);
	origin_identity(sc, args, sc->sb.origin_id);
	sc->sb.origin_sectors = cpu_to_le64(bdev_nr_sectors(sc->origin->bdev));
	sc->sb.mode = cpu_to_le32(args->mode);
	sc->sb.journal_tail = 0;
	sc->sb.journal_seq = cpu_to_le64(1);
	sc->sb.ckpt_seq = 0;
	apply_geometry(sc);

	/* Refused for want of RAM, the device is left as it was. */
	r = ssdc_cache_alloc(sc, error);
	if (r)
		return r;
	/*
	 * Wipe the old superblocks first: if this format is interrupted, the
	 * device holds no valid superblock, never one over a half-new map.
	 */
	r = ssdc_wipe_sbs(sc);
	if (!r)
		r = ssdc_meta_format(sc);
	if (!r)
		r = ssdc_write_sb(sc);
	if (!r)
		r = ssdc_write_sb(sc);
	if (r) {
		*error = "Cannot write the new cache metadata";
		return r;
	}
	DMINFO("%s: formatted %pg: %llu blocks of %u bytes in runs of %u, origin %s",
	       ssdcache_name(sc), sc->cache->bdev, sc->nr_blocks,
	       args->block_size, 1U << shift, sc->sb.origin_id);
	return 0;
}

/* Checks a valid superblock, then against the devices and the table line. */
static int check_sb(struct ssdcache *sc, struct ssdc_args *args, char **error)
{
	struct ssdcache_disk_sb *sb = &sc->sb;
	char id[SSDCACHE_ORIGIN_ID_LEN];
	const char *bad = ssdcache_sb_problem(sb);
	u32 bs = le32_to_cpu(sb->block_sectors);

	if (bad) {
		*error = (char *)bad;
		return -EINVAL;
	}
	if (le64_to_cpu(sb->origin_sectors) != bdev_nr_sectors(sc->origin->bdev)) {
		*error = "Cache belongs to an origin of another size";
		return -EINVAL;
	}
	origin_identity(sc, args, id);
	if (strncmp(id, sb->origin_id, SSDCACHE_ORIGIN_ID_LEN)) {
		*error = "Cache belongs to another origin (origin_id differs)";
		return -EINVAL;
	}
	if (args->block_size_set && args->block_size != bs << SECTOR_SHIFT) {
		*error = "block_size differs from the formatted cache's";
		return -EINVAL;
	}
	if (le64_to_cpu(sb->cache_sectors) > bdev_nr_sectors(sc->cache->bdev)) {
		*error = "Cache device is smaller than when it was formatted";
		return -EINVAL;
	}
	return check_block_size(sc, bs << SECTOR_SHIFT, error);
}

int ssdc_load_sb(struct ssdcache *sc, struct ssdc_args *args, char **error)
{
	int r = read_best_sb(sc, &sc->sb);

	if (r == -ENOENT) {
		*error = "No ssdcache superblock on the cache device (add 'format' to create one)";
		return -EINVAL;
	}
	if (r == -EBADMSG) {
		*error = "Both ssdcache superblocks are corrupted (checksum mismatch)";
		return -EINVAL;
	}
	if (r) {
		*error = "Cannot read the cache superblock";
		return r;
	}
	r = check_sb(sc, args, error);
	if (r)
		return r;
	apply_geometry(sc);
	return 0;
}

/*
 * Reads the superblock again at the first resume: the table this one
 * replaces may have moved the journal since the constructor read it.
 * Nothing but the journal fields may differ.
 */
int ssdc_reread_sb(struct ssdcache *sc, char **error)
{
	struct ssdcache_disk_sb *sb;
	int r;

	sb = kmalloc(sizeof(*sb), GFP_KERNEL);
	if (!sb)
		return -ENOMEM;
	r = read_best_sb(sc, sb);
	if (r) {
		*error = "Cannot read the cache superblock";
	} else if (memcmp(sb->cache_uuid, sc->sb.cache_uuid, SSDCACHE_UUID_LEN) ||
		   memcmp(&sb->origin_sectors, &sc->sb.origin_sectors,
			  offsetof(struct ssdcache_disk_sb, mode) -
			  offsetof(struct ssdcache_disk_sb, origin_sectors))) {
		*error = "The cache superblock changed since the table was loaded";
		r = -EINVAL;
	} else {
		memcpy(&sc->sb, sb, sizeof(*sb));
		apply_geometry(sc);
	}
	kfree(sb);
	return r;
}
