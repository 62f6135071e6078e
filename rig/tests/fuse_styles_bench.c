// SPDX-License-Identifier: GPL-2.0
/*
 * The round trip of sequential requests for each way a daemon's readers
 * wait (fuse_srv's reader styles), through one clone per CPU with one
 * reader pinned on each, the clones unbound and bound to their CPUs.
 *
 * usage: fuse_styles_bench [-n OPS] [-c CPU] [-r REPEATS] [-s STYLE] [-l US]
 *                          [-u|-b]
 *   -n  stat() calls per run (default 400), from one thread pinned to
 *       CPU -c (default 1), one at a time
 *   -r  runs per cell (default 3); the cell is the run with the median
 *       median.  After a warm-up run the modes alternate: bound,
 *       unbound, unbound, bound, ...
 *   -s  this style only (fuse_srv's name: blocking, poll, ..., worker)
 *   -l  the reader on the caller's CPU lingers US microseconds after
 *       each reply it writes (sleeping; spinning if US is negative), as a
 *       daemon that logs or frees after replying
 *   -u  unbound clones only (stock fuse.ko, which has no FUSE_DEV_IOC_BIND)
 *   -b  bound clones only (to profile one mode: make pathprof's counts)
 *
 * One TSV line per style and mode:
 *   style mode median_us p90_us own_cpu_pct
 * own_cpu_pct: the share of the requests read on the caller's CPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse_srv.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct cell {
	double median, p90, own;
};

static int linger_us, linger_idx;

static bool linger(struct fsrv *srv, int idx, const struct fuse_in_header *in,
		   const void *arg)
{
	double end;

	if (idx != linger_idx || in->opcode != FUSE_LOOKUP)
		return false;
	fsrv_handle(srv, idx, in, arg);
	if (linger_us > 0) {
		usleep(linger_us);
	} else {
		end = fsrv_now_ms() - linger_us / 1000.0;
		while (fsrv_now_ms() < end)
			;
	}
	return true;
}

static int run(enum fsrv_style style, bool bound, int ops, int cpu,
	       struct cell *out)
{
	int ncpu = nr_cpus_online(), i, idx, own = 0, err = 0;
	double *lat = calloc(ops, sizeof(*lat));
	char mnt[64], path[128];
	struct fsrv srv;
	struct stat st;
	size_t k;

	snprintf(mnt, sizeof(mnt), "/tmp/styles-%d", getpid());
	if (!lat || fsrv_mount(&srv, mnt))
		return -1;
	srv.style = style;
	if (linger_us)
		srv.hook = linger;
	for (i = 0; i < ncpu && !err; i++) {
		idx = fsrv_clone(&srv);
		if (i == cpu)
			linger_idx = idx;
		if (idx < 0 ||
		    (bound && fsrv_bind(&srv, idx, FUSE_DEV_BIND_CPU, i, -1)) ||
		    fsrv_start_reader(&srv, idx, i))
			err = -1;
	}
	srv.reading[0] = true;
	if (err || fsrv_wait_readers(&srv, srv.nthr, 10000) ||
	    pin_to_cpu(cpu))
		goto out;
	/* Warm up, then measure */
	for (i = -ops / 10; i < ops && !err; i++) {
		double t0 = fsrv_now_ms();

		snprintf(path, sizeof(path), "%s/s%d", mnt, i < 0 ? -i : i);
		err = stat(path, &st);
		if (i >= 0)
			lat[i] = (fsrv_now_ms() - t0) * 1000;
	}
	if (err)
		goto out;
	pthread_mutex_lock(&srv.lock);
	for (k = 0; k < srv.nlog; k++)
		own += srv.log[k].opcode == FUSE_LOOKUP &&
		       srv.log[k].cpu == cpu;
	i = 0;
	for (k = 0; k < srv.nlog; k++)
		i += srv.log[k].opcode == FUSE_LOOKUP;
	pthread_mutex_unlock(&srv.lock);
	qsort(lat, ops, sizeof(*lat), cmp_double);
	out->median = lat[ops / 2];
	out->p90 = lat[ops * 9 / 10];
	out->own = i ? 100.0 * own / i : 0;
out:
	fsrv_destroy(&srv);
	rmdir(mnt);
	free(lat);
	return err ? -1 : 0;
}

static int cmp_cell(const void *a, const void *b)
{
	return cmp_double(&((const struct cell *)a)->median,
			  &((const struct cell *)b)->median);
}

int main(int argc, char **argv)
{
	int ops = 400, cpu = 1, repeats = 3, opt, m, r;
	bool unbound_only = false, bound_only = false;
	const char *only = NULL;
	enum fsrv_style s;

	while ((opt = getopt(argc, argv, "n:c:r:s:l:ub")) != -1) {
		switch (opt) {
		case 'n':
			ops = atoi(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'r':
			repeats = atoi(optarg);
			break;
		case 's':
			only = optarg;
			break;
		case 'l':
			linger_us = atoi(optarg);
			break;
		case 'u':
			unbound_only = true;
			break;
		case 'b':
			bound_only = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-n OPS] [-c CPU] [-r N] [-s STYLE] [-l US] [-u|-b]\n",
				argv[0]);
			return 2;
		}
	}
	if (cpu >= nr_cpus_online())
		cpu = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("style\tmode\tmedian_us\tp90_us\town_cpu_pct\n");
	for (s = 0; s < FSRV_NR_STYLES; s++) {
		if (fsrv_style_missing(s) ||
		    (only && strcmp(only, fsrv_style_name[s])))
			continue;
		/*
		 * A warm-up run, then the modes alternate (bound, unbound,
		 * unbound, bound, ...), so that neither has the cold or the
		 * warm half of the boot to itself
		 */
		struct cell c[2][9] = {}, warm;
		int n[2] = {}, order;

		run(s, bound_only, ops, cpu, &warm);
		for (r = 0; r < repeats && r < 9; r++) {
			for (order = 0; order < 2; order++) {
				m = unbound_only ? 0 : bound_only ? 1 :
				    (r + order + 1) % 2;
				if ((unbound_only || bound_only) && order)
					break;
				if (!run(s, m, ops, cpu, &c[m][n[m]]))
					n[m]++;
			}
		}
		for (m = bound_only; m < (unbound_only ? 1 : 2); m++) {
			if (!n[m]) {
				printf("%s\t%s\tfailed\n", fsrv_style_name[s],
				       m ? "bound" : "unbound");
				continue;
			}
			qsort(c[m], n[m], sizeof(c[m][0]), cmp_cell);
			printf("%s\t%s\t%.1f\t%.1f\t%.1f\n", fsrv_style_name[s],
			       m ? "bound" : "unbound", c[m][n[m] / 2].median,
			       c[m][n[m] / 2].p90, c[m][n[m] / 2].own);
		}
	}
	return 0;
}
