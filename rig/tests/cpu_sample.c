// SPDX-License-Identifier: GPL-2.0
/*
 * cpu_sample: where every CPU's wall-clock time goes, for a guest without
 * perf(1).  Samples each online CPU on the software cpu-clock event (a
 * guest hrtimer, so a vCPU whose host thread waits is sampled where it
 * was when it runs again) for SECONDS, with kernel call chains, and
 * prints, per task name and per kernel function, the share of the samples:
 *
 *   @sample TOTAL samples, PERIOD us, N CPUs
 *   @task   COUNT PCT% cpuN... COMM          (idle: the idle task)
 *   @ksym   COUNT PCT% SYMBOL                (the sampled kernel function)
 *   @chain  COUNT PCT% SYM < CALLER < CALLER (its first two callers)
 *
 * usage: cpu_sample SECONDS [PERIOD_US [TOP]]   (1000 us, 25 lines)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES	64	/* data pages per CPU, a power of 2 */
#define MAX_CHAIN	16

struct ksym { uint64_t addr; char name[128]; };
struct count { char key[200]; unsigned long n; unsigned long cpus; };

static struct ksym *ksyms;
static size_t nksyms;
static long page;

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], name[128], type;
	unsigned long long addr;
	size_t cap = 0;

	if (!f) {
		perror("/proc/kallsyms");
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3 ||
		    (type != 't' && type != 'T') || !addr)
			continue;
		if (nksyms == cap) {
			cap = cap ? 2 * cap : 65536;
			ksyms = realloc(ksyms, cap * sizeof(*ksyms));
		}
		ksyms[nksyms].addr = addr;
		snprintf(ksyms[nksyms].name, sizeof(ksyms[0].name), "%s", name);
		nksyms++;
	}
	fclose(f);
	qsort(ksyms, nksyms, sizeof(*ksyms), by_addr);
}

static const char *ksym_of(uint64_t ip)
{
	size_t lo = 0, hi = nksyms;

	if (!nksyms || ip < ksyms[0].addr)
		return "?";
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	return ksyms[lo].name;
}

/* A small open-addressed table of counts by key */
struct table { struct count *c; size_t cap, n; };

static void bump(struct table *t, const char *key, int cpu)
{
	size_t h = 5381, i;
	const char *p;

	if (t->n * 2 >= t->cap) {
		struct table o = *t;

		t->cap = o.cap ? 2 * o.cap : 4096;
		t->c = calloc(t->cap, sizeof(*t->c));
		t->n = 0;
		for (i = 0; i < o.cap; i++)
			if (o.c[i].n) {
				size_t hh = 5381, j;

				for (p = o.c[i].key; *p; p++)
					hh = hh * 33 + (unsigned char)*p;
				for (j = hh % t->cap; t->c[j].n; j = (j + 1) % t->cap)
					;
				t->c[j] = o.c[i];
				t->n++;
			}
		free(o.c);
	}
	for (p = key; *p; p++)
		h = h * 33 + (unsigned char)*p;
	for (i = h % t->cap; t->c[i].n && strcmp(t->c[i].key, key);
	     i = (i + 1) % t->cap)
		;
	if (!t->c[i].n) {
		snprintf(t->c[i].key, sizeof(t->c[i].key), "%s", key);
		t->n++;
	}
	t->c[i].n++;
	if (cpu >= 0 && cpu < 64)
		t->c[i].cpus |= 1UL << cpu;
}

static int by_count(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	return (y->n > x->n) - (y->n < x->n);
}

static void print_top(const char *tag, struct table *t, unsigned long total,
		      int top, int with_cpus)
{
	size_t i, j = 0;

	for (i = 0; i < t->cap; i++)
		if (t->c[i].n)
			t->c[j++] = t->c[i];
	qsort(t->c, j, sizeof(*t->c), by_count);
	for (i = 0; i < j && (int)i < top; i++) {
		char cpus[200] = "";
		int c, o = 0;

		for (c = 0; with_cpus && c < 64; c++)
			if (t->c[i].cpus & (1UL << c))
				o += snprintf(cpus + o, sizeof(cpus) - o, "%s%d",
					      o ? "," : " cpu", c);
		printf("%s %lu %.1f%%%s %s\n", tag, t->c[i].n,
		       100.0 * t->c[i].n / total, cpus, t->c[i].key);
	}
}

/* The task name of a thread, looked up once while it still runs */
#define MAX_TID	65536
static char *comm_of_tid[MAX_TID];

static const char *comm_of(uint32_t pid, uint32_t tid)
{
	char path[64], buf[32] = "?";
	FILE *f;

	if (!tid)
		return "idle";
	if (tid >= MAX_TID)
		return "?";
	if (comm_of_tid[tid])
		return comm_of_tid[tid];
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
	comm_of_tid[tid] = strdup(buf);
	return comm_of_tid[tid];
}

static struct table tasks, syms, chains;
static unsigned long total, lost;

/* Take every record in one CPU's ring */
static void drain(struct perf_event_mmap_page *m)
{
	char *data = (char *)m + page;
	uint64_t size = (uint64_t)RING_PAGES * page;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = m->data_tail;
	uint64_t rec[4 + MAX_CHAIN + 8];

	while (tail < head) {
		struct perf_event_header hdr;
		size_t i, len;

		for (i = 0; i < sizeof(hdr); i++)
			((char *)&hdr)[i] = data[(tail + i) % size];
		len = hdr.size < sizeof(rec) ? hdr.size : sizeof(rec);
		for (i = 0; i < len; i++)
			((char *)rec)[i] = data[(tail + i) % size];
		tail += hdr.size;
		if (hdr.type == PERF_RECORD_LOST) {
			lost += rec[2];
			continue;
		}
		if (hdr.type != PERF_RECORD_SAMPLE)
			continue;
		/* header, ip, pid/tid, cpu/res, nr, ips[nr] */
		{
			uint64_t ip = rec[1], nr = rec[4];
			uint32_t pid = rec[2], tid = rec[2] >> 32;
			int cpu = (uint32_t)rec[3];
			char key[200];
			const char *s[3] = { NULL, NULL, NULL };
			int k = 0;

			total++;
			bump(&tasks, comm_of(pid, tid), cpu);
			if (ip < 0xffff800000000000ULL) {
				bump(&syms, "[user]", cpu);
				continue;
			}
			s[k++] = ksym_of(ip);
			for (i = 0; i < nr && 5 + i < len / 8 && k < 3; i++) {
				uint64_t c = rec[5 + i];
				const char *n;

				if (c >= (uint64_t)PERF_CONTEXT_MAX)
					continue;
				n = ksym_of(c);
				if (strcmp(n, s[k - 1]))
					s[k++] = n;
			}
			bump(&syms, s[0], cpu);
			snprintf(key, sizeof(key), "%s < %s < %s", s[0],
				 s[1] ?: "-", s[2] ?: "-");
			bump(&chains, key, cpu);
		}
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	long period = argc > 2 ? atol(argv[2]) : 1000;
	int top = argc > 3 ? atoi(argv[3]) : 25;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), c;
	struct perf_event_mmap_page **rings;
	struct timespec t0, t;
	int *fds;

	if (secs <= 0 || period <= 0) {
		fprintf(stderr, "usage: cpu_sample SECONDS [PERIOD_US [TOP]]\n");
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	load_kallsyms();
	fds = calloc(ncpu, sizeof(*fds));
	rings = calloc(ncpu, sizeof(*rings));
	for (c = 0; c < ncpu; c++) {
		struct perf_event_attr a = {
			.size = sizeof(a),
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_period = period * 1000,
			.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				       PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN,
			.exclude_callchain_user = 1,
			.sample_max_stack = MAX_CHAIN,
			.disabled = 1,
		};

		fds[c] = syscall(SYS_perf_event_open, &a, -1, c, -1, 0);
		if (fds[c] < 0) {
			fprintf(stderr, "perf_event_open cpu %d: %s\n", c,
				strerror(errno));
			return 1;
		}
		rings[c] = mmap(NULL, (RING_PAGES + 1) * page,
				PROT_READ | PROT_WRITE, MAP_SHARED, fds[c], 0);
		if (rings[c] == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	for (c = 0; c < ncpu; c++)
		ioctl(fds[c], PERF_EVENT_IOC_ENABLE, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		usleep(50000);
		for (c = 0; c < ncpu; c++)
			drain(rings[c]);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	for (c = 0; c < ncpu; c++) {
		ioctl(fds[c], PERF_EVENT_IOC_DISABLE, 0);
		drain(rings[c]);
	}
	printf("@sample %lu samples, %ld us, %d CPUs, %lu lost\n", total,
	       period, ncpu, lost);
	if (!total)
		return 1;
	print_top("@task", &tasks, total, top, 1);
	print_top("@ksym", &syms, total, top, 0);
	print_top("@chain", &chains, total, top, 0);
	return 0;
}
