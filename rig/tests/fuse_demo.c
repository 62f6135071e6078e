// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_demo: serve a small file system through one /dev/fuse clone per
 * CPU, run a parallel workload with one thread pinned to each CPU, and
 * print per clone which CPUs its requests came from.
 *
 *   fuse_demo bound     clones bound to their CPU (FUSE_DEV_IOC_BIND)
 *   fuse_demo unbound   clones not bound: what libfuse -o clone_fd gets
 *   fuse_demo MODE data the same, printed as "@" lines for a script
 *                       (rig/demo.sh sets the runs side by side)
 *
 * Each reader thread is pinned to its clone's CPU in both modes, so the
 * "own CPU" column is the share of requests served on the CPU that issued
 * them.  Locality is measured on LOOKUPs, whose names say where they came
 * from, in the server's own log, which every fuse.ko gives.  Where the
 * kernel has the tracepoint fuse:fuse_request_read (ours), a hist trigger
 * on it also counts every request of the connection by issuing and reading
 * CPU, and how many were read from the reader's own device queue rather
 * than the shared one: what the log cannot tell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuse_srv.h"

#define OPS_PER_CPU 500
#define TRACEFS "/sys/kernel/tracing"
#define EVENT "/events/fuse/fuse_request_read"
#define HIST "hist:keys=connection,cpu,read_cpu:vals=hitcount,own"
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

struct worker {
	const char *mnt;
	int cpu;
	int err;
	pthread_t thr;
};

static void *work(void *p)
{
	struct worker *w = p;
	char path[160], buf[4096];
	struct stat st;
	int i, fd;

	w->err = pin_to_cpu(w->cpu);
	for (i = 0; !w->err && i < OPS_PER_CPU; i++) {
		snprintf(path, sizeof(path), "%s/w%d-%d", w->mnt, w->cpu, i);
		if (stat(path, &st)) {
			w->err = errno;
			break;
		}
		if (i % 10)
			continue;
		fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, buf, sizeof(buf)) != 4096 ||
		    buf[1] != 'b')
			w->err = EIO;
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

/*
 * The tracefs directory with our tracepoint, mounting tracefs at its usual
 * place if nothing is there yet; NULL where there is no such tracepoint
 * (stock fuse.ko) or no tracefs.
 */
static const char *trace_dir(void)
{
	static const char *const dirs[] = { TRACEFS, "/sys/kernel/debug/tracing" };
	unsigned int i;

	if (access(TRACEFS "/events", F_OK))
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		char path[160];

		snprintf(path, sizeof(path), "%s" EVENT "/trigger", dirs[i]);
		if (!access(path, W_OK))
			return dirs[i];
	}
	return NULL;
}

/*
 * Attach the hist trigger: requests counted by connection, issuing CPU
 * and reading CPU, with how many of them came from the reader's own
 * device queue.  A trigger left by an earlier run is removed first.
 */
static int trace_start(const char *dir)
{
	char path[160];

	snprintf(path, sizeof(path), "%s" EVENT "/trigger", dir);
	fsrv_write_file(path, "!" HIST);
	return fsrv_write_file(path, HIST);
}

static void trace_stop(const char *dir)
{
	char path[160];

	snprintf(path, sizeof(path), "%s" EVENT "/trigger", dir);
	fsrv_write_file(path, "!" HIST);
}

struct hist_ent {
	int cpu, read_cpu;
	unsigned long hits, own;
};

/*
 * The hist file's entries of connection @conn, at most @max: their number,
 * or -errno.  Each entry reads
 *   { connection: C, cpu: N, read_cpu: M } hitcount: K  own: O
 * (kernel/trace/trace_events_hist.c pads the numbers with spaces).
 */
static int read_hist(const char *dir, unsigned int conn, struct hist_ent *e,
		     int max)
{
	char path[160], line[256];
	unsigned int c;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s" EVENT "/hist", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f))
		if (sscanf(line, "{ connection: %u, cpu: %d, read_cpu: %d } hitcount: %lu own: %lu",
			   &c, &e[n].cpu, &e[n].read_cpu, &e[n].hits,
			   &e[n].own) == 5 && c == conn)
			n++;
	fclose(f);
	return n;
}

/* One "@run" line, and one "@clone" line per clone (idx 0 is the mount fd) */
static void print_data(int ncpu, const char *mode, double secs, int err,
		       const long *served, const long *lookups,
		       const long *own_cpu, const long *own_node)
{
	int i;

	printf("@run mode=%s cpus=%d ops=%d reads=%d secs=%.2f errors=%d\n",
	       mode, ncpu, OPS_PER_CPU, OPS_PER_CPU / 10, secs, err);
	for (i = 0; i <= ncpu; i++)
		printf("@clone idx=%d cpu=%d node=%d served=%ld lookups=%ld own_cpu=%ld own_node=%ld\n",
		       i, i ? i - 1 : -1, i ? cpu_node(i - 1) : -1, served[i],
		       lookups[i], own_cpu[i], own_node[i]);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "unbound";
	bool bound = !strcmp(mode, "bound");
	bool data = argc > 2 && !strcmp(argv[2], "data");
	int ncpu = nr_cpus_online(), cpu, i, err = 0, nh = -1;
	struct worker w[FSRV_MAX_FDS];
	long served[FSRV_MAX_FDS] = {}, lookups[FSRV_MAX_FDS] = {};
	long own_cpu[FSRV_MAX_FDS] = {}, own_node[FSRV_MAX_FDS] = {};
	long tot = 0, tot_own = 0, tot_node = 0;
	unsigned long hits = 0, h_cpu = 0, h_node = 0, h_own = 0;
	static struct hist_ent hist[FSRV_MAX_FDS * FSRV_MAX_FDS];
	struct timespec t0, t1;
	static struct fsrv srv;
	const char *tdir;
	double secs;

	if (ncpu > FSRV_MAX_FDS - 1)
		ncpu = FSRV_MAX_FDS - 1;
	if (strcmp(mode, "bound") && strcmp(mode, "unbound")) {
		fprintf(stderr, "usage: fuse_demo bound|unbound [data]\n");
		return 2;
	}
	if (fsrv_mount(&srv, "/tmp/demo")) {
		perror("mount");
		return 1;
	}
	/* fds[0] is the mount fd; fds[1 + cpu] serves CPU cpu */
	for (cpu = 0; cpu < ncpu; cpu++) {
		i = fsrv_clone(&srv);
		if (i < 0 || (bound && fsrv_bind(&srv, i, FUSE_DEV_BIND_CPU,
						 cpu, -1))) {
			fprintf(stderr, "clone/bind for CPU %d failed\n", cpu);
			return 1;
		}
		fsrv_start_reader(&srv, i, cpu);
	}
	/*
	 * A request goes to its CPU's clone only while that clone's reader
	 * sleeps in read(): let every reader get there before the workload
	 */
	if (fsrv_wait_readers(&srv, ncpu, 10000))
		fprintf(stderr, "not every reader is waiting yet\n");
	tdir = trace_dir();
	if (tdir && trace_start(tdir)) {
		fprintf(stderr, "cannot attach a hist trigger to fuse:fuse_request_read\n");
		tdir = NULL;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (cpu = 0; cpu < ncpu; cpu++) {
		w[cpu].mnt = srv.mnt;
		w[cpu].cpu = cpu;
		pthread_create(&w[cpu].thr, NULL, work, &w[cpu]);
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		pthread_join(w[cpu].thr, NULL);
		if (w[cpu].err)
			err = w[cpu].err;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (tdir) {
		nh = read_hist(tdir, srv.conn, hist, ARRAY_SIZE(hist));
		trace_stop(tdir);
	}
	for (i = 0; i < nh; i++) {
		hits += hist[i].hits;
		h_own += hist[i].own;
		if (hist[i].cpu == hist[i].read_cpu)
			h_cpu += hist[i].hits;
		if (cpu_node(hist[i].cpu) == cpu_node(hist[i].read_cpu))
			h_node += hist[i].hits;
	}

	pthread_mutex_lock(&srv.lock);
	for (size_t k = 0; k < srv.nlog; k++) {
		struct fsrv_rec *r = &srv.log[k];
		int from;

		served[r->fd_idx]++;
		if (r->opcode != FUSE_LOOKUP ||
		    sscanf(r->name, "w%d-", &from) != 1)
			continue;
		lookups[r->fd_idx]++;
		own_cpu[r->fd_idx] += from == r->cpu;
		own_node[r->fd_idx] += cpu_node(from) == cpu_node(r->cpu);
	}
	pthread_mutex_unlock(&srv.lock);

	if (data) {
		print_data(ncpu, mode, secs, err, served, lookups, own_cpu,
			   own_node);
		for (i = 0; i < nh; i++)
			printf("@hist cpu=%d node=%d read_cpu=%d read_node=%d hits=%lu own=%lu\n",
			       hist[i].cpu, cpu_node(hist[i].cpu),
			       hist[i].read_cpu, cpu_node(hist[i].read_cpu),
			       hist[i].hits, hist[i].own);
		goto out;
	}
	printf("\nfuse_demo: %d CPUs, %s clones, %d stat() + %d read() per CPU, %.2f s%s\n",
	       ncpu, bound ? "BOUND" : mode, OPS_PER_CPU,
	       OPS_PER_CPU / 10, secs, err ? "  (WORKLOAD ERRORS)" : "");
	printf("%-6s %-8s %-5s %-10s %-9s %8s  %9s\n", "clone", "binding",
	       "node", "reader-cpu", "requests", "own-cpu", "own-node");
	for (i = 0; i <= ncpu; i++) {
		char bind[16] = "-";

		if (!served[i] && i == 0)
			continue;
		if (i > 0 && bound)
			snprintf(bind, sizeof(bind), "cpu%d", i - 1);
		printf("%-6d %-8s %-5d %-10d %-9ld %7.1f%%  %7.1f%%\n", i, bind,
		       i ? cpu_node(i - 1) : -1, i ? i - 1 : -1, served[i],
		       lookups[i] ? 100.0 * own_cpu[i] / lookups[i] : 0.0,
		       lookups[i] ? 100.0 * own_node[i] / lookups[i] : 0.0);
		tot += lookups[i];
		tot_own += own_cpu[i];
		tot_node += own_node[i];
	}
	printf("%-6s %-8s %-5s %-10s %-9s %7.1f%%  %7.1f%%\n", "all", "", "", "",
	       "", tot ? 100.0 * tot_own / tot : 0.0,
	       tot ? 100.0 * tot_node / tot : 0.0);
	if (hits)
		printf("\nfuse:fuse_request_read, all %lu requests: read on the issuing\n"
		       "CPU %.1f%%, on its node %.1f%%, from the reader's own device queue %.1f%%\n",
		       hits, 100.0 * h_cpu / hits, 100.0 * h_node / hits,
		       100.0 * h_own / hits);
out:
	fsrv_destroy(&srv);
	return err ? 1 : 0;
}
