// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE_DEV_IOC_BIND: routing of requests to bound clones by the CPU they
 * were issued on (strict clones exactly, with turns; work-conserving ones
 * to a candidate, the one used last while it is not busy), the ioctl's
 * errors, and moving queued requests when a clone is rebound or closed.
 *
 * Expected routing is computed from the machine's own topology with the
 * rules of Documentation/filesystems/fuse-clone-queues.rst, so the same
 * tests run on any guest topology.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "../../kselftest_harness.h"

#define MAX_LAYOUT	4
#define MAX_ISSUE_CPUS	4	/* the CPUs the routing matrix issues from */
#define BURST		40

struct binding {
	uint32_t flags;
	int cpu;
	int node;
};

/* Which fds a request from @cpu may go to; returns how many */
static int model_candidates(const struct binding *l, int n, int cpu,
			    bool *cand)
{
	int i, count = 0;

	for (i = 0; i < n; i++) {
		cand[i] = l[i].flags == FUSE_DEV_BIND_CPU && l[i].cpu == cpu;
		count += cand[i];
	}
	if (count)
		return count;
	for (i = 0; i < n; i++) {
		cand[i] = (l[i].flags == FUSE_DEV_BIND_NODE &&
			   l[i].node == cpu_node(cpu)) ||
			  (l[i].flags == FUSE_DEV_BIND_CPU &&
			   cpu_node(l[i].cpu) == cpu_node(cpu));
		count += cand[i];
	}
	if (count)
		return count;
	for (i = 0; i < n; i++)
		cand[i] = true;
	return n;
}

static bool node_has_cpus(int node)
{
	int cpu;

	for (cpu = 0; cpu < nr_cpus_online(); cpu++)
		if (cpu_node(cpu) == node)
			return true;
	return false;
}

static int do_stats(const char *mnt, const char *prefix, int n)
{
	char path[160];
	struct stat st;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s-%d", mnt, prefix, i);
		if (stat(path, &st))
			return -errno;
	}
	return 0;
}

/* Requests of each fd logged from @from on, FORGETs aside */
static void count_by_fd(struct fsrv *srv, size_t from, int *per_fd)
{
	size_t i;

	memset(per_fd, 0, sizeof(int) * FSRV_MAX_FDS);
	pthread_mutex_lock(&srv->lock);
	for (i = from; i < srv->nlog; i++)
		if (srv->log[i].opcode != FUSE_FORGET &&
		    srv->log[i].opcode != FUSE_BATCH_FORGET)
			per_fd[srv->log[i].fd_idx]++;
	pthread_mutex_unlock(&srv->lock);
}

static int wait_queued(struct fsrv *srv, unsigned int id, int n)
{
	int t;

	for (t = 0; t < 5000; t += 5) {
		if (fsrv_queued_on(srv, id) >= n)
			return 0;
		usleep(5000);
	}
	return -ETIMEDOUT;
}

/* ------------------------------------------------------------------ */

FIXTURE(route) {
	struct fsrv srv;
	char mnt[64];
};

FIXTURE_VARIANT(route) {
	int nr;
	struct binding layout[MAX_LAYOUT];
	bool strict;
};

#define CPU(c)	{ FUSE_DEV_BIND_CPU, (c), -1 }
#define NODE(n)	{ FUSE_DEV_BIND_NODE, -1, (n) }

FIXTURE_VARIANT_ADD(route, per_cpu) {
	.nr = 4, .layout = { CPU(0), CPU(1), CPU(2), CPU(3) },
};

FIXTURE_VARIANT_ADD(route, per_cpu_strict) {
	.nr = 4, .layout = { CPU(0), CPU(1), CPU(2), CPU(3) }, .strict = true,
};

FIXTURE_VARIANT_ADD(route, per_node) {
	.nr = 2, .layout = { NODE(0), NODE(1) },
};

FIXTURE_VARIANT_ADD(route, per_node_strict) {
	.nr = 2, .layout = { NODE(0), NODE(1) }, .strict = true,
};

FIXTURE_VARIANT_ADD(route, cpus_0_1) {
	.nr = 2, .layout = { CPU(0), CPU(1) },
};

FIXTURE_VARIANT_ADD(route, cpus_0_1_strict) {
	.nr = 2, .layout = { CPU(0), CPU(1) }, .strict = true,
};

FIXTURE_VARIANT_ADD(route, two_on_cpu0) {
	.nr = 2, .layout = { CPU(0), CPU(0) },
};

FIXTURE_VARIANT_ADD(route, two_on_cpu0_strict) {
	.nr = 2, .layout = { CPU(0), CPU(0) }, .strict = true,
};

FIXTURE_VARIANT_ADD(route, cpu1_only) {
	.nr = 1, .layout = { CPU(1) },
};

FIXTURE_VARIANT_ADD(route, cpu1_only_strict) {
	.nr = 1, .layout = { CPU(1) }, .strict = true,
};

FIXTURE_VARIANT_ADD(route, cpu0_and_node1) {
	.nr = 2, .layout = { CPU(0), NODE(1) },
};

FIXTURE_VARIANT_ADD(route, cpu0_and_node1_strict) {
	.nr = 2, .layout = { CPU(0), NODE(1) }, .strict = true,
};

FIXTURE_SETUP(route)
{
	if (fsrv_bind_missing(variant->strict ? FUSE_DEV_BIND_STRICT : 0))
		SKIP(return, "%s", fsrv_bind_missing(variant->strict ? FUSE_DEV_BIND_STRICT : 0));
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/route-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&self->srv, self->mnt));
}

FIXTURE_TEARDOWN(route)
{
	fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

/*
 * BURST stat() calls from @cpu, through the bound clones fds[1..nr] of
 * @srv (fds[0], the mount fd, stays unbound): where did they go?
 */
static void route_from(struct __test_metadata *_metadata, struct fsrv *srv,
		       const char *mnt, const struct binding *l, int nr,
		       bool strict, int cpu)
{
	int per_fd[FSRV_MAX_FDS], i, count, total;
	int kept = 0, strays = 0, most = 0;
	bool cand[MAX_LAYOUT];
	char prefix[16];
	size_t from;

	TH_LOG("from CPU %d", cpu);
	ASSERT_EQ(0, pin_to_cpu(cpu));
	ASSERT_EQ(cpu, sched_getcpu());
	pthread_mutex_lock(&srv->lock);
	from = srv->nlog;
	pthread_mutex_unlock(&srv->lock);
	snprintf(prefix, sizeof(prefix), "r%d", cpu);
	ASSERT_EQ(0, do_stats(mnt, prefix, BURST));
	count_by_fd(srv, from, per_fd);

	count = model_candidates(l, nr, cpu, cand);
	/* The unbound mount fd gets nothing routed; it may only take over */
	if (strict)
		EXPECT_EQ(0, per_fd[0]);
	strays = per_fd[0];
	total = per_fd[0];
	for (i = 0; i < nr; i++)
		total += per_fd[i + 1];
	EXPECT_GE(total, BURST);
	for (i = 0; i < nr; i++) {
		int got = per_fd[i + 1];

		TH_LOG("clone %d (flags %u cpu %d node %d): %d requests%s",
		       i + 1, l[i].flags, l[i].cpu, l[i].node, got,
		       cand[i] ? " (candidate)" : "");
		if (!cand[i]) {
			strays += got;
			if (strict)
				EXPECT_EQ(0, got);
		} else {
			kept += got;
			most = got > most ? got : most;
		}
	}
	/* The map gives each CPU one of its candidates */
	if (strict) {
		EXPECT_EQ(total, most);
		return;
	}
	/*
	 * Work-conserving clones: a request waits for its clone only if that
	 * clone's reader waits for it, else any idle reader (the nearest)
	 * takes it.  With one caller and idle readers, nearly all stay.
	 */
	EXPECT_GE(kept * 10, total * 9);
	EXPECT_EQ(total, kept + strays);
	(void)count;
	if (strays) {
		char buf[4096];

		if (fsrv_conn_file(srv, "dev_queues", buf, sizeof(buf)) > 0)
			TH_LOG("%d taken over:\n%s", strays, buf);
	}
}

TEST_F(route, requests_go_to_the_bound_clone)
{
	const struct binding *l = variant->layout;
	int i, cpu;

	for (i = 0; i < variant->nr; i++) {
		if (l[i].flags == FUSE_DEV_BIND_CPU &&
		    l[i].cpu >= nr_cpus_online())
			SKIP(return, "no CPU %d", l[i].cpu);
		if (l[i].flags == FUSE_DEV_BIND_NODE &&
		    !node_has_cpus(l[i].node))
			SKIP(return, "node %d has no CPU", l[i].node);
	}
	for (i = 0; i < variant->nr; i++) {
		ASSERT_EQ(i + 1, fsrv_clone(&self->srv));
		ASSERT_EQ(0, fsrv_bind(&self->srv, i + 1, l[i].flags |
				       (variant->strict ? FUSE_DEV_BIND_STRICT : 0),
				       l[i].cpu, l[i].node));
		self->srv.reader_cpu[i + 1] =
			l[i].flags == FUSE_DEV_BIND_CPU ? l[i].cpu : -1;
	}
	fsrv_start(&self->srv);
	for (cpu = 0; cpu < nr_cpus_online() && cpu < MAX_ISSUE_CPUS; cpu++)
		route_from(_metadata, &self->srv, self->mnt, l, variant->nr,
			   variant->strict, cpu);
}

/* ------------------------------------------------------------------ */

FIXTURE(bind) {
	struct fsrv srv;
	char mnt[64];
};

FIXTURE_SETUP(bind)
{
	if (fsrv_bind_missing(0))
		SKIP(return, "%s", fsrv_bind_missing(0));
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/bind-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&self->srv, self->mnt));
}

FIXTURE_TEARDOWN(bind)
{
	fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

static int get_bind(int fd, struct fuse_dev_bind *b)
{
	memset(b, 0x55, sizeof(*b));
	return ioctl(fd, FUSE_DEV_IOC_GET_BIND, b) ? -errno : 0;
}

/* The node of a CPU other than its own, if any, else an impossible one */
static int other_node(int cpu)
{
	char path[96];
	int node;

	for (node = 0; node < 64; node++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d",
			 node);
		if (node != cpu_node(cpu) && access(path, F_OK) == 0)
			return node;
	}
	return 100000;
}

TEST_F(bind, get_bind_reports_the_binding)
{
	struct fuse_dev_bind b;
	int fd = self->srv.fds[0];

	ASSERT_EQ(0, get_bind(fd, &b));
	EXPECT_EQ(0, b.flags);
	EXPECT_EQ(-1, b.cpu);
	EXPECT_EQ(-1, b.node);
	EXPECT_EQ(0, b.padding);

	ASSERT_EQ(0, fsrv_bind(&self->srv, 0, FUSE_DEV_BIND_CPU, 1, -1));
	ASSERT_EQ(0, get_bind(fd, &b));
	EXPECT_EQ(FUSE_DEV_BIND_CPU, b.flags);
	EXPECT_EQ(1, b.cpu);
	EXPECT_EQ(cpu_node(1), b.node);

	/* Rebinding replaces the binding */
	ASSERT_EQ(0, fsrv_bind(&self->srv, 0, FUSE_DEV_BIND_NODE, -1,
			       cpu_node(0)));
	ASSERT_EQ(0, get_bind(fd, &b));
	EXPECT_EQ(FUSE_DEV_BIND_NODE, b.flags);
	EXPECT_EQ(-1, b.cpu);
	EXPECT_EQ(cpu_node(0), b.node);

	ASSERT_EQ(0, fsrv_bind(&self->srv, 0, 0, -1, -1));
	ASSERT_EQ(0, get_bind(fd, &b));
	EXPECT_EQ(0, b.flags);
	EXPECT_EQ(-1, b.cpu);
	EXPECT_EQ(-1, b.node);
}

TEST_F(bind, bad_input_changes_nothing)
{
	static const struct {
		const char *what;
		struct fuse_dev_bind b;
		int err;
	} bad[] = {
		{ "unknown flag", { 8, -1, -1, 0 }, EINVAL },
		{ "high flag", { 1u << 31, -1, -1, 0 }, EINVAL },
		{ "cpu and node flags", { 3, 0, 0, 0 }, EINVAL },
		{ "strict alone", { FUSE_DEV_BIND_STRICT, -1, -1, 0 }, EINVAL },
		{ "strict with unknown", { FUSE_DEV_BIND_STRICT | 8, 0, -1, 0 }, EINVAL },
		{ "padding", { FUSE_DEV_BIND_CPU, 0, -1, 1 }, EINVAL },
		{ "cpu -1", { FUSE_DEV_BIND_CPU, -1, -1, 0 }, EINVAL },
		{ "cpu -2", { FUSE_DEV_BIND_CPU, -2, -1, 0 }, EINVAL },
		{ "cpu with another node", { FUSE_DEV_BIND_CPU, 0, -2, 0 }, EINVAL },
		{ "cpu out of range", { FUSE_DEV_BIND_CPU, 100000, -1, 0 }, EINVAL },
		{ "cpu INT_MAX", { FUSE_DEV_BIND_CPU, INT_MAX, -1, 0 }, EINVAL },
		{ "node -1", { FUSE_DEV_BIND_NODE, -1, -1, 0 }, EINVAL },
		{ "node with a cpu", { FUSE_DEV_BIND_NODE, 0, 0, 0 }, EINVAL },
		{ "node out of range", { FUSE_DEV_BIND_NODE, -1, 100000, 0 }, EINVAL },
		{ "unbind with a cpu", { 0, 0, -1, 0 }, EINVAL },
		{ "unbind with a node", { 0, -1, 0, 0 }, EINVAL },
		{ "unbind with padding", { 0, -1, -1, 7 }, EINVAL },
	};
	struct fuse_dev_bind b;
	char before[4096], after[4096];
	int fd = self->srv.fds[0];
	size_t i;

	struct fuse_dev_bind wrong_node = {
		FUSE_DEV_BIND_CPU, 0, other_node(0), 0
	};

	ASSERT_EQ(0, fsrv_bind(&self->srv, 0, FUSE_DEV_BIND_CPU, 1, -1));
	ASSERT_GT(fsrv_conn_file(&self->srv, "dev_queues", before,
				 sizeof(before)), 0);
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_BIND, &wrong_node));
	EXPECT_EQ(EINVAL, errno);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		errno = 0;
		EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_BIND, &bad[i].b))
			TH_LOG("%s was accepted", bad[i].what);
		EXPECT_EQ(bad[i].err, errno)
			TH_LOG("%s: errno %d", bad[i].what, errno);
	}
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_BIND, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_GET_BIND, (void *)8));
	EXPECT_EQ(EFAULT, errno);

	ASSERT_EQ(0, get_bind(fd, &b));
	EXPECT_EQ(FUSE_DEV_BIND_CPU, b.flags);
	EXPECT_EQ(1, b.cpu);
	ASSERT_GT(fsrv_conn_file(&self->srv, "dev_queues", after,
				 sizeof(after)), 0);
	EXPECT_STREQ(before, after);
}

TEST_F(bind, get_then_bind_round_trips)
{
	static const struct binding ways[] = {
		{ FUSE_DEV_BIND_CPU, 1, -1 },
		{ FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_STRICT, 0, -1 },
		{ FUSE_DEV_BIND_NODE, -1, 0 },
		{ FUSE_DEV_BIND_NODE | FUSE_DEV_BIND_STRICT, -1, 0 },
		{ 0, -1, -1 },
	};
	struct fuse_dev_bind got, again;
	int a = fsrv_clone(&self->srv), b = fsrv_clone(&self->srv);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ways); i++) {
		ASSERT_EQ(0, fsrv_bind(&self->srv, a, ways[i].flags,
				       ways[i].cpu, ways[i].node));
		ASSERT_EQ(0, get_bind(self->srv.fds[a], &got));
		/* What GET_BIND said, given to BIND, binds the same way */
		EXPECT_EQ(0, ioctl(self->srv.fds[b], FUSE_DEV_IOC_BIND, &got))
			TH_LOG("flags %u cpu %d node %d: %s", got.flags, got.cpu,
			       got.node, strerror(errno));
		ASSERT_EQ(0, get_bind(self->srv.fds[b], &again));
		EXPECT_EQ(0, memcmp(&got, &again, sizeof(got)));
		EXPECT_EQ(ways[i].flags, got.flags);
	}
}

TEST_F(bind, features_say_what_binds)
{
	uint32_t mask = 0;
	int fd = open("/dev/fuse", O_RDWR);

	/* No trial bind, and no connection needed */
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ioctl(fd, FUSE_DEV_IOC_BIND_FEATURES, &mask));
	EXPECT_EQ(FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_NODE |
		  FUSE_DEV_BIND_STRICT, mask);
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_BIND_FEATURES, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

TEST_F(bind, bind_that_changes_nothing_moves_nothing)
{
	struct fsrv_job bu[2];
	int a = fsrv_clone(&self->srv);

	/* Strict: CPU 0's requests wait for clone a, which does not read */
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 0, -1));
	fsrv_job_stat(&bu[0], self->mnt, "same-0", 0);
	fsrv_job_stat(&bu[1], self->mnt, "same-1", 0);
	ASSERT_EQ(0, wait_queued(&self->srv, a, 2));
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 0, -1));
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 0, cpu_node(0)));
	EXPECT_EQ(2, fsrv_queued_on(&self->srv, a));
	/* An unbound fd unbinding: nothing either */
	ASSERT_EQ(0, fsrv_bind(&self->srv, 0, 0, -1, -1));
	EXPECT_EQ(2, fsrv_queued_on(&self->srv, a));
	EXPECT_EQ(0, fsrv_queued_on(&self->srv, FSRV_SHARED));
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_job_wait(&bu[0]));
	EXPECT_EQ(0, fsrv_job_wait(&bu[1]));
}

TEST_F(bind, unattached_fd_is_eperm)
{
	struct fuse_dev_bind b = { FUSE_DEV_BIND_CPU, 0, -1, 0 };
	int fd = open("/dev/fuse", O_RDWR);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_BIND, &b));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_GET_BIND, &b));
	EXPECT_EQ(EPERM, errno);
	close(fd);
}

TEST_F(bind, node_without_cpus_is_enxio)
{
	struct fuse_dev_bind b = { FUSE_DEV_BIND_NODE, -1, -1, 0 };
	char path[64];
	int node;

	for (node = 0; node < 64; node++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d",
			 node);
		if (access(path, F_OK) == 0 && !node_has_cpus(node))
			break;
	}
	if (node == 64)
		SKIP(return, "every node has CPUs");
	b.node = node;
	EXPECT_EQ(-1, ioctl(self->srv.fds[0], FUSE_DEV_IOC_BIND, &b));
	EXPECT_EQ(ENXIO, errno);
}

TEST_F(bind, offline_cpu_is_enxio)
{
	struct fuse_dev_bind b = { FUSE_DEV_BIND_CPU, -1, -1, 0 };
	int cpu = nr_cpus_online() - 1, fd;
	char path[96];

	if (cpu < 1)
		SKIP(return, "one CPU");
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		SKIP(return, "no CPU hotplug");
	ASSERT_EQ(1, write(fd, "0", 1));
	b.cpu = cpu;
	EXPECT_EQ(-1, ioctl(self->srv.fds[0], FUSE_DEV_IOC_BIND, &b));
	EXPECT_EQ(ENXIO, errno);
	ASSERT_EQ(1, write(fd, "1", 1));
	close(fd);
	EXPECT_EQ(0, ioctl(self->srv.fds[0], FUSE_DEV_IOC_BIND, &b));
}

TEST_F(bind, aborted_connection_is_enotconn)
{
	struct fuse_dev_bind b = { FUSE_DEV_BIND_CPU, 0, -1, 0 };

	ASSERT_EQ(0, fsrv_conn_write(&self->srv, "abort", "1"));
	EXPECT_EQ(-1, ioctl(self->srv.fds[0], FUSE_DEV_IOC_BIND, &b));
	EXPECT_EQ(ENOTCONN, errno);
}

TEST_F(bind, queued_before_first_bind_are_served)
{
	struct fsrv_job bu;
	int a, b, n;

	a = fsrv_clone(&self->srv);
	b = fsrv_clone(&self->srv);
	ASSERT_GT(b, a);
	/* Nothing bound, nobody reading: the request waits on the shared queue */
	fsrv_job_stat(&bu, self->mnt, "early-0", 0);
	ASSERT_EQ(0, fsrv_wait_waiting(&self->srv, 1, 5000));
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU, 0, -1));
	ASSERT_EQ(0, fsrv_bind(&self->srv, b, FUSE_DEV_BIND_NODE, -1,
			       cpu_node(0)));
	/* Only the bound clones read; they must drain the shared queue */
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, a, -1));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, b, -1));
	EXPECT_EQ(0, fsrv_job_wait(&bu));
	n = fsrv_find_name(&self->srv, "early-0", NULL);
	EXPECT_EQ(1, n);
}

/*
 * Requests that wait for a strict clone go to the shared queue, which every
 * reader reads, when the clone is rebound or closed.
 */
static void queued_then(struct __test_metadata *_metadata, struct fsrv *srv,
			const char *mnt, bool close_it)
{
	const uint32_t strict = FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_STRICT;
	struct fsrv_job bu[4];
	int a, b, i, fd_idx = -1;
	char name[32];

	a = fsrv_clone(srv);
	b = fsrv_clone(srv);
	ASSERT_EQ(0, fsrv_bind(srv, a, strict, 0, -1));
	ASSERT_EQ(0, fsrv_bind(srv, b, strict, 1, -1));
	/* Four requests from CPU 0 wait on clone a: nobody reads yet */
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "q%d-0", i);
		fsrv_job_stat(&bu[i], mnt, name, 0);
	}
	ASSERT_EQ(0, wait_queued(srv, a, 4));
	EXPECT_EQ(0, fsrv_queued_on(srv, b));
	if (close_it) {
		close(srv->fds[a]);
		srv->fds[a] = -1;
	} else {
		ASSERT_EQ(0, fsrv_bind(srv, a, strict, 1, -1));
		EXPECT_EQ(0, fsrv_queued_on(srv, a));
	}
	EXPECT_EQ(4, fsrv_queued_on(srv, FSRV_SHARED));
	EXPECT_EQ(0, fsrv_queued_on(srv, b));
	/* Clone b, bound elsewhere, reads them there */
	ASSERT_EQ(0, fsrv_start_reader(srv, b, -1));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, fsrv_job_wait(&bu[i]));
		snprintf(name, sizeof(name), "q%d-0", i);
		EXPECT_EQ(1, fsrv_find_name(srv, name, &fd_idx));
		EXPECT_EQ(b, fd_idx);
	}
}

TEST_F(bind, rebind_moves_queued_requests)
{
	queued_then(_metadata, &self->srv, self->mnt, false);
}

TEST_F(bind, close_moves_queued_requests)
{
	queued_then(_metadata, &self->srv, self->mnt, true);
}

TEST_F(bind, unbind_all_returns_to_shared_queue)
{
	int a, per_fd[FSRV_MAX_FDS];
	size_t from;

	a = fsrv_clone(&self->srv);
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU, 0, -1));
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, 0, -1, -1));
	fsrv_start(&self->srv);
	from = self->srv.nlog;
	ASSERT_EQ(0, pin_to_cpu(0));
	ASSERT_EQ(0, do_stats(self->mnt, "u", 20));
	count_by_fd(&self->srv, from, per_fd);
	/* Both fds serve the shared queue again */
	EXPECT_GE(per_fd[0] + per_fd[a], 20);
	EXPECT_EQ(0, fsrv_queued_on(&self->srv, a));
}

TEST_F(bind, stats_count_local_requests)
{
	char buf[4096], *line;
	unsigned int dev, q, disp, lc, ln, rem;
	int a, found = 0;

	/* Strict: a work-conserving clone's reader may not be back in time */
	a = fsrv_clone(&self->srv);
	ASSERT_EQ(0, fsrv_bind(&self->srv, a, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 0, -1));
	fsrv_start(&self->srv);
	ASSERT_EQ(0, pin_to_cpu(0));
	ASSERT_EQ(0, do_stats(self->mnt, "s", 10));
	ASSERT_GT(fsrv_conn_file(&self->srv, "dev_queues", buf,
				 sizeof(buf)), 0);
	TH_LOG("%s", buf);
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (sscanf(line, "%u cpu! 0 %*d %u %u %u %u %u", &dev, &q, &disp,
			   &lc, &ln, &rem) == 6 && dev == (unsigned int)a) {
			found = 1;
			EXPECT_GE(disp, 20);
			EXPECT_GE(lc, 20);
			EXPECT_EQ(disp, lc + ln + rem);
		}
	}
	EXPECT_EQ(1, found);
}

/* The connection's wake_nearest: 1 or 0; anything else is EINVAL */
static int wake_nearest(struct fsrv *srv)
{
	char buf[16] = "";

	if (fsrv_conn_file(srv, "wake_nearest", buf, sizeof(buf)) <= 0)
		return -1;
	return !strcmp(buf, "1\n") ? 1 : !strcmp(buf, "0\n") ? 0 : -2;
}

TEST_F(bind, wake_nearest_switch)
{
	char param[8] = "";
	int fd;

	/* A new connection takes the module parameter's value */
	fd = open("/sys/module/fuse/parameters/wake_nearest", O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_GT(read(fd, param, sizeof(param) - 1), 0);
	close(fd);
	EXPECT_EQ(param[0] == 'Y', wake_nearest(&self->srv));
	EXPECT_EQ(0, fsrv_conn_write(&self->srv, "wake_nearest", "0"));
	EXPECT_EQ(0, wake_nearest(&self->srv));
	/* Bad input changes nothing */
	EXPECT_EQ(-EINVAL, fsrv_conn_write(&self->srv, "wake_nearest", "2"));
	EXPECT_EQ(-EINVAL, fsrv_conn_write(&self->srv, "wake_nearest", "x"));
	EXPECT_EQ(0, wake_nearest(&self->srv));
	EXPECT_EQ(0, fsrv_conn_write(&self->srv, "wake_nearest", "1"));
	EXPECT_EQ(1, wake_nearest(&self->srv));
}

TEST_HARNESS_MAIN
