// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_bench: a raw /dev/fuse server and a load generator in one process.
 *
 *   fuse_bench MODE WORKLOAD THREADS OPS
 *     MODE:     single   one fd, one reader thread per CPU on it, pinned
 *               unbound  one clone per CPU, its reader pinned to the CPU
 *                        (what libfuse -o clone_fd does today)
 *               bound    the same, each clone bound to its CPU
 *               node     one clone per node, bound to it, one reader
 *                        thread on it that may run on any of its CPUs
 *                        (fewer daemon threads than CPUs, which
 *                        FUSE-over-io-uring cannot serve)
 *               nodecpus the same with as many reader threads on each
 *                        clone as its node has CPUs
 *               uring    FUSE-over-io-uring: a ring queue per CPU, its
 *                        thread pinned there; forgets on the mount fd
 *     WORKLOAD: getattr  fstat() of an open file (GETATTR, attr timeout 0)
 *               read     4 KiB pread() of a direct-io file (READ)
 *               dread    4 KiB O_DIRECT pread() of a page-cached file,
 *                        async direct I/O on: a background READ that its
 *                        caller waits for
 *               aread    4 KiB O_DIRECT reads of the same files with
 *                        Linux AIO, FUSE_BENCH_DEPTH (4) in flight: a
 *                        background READ its issuer may not wait for.
 *                        FUSE_BENCH_COMPUTE=US: the issuer computes US
 *                        microseconds (a busy loop, reaping what is done
 *                        without waiting) after each submission, an
 *                        engine that overlaps I/O with work
 *               open     open() + close() (OPEN, FLUSH, RELEASE)
 *               create   creat() + unlink() (LOOKUP, CREATE, FLUSH,
 *                        RELEASE, UNLINK)
 *               mixed    getattr, but one operation in 100 is a LOOKUP the
 *                        daemon takes 20 ms to answer; THREADS may exceed
 *                        the CPUs (thread i runs on CPU i % CPUs), so that
 *                        several callers share each CPU and its clone
 *     THREADS:  load threads; thread i is pinned to CPU i % CPUs, so
 *               THREADS may exceed the CPUs (two callers per CPU, ...);
 *               0 is one per CPU, -K is K per CPU (a plan for any size)
 *     OPS:      operations per thread
 *   With FUSE_BENCH_MARK=1 in the environment, syncfs(2) on / just before
 *   the load threads start and just after the last one ends: the marks
 *   that cut make bench-lines' counts (rig/pathprof/lines.c) around the
 *   measured operations alone.
 *
 *   fuse_bench pipe same|cross|same-process|cross-process OPS
 *     ping-pong over two pipes between two threads on one CPU or on two:
 *     the floor a FUSE round trip can approach; -process: between two
 *     processes, as a daemon and its caller are (under TCG each switch
 *     between them loads another page table, which flushes QEMU's TLB).
 *
 * Prints one tab-separated line:
 *   mode workload threads ops secs ops_per_s p50_us p99_us
 *   local_cpu_pct local_node_pct ctxsw_per_req ipi_per_req requests
 * The local shares count requests whose issuing thread is known from the
 * pid in their header (RELEASE and FORGET carry none).  The mixed workload
 * prints instead:
 *   mixed mode threads ops secs ops_per_s fast_p50_us fast_p99_us
 *   fast_p999_us slow_p50_us local_cpu_pct local_node_pct moved requests
 * where the percentiles are of the immediate requests alone; "moved" is
 * "-" (kept for the reports' columns: the kernel does not count moves).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/aio_abi.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuse_srv.h"

#define MAX_TID 65536
#define SLOW_EVERY 100
#define SLOW_US 20000

static int tid_cpu[MAX_TID];
static int cpu_node_of[FSRV_MAX_FDS];

struct fd_stat {
	uint64_t reqs, known, local_cpu, local_node;
} __attribute__((aligned(64)));

/* Per fd, and last what FUSE-over-io-uring carried */
static struct fd_stat fdstat[FSRV_MAX_FDS + 1];

static bool bench_hook(struct fsrv *srv, int idx,
		       const struct fuse_in_header *in, const void *arg)
{
	int from = tid_cpu[in->pid % MAX_TID] - 1, me = sched_getcpu();
	struct fd_stat *st = &fdstat[idx == FSRV_RING_IDX ? FSRV_MAX_FDS : idx];

	/* The slow requests of the mixed workload */
	if (in->opcode == FUSE_LOOKUP && !strncmp(arg, "slow-", 5))
		usleep(SLOW_US);

	/* Atomic: several threads read one fd (single) or serve the ring */
	__atomic_add_fetch(&st->reqs, 1, __ATOMIC_RELAXED);
	/* Requests sent without a pid (RELEASE, FORGET) have no known origin */
	if (from >= 0 && me >= 0 && me < FSRV_MAX_FDS) {
		__atomic_add_fetch(&st->known, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&st->local_cpu, from == me, __ATOMIC_RELAXED);
		__atomic_add_fetch(&st->local_node,
				   cpu_node_of[from] == cpu_node_of[me],
				   __ATOMIC_RELAXED);
	}
	return false;
}

struct worker {
	const char *mnt;
	const char *workload;
	int cpu;
	int id;
	long ops;
	double *lat;
	double *slow;	/* mixed: latencies of the slow requests */
	long nfast, nslow;
	double busy_us;	/* from the start barrier to its last operation */
	int err;
	pthread_barrier_t *start;
	pthread_t thr;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/*
 * aread: keep up to FUSE_BENCH_DEPTH reads in flight; after each
 * submission compute FUSE_BENCH_COMPUTE us, reaping without waiting, and
 * wait only with a full queue.  A read's latency is from its submission
 * to its reaping.
 */
static int aread_loop(struct worker *w, int fd)
{
	const char *e = getenv("FUSE_BENCH_DEPTH");
	int depth = e ? atoi(e) : 4, inflight = 0, n, k;
	double compute = getenv("FUSE_BENCH_COMPUTE") ?
			 atof(getenv("FUSE_BENCH_COMPUTE")) : 0;
	struct timespec zero = { 0 };
	struct io_event ev[64];
	struct iocb cb[64], *cbp;
	double sent[64], until;
	aio_context_t ctx = 0;
	char *bufs;
	long i = 0;

	if (depth < 1 || depth > 64)
		depth = 4;
	memset(cb, 0, sizeof(cb));
	bufs = aligned_alloc(4096, depth * 4096);
	if (!bufs || syscall(SYS_io_setup, depth, &ctx))
		return ENOMEM;
	while (i < w->ops || inflight) {
		/* Reap: without waiting, or for one with a full queue */
		n = syscall(SYS_io_getevents, ctx,
			    inflight == depth || i == w->ops ? 1 : 0, depth,
			    ev, inflight == depth || i == w->ops ? NULL : &zero);
		if (n < 0)
			return errno;
		for (k = 0; k < n; k++) {
			struct iocb *c = (struct iocb *)(uintptr_t)ev[k].obj;

			if (ev[k].res != 4096)
				return EIO;
			w->lat[w->nfast++] = now_us() - sent[c - cb];
			c->aio_data = 0;
			inflight--;
		}
		if (i == w->ops || inflight == depth)
			continue;
		for (k = 0; k < depth && cb[k].aio_data; k++)
			;
		memset(&cb[k], 0, sizeof(cb[k]));
		cb[k].aio_data = 1;
		cb[k].aio_fildes = fd;
		cb[k].aio_lio_opcode = IOCB_CMD_PREAD;
		cb[k].aio_buf = (uintptr_t)(bufs + k * 4096);
		cb[k].aio_nbytes = 4096;
		cb[k].aio_offset = i % 256 * 4096;
		cbp = &cb[k];
		sent[k] = now_us();
		if (syscall(SYS_io_submit, ctx, 1, &cbp) != 1)
			return errno;
		inflight++;
		i++;
		for (until = now_us() + compute; now_us() < until;)
			;
	}
	syscall(SYS_io_destroy, ctx);
	free(bufs);
	return 0;
}

static void *work(void *p)
{
	struct worker *w = p;
	char path[160], buf[4096] __attribute__((aligned(4096)));
	struct stat st;
	double t_start;
	int fd = -1;
	long i;

	w->err = pin_to_cpu(w->cpu);
	tid_cpu[gettid() % MAX_TID] = w->cpu + 1;
	snprintf(path, sizeof(path), "%s/b%d", w->mnt, w->cpu);
	if (!strcmp(w->workload, "dread") || !strcmp(w->workload, "aread")) {
		snprintf(path, sizeof(path), "%s/big-b%d", w->mnt, w->cpu);
		fd = open(path, O_RDONLY | O_DIRECT);
		if (fd < 0)
			w->err = errno;
	} else if (!strcmp(w->workload, "getattr") ||
		   !strcmp(w->workload, "read") ||
		   !strcmp(w->workload, "mixed")) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			w->err = errno;
	}
	pthread_barrier_wait(w->start);
	t_start = now_us();
	if (!w->err && !strcmp(w->workload, "aread"))
		w->err = aread_loop(w, fd);
	for (i = 0; !w->err && strcmp(w->workload, "aread") && i < w->ops; i++) {
		double t0 = now_us();
		int r = 0;

		if (!strcmp(w->workload, "mixed") && i % SLOW_EVERY == SLOW_EVERY / 2) {
			snprintf(path, sizeof(path), "%s/slow-%d-%ld", w->mnt,
				 w->id, i);
			r = stat(path, &st);
			if (!r) {
				w->slow[w->nslow++] = now_us() - t0;
				continue;
			}
		} else if (!strcmp(w->workload, "getattr") ||
			   !strcmp(w->workload, "mixed")) {
			r = fstat(fd, &st);
		} else if (!strcmp(w->workload, "read")) {
			r = pread(fd, buf, sizeof(buf), 0) == 4096 ? 0 : -1;
		} else if (!strcmp(w->workload, "dread")) {
			r = pread(fd, buf, sizeof(buf), i % 256 * 4096) == 4096 ?
			    0 : -1;
		} else if (!strcmp(w->workload, "open")) {
			int f = open(path, O_RDONLY);

			r = f < 0 ? -1 : close(f);
		} else {
			int f;

			snprintf(path, sizeof(path), "%s/noent-%d-%ld", w->mnt,
				 w->cpu, i);
			f = open(path, O_CREAT | O_WRONLY, 0644);
			r = f < 0 ? -1 : close(f);
			if (!r)
				r = unlink(path);
		}
		if (r) {
			w->err = errno ? errno : EIO;
			break;
		}
		w->lat[w->nfast++] = now_us() - t0;
	}
	w->busy_us = now_us() - t_start;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long proc_stat_ctxt(void)
{
	char line[256];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/stat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %llu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/* Rescheduling and function-call IPIs, summed over CPUs */
static unsigned long long proc_ipis(void)
{
	char line[1024], *p, *end;
	unsigned long long sum = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && fgets(line, sizeof(line), f)) {
		p = line;
		while (*p == ' ')
			p++;
		if (strncmp(p, "RES:", 4) && strncmp(p, "CAL:", 4))
			continue;
		p += 4;
		for (;;) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			sum += v;
			p = end;
		}
	}
	if (f)
		fclose(f);
	return sum;
}

static int pipe_bench(const char *how, long ops);

/* FUSE_BENCH_MARK=1: a mark for a TCG plugin (see the top of this file) */
static void mark(void)
{
	const char *m = getenv("FUSE_BENCH_MARK");
	int fd;

	if (!m || strcmp(m, "1"))
		return;
	fd = open("/", O_RDONLY);
	if (fd < 0 || syncfs(fd))
		perror("FUSE_BENCH_MARK: syncfs /");
	if (fd >= 0)
		close(fd);
}

static double pct(const double *v, long n, double p)
{
	long i = (long)(n * p);

	return n ? v[i < n ? i : n - 1] : 0;
}

/*
 * node: a clone bound to each node that has CPUs, and one reader thread
 * on it, allowed on the node's CPUs; nodecpus (@all): a reader thread per
 * CPU of the node, each allowed on all of them
 */
static int start_node_readers(struct fsrv *srv, int ncpu, bool all)
{
	int node, cpu, i, r, nodes = 0;
	cpu_set_t set;

	for (cpu = 0; cpu < ncpu; cpu++)
		if (cpu_node_of[cpu] >= nodes)
			nodes = cpu_node_of[cpu] + 1;
	for (node = 0; node < nodes; node++) {
		CPU_ZERO(&set);
		for (cpu = 0; cpu < ncpu; cpu++)
			if (cpu_node_of[cpu] == node)
				CPU_SET(cpu, &set);
		if (!CPU_COUNT(&set))
			continue;
		i = fsrv_clone(srv);
		if (i < 0 || fsrv_bind(srv, i, FUSE_DEV_BIND_NODE, -1, node)) {
			fprintf(stderr, "clone/bind for node %d failed\n", node);
			return -1;
		}
		for (r = all ? CPU_COUNT(&set) : 1; r > 0; r--) {
			if (fsrv_start_reader(srv, i, -1) ||
			    pthread_setaffinity_np(srv->thr[srv->nthr - 1],
						   sizeof(set), &set)) {
				fprintf(stderr, "readers for node %d failed\n",
					node);
				return -1;
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode, *workload;
	bool uring, bynode;
	int ncpu = nr_cpus_online(), nthreads, cpu, i, err = 0;
	static struct worker w[FSRV_MAX_FDS];
	static struct fsrv srv;
	unsigned long long ctx0, ctx1, ipi0, ipi1;
	uint64_t reqs = 0, known = 0, lc = 0, ln = 0;
	pthread_barrier_t start;
	double secs, *all, *slow;
	char mvbuf[32];
	long ops, n = 0;

	if (argc == 4 && !strcmp(argv[1], "pipe"))
		return pipe_bench(argv[2], atol(argv[3]));
	if (argc != 5) {
		fprintf(stderr, "usage: %s single|unbound|bound|node|nodecpus|uring getattr|read|dread|aread|open|create|mixed THREADS OPS\n"
			"       %s pipe same|cross|same-process|cross-process OPS\n", argv[0], argv[0]);
		return 2;
	}
	mode = argv[1];
	workload = argv[2];
	if (strcmp(mode, "single") && strcmp(mode, "unbound") &&
	    strcmp(mode, "bound") && strcmp(mode, "node") &&
	    strcmp(mode, "nodecpus") && strcmp(mode, "uring")) {
		fprintf(stderr, "%s: no mode %s\n", argv[0], mode);
		return 2;
	}
	nthreads = atoi(argv[3]);
	ops = atol(argv[4]);
	if (ncpu > FSRV_MAX_FDS - 1)
		ncpu = FSRV_MAX_FDS - 1;
	if (nthreads < 1)
		nthreads = ncpu * (nthreads ? -nthreads : 1);
	if (nthreads > FSRV_MAX_FDS)
		nthreads = FSRV_MAX_FDS;
	for (cpu = 0; cpu < ncpu; cpu++)
		cpu_node_of[cpu] = cpu_node(cpu);

	/*
	 * uring: FUSE-over-io-uring, a ring queue per CPU served by a thread
	 * pinned there (two entries each); the mount fd, read on CPU 0, gets
	 * what the ring leaves to /dev/fuse (forgets)
	 */
	uring = !strcmp(mode, "uring");
	if (uring && fsrv_uring_enable(true)) {
		fprintf(stderr, "%s: io-uring: %s\n", argv[0], fsrv_uring_missing(NULL));
		return 77;
	}
	if (fsrv_mount_opts(&srv, "/tmp/bench", &(struct fsrv_opts){
			.io_uring = uring, .max_background = 64,
			.init_flags = strcmp(workload, "dread") &&
				      strcmp(workload, "aread") ? 0 :
				      FUSE_ASYNC_DIO })) {
		perror("mount");
		return 1;
	}
	srv.nolog = true;
	srv.hook = bench_hook;
	if (uring) {
		if (fsrv_uring_missing(&srv) || fsrv_uring_start(&srv, -1, 2)) {
			fprintf(stderr, "%s: io-uring: %s\n", argv[0],
				fsrv_uring_missing(&srv) ?: "no ring");
			fsrv_destroy(&srv);
			return 77;
		}
		fsrv_start_reader(&srv, 0, 0);
	}
	bynode = !strcmp(mode, "node") || !strcmp(mode, "nodecpus");
	if (bynode && start_node_readers(&srv, ncpu, strcmp(mode, "node")))
		return 1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		if (!strcmp(mode, "single") || bynode || uring)
			break;
		i = fsrv_clone(&srv);
		if (i < 0 || (!strcmp(mode, "bound") &&
			      fsrv_bind(&srv, i, FUSE_DEV_BIND_CPU, cpu, -1))) {
			fprintf(stderr, "clone/bind for CPU %d failed\n", cpu);
			return 1;
		}
		fsrv_start_reader(&srv, i, cpu);
	}
	/*
	 * single: one fd, one reader thread per CPU pinned there, so that
	 * where the scheduler puts them does not decide the result
	 */
	if (!strcmp(mode, "single"))
		for (cpu = 0; cpu < ncpu; cpu++)
			fsrv_start_reader(&srv, 0, cpu);

	pthread_barrier_init(&start, NULL, nthreads + 1);
	all = calloc((size_t)nthreads * ops, sizeof(double));
	slow = calloc((size_t)nthreads * ops / SLOW_EVERY + nthreads,
		      sizeof(double));
	for (i = 0; i < nthreads; i++) {
		w[i].mnt = srv.mnt;
		w[i].workload = workload;
		w[i].cpu = i % ncpu;
		w[i].id = i;
		w[i].ops = ops;
		w[i].lat = all + (size_t)i * ops;
		w[i].slow = slow + (size_t)i * (ops / SLOW_EVERY + 1);
		w[i].start = &start;
		pthread_create(&w[i].thr, NULL, work, &w[i]);
	}
	ctx0 = proc_stat_ctxt();
	ipi0 = proc_ipis();
	memset(fdstat, 0, sizeof(fdstat));
	mark();
	pthread_barrier_wait(&start);
	/*
	 * The run lasts as long as its slowest worker, each timed on its own
	 * (pinned, running) CPU: under QEMU's instruction clock the clock of
	 * a vCPU that sat idle meanwhile, where this thread may sleep, does
	 * not always move.
	 */
	secs = 0;
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].thr, NULL);
		if (w[i].err)
			err = w[i].err;
		if (w[i].busy_us / 1e6 > secs)
			secs = w[i].busy_us / 1e6;
	}
	mark();
	ctx1 = proc_stat_ctxt();
	ipi1 = proc_ipis();
	for (i = 0; i <= FSRV_MAX_FDS; i++) {
		reqs += fdstat[i].reqs;
		known += fdstat[i].known;
		lc += fdstat[i].local_cpu;
		ln += fdstat[i].local_node;
	}
	if (!strcmp(workload, "mixed")) {
		/* Moves are not counted by the kernel: "-" */
		long nf = 0, ns = 0, mv = -1;

		/* Gather the latencies of each kind from the workers */
		for (i = 0; i < nthreads; i++) {
			memmove(all + nf, w[i].lat, w[i].nfast * sizeof(double));
			nf += w[i].nfast;
			memmove(slow + ns, w[i].slow, w[i].nslow * sizeof(double));
			ns += w[i].nslow;
		}
		qsort(all, nf, sizeof(double), cmp_double);
		qsort(slow, ns, sizeof(double), cmp_double);
		printf("mixed\t%s\t%d\t%ld\t%.6f\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%llu\n",
		       mode, nthreads, ops, secs, (nf + ns) / secs,
		       pct(all, nf, 0.5), pct(all, nf, 0.99), pct(all, nf, 0.999),
		       pct(slow, ns, 0.5), known ? 100.0 * lc / known : 0,
		       known ? 100.0 * ln / known : 0,
		       mv < 0 ? "-" : (snprintf(mvbuf, sizeof(mvbuf), "%ld", mv), mvbuf),
		       (unsigned long long)reqs);
		goto out;
	}
	n = (long)nthreads * ops;
	qsort(all, n, sizeof(double), cmp_double);
	printf("%s\t%s\t%d\t%ld\t%.6f\t%.0f\t%.3f\t%.3f\t%.1f\t%.1f\t%.2f\t%.2f\t%llu\n",
	       mode, workload, nthreads, ops, secs, n / secs, all[n / 2],
	       all[(long)(n * 0.99)], known ? 100.0 * lc / known : 0,
	       known ? 100.0 * ln / known : 0,
	       reqs ? (double)(ctx1 - ctx0) / reqs : 0,
	       reqs ? (double)(ipi1 - ipi0) / reqs : 0,
	       (unsigned long long)reqs);
out:
	if (err)
		fprintf(stderr, "workload error: %s\n", strerror(err));
	fsrv_destroy(&srv);
	if (uring)
		fsrv_uring_enable(false);
	free(all);
	free(slow);
	return err ? 1 : 0;
}

struct pp {
	int in, out, cpu;
	long ops;
};

static void *pong(void *p)
{
	struct pp *x = p;
	char c;
	long i;

	pin_to_cpu(x->cpu);
	for (i = 0; i < x->ops; i++)
		if (read(x->in, &c, 1) != 1 || write(x->out, &c, 1) != 1)
			break;
	return NULL;
}

static int pipe_bench(const char *how, long ops)
{
	int a[2], b[2];
	struct pp x;
	pthread_t t;
	double t0, secs;
	pid_t pid = 0;
	char c = 'x';
	long i;

	if (pipe(a) || pipe(b))
		return 1;
	x.in = a[0];
	x.out = b[1];
	x.ops = ops;
	x.cpu = strncmp(how, "same", 4) ? 1 % nr_cpus_online() : 0;
	pin_to_cpu(0);
	if (strstr(how, "-process")) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid) {
			pong(&x);
			_exit(0);
		}
	} else if (pthread_create(&t, NULL, pong, &x)) {
		return 1;
	}
	t0 = now_us();
	for (i = 0; i < ops; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			break;
	secs = (now_us() - t0) / 1e6;
	if (pid > 0)
		waitpid(pid, NULL, 0);
	else
		pthread_join(t, NULL);
	printf("pipe-%s\tping-pong\t1\t%ld\t%.6f\t%.0f\t%.1f\t%.1f\t-\t-\t-\t-\t%ld\n",
	       how, ops, secs, ops / secs, secs * 1e6 / ops, secs * 1e6 / ops,
	       ops);
	return 0;
}
