// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts cacheline transfers between vCPUs, for
 * make bench-lines (rig/bench-lines.sh).  Every guest load and store is
 * seen with its physical address; a directory keeps, for each 64-byte
 * line, which vCPUs hold a copy and which vCPU wrote it last, as a
 * MESI-style protocol with caches that never evict would.  Counted:
 *
 *   load transfer   a load by a vCPU that holds no copy, of a line last
 *                   written by another vCPU (a dirty line moves);
 *   store transfer  a store to a line that another vCPU holds (a
 *                   read-for-ownership, or an upgrade that invalidates).
 *
 * A load and then a store by the same instruction to the same line (a
 * read-modify-write, which single-threaded TCG splits in two) count once,
 * as one read-for-ownership.  Cold misses, capacity misses and DMA are
 * not counted.  A transfer is cross-node when the line comes from, or
 * must be invalidated on, a vCPU of another node (nodes=0011...: the node
 * of each vCPU, one digit each).  Each transfer is charged to the
 * instruction that made the access and to the line.
 *
 * Every time the guest executes the block that starts at mark=ADDR (a
 * kernel function the guest calls on purpose, such as __x64_sys_syncfs),
 * the counts so far go to out=PREFIX.N and are cleared; the directory is
 * kept.  Meant for -icount with one TCG thread: nothing here is atomic.
 *
 * Output lines, hex addresses and decimal counts:
 *   total ACCESSES LD_SAME LD_CROSS ST_SAME ST_CROSS INSNS
 *   pc VADDR LD_SAME LD_CROSS ST_SAME ST_CROSS
 *   line PADDR VADDR LD ST CROSS PC1 N1 PC2 N2 PC3 N3
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 64
#define LINE_SHIFT 6
#define CHUNK_SHIFT 20		/* lines per directory chunk: 64 MiB */
#define NCHUNKS 1024		/* 64 GiB of guest physical memory */
#define NPCS (1u << 20)		/* instructions that access memory */
#define NLINES (1u << 20)	/* lines with transfers, per stretch */
#define TOP_PCS 3

enum { LD_SAME, LD_CROSS, ST_SAME, ST_CROSS, NKINDS };

struct dir_chunk {
	uint64_t holders[1u << CHUNK_SHIFT];	/* a bit per vCPU */
	uint8_t writer[1u << CHUNK_SHIFT];	/* last writer + 1; 0: none */
};

struct pc_count {
	uint64_t vaddr;
	uint64_t n[NKINDS];
};

struct line_count {
	uint64_t line;		/* physical line number + 1; 0: free */
	uint64_t vaddr;		/* a virtual address it was seen at */
	uint64_t ld, st, cross;
	uint64_t pc[TOP_PCS], pcn[TOP_PCS];
};

/* The last load of each vCPU, to merge a read-modify-write */
struct last_load {
	uint64_t line, pc;
	int moved;
};

static struct dir_chunk *dir[NCHUNKS];
static struct pc_count *pcs;
static unsigned int npcs;
static struct line_count *lines;
static unsigned int nlines;
static struct last_load last[MAX_VCPUS];
static uint64_t total[NKINDS], accesses, insns;
static uint8_t node_of[MAX_VCPUS];
static uint64_t mark;
static const char *prefix = "lines";
static unsigned int snaps;

static uint64_t hash64(uint64_t x)
{
	return (x ^ (x >> 29)) * 0x9e3779b97f4a7c15ull;
}

/* The counters of the instruction at VADDR, made at translation */
static struct pc_count *pc_slot(uint64_t vaddr)
{
	unsigned int i = hash64(vaddr) >> 44;

	for (;; i++) {
		struct pc_count *p = &pcs[i & (NPCS - 1)];

		if (p->vaddr == vaddr)
			return p;
		if (!p->vaddr) {
			if (npcs >= NPCS * 3 / 4)
				return NULL;
			npcs++;
			p->vaddr = vaddr;
			return p;
		}
	}
}

static struct line_count *line_slot(uint64_t line)
{
	unsigned int i = hash64(line) >> 44;

	for (;; i++) {
		struct line_count *l = &lines[i & (NLINES - 1)];

		if (l->line == line + 1)
			return l;
		if (!l->line) {
			if (nlines >= NLINES * 3 / 4)
				return NULL;
			nlines++;
			l->line = line + 1;
			return l;
		}
	}
}

static void charge_line(uint64_t line, uint64_t vaddr, uint64_t pc,
			int store, int cross)
{
	struct line_count *l = line_slot(line);
	int i, min = 0;

	if (!l)
		return;
	l->vaddr = vaddr;
	if (store)
		l->st++;
	else
		l->ld++;
	l->cross += cross;
	for (i = 0; i < TOP_PCS; i++) {
		if (l->pc[i] == pc) {
			l->pcn[i]++;
			return;
		}
		if (l->pcn[i] < l->pcn[min])
			min = i;
	}
	/* Keep the instructions that moved it most (space-saving counts) */
	l->pc[min] = pc;
	l->pcn[min]++;
}

static void access_line(unsigned int cpu, uint64_t line, uint64_t vaddr,
			int store, struct pc_count *pc)
{
	struct dir_chunk *c;
	uint64_t me = 1ull << cpu, others, h;
	unsigned int idx = line & ((1u << CHUNK_SHIFT) - 1), w, i;
	int cross = 0, kind;

	if ((line >> CHUNK_SHIFT) >= NCHUNKS)
		return;
	c = dir[line >> CHUNK_SHIFT];
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return;
		dir[line >> CHUNK_SHIFT] = c;
	}
	h = c->holders[idx];
	w = c->writer[idx];
	if (!store) {
		last[cpu].line = line + 1;
		last[cpu].pc = pc->vaddr;
		last[cpu].moved = 0;
		if (h & me)
			return;
		c->holders[idx] = h | me;
		if (!w || w - 1 == cpu)
			return;
		cross = node_of[w - 1] != node_of[cpu];
		kind = cross ? LD_CROSS : LD_SAME;
		last[cpu].moved = 1;
	} else {
		others = h & ~me;
		c->holders[idx] = me;
		c->writer[idx] = cpu + 1;
		/* The store half of a read-modify-write whose load moved it */
		if (last[cpu].line == line + 1 && last[cpu].pc == pc->vaddr &&
		    last[cpu].moved) {
			last[cpu].line = 0;
			return;
		}
		last[cpu].line = 0;
		if (!others)
			return;
		for (i = 0; others; i++, others >>= 1)
			if ((others & 1) && node_of[i] != node_of[cpu])
				cross = 1;
		kind = cross ? ST_CROSS : ST_SAME;
	}
	pc->n[kind]++;
	total[kind]++;
	charge_line(line, vaddr, pc->vaddr, store, cross);
}

static void mem_cb(unsigned int cpu, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	unsigned int size = 1u << qemu_plugin_mem_size_shift(info);
	int store = qemu_plugin_mem_is_store(info);
	uint64_t pa, first, lastl;

	if (!hw || qemu_plugin_hwaddr_is_io(hw) || cpu >= MAX_VCPUS)
		return;
	accesses++;
	pa = qemu_plugin_hwaddr_phys_addr(hw);
	first = pa >> LINE_SHIFT;
	lastl = (pa + size - 1) >> LINE_SHIFT;
	access_line(cpu, first, vaddr, store, udata);
	if (lastl != first)
		access_line(cpu, lastl, vaddr + size - 1, store, udata);
}

static void snapshot(unsigned int vcpu, void *udata)
{
	char name[4096];
	unsigned int i;
	FILE *f;

	snprintf(name, sizeof(name), "%s.%u", prefix, snaps++);
	f = fopen(name, "w");
	if (f) {
		fprintf(f, "total %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 " %" PRIu64 "\n", accesses, total[LD_SAME],
			total[LD_CROSS], total[ST_SAME], total[ST_CROSS], insns);
		for (i = 0; i < NPCS; i++) {
			struct pc_count *p = &pcs[i];

			if (p->n[0] | p->n[1] | p->n[2] | p->n[3])
				fprintf(f, "pc %" PRIx64 " %" PRIu64 " %" PRIu64
					" %" PRIu64 " %" PRIu64 "\n", p->vaddr,
					p->n[0], p->n[1], p->n[2], p->n[3]);
		}
		for (i = 0; i < NLINES; i++) {
			struct line_count *l = &lines[i];
			int k;

			if (!l->line)
				continue;
			fprintf(f, "line %" PRIx64 " %" PRIx64 " %" PRIu64 " %"
				PRIu64 " %" PRIu64, (l->line - 1) << LINE_SHIFT,
				l->vaddr, l->ld, l->st, l->cross);
			for (k = 0; k < TOP_PCS; k++)
				fprintf(f, " %" PRIx64 " %" PRIu64, l->pc[k],
					l->pcn[k]);
			fputc('\n', f);
		}
		fclose(f);
	}
	for (i = 0; i < NPCS; i++)
		memset(pcs[i].n, 0, sizeof(pcs[i].n));
	memset(lines, 0, (size_t)NLINES * sizeof(*lines));
	nlines = 0;
	memset(total, 0, sizeof(total));
	accesses = 0;
	insns = 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	/* Before the block's own accesses, so that they land in the next file */
	if (mark && qemu_plugin_tb_vaddr(tb) == mark)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, snapshot,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &insns, n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		struct pc_count *p = pc_slot(qemu_plugin_insn_vaddr(insn));

		if (p)
			qemu_plugin_register_vcpu_mem_cb(insn, mem_cb,
							 QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, p);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	snapshot(0, NULL);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *nodes = "";
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mark=", 5))
			mark = strtoull(argv[i] + 5, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			prefix = argv[i] + 4;
		else if (!strncmp(argv[i], "nodes=", 6))
			nodes = argv[i] + 6;
	}
	if (!info->system_emulation || info->system.max_vcpus > MAX_VCPUS) {
		fprintf(stderr, "lines: system emulation with at most %d vCPUs\n",
			MAX_VCPUS);
		return -1;
	}
	for (i = 0; i < MAX_VCPUS && nodes[i]; i++)
		node_of[i] = nodes[i] - '0';
	pcs = calloc(NPCS, sizeof(*pcs));
	lines = calloc(NLINES, sizeof(*lines));
	if (!pcs || !lines)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
