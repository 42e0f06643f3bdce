// SPDX-License-Identifier: GPL-2.0
/*
 * tbprof: a QEMU TCG plugin that counts the guest instructions executed
 * from each translation block's start address. Each time the guest runs
 * the instruction at the marker address (mark=<hex>), it writes the
 * counts since the previous marker to <out>.<n> ("<address> <insns>
 * <executions>" per block, hex address) and starts again from zero, so
 * that a guest brackets a workload with two calls of the marker and
 * bench/tbreport.py names the functions (see bench/tbprof.py).
 *
 * The counts are kept by inline additions, which the translator puts in
 * the block itself; a block left early by an exception counts whole.
 * Single-threaded TCG only (vm-run's default): nothing here is locked.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct block {
	uint64_t pc;
	uint64_t insns;
	uint64_t execs;		/* since the last marker */
	struct block *next;
};

#define HASH_BITS	20
static struct block *blocks[1u << HASH_BITS];
static uint64_t mark;
static const char *out = "tbprof";
static int snapshot;

static unsigned int hash(uint64_t pc, uint64_t insns)
{
	return ((pc ^ (insns << 52)) * 0x9e3779b97f4a7c15ULL) >> (64 - HASH_BITS);
}

/* A block is translated again after a flush: one record per (pc, size). */
static struct block *block_of(uint64_t pc, uint64_t insns)
{
	struct block **head = &blocks[hash(pc, insns)], *b;

	for (b = *head; b; b = b->next)
		if (b->pc == pc && b->insns == insns)
			return b;
	b = calloc(1, sizeof(*b));
	if (!b) {
		fprintf(stderr, "tbprof: out of memory\n");
		exit(1);
	}
	b->pc = pc;
	b->insns = insns;
	b->next = *head;
	*head = b;
	return b;
}

static void write_snapshot(unsigned int cpu, void *udata)
{
	char path[4096];
	struct block *b;
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s.%d", out, snapshot++);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "tbprof: cannot write %s\n", path);
	for (i = 0; i < (1u << HASH_BITS); i++) {
		for (b = blocks[i]; b; b = b->next) {
			if (b->execs && f)
				fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
					b->pc, b->insns, b->execs);
			b->execs = 0;
		}
	}
	if (f)
		fclose(f);
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t pc = qemu_plugin_tb_vaddr(tb);
	struct block *b = block_of(pc, qemu_plugin_tb_n_insns(tb));

	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
	if (mark && pc == mark)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, write_snapshot,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mark=", 5)) {
			mark = strtoull(argv[i] + 5, NULL, 16);
		} else if (!strncmp(argv[i], "out=", 4)) {
			out = argv[i] + 4;
		} else {
			fprintf(stderr, "tbprof: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!mark) {
		fprintf(stderr, "tbprof: mark=<hex address> is needed\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	return 0;
}
