/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ssdcache on-disk format.
 *
 * This is the ONE definition of everything ssdcache stores on the cache
 * device. The kernel module (module/) and the control tool (userspace/)
 * both include it; nothing else may describe the layout.
 *
 * All multi-byte fields are little-endian. Every structure gets a fixed
 * size checked at compile time, so a change of layout cannot slip in
 * unnoticed: bump SSDCACHE_FORMAT_VERSION instead.
 *
 * Documentation/format.rst describes the layout in prose.
 */
#ifndef SSDCACHE_FORMAT_H
#define SSDCACHE_FORMAT_H

#include <linux/types.h>

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#define SSDCACHE_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define ssdcache_le16(x)	le16_to_cpu(x)
#define ssdcache_le32(x)	le32_to_cpu(x)
#define ssdcache_le64(x)	le64_to_cpu(x)
#else
#include <string.h>
#define SSDCACHE_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
/* Strict C11 has no endian.h: GCC's and Clang's byte order macros. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ssdcache_le16(x)	((__u16)(x))
#define ssdcache_le32(x)	((__u32)(x))
#define ssdcache_le64(x)	((__u64)(x))
#else
#define ssdcache_le16(x)	((__u16)__builtin_bswap16(x))
#define ssdcache_le32(x)	((__u32)__builtin_bswap32(x))
#define ssdcache_le64(x)	((__u64)__builtin_bswap64(x))
#endif
#endif

/* Name of the device-mapper target, as written in a table line. */
#define SSDCACHE_TARGET_NAME	"ssdcache"

/* "SSDCACHE" read as a little-endian 64-bit number. */
#define SSDCACHE_MAGIC		0x4548434143445353ULL

/*
 * Version of the on-disk format described in this file. Version 2 is
 * version 3 with set_shift 0 (the field was padding, zero): a cache made
 * by version 2 loads as it is and stays version 2.
 */
#define SSDCACHE_FORMAT_VERSION	3
#define SSDCACHE_FORMAT_VERSION_MIN	2

/* The unit of every on-disk offset: a 512-byte sector. */
#define SSDCACHE_SECTOR_SHIFT	9
#define SSDCACHE_SECTOR_SIZE	(1U << SSDCACHE_SECTOR_SHIFT)

/* Metadata is read and written in blocks of this size. */
#define SSDCACHE_META_BLOCK_SIZE	4096U
#define SSDCACHE_META_BLOCK_SECTORS	(SSDCACHE_META_BLOCK_SIZE >> SSDCACHE_SECTOR_SHIFT)

SSDCACHE_STATIC_ASSERT(SSDCACHE_META_BLOCK_SIZE % SSDCACHE_SECTOR_SIZE == 0,
		       "metadata blocks are whole sectors");

/*
 * Checksums: crc32c (Castagnoli), seeded with SSDCACHE_CRC_SEED, no final
 * inversion, over the whole metadata block with its csum field set to 0.
 */
#define SSDCACHE_CRC_SEED	0xffffffffU

#define SSDCACHE_UUID_LEN	16
#define SSDCACHE_ORIGIN_ID_LEN	64

/* Cache block sizes, in bytes: powers of two in this range. */
#define SSDCACHE_MIN_BLOCK_SIZE	4096U
#define SSDCACHE_MAX_BLOCK_SIZE	(1024U * 1024U)

/*
 * Layout of the cache device, in 512-byte sectors:
 *
 *   0                 superblock A   (one metadata block)
 *   8                 superblock B   (one metadata block)
 *   journal_start     journal        (journal_blocks metadata blocks)
 *   map_start         block map copy 0 (map_pages metadata blocks)
 *   + map_pages*8     block map copy 1 (map_pages metadata blocks)
 *   data_start        data area      (nr_blocks cache blocks)
 *
 * journal_start, map_start and data_start are recorded in the superblock;
 * data_start is aligned to the cache block size.
 */
#define SSDCACHE_SB_SECTOR_A	0
#define SSDCACHE_SB_SECTOR_B	SSDCACHE_META_BLOCK_SECTORS
#define SSDCACHE_JOURNAL_SECTOR	(2 * SSDCACHE_META_BLOCK_SECTORS)

/* Cache modes, as stored in the superblock. */
enum ssdcache_mode {
	SSDCACHE_MODE_WRITETHROUGH = 1,
	SSDCACHE_MODE_WRITEAROUND = 2,
	SSDCACHE_MODE_WRITEBACK = 3,
};

/*
 * Superblock. Two copies, A and B; a write goes to the copy with the
 * older sequence number, so a torn write leaves the other one intact. On
 * load the valid copy (magic, csum) with the higher seq wins.
 */
struct ssdcache_disk_sb {
	__le64 magic;			/* SSDCACHE_MAGIC */
	__le32 version;			/* SSDCACHE_FORMAT_VERSION(_MIN) */
	__le32 csum;
	__le64 seq;			/* bumped on every superblock write */
	__u8   cache_uuid[SSDCACHE_UUID_LEN];	/* made at format time */
	char   origin_id[SSDCACHE_ORIGIN_ID_LEN]; /* NUL-padded identity */
	__le64 origin_sectors;		/* size of the origin it caches */
	__le64 cache_sectors;		/* size of the cache device at format */
	__le32 block_sectors;		/* cache block size, in sectors */
	__le32 assoc;			/* cache blocks per set */
	__le64 nr_blocks;		/* cache blocks in the data area */
	__le64 journal_start;		/* sectors */
	__le64 journal_blocks;		/* metadata blocks */
	__le64 map_start;		/* sectors */
	__le64 map_pages;		/* metadata blocks */
	__le64 data_start;		/* sectors */
	__le32 mode;			/* enum ssdcache_mode last in use */
	__le32 flags;			/* SSDCACHE_SB_* */
	__le64 journal_tail;		/* journal block where replay starts */
	__le64 journal_seq;		/* seq of the commit expected there */
	__le64 ckpt_seq;		/* last checkpoint: map copies carry it */
	__le32 set_shift;		/* runs of 2^set_shift blocks share a set */
	__le32 reserved;		/* 0 */
	__u8   pad[SSDCACHE_META_BLOCK_SIZE - 216];
};

SSDCACHE_STATIC_ASSERT(sizeof(struct ssdcache_disk_sb) == SSDCACHE_META_BLOCK_SIZE,
		       "the superblock fills exactly one metadata block");

/*
 * Block map: one 8-byte entry per cache block, in 4 KiB pages. Each page
 * carries its own header (checksum, page number, the cache's UUID), so a
 * torn, misplaced or stale page is detected and never trusted.
 *
 * Every page has two copies, one in each map region. A checkpoint writes
 * a page to the copy that does not hold its newest version and stamps it
 * with the checkpoint's number (seq); load takes the valid copy with the
 * higher seq. A torn page write thus always leaves the previous version.
 */
#define SSDCACHE_MAP_MAGIC	0x504d4353U	/* "SCMP" */

struct ssdcache_disk_map_hdr {
	__le32 magic;			/* SSDCACHE_MAP_MAGIC */
	__le32 csum;
	__le64 page;			/* index of this page in the map */
	__le64 seq;			/* commit that wrote it */
	__u8   cache_uuid[SSDCACHE_UUID_LEN];
	__u8   pad[24];
};

SSDCACHE_STATIC_ASSERT(sizeof(struct ssdcache_disk_map_hdr) == 64,
		       "the map page header is 64 bytes");

/* A map entry: the origin block cached in that cache block, and flags. */
#define SSDCACHE_MAP_OBLOCK_BITS	48
#define SSDCACHE_MAP_OBLOCK_MASK	((1ULL << SSDCACHE_MAP_OBLOCK_BITS) - 1)
#define SSDCACHE_MAP_VALID		(1ULL << 63)	/* holds oblock's data */
#define SSDCACHE_MAP_DIRTY		(1ULL << 62)	/* newer than the origin */

#define SSDCACHE_MAP_ENTRY_MASK \
	(SSDCACHE_MAP_VALID | SSDCACHE_MAP_DIRTY | SSDCACHE_MAP_OBLOCK_MASK)

#define SSDCACHE_MAP_ENTRIES_PER_PAGE \
	((SSDCACHE_META_BLOCK_SIZE - sizeof(struct ssdcache_disk_map_hdr)) / 8)

/*
 * Cache blocks are grouped into sets of SSDCACHE_ASSOC blocks; an origin
 * block can live only in the set its hash selects. A map page holds the
 * entries of exactly SSDCACHE_SETS_PER_PAGE whole sets. The hash takes
 * the block's run, its number shifted right by the superblock's
 * set_shift: the blocks of a run share a set, so that a multi-block
 * request can find them in adjacent cache blocks and move them in one
 * SSD request. Format time picks runs of SSDCACHE_RUN_BYTES.
 */
#define SSDCACHE_ASSOC		56
#define SSDCACHE_SETS_PER_PAGE	(SSDCACHE_MAP_ENTRIES_PER_PAGE / SSDCACHE_ASSOC)
#define SSDCACHE_RUN_BYTES	(32U * 1024U)
#define SSDCACHE_MAX_SET_SHIFT	5	/* a run of at most 32 blocks */

SSDCACHE_STATIC_ASSERT(SSDCACHE_MAP_ENTRIES_PER_PAGE == 504, "504 entries a page");
SSDCACHE_STATIC_ASSERT(SSDCACHE_SETS_PER_PAGE * SSDCACHE_ASSOC ==
		       SSDCACHE_MAP_ENTRIES_PER_PAGE, "a page holds whole sets");

/*
 * The set of origin block @oblock among @nr_sets, for runs of
 * 2^@set_shift blocks: a multiplicative hash of the run (the 64-bit
 * golden ratio, top 32 bits) scaled to the number of sets. Part of the
 * format: a map entry is valid only in its block's set.
 */
static inline __u32 ssdcache_set_of(__u64 oblock, __u32 nr_sets, __u32 set_shift)
{
	__u32 h = (__u32)(((oblock >> set_shift) * 0x61c8864680b583ebULL) >> 32);

	return (__u32)(((__u64)h * nr_sets) >> 32);
}

/*
 * What is wrong with map entry @e of cache block @slot, or NULL. An
 * all-zero entry is an empty block. There is no cache block @slot past
 * the last, not even an empty one: a loader must not store anything
 * there (the tail of the last map page is padding, all zero).
 */
static inline const char *ssdcache_entry_problem(__u64 slot, __u64 e, __u64 nr_blocks,
						 __u64 origin_blocks, __u32 set_shift)
{
	__u64 oblock = e & SSDCACHE_MAP_OBLOCK_MASK;

	if (slot >= nr_blocks)
		return "entry past the last cache block";
	if (!e)
		return NULL;
	if (!(e & SSDCACHE_MAP_VALID) || (e & ~SSDCACHE_MAP_ENTRY_MASK))
		return "unknown entry flags";
	if (oblock >= origin_blocks)
		return "origin block out of range";
	if (ssdcache_set_of(oblock, (__u32)(nr_blocks / SSDCACHE_ASSOC), set_shift) !=
	    slot / SSDCACHE_ASSOC)
		return "block in the wrong set";
	return NULL;
}

/*
 * Journal: a ring of journal_blocks metadata blocks. A commit is one or
 * more consecutive blocks (wrapping at the end of the ring), all carrying
 * the commit's seq, their index in the commit and the commit's length. A
 * commit counts only if all its blocks are valid; commits follow each
 * other with consecutive seqs from the superblock's journal_tail and
 * journal_seq. A record sets one map entry to a new value; records apply
 * in order, the last one for a cache block wins.
 */
#define SSDCACHE_JOURNAL_MAGIC	0x4c4a4353U	/* "SCJL" */

struct ssdcache_disk_jrec {
	__le64 block;			/* cache block */
	__le64 entry;			/* its new map entry */
};

struct ssdcache_disk_jhdr {
	__le32 magic;			/* SSDCACHE_JOURNAL_MAGIC */
	__le32 csum;
	__le64 seq;			/* the commit */
	__u8   cache_uuid[SSDCACHE_UUID_LEN];
	__le32 nr_records;		/* in this block */
	__le16 index;			/* of this block in its commit */
	__le16 count;			/* blocks in the commit */
	__u8   pad[24];
};

SSDCACHE_STATIC_ASSERT(sizeof(struct ssdcache_disk_jhdr) == 64,
		       "the journal block header is 64 bytes");
SSDCACHE_STATIC_ASSERT(sizeof(struct ssdcache_disk_jrec) == 16,
		       "a journal record is 16 bytes");

#define SSDCACHE_JOURNAL_RECORDS \
	((SSDCACHE_META_BLOCK_SIZE - sizeof(struct ssdcache_disk_jhdr)) / \
	 sizeof(struct ssdcache_disk_jrec))

SSDCACHE_STATIC_ASSERT(SSDCACHE_JOURNAL_RECORDS == 252, "252 records a block");

/*
 * The rules a loader applies, shared by the module and the tool (and
 * fuzzed in userspace: tests/fuzz/). Checksums are the caller's, as the
 * kernel and userspace compute crc32c differently: @csum is the crc32c
 * (seed SSDCACHE_CRC_SEED, no final inversion) of the whole metadata
 * block with its csum field zeroed.
 */

/* The most blocks one journal commit may span. */
#define SSDCACHE_COMMIT_MAX_BLOCKS	32

/*
 * What is wrong with a superblock copy whose magic and checksum are
 * right, without looking at the devices, or NULL.
 */
/*
 * Superblock flags. DEGRADED: the SSD failed too often (an error limit
 * was passed); the cache stays degraded across loads until the operator
 * clears it. A flag this version does not know refuses the load.
 */
#define SSDCACHE_SB_DEGRADED	(1U << 0)
#define SSDCACHE_SB_KNOWN_FLAGS	SSDCACHE_SB_DEGRADED

static inline const char *ssdcache_sb_problem(const struct ssdcache_disk_sb *sb)
{
	__u64 nr = ssdcache_le64(sb->nr_blocks), jblocks = ssdcache_le64(sb->journal_blocks);
	__u64 pages = ssdcache_le64(sb->map_pages), map_start = ssdcache_le64(sb->map_start);
	__u64 data_start = ssdcache_le64(sb->data_start);
	__u64 cache_sectors = ssdcache_le64(sb->cache_sectors);
	__u32 bs = ssdcache_le32(sb->block_sectors);
	__u32 version = ssdcache_le32(sb->version);

	if (version < SSDCACHE_FORMAT_VERSION_MIN || version > SSDCACHE_FORMAT_VERSION)
		return "Unsupported on-disk format version";
	if (ssdcache_le32(sb->set_shift) > (version < 3 ? 0 : SSDCACHE_MAX_SET_SHIFT) ||
	    sb->reserved)
		return "Superblock has an unknown set hash";
	if (ssdcache_le32(sb->flags) & ~SSDCACHE_SB_KNOWN_FLAGS)
		return "Superblock has unknown flags";
	/* Each bound first, so that no product below can overflow. */
	if (!bs || (bs & (bs - 1)) || bs < (SSDCACHE_MIN_BLOCK_SIZE >> SSDCACHE_SECTOR_SHIFT) ||
	    bs > (SSDCACHE_MAX_BLOCK_SIZE >> SSDCACHE_SECTOR_SHIFT) ||
	    ssdcache_le32(sb->assoc) != SSDCACHE_ASSOC || !nr || nr % SSDCACHE_ASSOC ||
	    nr > (1ULL << SSDCACHE_MAP_OBLOCK_BITS) || cache_sectors > (1ULL << 56) ||
	    pages != (nr + SSDCACHE_MAP_ENTRIES_PER_PAGE - 1) / SSDCACHE_MAP_ENTRIES_PER_PAGE ||
	    ssdcache_le64(sb->journal_start) != SSDCACHE_JOURNAL_SECTOR ||
	    jblocks < 4 || jblocks > (1ULL << 30) ||
	    ssdcache_le64(sb->journal_tail) >= jblocks ||
	    map_start < SSDCACHE_JOURNAL_SECTOR + jblocks * SSDCACHE_META_BLOCK_SECTORS ||
	    map_start > cache_sectors || data_start > cache_sectors ||
	    data_start < map_start + 2 * pages * SSDCACHE_META_BLOCK_SECTORS ||
	    nr > (cache_sectors - data_start) / bs)
		return "Superblock geometry is inconsistent";
	return NULL;
}

/* Is @h (checksum @csum) a valid copy of map page @pg of cache @uuid? */
static inline int ssdcache_map_page_ok(const struct ssdcache_disk_map_hdr *h, __u64 pg,
				       const __u8 *uuid, __u32 csum)
{
	return ssdcache_le32(h->magic) == SSDCACHE_MAP_MAGIC &&
	       ssdcache_le64(h->page) == pg &&
	       !memcmp(h->cache_uuid, uuid, SSDCACHE_UUID_LEN) &&
	       ssdcache_le32(h->csum) == csum;
}

/*
 * Is @h (checksum @csum) block @index of journal commit @seq of cache
 * @uuid? Block 0 sets *@count, the commit's length; the others must
 * repeat it.
 */
static inline int ssdcache_jblock_ok(const struct ssdcache_disk_jhdr *h, __u64 seq,
				     unsigned int index, const __u8 *uuid, __u32 csum,
				     unsigned int *count)
{
	unsigned int c = ssdcache_le16(h->count);

	if (ssdcache_le32(h->magic) != SSDCACHE_JOURNAL_MAGIC ||
	    ssdcache_le64(h->seq) != seq || ssdcache_le16(h->index) != index ||
	    memcmp(h->cache_uuid, uuid, SSDCACHE_UUID_LEN) || ssdcache_le32(h->csum) != csum)
		return 0;
	if (!c || c > SSDCACHE_COMMIT_MAX_BLOCKS || (index && c != *count) ||
	    ssdcache_le32(h->nr_records) > SSDCACHE_JOURNAL_RECORDS)
		return 0;
	*count = c;
	return 1;
}

#endif /* SSDCACHE_FORMAT_H */
