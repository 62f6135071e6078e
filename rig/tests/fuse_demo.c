// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_demo: serve a small file system through one /dev/fuse clone per
 * CPU, run a parallel workload with one thread pinned to each CPU, and
 * print per clone which CPUs its requests came from.
 *
 *   fuse_demo bound     clones bound to their CPU (FUSE_DEV_IOC_BIND)
 *   fuse_demo unbound   clones not bound: what libfuse -o clone_fd gets
 *   fuse_demo oldest    clones not bound, and the connection's fusectl
 *                       wake_nearest 0: a wakeup takes the reader that
 *                       has waited longest, as without device queues
 *   fuse_demo MODE data the same, printed as "@" lines for a script
 *                       (rig/demo.sh sets the runs side by side)
 *
 * Each reader thread is pinned to its clone's CPU in both modes, so the
 * "own CPU" column is the share of requests served on the CPU that issued
 * them.  Locality is measured on LOOKUPs, whose names say where they came
 * from.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuse_srv.h"

#define OPS_PER_CPU 500

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
 * One "@run" line, one "@clone" line per clone (idx 0 is the mount fd) and
 * the connection's dev_queues file as "@dq" lines.
 */
static void print_data(struct fsrv *srv, int ncpu, const char *mode,
		       double secs, int err, const long *served,
		       const long *lookups,
		       const long *own_cpu, const long *own_node, char *stats,
		       size_t len)
{
	char *line, *save = NULL;
	int i;

	printf("@run mode=%s cpus=%d ops=%d reads=%d secs=%.2f errors=%d\n",
	       mode, ncpu, OPS_PER_CPU, OPS_PER_CPU / 10, secs, err);
	for (i = 0; i <= ncpu; i++)
		printf("@clone idx=%d cpu=%d node=%d served=%ld lookups=%ld own_cpu=%ld own_node=%ld\n",
		       i, i ? i - 1 : -1, i ? cpu_node(i - 1) : -1, served[i],
		       lookups[i], own_cpu[i], own_node[i]);
	if (fsrv_conn_file(srv, "dev_queues", stats, len) <= 0)
		return;
	for (line = strtok_r(stats, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		printf("@dq %s\n", line);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "unbound";
	bool bound = !strcmp(mode, "bound");
	bool data = argc > 2 && !strcmp(argv[2], "data");
	int ncpu = nr_cpus_online(), cpu, i, err = 0;
	struct worker w[FSRV_MAX_FDS];
	long served[FSRV_MAX_FDS] = {}, lookups[FSRV_MAX_FDS] = {};
	long own_cpu[FSRV_MAX_FDS] = {}, own_node[FSRV_MAX_FDS] = {};
	long tot = 0, tot_own = 0, tot_node = 0;
	struct timespec t0, t1;
	static struct fsrv srv;
	static char stats[8192];
	double secs;

	if (ncpu > FSRV_MAX_FDS - 1)
		ncpu = FSRV_MAX_FDS - 1;
	if (strcmp(mode, "bound") && strcmp(mode, "unbound") &&
	    strcmp(mode, "oldest")) {
		fprintf(stderr, "usage: fuse_demo bound|unbound|oldest [data]\n");
		return 2;
	}
	if (fsrv_mount(&srv, "/tmp/demo")) {
		perror("mount");
		return 1;
	}
	if (!strcmp(mode, "oldest") &&
	    fsrv_conn_write(&srv, "wake_nearest", "0")) {
		fprintf(stderr, "no fusectl wake_nearest to turn off\n");
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
		print_data(&srv, ncpu, mode, secs, err, served, lookups,
			   own_cpu, own_node, stats, sizeof(stats));
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
	if (fsrv_conn_file(&srv, "dev_queues", stats, sizeof(stats)) > 0)
		printf("\n/sys/fs/fuse/connections/%u/dev_queues:\n%s",
		       srv.conn, stats);
out:
	fsrv_destroy(&srv);
	return err ? 1 : 0;
}
