// SPDX-License-Identifier: GPL-2.0
/*
 * lines_probe: memory sharing whose cacheline transfers are known, to check
 * the transfer counts of make bench-lines' TCG plugin (rig/pathprof/lines.c)
 * against.  Each case calls syncfs(2) on / just before its measured loops
 * start and just after they end, which the plugin takes as its marks, and
 * prints what the model must count in the loop functions (rig/lines.py
 * --check compares):
 *
 *   lines_probe pingpong CPU_A CPU_B ROUNDS
 *     one line, written in turn by two threads that each wait (reading it)
 *     for the other's write: each write invalidates the other's copy (a
 *     store transfer) and the other's next read fetches it (a load
 *     transfer).  The first thread's first read comes before any such
 *     write and usually hits its own write of the setup, but one run in
 *     a few finds its copy gone (not explained yet: nothing in the probe
 *     writes the line meanwhile), so it may count once more.  Expect
 *     stores 2*ROUNDS, loads 2*ROUNDS-1 to 2*ROUNDS, all same-node or
 *     all cross-node as the two CPUs' nodes are.
 *   lines_probe percpu THREADS ITERS
 *     one thread per CPU, each incrementing a counter on a line of its
 *     own: no transfers at all.
 *   lines_probe turn THREADS ROUNDS
 *     one line taken in turn by THREADS threads (thread i waits until the
 *     turn is i, then passes it on), as a lock handed round: every pass
 *     invalidates the copy of at least the thread that passed it last
 *     (stores THREADS*ROUNDS, exactly); each pass is read by at least the
 *     thread it goes to and at most by all the others (loads between
 *     THREADS*ROUNDS-1 and (THREADS-1)*THREADS*ROUNDS, as the waiters are
 *     scheduled); a pass between CPUs of two nodes is a cross-node store.
 *
 * Output: "lines_probe CASE loops=F1,F2 stores=N loads=MIN-MAX cross=..."
 * where cross is "all", "none" or a minimum count of cross-node stores.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 64

struct line {
	volatile long v;
	char pad[64 - sizeof(long)];
} __attribute__((aligned(64)));

static struct line shared_line;
static struct line own[MAX_THREADS];
static pthread_barrier_t ready, go;
static int nthreads;
static long rounds;

static int node_of_cpu(int cpu)
{
	char path[96];
	int n;

	for (n = 0; n < 64; n++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/cpu%d", n, cpu);
		if (!access(path, F_OK))
			return n;
	}
	return 0;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static void mark(void)
{
	int fd = open("/", O_RDONLY);

	if (fd < 0 || syncfs(fd)) {
		perror("syncfs");
		exit(1);
	}
	close(fd);
}

/* The measured loops: the check counts transfers charged to these alone */
static __attribute__((noinline)) void pingpong_loop(long me)
{
	long i;

	for (i = 0; i < rounds; i++) {
		while (shared_line.v != me)
			;
		shared_line.v = !me;
	}
}

static __attribute__((noinline)) void percpu_loop(long me)
{
	long i;

	for (i = 0; i < rounds; i++)
		own[me].v++;
}

static __attribute__((noinline)) void turn_loop(long me)
{
	long i;

	for (i = 0; i < rounds; i++) {
		while (shared_line.v != me)
			;
		shared_line.v = (me + 1) % nthreads;
	}
}

struct arg {
	long me;
	int cpu;
	void (*loop)(long me);
};

static void *thread(void *p)
{
	struct arg *a = p;

	pin(a->cpu);
	/* Its own line written once here: the page's first touch is not counted */
	own[a->me].v = 0;
	if (a->me == 0)
		shared_line.v = 0;	/* thread 0 is the line's last writer */
	pthread_barrier_wait(&ready);
	/* Everyone else holds a copy when the loops start */
	if (a->me && a->loop != percpu_loop && shared_line.v < 0)
		abort();
	pthread_barrier_wait(&go);
	a->loop(a->me);
	return NULL;
}

static void run(void (*loop)(long), const int *cpus)
{
	static pthread_t t[MAX_THREADS];
	static struct arg a[MAX_THREADS];
	int i;

	pthread_barrier_init(&ready, NULL, nthreads);
	pthread_barrier_init(&go, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++) {
		a[i] = (struct arg){ .me = i, .cpu = cpus[i], .loop = loop };
		pthread_create(&t[i], NULL, thread, &a[i]);
	}
	mark();
	pthread_barrier_wait(&go);
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	mark();
}

int main(int argc, char **argv)
{
	int cpus[MAX_THREADS], ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	long passes_cross = 0;

	if (argc == 5 && !strcmp(argv[1], "pingpong")) {
		nthreads = 2;
		cpus[0] = atoi(argv[2]);
		cpus[1] = atoi(argv[3]);
		rounds = atol(argv[4]);
		run(pingpong_loop, cpus);
		printf("lines_probe pingpong loops=pingpong_loop stores=%ld loads=%ld-%ld cross=%s\n",
		       2 * rounds, 2 * rounds - 1, 2 * rounds,
		       node_of_cpu(cpus[0]) == node_of_cpu(cpus[1]) ? "none" : "all");
		return 0;
	}
	if (argc == 4 && (!strcmp(argv[1], "percpu") || !strcmp(argv[1], "turn"))) {
		nthreads = atoi(argv[2]);
		rounds = atol(argv[3]);
		if (nthreads < 2 || nthreads > MAX_THREADS || nthreads > ncpu) {
			fprintf(stderr, "THREADS: 2 to %d\n", ncpu);
			return 2;
		}
		for (i = 0; i < nthreads; i++)
			cpus[i] = i;
		if (!strcmp(argv[1], "percpu")) {
			run(percpu_loop, cpus);
			printf("lines_probe percpu loops=percpu_loop stores=0 loads=0-0 cross=none\n");
			return 0;
		}
		run(turn_loop, cpus);
		for (i = 0; i < nthreads; i++)
			passes_cross += node_of_cpu(i) != node_of_cpu((i + 1) % nthreads);
		printf("lines_probe turn loops=turn_loop stores=%ld loads=%ld-%ld cross=%ld\n",
		       nthreads * rounds, nthreads * rounds - 1,
		       (nthreads - 1) * nthreads * rounds, passes_cross * rounds);
		return 0;
	}
	fprintf(stderr, "usage: %s pingpong CPU_A CPU_B ROUNDS | percpu THREADS ITERS | turn THREADS ROUNDS\n",
		argv[0]);
	return 2;
}
