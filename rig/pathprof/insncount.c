// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest instructions executed per
 * translation block, for a profile of the FUSE request path by function
 * (rig/pathprof.sh).  Every time the guest executes the block that starts
 * at mark=ADDR (a kernel function the guest calls on purpose between two
 * workloads, such as __x64_sys_sync), the counts so far are written to
 * out=PREFIX.N and cleared, so each file holds one stretch of the run.
 * Meant for -icount with one TCG thread: the counters are not atomic.
 *
 * Output lines: "VADDR INSNS EXECUTIONS" in hex, decimal, decimal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t count;
};

#define NBLOCKS (1u << 21)	/* open addressing; kernel + a few programs */

static struct block *blocks;
static unsigned int used;
static uint64_t mark;
static const char *prefix = "insncount";
static unsigned int snaps;

static struct block *lookup(uint64_t vaddr, uint64_t insns)
{
	uint64_t h = (vaddr ^ (vaddr >> 17) ^ (insns << 7)) * 0x9e3779b97f4a7c15ull;
	unsigned int i = h >> 43;

	for (;;) {
		struct block *b = &blocks[i & (NBLOCKS - 1)];

		if (!b->insns) {
			if (used >= NBLOCKS * 3 / 4)
				return NULL;
			used++;
			b->vaddr = vaddr;
			b->insns = insns;
			return b;
		}
		if (b->vaddr == vaddr && b->insns == insns)
			return b;
		i++;
	}
}

static void snapshot(unsigned int vcpu, void *udata)
{
	char name[4096];
	unsigned int i;
	FILE *f;

	snprintf(name, sizeof(name), "%s.%u", prefix, snaps++);
	f = fopen(name, "w");
	if (!f)
		return;
	for (i = 0; i < NBLOCKS; i++) {
		struct block *b = &blocks[i];

		if (b->count)
			fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				b->vaddr, b->insns, b->count);
		b->count = 0;
	}
	fclose(f);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b = lookup(vaddr, qemu_plugin_tb_n_insns(tb));

	if (!b)
		return;
	/* Before the block's own count, so that it lands in the next file */
	if (mark && vaddr == mark)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, snapshot,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->count, 1);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	snapshot(0, NULL);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mark=", 5))
			mark = strtoull(argv[i] + 5, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			prefix = argv[i] + 4;
	}
	blocks = calloc(NBLOCKS, sizeof(*blocks));
	if (!blocks)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
