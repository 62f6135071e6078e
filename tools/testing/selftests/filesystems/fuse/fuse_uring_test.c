// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE-over-io-uring beside per-device input queues, with the raw server's
 * ring (fsrv_uring_start()): the ring serves what every CPU issues; once
 * it is ready, FUSE_DEV_IOC_BIND is still accepted but routes nothing, as
 * every request goes over the ring; until it is ready, requests wait
 * (fuse_block_alloc()), bound devices or not, and none is lost when it
 * becomes ready; forgets and interrupts, which the ring does not carry,
 * reach the reader of a bound clone.
 *
 * Every test skips where FUSE-over-io-uring cannot run: built without
 * liburing or the io-uring uapi, a kernel without CONFIG_FUSE_IO_URING, or
 * enable_uring off and not settable.  The fixture sets enable_uring, and
 * sets it back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "../../kselftest_harness.h"

#define ROUNDS		3	/* requests from each CPU, one at a time */
#define BURST		8	/* requests from each CPU, all at once */
#define MAX_JOBS	256
#define MAX_BOUND	4	/* clones bound to the first online CPUs */

/* Wait up to 5 s for @cond */
#define WAIT_FOR(cond) FSRV_WAIT(cond, 5000)

/* count_op() and friends: any reader, any /dev/fuse fd */
#define ANY_READER	(-1)	/* as fsrv_count_name_prefix() takes it */
#define ANY_DEVICE	(-101)

static void on_signal(int sig)
{
}

static bool read_by(const struct fsrv_rec *r, int which)
{
	return which == ANY_READER || r->fd_idx == which ||
	       (which == ANY_DEVICE && r->fd_idx >= 0);
}

/* Requests of @opcode (0: any) that @which read */
static int count_op(struct fsrv *srv, uint32_t opcode, int which)
{
	size_t i;
	int n = 0;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++)
		if ((!opcode || srv->log[i].opcode == opcode) &&
		    read_by(&srv->log[i], which))
			n++;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

static int count_forgets(struct fsrv *srv, int which)
{
	return count_op(srv, FUSE_FORGET, which) +
	       count_op(srv, FUSE_BATCH_FORGET, which);
}

/* The record of the LOOKUP of @name into @rec: how many there are */
static int find_lookup(struct fsrv *srv, const char *name,
		       struct fsrv_rec *rec)
{
	size_t i;
	int n = 0;

	memset(rec, 0, sizeof(*rec));
	rec->fd_idx = -1;
	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++) {
		if (srv->log[i].opcode == FUSE_LOOKUP &&
		    !strcmp(srv->log[i].name, name)) {
			*rec = srv->log[i];
			n++;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return n;
}

enum counter { LOOKUPS, FORGOTTEN, INTERRUPTS };

/* A counter of @srv, read under its lock */
static unsigned long long counter(struct fsrv *srv, enum counter c)
{
	unsigned long long n;

	pthread_mutex_lock(&srv->lock);
	if (c == LOOKUPS)
		n = srv->lookups;
	else if (c == FORGOTTEN)
		n = srv->forget_nlookup;
	else
		n = srv->interrupts;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

/*
 * Wait up to @ms for @j: its errno, or ETIMEDOUT once the connection was
 * aborted to end it (a request the server lost would hang it)
 */
static int job_wait_within(struct fsrv *srv, struct fsrv_job *j, int ms)
{
	int err = ETIMEDOUT;
	char buf[32];

	if (FSRV_WAIT(fsrv_job_done(j), ms))
		return fsrv_job_wait(j);
	if (fsrv_conn_file(srv, "waiting", buf, sizeof(buf)) > 0)
		printf("# stat() of %s stuck for %d ms, waiting: %s", j->name,
		       ms, buf);
	fsrv_conn_write(srv, "abort", "1");
	fsrv_job_wait(j);
	return err;
}

/* stat() @name from @cpu within 5 s: 0, or an errno */
static int stat_from(struct fsrv *srv, const char *name, int cpu)
{
	struct fsrv_job j;

	fsrv_job_stat(&j, srv->mnt, name, cpu);
	return job_wait_within(srv, &j, 5000);
}

/* The online CPUs, up to @max of them, into @cpus: how many */
static int online_cpus(int *cpus, int max)
{
	int cpu, n = 0, nposs = nr_cpus_possible();

	for (cpu = 0; cpu < nposs && n < max; cpu++)
		if (cpu_online_(cpu))
			cpus[n++] = cpu;
	return n;
}

/* Read a whole file from a thread pinned to a CPU */
struct read_job {
	char path[160];
	int cpu;
	long size;		/* what it read */
	int err;		/* -1 while running, then 0 or an errno */
	pthread_t thr;
};

static void *read_file(void *p)
{
	struct read_job *r = p;
	char buf[16384];
	ssize_t n, i;
	int fd, err = 0;

	if (pin_to_cpu(r->cpu))
		err = EAGAIN;
	fd = err ? -1 : open(r->path, O_RDONLY);
	if (!err && fd < 0)
		err = errno;
	while (!err && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			err = errno;
			break;
		}
		/* File bytes are 'a' + offset % 26 */
		for (i = 0; i < n && !err; i++)
			if (buf[i] != 'a' + (r->size + i) % 26)
				err = EILSEQ;
		r->size += n;
	}
	if (fd >= 0)
		close(fd);
	__atomic_store_n(&r->err, err, __ATOMIC_RELEASE);
	return NULL;
}

/* Read @name from @cpu within 10 s: its size, or -errno */
static long read_from(struct fsrv *srv, const char *name, int cpu)
{
	struct read_job r = { .cpu = cpu, .err = -1 };

	snprintf(r.path, sizeof(r.path), "%s/%s", srv->mnt, name);
	if (pthread_create(&r.thr, NULL, read_file, &r))
		return -EAGAIN;
	if (!FSRV_WAIT(__atomic_load_n(&r.err, __ATOMIC_ACQUIRE) != -1,
		       10000)) {
		printf("# read of %s stuck\n", name);
		fsrv_conn_write(srv, "abort", "1");
		pthread_join(r.thr, NULL);
		return -ETIMEDOUT;
	}
	pthread_join(r.thr, NULL);
	return r.err ? -r.err : r.size;
}

/* ---------------------------------------------------------------- */

FIXTURE(ring) {
	struct fsrv srv;
	char mnt[64];
	const char *skip;	/* older harnesses run the test anyway */
	bool mounted;
	int was_on;		/* enable_uring before: 1, 0, or -errno */
};

/* Unmount, and set enable_uring back as it was */
static void ring_cleanup(struct fsrv *srv, const char *mnt, bool *mounted,
			 int *was_on)
{
	if (*mounted)
		fsrv_destroy(srv);
	*mounted = false;
	rmdir(mnt);
	if (*was_on == 0)
		fsrv_uring_enable(false);
	*was_on = -1;
}

FIXTURE_SETUP(ring)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct fsrv_opts opts = { .max_background = 64, .io_uring = true };
	int err;

	snprintf(self->mnt, sizeof(self->mnt), "/tmp/uring-%d", getpid());
	self->mounted = false;
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART */
	/* Read by the kernel when it answers FUSE_INIT: set it first */
	self->was_on = fsrv_uring_enabled();
	if (self->was_on == 0)
		fsrv_uring_enable(true);
	self->skip = fsrv_uring_missing(NULL);
	if (self->skip) {
		ring_cleanup(&self->srv, self->mnt, &self->mounted,
			     &self->was_on);
		SKIP(return, "%s", self->skip);
	}
	/* No teardown after a failed setup: clean up here */
	err = fsrv_mount_opts(&self->srv, self->mnt, &opts);
	self->mounted = true;
	if (err) {
		ring_cleanup(&self->srv, self->mnt, &self->mounted,
			     &self->was_on);
		ASSERT_EQ(0, err);
	}
	self->skip = fsrv_uring_missing(&self->srv);
	if (self->skip) {
		ring_cleanup(&self->srv, self->mnt, &self->mounted,
			     &self->was_on);
		SKIP(return, "%s", self->skip);
	}
}

FIXTURE_TEARDOWN(ring)
{
	ring_cleanup(&self->srv, self->mnt, &self->mounted, &self->was_on);
}

/*
 * With an entry on every queue, stat() from each online CPU is served by
 * the ring, from the queue of that CPU, by its thread there; then a burst
 * from every CPU at once.  Nothing reads /dev/fuse: a request that went
 * there, or that the ring lost, would not return.
 */
TEST_F_TIMEOUT(ring, ring_serves_requests, 60)
{
	static struct fsrv_job jobs[MAX_JOBS];
	int cpus[MAX_JOBS], ncpu, i, r, n = 0, nj = 0;
	struct fsrv_rec rec;
	char name[32];

	if (self->skip)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, fsrv_uring_start(&self->srv, -1, 1));
	ncpu = online_cpus(cpus, MAX_JOBS);
	for (i = 0; i < ncpu; i++) {
		for (r = 0; r < ROUNDS; r++) {
			snprintf(name, sizeof(name), "ring%d-%d", cpus[i], r);
			ASSERT_EQ(0, stat_from(&self->srv, name, cpus[i]));
			ASSERT_EQ(1, find_lookup(&self->srv, name, &rec));
			EXPECT_EQ(FSRV_RING_IDX, rec.fd_idx);
			EXPECT_EQ(cpus[i], rec.qid);
			EXPECT_EQ(cpus[i], rec.cpu);
			n++;
		}
	}
	EXPECT_EQ(n, fsrv_count_name_prefix(&self->srv, "ring", FSRV_RING_IDX));

	for (i = 0; i < ncpu; i++) {
		for (r = 0; r < BURST && nj < MAX_JOBS; r++) {
			snprintf(name, sizeof(name), "burst%d-%d", cpus[i], r);
			fsrv_job_stat(&jobs[nj++], self->mnt, name, cpus[i]);
		}
	}
	for (i = 0; i < nj; i++)
		EXPECT_EQ(0, job_wait_within(&self->srv, &jobs[i], 10000))
			TH_LOG("%s", jobs[i].name);
	EXPECT_EQ(nj, fsrv_count_name_prefix(&self->srv, "burst", FSRV_RING_IDX));
	EXPECT_EQ(0, count_op(&self->srv, 0, ANY_DEVICE));
}

/*
 * Reads over the ring: a direct I/O file, and a 1 MiB file through the
 * page cache, whose readahead is sent in the background
 * (fuse_uring_queue_bq_req()), with payloads up to max_pages.
 */
TEST_F_TIMEOUT(ring, ring_serves_reads, 60)
{
	int cpus[2], ncpu;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, fsrv_uring_start(&self->srv, -1, 2));
	ncpu = online_cpus(cpus, 2);
	ASSERT_LT(0, ncpu);
	EXPECT_EQ(4096, read_from(&self->srv, "data", cpus[0]));
	EXPECT_EQ(1024 * 1024, read_from(&self->srv, "big-ring",
					 cpus[ncpu - 1]));
	EXPECT_LT(0, count_op(&self->srv, FUSE_OPEN, FSRV_RING_IDX));
	EXPECT_LT(0, count_op(&self->srv, FUSE_READ, FSRV_RING_IDX));
	EXPECT_TRUE(WAIT_FOR(count_op(&self->srv, FUSE_RELEASE,
				      FSRV_RING_IDX) == 2));
	EXPECT_EQ(0, count_op(&self->srv, 0, ANY_DEVICE));
}

/*
 * With the ring ready, a clone binds to CPU 0 and a reader waits on it:
 * what CPU 0 issues still goes over the ring, and the clone reads
 * nothing.  It unbinds.
 */
TEST_F_TIMEOUT(ring, bind_on_a_ready_ring_is_accepted_and_routes_nothing, 60)
{
	struct fsrv_rec rec;
	char name[32];
	int c, r;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	ASSERT_EQ(0, fsrv_uring_start(&self->srv, -1, 1));
	/* Served, so ready: until then it would wait */
	ASSERT_EQ(0, stat_from(&self->srv, "ready", 0));
	c = fsrv_clone(&self->srv);
	ASSERT_EQ(1, c);
	ASSERT_EQ(0, fsrv_bind(&self->srv, c, FUSE_DEV_BIND_CPU, 0, -1));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, c, 0));
	ASSERT_EQ(0, fsrv_wait_readers(&self->srv, 1, 10000));
	ASSERT_EQ(0, fsrv_wait_idle(&self->srv, 5000));
	for (r = 0; r < ROUNDS; r++) {
		snprintf(name, sizeof(name), "bound0-%d", r);
		ASSERT_EQ(0, stat_from(&self->srv, name, 0));
		ASSERT_EQ(1, find_lookup(&self->srv, name, &rec));
		EXPECT_EQ(FSRV_RING_IDX, rec.fd_idx);
		EXPECT_EQ(0, rec.qid);
	}
	EXPECT_EQ(0, count_op(&self->srv, 0, c));
	EXPECT_EQ(0, fsrv_bind(&self->srv, c, 0, -1, -1));
	ASSERT_EQ(0, stat_from(&self->srv, "unbound0", 0));
	ASSERT_EQ(1, find_lookup(&self->srv, "unbound0", &rec));
	EXPECT_EQ(FSRV_RING_IDX, rec.fd_idx);
	EXPECT_EQ(0, count_op(&self->srv, 0, ANY_DEVICE));
}

/*
 * Clones bound to the first online CPUs, each with a reader there, and a
 * reader on the mount fd: until every queue of the ring has an entry, the
 * kernel holds new requests back (fuse_block_alloc()) instead of sending
 * them to a device, a half-registered ring included.  Once the ring is
 * ready, each held request returns, served over the ring, and so is
 * every new one.
 */
TEST_F_TIMEOUT(ring, ring_ready_with_bound_devices, 60)
{
	static struct fsrv_job jobs[MAX_BOUND];
	int cpus[MAX_BOUND], ncpu, i, c, r;
	struct fsrv_rec rec;
	char name[32];

	if (self->skip)
		SKIP(return, "%s", self->skip);
	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	ncpu = online_cpus(cpus, MAX_BOUND);
	for (i = 0; i < ncpu; i++) {
		c = fsrv_clone(&self->srv);
		ASSERT_EQ(i + 1, c);
		ASSERT_EQ(0, fsrv_bind(&self->srv, c, FUSE_DEV_BIND_CPU,
				       cpus[i], -1));
		ASSERT_EQ(0, fsrv_start_reader(&self->srv, c, cpus[i]));
	}
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, 0, -1));
	ASSERT_EQ(0, fsrv_wait_readers(&self->srv, ncpu + 1, 10000));

	for (i = 0; i < ncpu; i++) {
		snprintf(name, sizeof(name), "early%d", cpus[i]);
		fsrv_job_stat(&jobs[i], self->mnt, name, cpus[i]);
	}
	EXPECT_EQ(0, fsrv_wait_waiting(&self->srv, ncpu, 5000));
	usleep(200000);
	for (i = 0; i < ncpu; i++)
		EXPECT_FALSE(fsrv_job_done(&jobs[i]))
			TH_LOG("%s returned before the ring was ready",
			       jobs[i].name);
	EXPECT_EQ(0, fsrv_count_name_prefix(&self->srv, "early", ANY_READER));

	/* One queue of several: not ready yet */
	if (nr_cpus_possible() > 1) {
		EXPECT_EQ(0, fsrv_uring_start(&self->srv, 1, 1));
		usleep(200000);
		for (i = 0; i < ncpu; i++)
			EXPECT_FALSE(fsrv_job_done(&jobs[i]))
				TH_LOG("%s returned from a half ring",
				       jobs[i].name);
		EXPECT_EQ(0, fsrv_count_name_prefix(&self->srv, "early", ANY_READER));
	}

	EXPECT_EQ(0, fsrv_uring_start(&self->srv, -1, 1));
	for (i = 0; i < ncpu; i++)
		EXPECT_EQ(0, job_wait_within(&self->srv, &jobs[i], 5000))
			TH_LOG("%s", jobs[i].name);
	EXPECT_EQ(ncpu, fsrv_count_name_prefix(&self->srv, "early", FSRV_RING_IDX));

	for (i = 0; i < ncpu; i++) {
		for (r = 0; r < ROUNDS; r++) {
			snprintf(name, sizeof(name), "late%d-%d", cpus[i], r);
			ASSERT_EQ(0, stat_from(&self->srv, name, cpus[i]));
			ASSERT_EQ(1, find_lookup(&self->srv, name, &rec));
			EXPECT_EQ(FSRV_RING_IDX, rec.fd_idx);
		}
	}
	EXPECT_EQ(0, count_op(&self->srv, FUSE_LOOKUP, ANY_DEVICE));
	EXPECT_EQ(0, count_op(&self->srv, FUSE_GETATTR, ANY_DEVICE));
}

/*
 * The ring handler of the LOOKUP of a "slow..." name holds it until a
 * /dev/fuse reader has read an interrupt (5 s at most), then answers
 * EINTR.
 */
static int slow_seen;

static bool slow_hook(struct fsrv *srv, int idx,
		      const struct fuse_in_header *in, const void *arg)
{
	if (idx != FSRV_RING_IDX || in->opcode != FUSE_LOOKUP ||
	    strncmp(arg, "slow", 4))
		return false;
	__atomic_store_n(&slow_seen, 1, __ATOMIC_RELEASE);
	(void)FSRV_WAIT(counter(srv, INTERRUPTS) > 0, 5000);
	fsrv_answer(srv, idx, in->unique, -EINTR, NULL, 0);
	return true;
}

/*
 * The ring carries neither forgets nor interrupts (fuse_io_uring_ops):
 * they wait on the connection's queue, where the reader of a clone bound
 * to CPU 0, the only /dev/fuse reader, reads them.
 */
TEST_F_TIMEOUT(ring, forgets_and_interrupts_reach_bound_readers_beside_a_ring,
	       120)
{
	struct fsrv *srv = &self->srv;
	struct fsrv_job j;
	char name[32];
	int c, i;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	ASSERT_EQ(0, fsrv_uring_start(srv, -1, 1));
	c = fsrv_clone(srv);
	ASSERT_EQ(1, c);
	ASSERT_EQ(0, fsrv_bind(srv, c, FUSE_DEV_BIND_CPU, 0, -1));
	ASSERT_EQ(0, fsrv_start_reader(srv, c, 0));
	ASSERT_EQ(0, fsrv_wait_readers(srv, 1, 10000));

	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "fg-%d", i);
		ASSERT_EQ(0, stat_from(srv, name, 0));
	}
	EXPECT_EQ(100, fsrv_count_name_prefix(srv, "fg-", FSRV_RING_IDX));
	/* As in fuse_bind_test: drop_caches is best effort */
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, fsrv_write_file("/proc/sys/vm/drop_caches", "2"));
		if (FSRV_WAIT(counter(srv, FORGOTTEN) ==
			      counter(srv, LOOKUPS), 1000))
			break;
	}
	EXPECT_EQ(counter(srv, LOOKUPS), counter(srv, FORGOTTEN));
	EXPECT_LT(0, count_forgets(srv, c));
	EXPECT_EQ(0, count_forgets(srv, FSRV_RING_IDX));
	TH_LOG("%llu lookups, %llu returned by %d forgets read by the clone",
	       counter(srv, LOOKUPS), counter(srv, FORGOTTEN),
	       count_forgets(srv, c));

	slow_seen = 0;
	srv->hook = slow_hook;
	fsrv_job_stat(&j, self->mnt, "slow-int", 0);
	EXPECT_TRUE(WAIT_FOR(__atomic_load_n(&slow_seen, __ATOMIC_ACQUIRE)));
	EXPECT_TRUE(WAIT_FOR(__atomic_load_n(&j.tid, __ATOMIC_ACQUIRE)));
	if (__atomic_load_n(&j.tid, __ATOMIC_ACQUIRE))
		EXPECT_EQ(0, pthread_kill(j.thr, SIGUSR1));
	EXPECT_TRUE(WAIT_FOR(count_op(srv, FUSE_INTERRUPT, c) == 1));
	/* Answered once the interrupt was read, or after 5 s */
	EXPECT_EQ(EINTR, job_wait_within(srv, &j, 10000));
	EXPECT_EQ(0, count_op(srv, FUSE_INTERRUPT, FSRV_RING_IDX));
	srv->hook = NULL;
}

TEST_HARNESS_MAIN
