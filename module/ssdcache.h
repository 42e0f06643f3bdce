/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-ssdcache: internal definitions shared by the module's files.
 */
#ifndef SSDCACHE_H
#define SSDCACHE_H

#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "ssdcache_format.h"

#define DM_MSG_PREFIX SSDCACHE_TARGET_NAME

#define SSDC_DEFAULT_BLOCK_SIZE		4096U
#define SSDC_DEFAULT_SEQ_CUTOFF		(4U << 20)	/* bytes */
#define SSDC_COMMIT_INTERVAL_MS		1000
#define SSDC_COMMIT_RECORDS		4096	/* changes that start a commit */
#define SSDC_EVICT_COMMIT_DELAY_MS	20
#define SSDC_RELEASED_LOW		4	/* fewer released writes: commit */
#define SSDC_SEQ_STREAMS		16
#define SSDC_SEQ_HASH_BITS		6	/* buckets of streams by their end */
#define SSDC_MAP_BATCH			SSDCACHE_COMMIT_MAX_BLOCKS /* metadata blocks per bio */
#define SSDC_MAX_FILLS			1024	/* queued or writing */
#define SSDC_READ_RUN			32	/* missed blocks per origin read, at most */
#define SSDC_READAHEAD_KB		64	/* default readahead_kb (io.c) */
#define SSDC_READAHEAD_MAX_KB		1024	/* BIO_MAX_VECS pages */
#define SSDC_READAHEAD_FREE		8	/* only while 1/8 of the blocks are free */
#define SSDC_READAHEAD_RECENT_BITS	6	/* chunks read ahead lately: 64 */
#define SSDC_WRITE_RUN			16	/* write-through/around blocks per origin write */
#define SSDC_SLOT_RUN			32	/* adjacent slots per SSD request, at most */
#define SSDC_RANGE_PER_SET		64	/* longer range writes gate globally */
#define SSDC_WB_BATCH_BYTES		BIT(20)		/* writeback batch */

/* Numeric tunables (tunables.c): table line, messages, sysfs. */
enum ssdc_tunable {
	SSDC_TUN_DIRTY_HIGH,
	SSDC_TUN_DIRTY_LOW,
	SSDC_TUN_IDLE_MS,
	SSDC_TUN_RATE,
	SSDC_TUN_YIELD,
	SSDC_TUN_ERROR_LIMIT,
	SSDC_TUN_ERROR_HALFLIFE_MS,
	SSDC_TUN_READAHEAD_KB,
	SSDC_NR_TUNABLES
};

#define SSDC_WB_DIRTY_HIGH		50	/* % of blocks: start cleaning */
#define SSDC_WB_DIRTY_LOW		25	/* % of blocks: stop cleaning */
#define SSDC_WB_IDLE_MS			2000	/* origin quiet this long: clean */
#define SSDC_WB_BACKOFF_MIN_MS		100	/* first pause after a failed batch */
#define SSDC_WB_BACKOFF_MAX_MS		10000

/* SSD error limit defaults: see health.c. */
#define SSDC_ERROR_LIMIT		8
#define SSDC_ERROR_HALFLIFE_MS		60000
/* Degraded: how long a write to a dirty block waits for its writeback. */
#define SSDC_DEGRADED_WRITE_WAIT_MS	30000

enum ssdc_policy {
	SSDC_POLICY_LRU,
	SSDC_POLICY_FIFO,
};

/* What a table line asked for (args.c). */
struct ssdc_args {
	const char *origin_path;
	const char *cache_path;
	enum ssdcache_mode mode;
	unsigned int block_size;	/* bytes */
	bool block_size_set;
	unsigned int run_size;		/* bytes; 0: SSDCACHE_RUN_BYTES */
	enum ssdc_policy policy;
	u64 seq_cutoff;			/* bytes, 0 = never bypass */
	bool format;
	bool force;
	const char *origin_id;		/* NULL: the origin's kernel name */
	unsigned int tun_given;		/* bitmap: numeric tunables given */
	unsigned int tun_val[SSDC_NR_TUNABLES];
};

/*
 * A cache block ("slot") in RAM is one u64 plus a u16 policy stamp:
 *   bits  0..47  origin block number
 *   bits 48..49  state (SSDC_SLOT_*)
 *   bits 50..55  flags (SSDC_SF_*)
 *   bits 56..63  zero
 * Every change happens under the lock of the slot's set. Its pins (the
 * reads, in-place writes and writeback in flight on it) are apart, in
 * ssdcache.pins: a hit's completion drops its pin without that lock.
 */
#define SSDC_SLOT_STATE_SHIFT	48
#define SSDC_SLOT_STATE_MASK	(0x3ULL << SSDC_SLOT_STATE_SHIFT)

enum ssdc_slot_state {
	SSDC_SLOT_FREE = 0,	/* unused; its on-disk entry is invalid */
	SSDC_SLOT_VALID,	/* holds oblock's data, clean or dirty */
	SSDC_SLOT_FILLING,	/* being written; its on-disk entry is invalid */
	SSDC_SLOT_EVICTING,	/* invalid, but its on-disk entry may not be yet */
};

/* Slot flags; the meaning of A and B depends on the state. */
#define SSDC_SF_A		BIT_ULL(50)
#define SSDC_SF_B		BIT_ULL(51)
#define SSDC_SF_UNSYNCED	SSDC_SF_A	/* VALID: data or entry not durable */
#define SSDC_SF_PARITY		SSDC_SF_B	/* VALID: sync epoch parity */
#define SSDC_SF_CANCEL		SSDC_SF_A	/* FILLING: data went stale */
#define SSDC_SF_SSD_ERR		SSDC_SF_B	/* FILLING: SSD write failed */
#define SSDC_SF_PENDING		SSDC_SF_A	/* EVICTING: in a commit under way */
#define SSDC_SF_WRITTEN		SSDC_SF_B	/* EVICTING: invalid entry durable */
#define SSDC_SF_DIRTY		BIT_ULL(52)	/* VALID, FILLING: newer than origin */
#define SSDC_SF_NEW		BIT_ULL(53)	/* VALID+UNSYNCED: on-disk entry invalid */
#define SSDC_SF_CLEANING	BIT_ULL(54)	/* VALID: writeback in flight */
#define SSDC_SF_CHANGED		BIT_ULL(55)	/* entry to journal in next commit */
#define SSDC_SF_ALL		(0x3fULL << 50)

struct ssdc_set {
	spinlock_t lock;	/* protects this set's slots, stamps and fields */
	u16 clock;		/* policy clock: ticks on every access */
	bool was_full;		/* it evicted: no readahead fills for it */
	u8 open;		/* slots FREE or EVICTING (on their way to FREE) */
	u32 writes_inflight;	/* writes to this set's origin blocks */
	u32 origin_inflight;	/* those of them that go to the origin */
	u32 wgen;		/* bumped when such a write starts or ends */
	u64 commit;		/* bit i: slot i waits for the next commit */
	u64 free;		/* bit i: the set's slot i is FREE */
};

/* A set's slots are bits of a u64 (ssdc_set.free, .commit); open counts them. */
static_assert(SSDCACHE_ASSOC <= 64 && SSDCACHE_ASSOC <= U8_MAX);

/*
 * Counters, per CPU; summed when read (stats.c). Reads and writes are not
 * counted: a read is a hit or a miss (a bypassed read is a miss too), so
 * their sums are, and hits + misses = reads holds in every snapshot.
 */
enum ssdc_counter {
	SSDC_C_READ_HITS, SSDC_C_READ_MISSES,
	SSDC_C_WRITE_HITS, SSDC_C_WRITE_MISSES,
	SSDC_C_BYPASSED_READS, SSDC_C_BYPASSED_WRITES,
	SSDC_C_FILLS, SSDC_C_EVICTIONS,
	SSDC_C_COMMITS, SSDC_C_CLEANED, SSDC_C_JOURNAL_BLOCKS, SSDC_C_CHECKPOINTS,
	SSDC_C_FLUSHES, SSDC_C_FUA, SSDC_C_DISCARDS, SSDC_C_READAHEADS,
	SSDC_C_DIRECT_FLUSHES,
	/* Bytes and errors per device and direction: see ssdc_count_io(). */
	SSDC_C_SSD_READ_BYTES, SSDC_C_SSD_WRITE_BYTES,
	SSDC_C_ORIGIN_READ_BYTES, SSDC_C_ORIGIN_WRITE_BYTES,
	SSDC_C_SSD_READ_ERRORS, SSDC_C_SSD_WRITE_ERRORS,
	SSDC_C_ORIGIN_READ_ERRORS, SSDC_C_ORIGIN_WRITE_ERRORS,
	SSDC_NR_COUNTERS
};

/* Read latency histograms: bucket i counts [2^i, 2^(i+1)) microseconds. */
#define SSDC_LAT_BUCKETS	24
enum ssdc_lat {
	SSDC_LAT_SSD,		/* reads served from the SSD (hits) */
	SSDC_LAT_ORIGIN,	/* reads served from the origin */
	SSDC_NR_LAT
};

struct ssdc_stats {
	u64 c[SSDC_NR_COUNTERS];
	u64 lat[SSDC_NR_LAT][SSDC_LAT_BUCKETS];
	u64 lat_sum_ns[SSDC_NR_LAT];
};

/*
 * Named statistics (stats.c, shown in sysfs): a few derived values, then
 * every counter, as SSDC_S_COUNTERS + its enum ssdc_counter.
 */
enum ssdc_stat {
	SSDC_S_READS, SSDC_S_WRITES,
	SSDC_S_DIRTY_BLOCKS, SSDC_S_CLEAN_BLOCKS, SSDC_S_FREE_BLOCKS,
	SSDC_S_JOURNAL_BYTES,
	SSDC_S_COUNTERS,
	SSDC_NR_STATS = SSDC_S_COUNTERS + SSDC_NR_COUNTERS
};

struct ssdc_wb_batch;
struct ssdc_sysfs;

/* A detected sequential stream (seqcut.c). */
struct ssdc_stream {
	struct hlist_node hash;	/* in seq_hash, by next */
	struct list_head lru;	/* in seq_lru, the most recently used first */
	sector_t start;		/* where the stream's last bio started */
	sector_t next;		/* where the stream's next bio would start */
	u64 bytes;		/* length so far */
	unsigned long last;	/* jiffies of the last bio */
	bool bypass;		/* the decision for the last bio */
};

/* One instance of the target: what a table line constructs. */
struct ssdcache {
	struct dm_target *ti;
	struct dm_dev *origin;
	struct dm_dev *cache;

	/* Geometry, from the superblock. */
	struct ssdcache_disk_sb sb;	/* as last read or written */
	unsigned int block_shift;	/* log2(block sectors) */
	sector_t block_sectors;
	u64 nr_blocks;
	u32 nr_sets;
	unsigned int set_shift;		/* runs of 2^set_shift blocks share a set */
	u64 origin_blocks;
	sector_t data_start;
	sector_t map_start;
	u64 map_pages;

	/* Tunables. */
	enum ssdcache_mode mode;
	enum ssdc_policy policy;
	u64 seq_cutoff;

	/* The cache: slots and sets (cache.c). */
	u64 *slots;		/* written only by ssdc_slot_write() */
	u8 *tags;		/* each slot's ssdc_tag_of() its oblock */
	u16 *stamps;
	atomic_t *pins;		/* each slot's I/Os in flight: see ssdc_pin() */
	struct ssdc_set *sets;
	atomic64_t used;		/* slots VALID or FILLING */
	atomic64_t dirty;		/* slots VALID and DIRTY */
	unsigned long *dirty_sets;	/* bitmap: sets that may hold such slots */

	/* Metadata commits (meta.c) and the journal (journal.c). */
	struct workqueue_struct *wq;
	struct delayed_work commit_work;
	struct delayed_work soon_work;	/* a commit within a delay: evictions */
	struct mutex commit_lock;	/* one commit or checkpoint at a time */
	unsigned long *commit_sets;	/* bitmap: sets with commit bits */
	unsigned long *pending_sets;	/* bitmap: sets a commit made PENDING in */
	unsigned long *ckpt_pages;	/* bitmap: pages changed since checkpoint */
	unsigned long *map_cur;		/* bitmap: copy holding a page's newest */
	spinlock_t defer_lock;		/* protects deferred, waiters, released */
	struct bio_list deferred;	/* writes waiting for the next commit */
	struct bio_list waiters;	/* flushes and FUA writes to complete */
	struct bio_list released;	/* deferred writes a commit made safe */
	unsigned int nr_released;	/* bios in released */
	struct workqueue_struct *issue_wq;
	struct work_struct issue_work;	/* issues them */
	bool valid_pending;		/* UNSYNCED slots: flush both devices */
	atomic_t changes;		/* slots CHANGED since the last commit */
	atomic64_t change_gen;		/* bumped by every change to a dirty entry */
	s64 durable_gen;		/* change_gen a durable commit covered */
	unsigned long sync_epoch;	/* bumped before each flush */
	unsigned long last_sync;	/* jiffies of the last such flush */
	atomic64_t origin_writes;	/* writes to the origin completed */
	atomic64_t origin_flushed;	/* origin_writes at the last origin flush */
	struct page **commit_buf;	/* page buffers for one batch */
	u64 j_blocks;			/* journal ring size */
	sector_t j_start;
	u64 j_head;			/* next block to write */
	u64 j_tail;			/* oldest block still needed */
	u64 j_seq;			/* seq of the next commit */
	u64 ckpt_seq;			/* last checkpoint's number */

	/* Data I/O (io.c). */
	struct bio_set bs;
	struct workqueue_struct *fill_wq;
	struct work_struct fill_work;
	spinlock_t fill_lock;		/* protects fills and retries */
	struct list_head fills;		/* copies of misses to install */
	struct bio_list retries;	/* failed SSD reads, for the origin */
	struct bio_list requeued;	/* bios to map again a bit later */
	struct delayed_work requeue_work;
	atomic_t fills_inflight;
	wait_queue_head_t fills_wait;
	atomic_t long_writes;		/* range writes too long to count per set */
	atomic_t long_wgen;		/* bumped when one starts or ends */
	unsigned int ra_kb;		/* readahead_kb: a miss reads its chunk */
	u64 ra_recent[BIT(SSDC_READAHEAD_RECENT_BITS)]; /* by hash: chunk + 1 */

	/* Sequential detection (seqcut.c). */
	spinlock_t seq_lock;		/* protects streams, seq_hash, seq_lru */
	struct ssdc_stream streams[SSDC_SEQ_STREAMS];
	struct hlist_head seq_hash[BIT(SSDC_SEQ_HASH_BITS)];
	struct list_head seq_lru;

	/* Writeback (writeback.c). */
	struct workqueue_struct *wb_wq;
	struct ssdc_wb_batch *wb_batch;
	struct page **wb_pages;		/* the batch's data */
	struct delayed_work wb_work;
	u64 wb_cursor;			/* next origin block to consider */
	unsigned int wb_high, wb_low;	/* dirty watermarks, percent */
	unsigned int wb_idle_ms;	/* 0: no idle cleaning */
	unsigned int wb_rate;		/* blocks per second, 0: unlimited */
	unsigned int wb_yield;		/* 1: pause under foreground I/O */
	unsigned int wb_backoff_ms;	/* pause after failed batches, 0: none */
	bool wb_flush_all;		/* "flush" message: clean everything */
	bool wb_flush_sync;		/* "flush" message: commit before a batch */
	bool wb_draining;		/* above high, cleaning down to low */
	bool wb_stopped;		/* suspended or being destroyed */
	unsigned long last_fg;		/* jiffies of the last foreground bio */

	/* SSD health (health.c). */
	spinlock_t err_lock;		/* protects err_score and err_stamp */
	unsigned int err_score;		/* SSD errors, decaying */
	unsigned long err_stamp;	/* jiffies err_score was last decayed */
	unsigned int err_limit;		/* score that degrades, 0: never */
	unsigned int err_halflife_ms;	/* the score halves this often */
	bool degraded;			/* latched: no new data on the SSD */
	struct work_struct degrade_work; /* records it in the superblock */

	struct ssdc_stats __percpu *stats;
	struct ssdc_sysfs *sysfs;	/* its sysfs directory, once resumed */
	bool loaded;			/* map in RAM: formatted or resumed once */
	bool failed;			/* metadata I/O failed: see io.c */
	bool sb_wiped;			/* ... and the superblocks are gone */
};

/* Per-bio data, kept by device-mapper for every bio we map. */
struct ssdc_bio {
	struct ssdcache *sc;
	struct bvec_iter iter;	/* the bio as mapped, to copy or retry it */
	u64 slot;		/* hit: the slot read; write: the slot installed */
	sector_t oblock;
	u64 last;		/* range write: its last origin block */
	u32 set;
	u32 long_wgen;		/* miss: sc->long_wgen at map time */
	u8 kind;		/* SSDC_BIO_* */
	u8 nblocks;		/* a run's blocks (io.c): read, or slots from slot */
	u8 nrewrite;		/* write-back: of those, dirty ones rewritten in place, first */
	u8 whole_block:1;	/* covers exactly one cache block */
	u8 installed:1;		/* write-through write also went to slot */
	u8 rejected:1;		/* failed with no device I/O (failed state) */
	u8 origin_write:1;	/* a write with data sent to the origin */
	u8 origin_held:1;	/* block write: counted in origin_inflight */
	u8 run:1;		/* a run write: nblocks blocks to the origin */
	union {			/* a bio is a miss read or a run write, not both */
		u32 fills;		/* miss: bitmap of those to install */
		u16 run_installed;	/* run write: bitmap of the blocks copied */
	};
	u64 start_ns;		/* reads: when mapped, for the histograms */
	unsigned long wait_since; /* degraded: jiffies a dirty write began to wait */
	/*
	 * Last, and not cleared by map: only the entries in fills (a miss)
	 * or run_installed (a run write) are read.
	 */
	union {
		u32 wgen[SSDC_READ_RUN]; /* miss: each block's set's wgen at map time */
		u64 run_slot[SSDC_WRITE_RUN]; /* run write: the slot of each copy */
	};
};

/* The bitmaps hold one bit per block of a run, and nblocks counts them. */
static_assert(BITS_PER_TYPE(typeof_member(struct ssdc_bio, fills)) >= SSDC_READ_RUN);
static_assert(BITS_PER_TYPE(typeof_member(struct ssdc_bio, run_installed)) >= SSDC_WRITE_RUN);
static_assert(U8_MAX >= SSDC_READ_RUN && U8_MAX >= SSDC_WRITE_RUN &&
	      U8_MAX >= SSDC_SLOT_RUN);

/* A clone of ours to the SSD, with the slot it writes (io.c). */
struct ssdc_clone {
	u64 slot;		/* the first slot written */
	unsigned int nr;	/* write-through copy: adjacent slots from slot */
	struct bio bio;		/* last: the bio_set's front pad is the rest */
};

/* A copy of a block read from the origin, to install in a slot (io.c). */
struct ssdc_fill {
	struct list_head list;
	struct ssdcache *sc;
	u64 oblock;
	u64 slot;
	u32 set;
	u32 wgen;
	u32 long_wgen;
	bool ahead;		/* read ahead: no eviction for it, the first to go */
	unsigned int nr_pages;
	struct page *pages[];
};

enum ssdc_bio_kind {
	SSDC_BIO_PASS = 0,	/* nothing to do on completion */
	SSDC_BIO_HIT_READ,
	SSDC_BIO_MISS_READ,
	SSDC_BIO_WRITE,		/* write to the origin: writes_inflight held */
	SSDC_BIO_WB_WRITE,	/* write to a slot: writes_inflight held */
	SSDC_BIO_WB_REMAP,	/* the same, the bio itself sent to the slot */
	SSDC_BIO_SSD_FLUSH,	/* an empty flush sent to the SSD alone */
};

/*
 * The clock of the latency histograms: two reads per I/O. local_clock()
 * is the scheduler's clock, read from the CPU's counter; ktime_get_ns()
 * may read a slow clock device (an HPET) on every call.
 */
static inline u64 ssdc_clock_ns(void)
{
	return local_clock();
}

static inline void ssdc_count(struct ssdcache *sc, enum ssdc_counter c)
{
	this_cpu_inc(sc->stats->c[c]);
}

static inline void ssdc_count_add(struct ssdcache *sc, enum ssdc_counter c, u64 n)
{
	this_cpu_add(sc->stats->c[c], n);
}

/*
 * Counts @bytes moved to or from the SSD (@ssd) or the origin. Error
 * counters follow the same layout, 4 places further.
 */
static inline enum ssdc_counter ssdc_io_counter(bool ssd, bool write)
{
	return SSDC_C_SSD_READ_BYTES + (ssd ? 0 : 2) + (write ? 1 : 0);
}

static inline void ssdc_count_io(struct ssdcache *sc, bool ssd, bool write, u64 bytes)
{
	ssdc_count_add(sc, ssdc_io_counter(ssd, write), bytes);
}

void ssdc_ssd_error(struct ssdcache *sc);

/* Counts a failed data or metadata I/O; SSD errors count to its health. */
static inline void ssdc_count_error(struct ssdcache *sc, bool ssd, bool write)
{
	ssdc_count(sc, ssdc_io_counter(ssd, write) + 4);
	if (ssd)
		ssdc_ssd_error(sc);
}

/* May new data go to the SSD? Not once failed or degraded. */
static inline bool ssdc_may_cache(struct ssdcache *sc)
{
	return !READ_ONCE(sc->failed) && !READ_ONCE(sc->degraded);
}

/*
 * Whether a read may install a copy of an uncached block of set @st
 * (locked): no write to the set's blocks is under way.
 */
static inline bool ssdc_may_fill_locked(struct ssdcache *sc, struct ssdc_set *st)
{
	return !st->writes_inflight && !atomic_read(&sc->long_writes) &&
	       ssdc_may_cache(sc);
}

/* Counts a data bio (not a discard or flush) sent to the SSD or the origin. */
static inline void ssdc_count_bio(struct ssdcache *sc, bool ssd, struct bio *bio)
{
	if (bio_op(bio) == REQ_OP_READ || bio_op(bio) == REQ_OP_WRITE)
		ssdc_count_io(sc, ssd, op_is_write(bio_op(bio)), bio->bi_iter.bi_size);
}

/*
 * Counts a read served now, mapped at @start_ns (ssdc_clock_ns()), in
 * histogram @which. The clock may differ a little between CPUs: a read
 * that seems to end before it began took no time. Inline: every read
 * that completes runs it.
 */
static inline void ssdc_account_latency(struct ssdcache *sc, enum ssdc_lat which, u64 start_ns)
{
	u64 now = ssdc_clock_ns();
	u64 ns = now > start_ns ? now - start_ns : 0;
	u64 us = div_u64(ns, NSEC_PER_USEC);
	unsigned int b = us ? min_t(unsigned int, ilog2(us), SSDC_LAT_BUCKETS - 1) : 0;

	this_cpu_inc(sc->stats->lat[which][b]);
	this_cpu_add(sc->stats->lat_sum_ns[which], ns);
}

static inline struct ssdc_bio *ssdc_pb(struct bio *bio)
{
	return dm_per_bio_data(bio, sizeof(struct ssdc_bio));
}

/* The mapped device's name ("254:0"), for log messages. */
static inline const char *ssdcache_name(struct ssdcache *sc)
{
	return dm_table_device_name(sc->ti->table);
}

static inline enum ssdc_slot_state ssdc_slot_state(u64 v)
{
	return (v & SSDC_SLOT_STATE_MASK) >> SSDC_SLOT_STATE_SHIFT;
}

static inline u64 ssdc_slot_oblock(u64 v)
{
	return v & SSDCACHE_MAP_OBLOCK_MASK;
}

static inline bool ssdc_slot_dirty(u64 v)
{
	return ssdc_slot_state(v) == SSDC_SLOT_VALID && (v & SSDC_SF_DIRTY);
}

/*
 * Might the SSD's map hold a VALID entry for this slot word? True for
 * VALID slots and for EVICTING ones whose invalid entry is not durable.
 */
static inline bool ssdc_slot_maybe_on_disk(u64 v)
{
	enum ssdc_slot_state st = ssdc_slot_state(v);

	return st == SSDC_SLOT_VALID ||
	       (st == SSDC_SLOT_EVICTING && !(v & SSDC_SF_WRITTEN));
}

static inline u64 ssdc_slot_make(u64 oblock, enum ssdc_slot_state state)
{
	return oblock | ((u64)state << SSDC_SLOT_STATE_SHIFT);
}

/*
 * A slot's lookup tag: 8 bits of a hash of its origin block, independent
 * of the set hash (ssdcache_set_of()), so that the blocks of one set
 * spread over the 256 tags. Equal tags only say that the slot words
 * must be compared (ssdc_lookup()). A set holds runs of adjacent blocks
 * (2^set_shift share it), so the multiplier must move the top byte far
 * for a step of one block: 0xc2 here, where the multiplier this had
 * before (0xff51...) moved it by less than one, and adjacent blocks
 * shared tags (a hit compared about three slot words that did not hold
 * its block).
 */
static inline u8 ssdc_tag_of(u64 oblock)
{
	return (oblock * 0xc2b2ae3d27d4eb4fULL) >> 56;
}

/*
 * The map entry that is true for slot word @v after any crash, whatever
 * the next commits do: what a checkpoint writes. A slot that is not yet
 * durable as VALID is invalid there; EVICTING slots were clean (dirty
 * slots are never invalidated), so invalid is true for them too. Inline:
 * a checkpoint calls it for every slot of each map page it builds.
 */
static inline u64 ssdc_durable_entry(u64 v)
{
	if (ssdc_slot_state(v) != SSDC_SLOT_VALID ||
	    (v & (SSDC_SF_UNSYNCED | SSDC_SF_NEW)) == (SSDC_SF_UNSYNCED | SSDC_SF_NEW))
		return 0;
	return ssdc_slot_oblock(v) | SSDCACHE_MAP_VALID |
	       ((v & SSDC_SF_DIRTY) ? SSDCACHE_MAP_DIRTY : 0);
}

/* Is slot word @v FREE, or on its way there (EVICTING)? ssdc_set.open counts them. */
static inline bool ssdc_slot_open(u64 v)
{
	return ssdc_slot_state(v) == SSDC_SLOT_FREE || ssdc_slot_state(v) == SSDC_SLOT_EVICTING;
}

/* How many of @st's slots are EVICTING. Caller holds the set lock. */
static inline unsigned int ssdc_set_evicting(const struct ssdc_set *st)
{
	return st->open - hweight64(st->free);
}

void ssdc_slot_moved(struct ssdcache *sc, u64 slot, u64 old, u64 v);

/*
 * Sets @slot's word to @v. Every change of a slot word goes through here,
 * so that its tag always matches its oblock and its set's free bits and
 * open count its state (ssdc_slot_moved(), when either changes: not for
 * a pin or a flag). Caller holds the set lock.
 */
static inline void ssdc_slot_write(struct ssdcache *sc, u64 slot, u64 v)
{
	u64 old = sc->slots[slot];

	sc->slots[slot] = v;
	if ((old ^ v) & (SSDC_SLOT_STATE_MASK | SSDCACHE_MAP_OBLOCK_MASK))
		ssdc_slot_moved(sc, slot, old, v);
}

static inline u32 ssdc_slot_set(u64 slot)
{
	return slot / SSDCACHE_ASSOC;
}

/*
 * Sets bit @nr of the shared bitmap @map. Testing first spares the
 * locked write, and the cache line's bouncing, when it is set already.
 */
static inline void ssdc_mark(unsigned long nr, unsigned long *map)
{
	if (!test_bit(nr, map))
		set_bit(nr, map);
}

/*
 * Notes that @slot's set holds a dirty block, for the cleaner's scan
 * (writeback.c) and ssdc_first_dirty(). Set with the slot's dirty block,
 * under the set lock (or before the cache runs); cleared only by the
 * cleaner, under the set lock, when it finds no dirty block in the set.
 */
static inline void ssdc_note_dirty_set(struct ssdcache *sc, u64 slot)
{
	ssdc_mark(ssdc_slot_set(slot), sc->dirty_sets);
}

static inline u64 ssdc_slot_page(u64 slot)
{
	return slot / SSDCACHE_MAP_ENTRIES_PER_PAGE;
}

static inline sector_t ssdc_slot_sector(struct ssdcache *sc, u64 slot)
{
	return sc->data_start + (slot << sc->block_shift);
}

/*
 * The set of an origin block: a hash of its run (ssdcache_set_of()), so
 * that the runs spread over the sets and a run's blocks share one.
 */
static inline u32 ssdc_set_of(struct ssdcache *sc, u64 oblock)
{
	return ssdcache_set_of(oblock, sc->nr_sets, sc->set_shift);
}

/*
 * Records an access to @slot for the replacement policy: LRU stamps every
 * access, FIFO only the insertion. Caller holds the set lock.
 */
static inline void ssdc_touch(struct ssdcache *sc, u32 set, u64 slot, bool insert)
{
	if (insert || READ_ONCE(sc->policy) == SSDC_POLICY_LRU)
		sc->stamps[slot] = ++sc->sets[set].clock;
}

/* ---- the lookup and the pins: inline, the hit path runs them ---- */

/* A byte of @b in each byte of a word. */
#define SSDC_BYTES(b)	(0x0101010101010101ULL * (u8)(b))

static_assert(SSDCACHE_ASSOC % 8 == 0);

/*
 * The tags of the 8 slots at @tags that may equal @tag: bit 8k+7 for the
 * k-th. Exact for the lowest match; a byte above a match may show one too
 * (the subtraction's borrow), never a match be missed.
 */
static inline u64 ssdc_tag_matches(const u8 *tags, u8 tag)
{
	/* Aligned: a set's tags start at a multiple of SSDCACHE_ASSOC. */
	u64 x = le64_to_cpup((const __le64 *)tags) ^ SSDC_BYTES(tag);

	return (x - SSDC_BYTES(1)) & ~x & SSDC_BYTES(0x80);
}

/* What a slot search looks for: see ssdc_find_slot(). */
enum ssdc_find {
	SSDC_FIND_CACHED,	/* VALID, or FILLING and not cancelled */
	SSDC_FIND_EVICTING,	/* EVICTING, invalid entry not yet durable */
};

/* An EVICTING slot word whose invalid entry is not yet durable. */
static inline bool ssdc_evicting_unwritten(u64 v)
{
	return ssdc_slot_state(v) == SSDC_SLOT_EVICTING && !(v & SSDC_SF_WRITTEN);
}

static inline bool ssdc_find_wanted(u64 v, enum ssdc_find what)
{
	enum ssdc_slot_state st = ssdc_slot_state(v);

	if (what == SSDC_FIND_EVICTING)
		return ssdc_evicting_unwritten(v);
	/*
	 * A cancelled FILLING slot never becomes VALID: its write only runs
	 * out. The block may have a newer slot already (a write that
	 * cancelled a fill took one), and a lookup that found the dead one
	 * first would miss it: a read would go to the origin, and a second
	 * write would take a third slot, leaving the block dirty twice.
	 */
	return st == SSDC_SLOT_VALID ||
	       (st == SSDC_SLOT_FILLING && !(v & SSDC_SF_CANCEL));
}

/*
 * The first slot of @set, in slot order, that holds @oblock in the state
 * @what asks for, or -1. Only slots whose tag matches are read. Caller
 * holds the set lock. Inline: the map of every read and write runs it.
 */
static __always_inline long ssdc_find_slot(struct ssdcache *sc, u32 set, u64 oblock,
					   enum ssdc_find what)
{
	u64 first = (u64)set * SSDCACHE_ASSOC;
	u8 tag = ssdc_tag_of(oblock);
	unsigned int i;

	for (i = 0; i < SSDCACHE_ASSOC; i += 8) {
		u64 m;

		for (m = ssdc_tag_matches(sc->tags + first + i, tag); m; m &= m - 1) {
			u64 s = first + i + __ffs64(m) / 8;
			u64 v = sc->slots[s];

			if (ssdc_slot_oblock(v) == oblock && ssdc_find_wanted(v, what))
				return s;
		}
	}
	return -1;
}

/*
 * The slot holding @oblock (VALID, or FILLING and not cancelled) in
 * @set, or -1. Caller holds the set lock.
 */
static inline long ssdc_lookup(struct ssdcache *sc, u32 set, u64 oblock)
{
	return ssdc_find_slot(sc, set, oblock, SSDC_FIND_CACHED);
}

/*
 * Does @set hold an EVICTING slot for @oblock whose invalid entry is not
 * yet durable? Then the SSD's map may still call @oblock VALID: a write of
 * it to the origin must wait for the next commit, and no clean copy may
 * be installed. Caller holds the set lock.
 */
static inline bool ssdc_evicting_locked(struct ssdcache *sc, u32 set, u64 oblock)
{
	return ssdc_find_slot(sc, set, oblock, SSDC_FIND_EVICTING) >= 0;
}

/*
 * Pins @slot for an I/O: while pinned, a slot is not evicted, not
 * written back, and not freed. Caller holds the set lock; the unpin
 * (ssdc_unpin()) needs none.
 */
static inline void ssdc_pin(struct ssdcache *sc, u64 slot)
{
	atomic_inc(&sc->pins[slot]);
}

static inline bool ssdc_pinned(struct ssdcache *sc, u64 slot)
{
	return atomic_read(&sc->pins[slot]);
}

/* An EVICTING slot word whose invalid entry is durable: free once unpinned. */
static inline bool ssdc_evicting_written(u64 v)
{
	return ssdc_slot_state(v) == SSDC_SLOT_EVICTING && (v & SSDC_SF_WRITTEN);
}

/* Frees @slot if it is EVICTING and WRITTEN and no I/O pins it. Caller holds the set lock. */
static inline void ssdc_free_unpinned_locked(struct ssdcache *sc, u64 slot)
{
	if (!ssdc_pinned(sc, slot) && ssdc_evicting_written(sc->slots[slot]))
		ssdc_slot_write(sc, slot, ssdc_slot_make(0, SSDC_SLOT_FREE));
}

void ssdc_free_released(struct ssdcache *sc, u64 slot);

/*
 * Drops a pin of @slot, without the set lock. The last pin of a slot that
 * free_written() (meta.c) left EVICTING and WRITTEN because it was pinned
 * frees it: each side writes, then reads what the other writes, with a
 * full barrier between (atomic_dec_and_test() is one), so at least one of
 * them sees the slot unpinned and WRITTEN. Inline: every hit's completion
 * runs it.
 */
static inline void ssdc_unpin(struct ssdcache *sc, u64 slot)
{
	if (atomic_dec_and_test(&sc->pins[slot]) &&
	    unlikely(ssdc_evicting_written(READ_ONCE(sc->slots[slot]))))
		ssdc_free_released(sc, slot);
}

/* ssdc_unpin() for a caller that holds the set lock. */
static inline void ssdc_unpin_locked(struct ssdcache *sc, u64 slot)
{
	if (atomic_dec_and_test(&sc->pins[slot]))
		ssdc_free_unpinned_locked(sc, slot);
}

/* ssdc_unpin() of @n slots from @slot. */
static inline void ssdc_unpin_run(struct ssdcache *sc, u64 slot, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		ssdc_unpin(sc, slot + i);
}

/* args.c */
int ssdc_parse_args(struct dm_target *ti, unsigned int argc, char **argv,
		    struct ssdc_args *args);
const char *ssdc_mode_name(enum ssdcache_mode mode);
const char *ssdc_policy_name(enum ssdc_policy policy);
int ssdc_parse_mode(const char *s, enum ssdcache_mode *mode);
int ssdc_parse_policy(const char *s, enum ssdc_policy *policy);

/* superblock.c */
u32 ssdc_csum(const void *block, unsigned int len, __le32 *csum_field);
int ssdc_format(struct ssdcache *sc, struct ssdc_args *args, char **error);
int ssdc_load_sb(struct ssdcache *sc, struct ssdc_args *args, char **error);
int ssdc_wipe_sbs(struct ssdcache *sc);
int ssdc_write_sb(struct ssdcache *sc);
int ssdc_reread_sb(struct ssdcache *sc, char **error);
int ssdc_rw_block(struct block_device *bdev, sector_t sector, void *buf,
		  blk_opf_t opf);

/* cache.c */
u64 ssdc_ram_bytes(const struct ssdcache *sc);
void *ssdc_table_alloc(size_t n, size_t size);
int ssdc_cache_alloc(struct ssdcache *sc, char **error);
void ssdc_cache_free(struct ssdcache *sc);
long ssdc_take_free(struct ssdcache *sc, u32 set);
long ssdc_take_free_for(struct ssdcache *sc, u32 set, u64 oblock, unsigned int want);
void ssdc_touch_cold(struct ssdcache *sc, u32 set, u64 slot);
void ssdc_slot_update(struct ssdcache *sc, u64 slot, u64 v);
bool ssdc_invalidate_locked(struct ssdcache *sc, u32 set, u64 slot);
void ssdc_make_valid_locked(struct ssdcache *sc, u64 slot, u64 oblock, bool dirty);
void ssdc_mark_unsynced_locked(struct ssdcache *sc, u64 slot);
void ssdc_evict_one(struct ssdcache *sc, u32 set);
void ssdc_evict_for_next(struct ssdcache *sc, u32 set);
void ssdc_evict_ahead(struct ssdcache *sc, u32 set);
typedef bool (*ssdc_walk_fn)(struct ssdcache *sc, u32 set, u64 slot, void *arg);
void ssdc_walk_range(struct ssdcache *sc, u64 first, u64 last, ssdc_walk_fn fn, void *arg);
bool ssdc_invalidate_range(struct ssdcache *sc, u64 first, u64 last,
			   u64 *dirty_at);
u64 ssdc_first_dirty(struct ssdcache *sc, u64 first, u64 last);

/* meta.c */
int ssdc_meta_init(struct ssdcache *sc);
void ssdc_meta_exit(struct ssdcache *sc);
int ssdc_meta_format(struct ssdcache *sc);
int ssdc_meta_load(struct ssdcache *sc, char **error);
void ssdc_meta_unsynced(struct ssdcache *sc);
void ssdc_meta_defer(struct ssdcache *sc, struct bio *bio);
void ssdc_meta_wait(struct ssdcache *sc, struct bio *bio);
void ssdc_meta_kick(struct ssdcache *sc, unsigned long delay_ms);
int ssdc_meta_commit(struct ssdcache *sc);
int ssdc_rw_bufs(struct ssdcache *sc, sector_t sector, unsigned int first,
		 unsigned int n, blk_opf_t opf);
sector_t ssdc_copy_sector(struct ssdcache *sc, u64 pg, unsigned int copy);
struct page **ssdc_alloc_pages(unsigned int n);
void ssdc_free_pages(struct page **pages, unsigned int n);
int ssdc_pick_copy(struct ssdcache *sc, u64 pg, void *c0, void *c1);
const char *ssdc_check_entry(struct ssdcache *sc, u64 slot, u64 e);
void ssdc_set_entry(struct ssdcache *sc, u64 slot, u64 e);
void ssdc_meta_fail(struct ssdcache *sc, int r, const char *what);
int ssdc_flush_origin(struct ssdcache *sc);

/*
 * A write with data to the origin completed (counting more than that only
 * costs a flush). Fully ordered: see ssdc_flush_origin() in meta.c.
 */
static inline void ssdc_origin_written(struct ssdcache *sc)
{
	atomic64_inc_return(&sc->origin_writes);
}

/* journal.c */
bool ssdc_journal_room(struct ssdcache *sc, unsigned int blocks);
int ssdc_journal_write(struct ssdcache *sc, unsigned int blocks,
		       unsigned int last_records);
int ssdc_journal_replay(struct ssdcache *sc, char **error);
int ssdc_checkpoint(struct ssdcache *sc);
void ssdc_build_page(struct ssdcache *sc, u64 pg, void *buf, u64 seq, bool empty);
bool ssdc_checkpoint_due(struct ssdcache *sc);

/* writeback.c */
int ssdc_wb_init(struct ssdcache *sc);
void ssdc_wb_exit(struct ssdcache *sc);
void ssdc_wb_start(struct ssdcache *sc);
void ssdc_wb_stop(struct ssdcache *sc);
void ssdc_wb_kick(struct ssdcache *sc);
int ssdc_wb_message(struct ssdcache *sc, unsigned int argc, char **argv);
const char *ssdc_wb_state(struct ssdcache *sc);

/* tunables.c */
int ssdc_tunable_parse(const char *key, const char *val, unsigned int *idx,
		       unsigned int *v);
int ssdc_tunables_check_args(struct ssdc_args *args, char **error);
void ssdc_tunables_apply_args(struct ssdcache *sc, struct ssdc_args *args);
int ssdc_tunable_set(struct ssdcache *sc, const char *key, const char *val);

/* io.c */
int ssdc_map(struct dm_target *ti, struct bio *bio);
int ssdc_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error);
void ssdc_issue_write(struct ssdcache *sc, struct bio *bio);
void ssdc_requeue(struct ssdcache *sc, struct bio *bio);
int ssdc_io_init(struct ssdcache *sc);
void ssdc_copy_bio(struct bio *bio, struct bvec_iter iter, struct page **pages,
		   size_t pos, bool to_bio);
struct ssdc_fill *ssdc_fill_new(struct ssdcache *sc, u64 oblock, u32 wgen,
				u32 long_wgen, unsigned int nr_pages);
void ssdc_fill_free(struct ssdc_fill *f);
bool ssdc_fill_room(struct ssdcache *sc);
void ssdc_fill_add(struct ssdcache *sc, struct ssdc_fill *f);
void ssdc_fill_kick(struct ssdcache *sc);
void ssdc_origin_retry(struct ssdcache *sc, struct bio *bio);
void ssdc_io_drain(struct ssdcache *sc);
void ssdc_io_exit(struct ssdcache *sc);
unsigned int ssdc_read_run_max(struct ssdcache *sc);

/* readahead.c */
bool ssdc_read_ahead(struct ssdcache *sc, struct bio *bio);

/* stats.c */
void ssdc_stats_sum(struct ssdcache *sc, struct ssdc_stats *t);
void ssdc_stats_reset(struct ssdcache *sc);
int ssdc_stats_inherit(struct ssdcache *sc, struct ssdcache *old);
u64 ssdc_stat_value(struct ssdcache *sc, const struct ssdc_stats *t,
		    enum ssdc_stat id);
const char *ssdc_stat_name(enum ssdc_stat id);
int ssdc_hit_ratio_show(const struct ssdc_stats *t, char *buf, size_t len);
int ssdc_latency_show(const struct ssdc_stats *t, enum ssdc_lat which,
		      char *buf, size_t len);

/* sysfs.c */
void ssdc_sysfs_init(void);
int ssdc_sysfs_attach(struct ssdcache *sc);
void ssdc_sysfs_detach(struct ssdcache *sc);

/* health.c */
void ssdc_health_init(struct ssdcache *sc);
void ssdc_health_load(struct ssdcache *sc);
void ssdc_health_quiesce(struct ssdcache *sc);
int ssdc_health_message(struct ssdcache *sc, unsigned int argc, char **argv);
const char *ssdc_health_state(struct ssdcache *sc);

/* target.c */
int ssdc_set_tunable(struct ssdcache *sc, const char *key, const char *val);
unsigned int ssdc_ram_per_block(const struct ssdcache *sc);

/* seqcut.c */
void ssdc_seq_init(struct ssdcache *sc);
bool ssdc_seq_track(struct ssdcache *sc, struct bio *bio, u64 cutoff);

/* Does @bio continue a stream past sequential_cutoff (0: never)? */
static inline bool ssdc_seq_bypass(struct ssdcache *sc, struct bio *bio)
{
	u64 cutoff = READ_ONCE(sc->seq_cutoff);

	return cutoff && ssdc_seq_track(sc, bio, cutoff);
}

#ifdef SSDCACHE_SELFTEST
int ssdcache_selftest_message(struct ssdcache *sc, unsigned int argc,
			      char **argv);
#else
static inline int ssdcache_selftest_message(struct ssdcache *sc,
					    unsigned int argc, char **argv)
{
	return -ENOTTY;
}
#endif

#endif /* SSDCACHE_H */
