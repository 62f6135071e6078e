// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel memory a daemon controls through its clones and bindings:
 *
 *   - 100000 rounds (FUSE_MEM_ROUNDS in the environment: another number) of
 *     clone, bind, unbind, rebind and close end with the daemon's memory
 *     cgroup and the kernel's slab where they started (queues are pooled
 *     and reused, the routing map is rebuilt in place);
 *   - closing a bound clone needs no memory: with every slab allocation of
 *     the closing task failing (failslab), its CPU's requests still go to
 *     the clone the rules name, not to the shared queue;
 *   - a first binding that fails for want of memory leaves nothing behind;
 *   - a closed clone's queue is reused only once the requests its device
 *     read have ended: a new clone never reads an interrupt for a request
 *     it did not read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
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
	struct fsrv_job j;

	if (access(FAIL, F_OK))
		SKIP(return, "no failslab");
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

	/* CPU 0 now routes to b, by the rules: not to the shared queue */
	fsrv_job_stat(&j, self->mnt, "after-close", 0);
	EXPECT_EQ(0, fsrv_wait_waiting(&self->srv, 1, 5000));
	usleep(100000);
	EXPECT_EQ(1, fsrv_queued_on(&self->srv, b));
	EXPECT_EQ(0, fsrv_shared_queued(&self->srv));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, b, -1));
	EXPECT_EQ(0, fsrv_job_wait(&j));
	EXPECT_EQ(b, fsrv_reader_of(&self->srv, "after-close"));
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

static void on_usr1(int sig)
{
}

struct opener {
	struct fsrv *srv;
	pthread_barrier_t *go;
	uint64_t foreign;	/* unique of a request the new clone never read */
	int seen;		/* interrupts for it the new clone read */
};

/* A new clone is made and bound while the old one closes, and read */
static void *new_clone(void *p)
{
	struct opener *o = p;
	char *buf = malloc(FSRV_BUFSIZE);
	struct fuse_in_header *in = (void *)buf;
	int c, i, fd;

	pthread_barrier_wait(o->go);
	c = fsrv_clone_at(o->srv, FSRV_MAX_FDS - 1);
	fd = o->srv->fds[FSRV_MAX_FDS - 1];
	if (c || fsrv_bind(o->srv, FSRV_MAX_FDS - 1, FUSE_DEV_BIND_CPU |
			   FUSE_DEV_BIND_STRICT, 0, -1))
		goto out;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (i = 0; i < 50; i++) {
		if (read(fd, buf, FSRV_BUFSIZE) > 0 &&
		    in->opcode == FUSE_INTERRUPT &&
		    ((struct fuse_interrupt_in *)(in + 1))->unique ==
		    o->foreign)
			o->seen++;
		usleep(1000);
	}
	close(fd);
out:
	free(buf);
	return NULL;
}

TEST_F_TIMEOUT(mem, queue_reused_only_after_its_requests_end, 240)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	char *buf = malloc(FSRV_BUFSIZE), path[128];
	struct fuse_in_header *in = (void *)buf;
	int round, a, status, seen = 0;
	pthread_barrier_t go;
	struct opener o;
	pthread_t thr;
	struct stat st;
	pid_t pid;

	sigaction(SIGUSR1, &sa, NULL);
	pthread_barrier_init(&go, NULL, 2);
	for (round = 0; round < 200; round++) {
		a = fsrv_clone(&self->srv);
		ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU |
				       FUSE_DEV_BIND_STRICT, 0, -1));
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			/* A caller, not the daemon: no fd of the daemon's */
			for (status = 0; status < self->srv.nfds; status++)
				close(self->srv.fds[status]);
			pin_to_cpu(0);
			sigaction(SIGUSR1, &sa, NULL);
			snprintf(path, sizeof(path), "%s/reuse-%d", self->mnt,
				 round);
			_exit(stat(path, &st) ? 1 : 0);
		}
		/* a reads the request and holds it; its caller is signalled */
		ASSERT_GT(read(self->srv.fds[a], buf, FSRV_BUFSIZE), 0);
		o = (struct opener){ &self->srv, &go, in->unique, 0 };
		ASSERT_EQ(0, pthread_create(&thr, NULL, new_clone, &o));
		kill(pid, SIGUSR1);
		pthread_barrier_wait(&go);
		close(self->srv.fds[a]);
		self->srv.fds[a] = -1;
		self->srv.nfds--;
		pthread_join(thr, NULL);
		seen += o.seen;
		ASSERT_EQ(0, fsrv_wait_child(&self->srv, pid, 10000, &status))
			TH_LOG("round %d", round);
	}
	pthread_barrier_destroy(&go);
	free(buf);
	EXPECT_EQ(0, seen) TH_LOG("a new clone read %d interrupts of requests it never read",
				  seen);
}

TEST_HARNESS_MAIN
