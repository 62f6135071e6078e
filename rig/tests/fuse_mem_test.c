// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel memory a daemon controls through its devices and bindings:
 *
 *   - 100000 rounds (FUSE_MEM_ROUNDS in the environment: another number) of
 *     clone, bind, a bind refused (EBUSY), unbind, rebind and close end
 *     with the daemon's memory cgroup and the kernel's slab where they
 *     started, and the binding kept throughout still routes;
 *   - closing a bound device needs no memory: with every slab allocation
 *     of the closing task failing (failslab), the request waiting on its
 *     queue goes to the shared queue and is served there, and so do its
 *     CPU's requests until the next binding maps the CPU again;
 *   - a first binding that fails for want of memory leaves the device
 *     unbound and working, and the next binding works.
 *
 * A request is put on a device's own queue by a holder (fuse_holder.h),
 * and the mount fd, with no binding, takes what waits on the shared queue.
 * Where a request waited shows in the tracepoint fuse:fuse_request_read:
 * read by the device it was routed to, from that device's own queue.
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
#include "fuse_holder.h"
#include "kselftest_harness.h"

#define CG	"/sys/fs/cgroup"
#define FAIL	"/sys/kernel/debug/failslab"

/* Wait up to 10 s for @cond: TCG guests are slow */
#define WAIT_FOR(cond) FSRV_WAIT(cond, 10000)

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

/*
 * One round of what a daemon does to its devices.  CPU 0 is the kept
 * device's (when there are two CPUs), so binding there is refused: the
 * error path runs every round too.
 */
static int churn(struct fsrv *srv, int round, int ncpu)
{
	int c = fsrv_clone(srv), cpu, err;

	if (c < 0)
		return c;
	cpu = ncpu > 1 ? 1 + round % (ncpu - 1) : 0;
	err = fsrv_bind(srv, c, FUSE_DEV_BIND_CPU, cpu, -1);
	if (!err && ncpu > 1 &&
	    fsrv_bind(srv, c, FUSE_DEV_BIND_CPU, 0, -1) != -EBUSY)
		err = -EPROTO;
	err = err ?: fsrv_bind(srv, c, 0, -1, -1) ?:
	      fsrv_bind(srv, c, FUSE_DEV_BIND_NODE, -1, cpu_node(0));
	close(srv->fds[c]);
	srv->fds[c] = -1;
	srv->nfds--;
	return err;
}

/*
 * Let freed memory reach the counters: kfree_rcu() and kvfree_rcu() batch
 * objects for up to 5 s (KFREE_DRAIN_JIFFIES) before their grace period.
 */
static void settle(void)
{
	sleep(7);
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

/*
 * Serve through the mount fd (srv->fds[0]: no binding, no reader) what
 * comes to the shared queue until @j is done, then the forgets its end
 * queues there: whether it was done within 10 s.
 */
static bool serve_shared_until_done(struct fsrv *srv, struct fsrv_job *j)
{
	bool done = WAIT_FOR(take_shared(srv, 0, 0, 0, NULL) >= 0 &&
			     fsrv_job_done(j));

	take_shared(srv, 0, 0, 0, NULL);
	return done;
}

#define TRACING	"/sys/kernel/tracing"

/* Trace every request's read from now on: 0 or -errno */
static int trace_reads(void)
{
	if (access(TRACING "/events", F_OK))
		mount("nodev", TRACING, "tracefs", 0, NULL);
	return fsrv_write_file(TRACING "/events/fuse/fuse_request_read/enable",
			       "1");
}

/* Whether request @unique was read from its reader's own queue */
static bool read_from_own_queue(uint64_t unique)
{
	FILE *f = fopen(TRACING "/trace", "r");
	char line[512], key[48];
	bool own = false;

	snprintf(key, sizeof(key), " req %llu ", (unsigned long long)unique);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, key))
			own = strstr(line, "queue own");
	if (f)
		fclose(f);
	return own;
}

/*
 * Whether a LOOKUP of @name made on CPU @cpu waits on srv->fds[@idx]'s own
 * queue: with a reader started there, the only one, it reads the request
 * from that queue (a reader takes the shared queue's work first).
 */
static bool routed_to(struct fsrv *srv, int idx, int cpu, const char *name,
		      struct __test_metadata *_metadata)
{
	struct fsrv_job j;
	uint64_t unique = 0;
	size_t i;
	int err;

	err = trace_reads();
	if (err) {
		TH_LOG("tracepoint: %s", strerror(-err));
		return false;
	}
	if (!srv->reading[idx] && fsrv_start_reader(srv, idx, -1))
		return false;
	fsrv_job_stat(&j, srv->mnt, name, cpu);
	if (!WAIT_FOR(fsrv_job_done(&j)))
		return false;
	err = fsrv_job_wait(&j);
	if (err || fsrv_reader_of(srv, name) != idx) {
		TH_LOG("%s: %s, read by fd %d, not %d", name, strerror(err),
		       fsrv_reader_of(srv, name), idx);
		return false;
	}
	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++)
		if (!strcmp(srv->log[i].name, name))
			unique = srv->log[i].unique;
	pthread_mutex_unlock(&srv->lock);
	if (!read_from_own_queue(unique)) {
		TH_LOG("%s: not read from fd %d's own queue", name, idx);
		return false;
	}
	return true;
}

FIXTURE(mem) {
	struct fsrv srv;
	char mnt[64];
};

FIXTURE_SETUP(mem)
{
	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
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
	int ncpu = nr_cpus_online(), i, keep, err, rounds = 100000;
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

	/* One device stays bound throughout, as a daemon's would */
	keep = fsrv_clone(&self->srv);
	if (ncpu > 1)
		err = fsrv_bind(&self->srv, keep, FUSE_DEV_BIND_CPU, 0, -1);
	else
		err = fsrv_bind(&self->srv, keep, FUSE_DEV_BIND_NODE, -1,
				cpu_node(0));
	ASSERT_EQ(0, err);
	/* Warm up: pools, the map, and KASAN's quarantine fill up */
	for (i = 0; i < 10000; i++)
		ASSERT_EQ(0, churn(&self->srv, i, ncpu));
	settle();
	cg0 = read_long(path);
	slab0 = read_meminfo("SUnreclaim");
	for (i = 0; i < rounds; i++)
		ASSERT_EQ(0, churn(&self->srv, i, ncpu));
	settle();
	cg1 = read_long(path);
	slab1 = read_meminfo("SUnreclaim");
	TH_LOG("%d rounds: memcg %ld -> %ld bytes, unreclaimable slab %ld -> %ld KiB",
	       rounds, cg0, cg1, slab0, slab1);
	ASSERT_GT(cg0, 0);
	/* Charges move in per-CPU batches; a leak of a few bytes a round shows */
	EXPECT_LT(labs(cg1 - cg0), 1024 * 1024);
	EXPECT_LT(labs(slab1 - slab0), 4096);
	/* The map rebuilt 400000 times still sends CPU 0 to the kept device */
	EXPECT_TRUE(routed_to(&self->srv, keep, 0, "after-churn", _metadata));
	snprintf(path, sizeof(path), "%s", cg);
	fsrv_write_file(CG "/cgroup.procs", pid);
	rmdir(path);
}

TEST_F_TIMEOUT(mem, close_needs_no_memory, 120)
{
	struct holder h;
	struct fsrv_job j;
	int a, b, ret, err;

	if (access(FAIL, F_OK))
		SKIP(return, "no failslab");
	if (nr_cpus_online() < 2)
		SKIP(return, "needs 2 CPUs");
	a = fsrv_clone(&self->srv);
	b = fsrv_clone(&self->srv);
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU, 0, -1));
	ASSERT_EQ(0, fsrv_bind(&self->srv, b, FUSE_DEV_BIND_CPU, 1, -1));

	/* A request of CPU 0 waits on a's own queue */
	ASSERT_EQ(0, holder_arm(&h, self->srv.fds[a]));
	fsrv_job_stat(&j, self->mnt, "close-held", 0);
	ASSERT_TRUE(holder_woken(&h, 10000));
	/* Its epoll set goes first: the close is then the device's last */
	holder_stop(&h);

	ASSERT_EQ(0, failslab(true));
	/* No memory here, as a bind shows, which changes nothing */
	err = fsrv_bind(&self->srv, b, FUSE_DEV_BIND_CPU, 1, -1);
	ret = close(self->srv.fds[a]);
	failslab(false);
	EXPECT_EQ(-ENOMEM, err);
	ASSERT_EQ(0, ret);
	self->srv.fds[a] = -1;

	/* The request moved to the shared queue, and is served there */
	EXPECT_TRUE(WAIT_FOR(take_shared(&self->srv, 0, FUSE_LOOKUP, 0,
					 "close-held") == 1));
	ASSERT_TRUE(serve_shared_until_done(&self->srv, &j));
	EXPECT_EQ(0, fsrv_job_wait(&j));

	/*
	 * No memory for a new map: CPU 0 goes to the shared queue, even
	 * with a poller of b asleep, until the next binding
	 */
	ASSERT_EQ(0, holder_arm(&h, self->srv.fds[b]));
	fsrv_job_stat(&j, self->mnt, "close-next", 0);
	EXPECT_TRUE(WAIT_FOR(take_shared(&self->srv, 0, FUSE_LOOKUP, 0,
					 "close-next") == 1));
	holder_stop(&h);
	ASSERT_TRUE(serve_shared_until_done(&self->srv, &j));
	EXPECT_EQ(0, fsrv_job_wait(&j));

	/* The next binding maps CPU 0 by the rules again: to b, the only one */
	ASSERT_EQ(0, fsrv_bind(&self->srv, b, FUSE_DEV_BIND_CPU, 1, -1));
	EXPECT_TRUE(routed_to(&self->srv, b, 0, "close-rebound", _metadata));
}

TEST_F_TIMEOUT(mem, failed_first_bind_leaves_nothing, 120)
{
	int a = fsrv_clone(&self->srv), err;
	struct holder h;
	struct fsrv_job j;

	if (access(FAIL, F_OK))
		SKIP(return, "no failslab");
	ASSERT_GT(a, 0);
	ASSERT_EQ(0, failslab(true));
	err = fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU, 0, -1);
	failslab(false);
	EXPECT_EQ(-ENOMEM, err);

	/* Unbound: a's poller reserves nothing, CPU 0's requests go shared */
	ASSERT_EQ(0, holder_arm(&h, self->srv.fds[a]));
	fsrv_job_stat(&j, self->mnt, "still-shared", 0);
	EXPECT_TRUE(WAIT_FOR(take_shared(&self->srv, 0, FUSE_LOOKUP, 0,
					 "still-shared") == 1));
	holder_stop(&h);
	ASSERT_TRUE(serve_shared_until_done(&self->srv, &j));
	EXPECT_EQ(0, fsrv_job_wait(&j));

	/* The next bind works, and a then takes CPU 0's requests */
	EXPECT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU, 0, -1));
	EXPECT_TRUE(routed_to(&self->srv, a, 0, "bound", _metadata));
}

TEST_HARNESS_MAIN
