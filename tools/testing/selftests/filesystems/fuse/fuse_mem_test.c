// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel memory a daemon controls through its clones and bindings:
 *
 *   - 100000 rounds (FUSE_MEM_ROUNDS in the environment: another number) of
 *     clone, bind, unbind, rebind and close end with the daemon's memory
 *     cgroup and the kernel's slab where they started;
 *   - closing a bound clone needs no memory: with every slab allocation of
 *     the closing task failing (failslab), its CPU's requests go to the
 *     shared queue until the next binding maps them again;
 *   - a first binding that fails for want of memory leaves nothing behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "../../kselftest_harness.h"

#define CG	"/sys/fs/cgroup"
#define FAIL	"/sys/kernel/debug/failslab"

static long read_long(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atol(buf) : -1;
}

/* A /proc/meminfo field, in KiB */
static long read_meminfo(const char *field)
{
	char line[128];
	size_t len = strlen(field);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':')
			v = atol(line + len + 1);
	fclose(f);
	return v;
}

/* Move this process into a memory cgroup of its own; its path, or NULL */
static const char *own_memcg(void)
{
	static char dir[64];

	mkdir(CG, 0755);
	if (access(CG "/cgroup.procs", F_OK) &&
	    mount("none", CG, "cgroup2", 0, NULL))
		return NULL;
	if (fsrv_write_file(CG "/cgroup.subtree_control", "+memory"))
		return NULL;
	snprintf(dir, sizeof(dir), CG "/fuse-mem-%d", getpid());
	if (mkdir(dir, 0755) && errno != EEXIST)
		return NULL;
	return dir;
}

/* One round of what a daemon does to its clones */
static int churn(struct fsrv *srv, int round, int ncpu)
{
	int c = fsrv_clone(srv), err;

	if (c < 0)
		return c;
	err = fsrv_bind(srv, c, FUSE_DEV_BIND_CPU, round % ncpu, -1) ?:
	      fsrv_bind(srv, c, 0, -1, -1) ?:
	      fsrv_bind(srv, c, FUSE_DEV_BIND_NODE, -1, cpu_node(0));
	close(srv->fds[c]);
	srv->fds[c] = -1;
	srv->nfds--;
	return err;
}

/*
 * Every slab allocation of this thread fails while @on.  The task filter
 * goes first and the probability last, so that a failed step never makes
 * the whole machine fail its allocations.
 */
static int failslab(bool on)
{
	static const char *const setup[][2] = {
		{ FAIL "/task-filter", "Y" },
		{ FAIL "/ignore-gfp-wait", "N" },
		{ FAIL "/verbose", "0" },
		{ FAIL "/interval", "1" },
		{ FAIL "/times", "-1" },
		{ FAIL "/probability", "100" },
	};
	/* Opened before, since opening a file needs memory */
	static int make_it_fail = -1;
	size_t i;
	int err;

	if (!on) {
		if (make_it_fail >= 0) {
			if (pwrite(make_it_fail, "0", 1, 0) != 1)
				return -errno;
			close(make_it_fail);
			make_it_fail = -1;
		}
		return fsrv_write_file(FAIL "/probability", "0");
	}
	make_it_fail = open("/proc/thread-self/make-it-fail", O_WRONLY);
	if (make_it_fail < 0)
		return -errno;
	for (i = 0; i < ARRAY_SIZE(setup); i++) {
		err = fsrv_write_file(setup[i][0], setup[i][1]);
		if (err) {
			printf("# %s: %s\n", setup[i][0], strerror(-err));
			failslab(false);
			return err;
		}
	}
	return pwrite(make_it_fail, "1", 1, 0) == 1 ? 0 : -errno;
}

FIXTURE(mem) {
	struct fsrv srv;
	char mnt[64];
};

FIXTURE_SETUP(mem)
{
	if (fsrv_bind_missing(0))
		SKIP(return, "%s", fsrv_bind_missing(0));
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/mem-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&self->srv, self->mnt));
}

FIXTURE_TEARDOWN(mem)
{
	if (!access(FAIL, F_OK))
		failslab(false);
	fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

TEST_F_TIMEOUT(mem, churn_leaves_memory_where_it_was, 600)
{
	int ncpu = nr_cpus_online(), i, keep, rounds = 100000;
	const char *cg = own_memcg(), *env = getenv("FUSE_MEM_ROUNDS");
	long cg0, cg1, slab0, slab1;
	char path[96], pid[16];

	/* A leak of one queue (hundreds of bytes) a round shows from 10000 */
	if (env)
		rounds = atoi(env);
	ASSERT_GE(rounds, 10000);

	if (!cg)
		SKIP(return, "no memory cgroup");
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, fsrv_write_file(path, pid));
	snprintf(path, sizeof(path), "%s/memory.current", cg);

	/* One clone stays bound throughout, as a daemon's would */
	keep = fsrv_clone(&self->srv);
	ASSERT_EQ(0, fsrv_bind(&self->srv, keep, FUSE_DEV_BIND_CPU, 0, -1));
	/* Warm up: pools, the map, and KASAN's quarantine fill up */
	for (i = 0; i < 10000; i++)
		ASSERT_EQ(0, churn(&self->srv, i, ncpu));
	cg0 = read_long(path);
	slab0 = read_meminfo("SUnreclaim");
	for (i = 0; i < rounds; i++)
		ASSERT_EQ(0, churn(&self->srv, i, ncpu));
	cg1 = read_long(path);
	slab1 = read_meminfo("SUnreclaim");
	TH_LOG("%d rounds: memcg %ld -> %ld bytes, unreclaimable slab %ld -> %ld KiB",
	       rounds, cg0, cg1, slab0, slab1);
	ASSERT_GT(cg0, 0);
	/* Charges move in per-CPU batches; a leak of a few bytes a round shows */
	EXPECT_LT(labs(cg1 - cg0), 1024 * 1024);
	EXPECT_LT(labs(slab1 - slab0), 4096);
	EXPECT_EQ(0, fsrv_dq_field(&self->srv, keep, 4));
	snprintf(path, sizeof(path), "%s", cg);
	fsrv_write_file(CG "/cgroup.procs", pid);
	rmdir(path);
}

TEST_F(mem, close_needs_no_memory)
{
	int a, b, per;
	struct fsrv_job j, j2;

	if (access(FAIL, F_OK))
		SKIP(return, "no failslab");
	if (nr_cpus_online() < 3)
		SKIP(return, "needs 3 CPUs");
	a = fsrv_clone(&self->srv);
	b = fsrv_clone(&self->srv);
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 0, -1));
	ASSERT_EQ(0, fsrv_bind(&self->srv, b, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 1, -1));

	ASSERT_EQ(0, failslab(true));
	per = close(self->srv.fds[a]);
	failslab(false);
	ASSERT_EQ(0, per);
	self->srv.fds[a] = -1;

	/* No memory for a new map: CPU 0 falls back to the shared queue */
	fsrv_job_stat(&j, self->mnt, "after-close", 0);
	EXPECT_EQ(0, fsrv_wait_waiting(&self->srv, 1, 5000));
	usleep(100000);
	EXPECT_EQ(0, fsrv_queued_on(&self->srv, b));
	EXPECT_EQ(1, fsrv_shared_queued(&self->srv));

	/* The next binding maps it by the rules again: to b, the older */
	a = fsrv_clone(&self->srv);
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 2, -1));
	fsrv_job_stat(&j2, self->mnt, "after-bind", 0);
	EXPECT_TRUE(FSRV_WAIT(fsrv_queued_on(&self->srv, b) == 1, 5000));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, b, -1));
	EXPECT_EQ(0, fsrv_job_wait(&j));
	EXPECT_EQ(0, fsrv_job_wait(&j2));
	EXPECT_EQ(b, fsrv_reader_of(&self->srv, "after-close"));
	EXPECT_EQ(b, fsrv_reader_of(&self->srv, "after-bind"));
}

TEST_F(mem, failed_first_bind_leaves_nothing)
{
	char before[4096], after[4096];
	struct fuse_dev_bind got;
	int a = fsrv_clone(&self->srv), err;
	struct fsrv_job j;

	if (access(FAIL, F_OK))
		SKIP(return, "no failslab");
	ASSERT_GT(fsrv_conn_file(&self->srv, "dev_queues", before,
				 sizeof(before)), 0);
	ASSERT_EQ(0, failslab(true));
	err = fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU, 0, -1);
	failslab(false);
	EXPECT_EQ(-ENOMEM, err);
	ASSERT_EQ(0, ioctl(self->srv.fds[a], FUSE_DEV_IOC_GET_BIND, &got));
	EXPECT_EQ(0, got.flags);
	ASSERT_GT(fsrv_conn_file(&self->srv, "dev_queues", after,
				 sizeof(after)), 0);
	EXPECT_STREQ(before, after);

	/* Requests still take the shared queue, and the next bind works */
	fsrv_job_stat(&j, self->mnt, "still-shared", 0);
	EXPECT_EQ(0, fsrv_wait_waiting(&self->srv, 1, 5000));
	usleep(50000);
	EXPECT_EQ(1, fsrv_shared_queued(&self->srv));
	EXPECT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU, 0, -1));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, a, -1));
	EXPECT_EQ(0, fsrv_job_wait(&j));
}

TEST_HARNESS_MAIN
