// SPDX-License-Identifier: GPL-2.0
/*
 * Every request is served, however the daemon's readers wait: blocking
 * read(), poll() then read(), level- and edge-triggered epoll, one epoll
 * set per clone with EPOLLEXCLUSIVE, io_uring, SIGIO, splice, and a
 * reader whose worker thread writes the replies, each on clones bound to
 * CPUs, bound to nodes and unbound, with one and with two readers per
 * clone.  A request waits on its clone's queue until a reader takes it,
 * and no reader may sleep while one waits; these tests try to make one
 * wait with nobody coming: sequences and bursts from every CPU, an
 * interrupt while a handler holds a reader and the other CPUs keep the
 * rest busy, an abort racing the close of a clone a request waits on, and
 * more pollers than a waitqueue walk handles at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "../../kselftest_harness.h"

#define SEQ		20	/* stat() calls in a row from each CPU */
#define BURST_PER_CPU	4	/* stat() calls at once from each CPU */
#define WATCHDOG_MS	30000	/* "served" means within this */

enum bind { UNBOUND, BY_CPU, BY_NODE };

/* A thread that calls stat() on names from a pinned CPU */
struct caller {
	pthread_t thr;
	const char *mnt;
	char prefix[32];
	int cpu, count, done, err;
	pid_t tid;
	pthread_barrier_t *start;
	bool *stop;		/* loop until set, if not NULL */
};

static void *caller_run(void *p)
{
	struct caller *c = p;
	char path[160];
	struct stat st;
	int i;

	__atomic_store_n(&c->tid, gettid(), __ATOMIC_RELEASE);
	if (c->cpu >= 0)
		pin_to_cpu(c->cpu);
	if (c->start)
		pthread_barrier_wait(c->start);
	for (i = 0; c->stop ? !__atomic_load_n(c->stop, __ATOMIC_ACQUIRE) :
			     i < c->count; i++) {
		snprintf(path, sizeof(path), "%s/%s-%d", c->mnt, c->prefix, i);
		if (stat(path, &st) && !c->err)
			c->err = errno;
		__atomic_store_n(&c->done, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void caller_start(struct caller *c, const char *mnt, const char *prefix,
			 int cpu, int count, pthread_barrier_t *start)
{
	memset(c, 0, sizeof(*c));
	c->mnt = mnt;
	snprintf(c->prefix, sizeof(c->prefix), "%s", prefix);
	c->cpu = cpu;
	c->count = count;
	c->start = start;
	pthread_create(&c->thr, NULL, caller_run, c);
}

/* Wait for @n callers to finish within the watchdog: how many did */
static int callers_join(struct caller *c, int n)
{
	double end = fsrv_now_ms() + WATCHDOG_MS;
	int i, done = 0;

	for (i = 0; i < n; i++) {
		while (__atomic_load_n(&c[i].done, __ATOMIC_ACQUIRE) <
		       c[i].count && fsrv_now_ms() < end)
			usleep(2000);
		if (c[i].done < c[i].count) {
			/* Stuck: leave it, and the teardown's abort frees it */
			pthread_detach(c[i].thr);
			continue;
		}
		pthread_join(c[i].thr, NULL);
		done++;
	}
	return done;
}

/*
 * Mount, one clone per CPU (BY_CPU and UNBOUND) or per node (BY_NODE),
 * bound as asked, and @per_clone readers on each, pinned to the clone's
 * CPU, or to the node's first CPU.  The mount fd stays unread.
 */
static int serve(struct fsrv *srv, const char *mnt, enum fsrv_style style,
		 enum bind bind, int per_clone)
{
	int ncpu = nr_cpus_online(), cpu, node, idx, i, err;
	int first[64];

	err = fsrv_mount(srv, mnt);
	if (err)
		return err;
	srv->style = style;
	for (node = 0; node < 64; node++)
		first[node] = -1;
	for (cpu = 0; cpu < ncpu && cpu < 64; cpu++) {
		node = cpu_node(cpu);
		if (bind == BY_NODE && first[node] >= 0)
			continue;
		if (first[node] < 0)
			first[node] = cpu;
		idx = fsrv_clone(srv);
		if (idx < 0)
			return idx;
		if (bind == BY_CPU)
			err = fsrv_bind(srv, idx, FUSE_DEV_BIND_CPU, cpu, -1);
		else if (bind == BY_NODE)
			err = fsrv_bind(srv, idx, FUSE_DEV_BIND_NODE, -1, node);
		if (err)
			return err;
		for (i = 0; i < per_clone; i++)
			if (fsrv_start_reader(srv, idx, cpu))
				return -EAGAIN;
	}
	srv->reading[0] = true;		/* no reader for the mount fd */
	return fsrv_wait_readers(srv, srv->nthr, 10000);
}

FIXTURE(readers) {
	struct fsrv srv;
	char mnt[64];
	int ncpu;
	const char *skip;	/* older harnesses run the test anyway */
};

FIXTURE_VARIANT(readers) {
	enum fsrv_style style;
	enum bind bind;
	int per_clone;
};

FIXTURE_VARIANT_ADD(readers, BLOCKING_cpu) {
	.style = FSRV_BLOCKING, .bind = BY_CPU, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, BLOCKING_node) {
	.style = FSRV_BLOCKING, .bind = BY_NODE, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, BLOCKING_unbound) {
	.style = FSRV_BLOCKING, .bind = UNBOUND, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, POLL_cpu) {
	.style = FSRV_POLL, .bind = BY_CPU, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, POLL_node) {
	.style = FSRV_POLL, .bind = BY_NODE, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, POLL_unbound) {
	.style = FSRV_POLL, .bind = UNBOUND, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, EPOLL_LT_cpu) {
	.style = FSRV_EPOLL_LT, .bind = BY_CPU, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, EPOLL_LT_node) {
	.style = FSRV_EPOLL_LT, .bind = BY_NODE, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, EPOLL_LT_unbound) {
	.style = FSRV_EPOLL_LT, .bind = UNBOUND, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, EPOLL_ET_cpu) {
	.style = FSRV_EPOLL_ET, .bind = BY_CPU, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, EPOLL_ET_node) {
	.style = FSRV_EPOLL_ET, .bind = BY_NODE, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, EPOLL_ET_unbound) {
	.style = FSRV_EPOLL_ET, .bind = UNBOUND, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, EPOLL_EXCL_cpu) {
	.style = FSRV_EPOLL_EXCL, .bind = BY_CPU, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, EPOLL_EXCL_node) {
	.style = FSRV_EPOLL_EXCL, .bind = BY_NODE, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, EPOLL_EXCL_unbound) {
	.style = FSRV_EPOLL_EXCL, .bind = UNBOUND, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, URING_cpu) {
	.style = FSRV_URING, .bind = BY_CPU, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, URING_node) {
	.style = FSRV_URING, .bind = BY_NODE, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, URING_unbound) {
	.style = FSRV_URING, .bind = UNBOUND, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, SIGIO_cpu) {
	.style = FSRV_SIGIO, .bind = BY_CPU, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, SIGIO_node) {
	.style = FSRV_SIGIO, .bind = BY_NODE, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, SIGIO_unbound) {
	.style = FSRV_SIGIO, .bind = UNBOUND, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, SPLICE_cpu) {
	.style = FSRV_SPLICE, .bind = BY_CPU, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, SPLICE_node) {
	.style = FSRV_SPLICE, .bind = BY_NODE, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, SPLICE_unbound) {
	.style = FSRV_SPLICE, .bind = UNBOUND, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, WORKER_cpu) {
	.style = FSRV_WORKER, .bind = BY_CPU, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, WORKER_node) {
	.style = FSRV_WORKER, .bind = BY_NODE, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(readers, WORKER_unbound) {
	.style = FSRV_WORKER, .bind = UNBOUND, .per_clone = 1,
};

/* Several readers per clone, as libfuse's pool runs them */
FIXTURE_VARIANT_ADD(readers, BLOCKING_cpu_x2) {
	.style = FSRV_BLOCKING, .bind = BY_CPU, .per_clone = 2 };
FIXTURE_VARIANT_ADD(readers, POLL_cpu_x2) {
	.style = FSRV_POLL, .bind = BY_CPU, .per_clone = 2 };
FIXTURE_VARIANT_ADD(readers, EPOLL_EXCL_cpu_x2) {
	.style = FSRV_EPOLL_EXCL, .bind = BY_CPU, .per_clone = 2 };

FIXTURE_SETUP(readers)
{
	const char *why = variant->bind != UNBOUND ? fsrv_bind_missing() :
			  NULL;

	if (!why)
		why = fsrv_style_missing(variant->style);
	self->skip = why;
	if (why)
		SKIP(return, "%s", why);
	self->ncpu = nr_cpus_online();
	if (self->ncpu > 64)
		self->ncpu = 64;
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/readers-%d", getpid());
	ASSERT_EQ(0, serve(&self->srv, self->mnt, variant->style,
			   variant->bind, variant->per_clone));
}

FIXTURE_TEARDOWN(readers)
{
	if (self->srv.nfds)
		fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

/*
 * SEQ stat() calls in a row from every CPU at once, then BURST_PER_CPU
 * callers on every CPU released together: all served within the watchdog.
 */
TEST_F_TIMEOUT(readers, every_request_is_served, 120)
{
	struct caller *c = calloc(self->ncpu * BURST_PER_CPU, sizeof(*c));
	pthread_barrier_t start;
	char prefix[32];
	int cpu, i, n = 0;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	ASSERT_NE(NULL, c);
	pthread_barrier_init(&start, NULL, self->ncpu + 1);
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		snprintf(prefix, sizeof(prefix), "seq%d", cpu);
		caller_start(&c[cpu], self->mnt, prefix, cpu, SEQ, &start);
	}
	pthread_barrier_wait(&start);
	EXPECT_EQ(self->ncpu, callers_join(c, self->ncpu));
	for (cpu = 0; cpu < self->ncpu; cpu++)
		EXPECT_EQ(0, c[cpu].err);
	pthread_barrier_destroy(&start);

	pthread_barrier_init(&start, NULL, self->ncpu * BURST_PER_CPU + 1);
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		for (i = 0; i < BURST_PER_CPU; i++, n++) {
			snprintf(prefix, sizeof(prefix), "burst%d", n);
			caller_start(&c[n], self->mnt, prefix, cpu, 1, &start);
		}
	}
	pthread_barrier_wait(&start);
	EXPECT_EQ(n, callers_join(c, n));
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, c[i].err);
	pthread_barrier_destroy(&start);
	/* Each answered once */
	EXPECT_EQ(self->ncpu * SEQ, fsrv_count_name_prefix(&self->srv, "seq",
							   -1));
	EXPECT_EQ(n, fsrv_count_name_prefix(&self->srv, "burst", -1));
	free(c);
}

/* A handler that holds a LOOKUP of "hold..." until its interrupt comes */
struct hold {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t unique;	/* the held request */
	bool held, interrupted;
};

static bool hold_hook(struct fsrv *srv, int idx,
		      const struct fuse_in_header *in, const void *arg)
{
	struct hold *h = srv->priv;
	struct timespec until;
	int error = -EIO;

	if (in->opcode == FUSE_INTERRUPT) {
		const struct fuse_interrupt_in *ii = arg;

		pthread_mutex_lock(&h->lock);
		if (h->held && ii->unique == h->unique)
			h->interrupted = true;
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
		return false;
	}
	if (in->opcode != FUSE_LOOKUP || strncmp(arg, "hold", 4))
		return false;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WATCHDOG_MS / 1000;
	pthread_mutex_lock(&h->lock);
	h->unique = in->unique;
	h->held = true;
	pthread_cond_broadcast(&h->cond);
	while (!h->interrupted &&
	       pthread_cond_timedwait(&h->cond, &h->lock, &until) == 0)
		;
	if (h->interrupted)
		error = -EINTR;
	pthread_mutex_unlock(&h->lock);
	/* Without its interrupt, the caller sees EIO and the test fails */
	fsrv_reply(srv->fds[idx], in->unique, error, NULL, 0);
	return true;
}

static bool hold_taken(struct hold *h)
{
	bool held;

	pthread_mutex_lock(&h->lock);
	held = h->held;
	pthread_mutex_unlock(&h->lock);
	return held;
}

static void on_signal(int sig)
{
}

/*
 * A handler holds a reader until the request's interrupt comes, while a
 * caller on every CPU keeps the other readers busy: the interrupt, which
 * waits on the shared queue, must still reach a reader, and the held
 * reader's CPU must still be served.
 */
TEST_F_TIMEOUT(readers, interrupt_reaches_a_busy_daemon, 120)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no restart */
	struct caller *load = calloc(self->ncpu, sizeof(*load));
	struct hold h = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	bool stop = false;
	struct caller held;
	char prefix[32];
	int cpu, served = 0;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	if (self->srv.nthr < 2)
		SKIP(return, "needs a second reader");
	ASSERT_NE(NULL, load);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	self->srv.priv = &h;
	self->srv.hook = hold_hook;
	caller_start(&held, self->mnt, "hold", 0, 1, NULL);
	ASSERT_TRUE(FSRV_WAIT(hold_taken(&h), WATCHDOG_MS));
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		snprintf(prefix, sizeof(prefix), "load%d", cpu);
		caller_start(&load[cpu], self->mnt, prefix, cpu, INT32_MAX,
			     NULL);
		load[cpu].stop = &stop;
	}
	/* The load runs; then the holder's caller is interrupted */
	usleep(100000);
	ASSERT_EQ(0, syscall(SYS_tgkill, getpid(), held.tid, SIGUSR1));
	EXPECT_EQ(1, callers_join(&held, 1));
	EXPECT_EQ(EINTR, held.err);
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		load[cpu].count = 0;	/* done once it sees @stop */
		served += load[cpu].done;
	}
	EXPECT_EQ(self->ncpu, callers_join(load, self->ncpu));
	for (cpu = 0; cpu < self->ncpu; cpu++)
		EXPECT_EQ(0, load[cpu].err);
	/* The held reader's CPU was served by the others meanwhile */
	EXPECT_GT(load[0].done, 0);
	TH_LOG("%d requests served around the held one", served);
	self->srv.hook = NULL;
	free(load);
}

/* ------------------------------------------------------------------ */

/*
 * A request waits on a clone's own queue when an EPOLLEXCLUSIVE poller of
 * that clone was woken for it.  If that poller's thread does not read,
 * the request stays there: close the clone and abort the connection at
 * once, with the request's caller interrupted (FR_INTERRUPTED) and, half
 * of the time, killed.  Every caller must come back, and the kernel must
 * not touch the closed clone's queue after it is freed (KASAN).
 */
FIXTURE(lone) {
};

FIXTURE_SETUP(lone)
{
}

FIXTURE_TEARDOWN(lone)
{
}

struct race {
	pthread_barrier_t go;
	struct fsrv *srv;
	int fd, ep;
};

static void *race_close(void *p)
{
	struct race *r = p;

	pthread_barrier_wait(&r->go);
	close(r->ep);
	close(r->fd);
	return NULL;
}

static void *race_abort(void *p)
{
	struct race *r = p;

	pthread_barrier_wait(&r->go);
	fsrv_conn_write(r->srv, "abort", "1");
	return NULL;
}

/* A child that stat()s @path from CPU 1 and exits with its errno */
static pid_t stat_child(const char *path)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct stat st;
	pid_t pid = fork();

	if (pid)
		return pid;
	sigaction(SIGUSR1, &sa, NULL);
	pin_to_cpu(1);
	_exit(stat(path, &st) ? errno : 0);
}

TEST_F_TIMEOUT(lone, abort_races_close_of_a_clone_a_request_waits_on, 300)
{
	int round, staged = 0, taken = 0;

	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	if (nr_cpus_online() < 2)
		SKIP(return, "needs 2 CPUs");
	for (round = 0; round < 20; round++) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE };
		char mnt[64], path[96];
		struct race r = {};
		pthread_t t1, t2;
		int d, status, ep, t;
		pid_t child;

		snprintf(mnt, sizeof(mnt), "/tmp/race-%d", getpid());
		r.srv = calloc(1, sizeof(*r.srv));
		ASSERT_EQ(0, fsrv_mount(r.srv, mnt));
		d = fsrv_clone(r.srv);
		ASSERT_EQ(1, d);
		ASSERT_EQ(0, fsrv_bind(r.srv, d, FUSE_DEV_BIND_CPU, 1, -1));
		/* The mount fd reads the shared queue */
		ASSERT_EQ(0, fsrv_start_reader(r.srv, 0, 0));
		r.srv->reading[d] = true;
		ASSERT_EQ(0, fsrv_wait_readers(r.srv, 1, 10000));
		ep = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, r.srv->fds[d], &ev));
		snprintf(path, sizeof(path), "%s/raced", mnt);
		child = stat_child(path);
		/*
		 * The poller wakes for it, and does not read.  Unless the
		 * child's request came before this thread was in epoll_wait():
		 * a wakeup then reaches no poller, and wakes the mount fd's
		 * reader, which reads it (seen on PREEMPT_RT).
		 */
		for (t = 0; t < WATCHDOG_MS / 10; t++)
			if (epoll_wait(ep, &ev, 1, 10) == 1 ||
			    fsrv_find_name(r.srv, "raced", NULL))
				break;
		ASSERT_LT(t, WATCHDOG_MS / 10);
		if (fsrv_find_name(r.srv, "raced", NULL)) {
			taken++;
		} else {
			staged++;
			usleep(10000);
			kill(child, round % 2 ? SIGKILL : SIGUSR1);
		}
		r.fd = r.srv->fds[d];
		r.ep = ep;
		r.srv->fds[d] = -1;
		pthread_barrier_init(&r.go, NULL, 2);
		pthread_create(&t1, NULL, race_close, &r);
		pthread_create(&t2, NULL, race_abort, &r);
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		pthread_barrier_destroy(&r.go);
		ASSERT_EQ(0, fsrv_wait_child(r.srv, child, WATCHDOG_MS,
					     &status));
		fsrv_destroy(r.srv);
		free(r.srv);
		rmdir(mnt);
	}
	/* Most rounds must have had the request wait on the clone */
	TH_LOG("%d of 20 rounds raced with the request on the clone, %d read by the mount fd",
	       staged, taken);
	EXPECT_GE(staged, 10);
}

/*
 * More pollers on one connection than the scheduler's waitqueue walk
 * handles in one go (64 on Linux 6.1, where it then leaves a bookmark in
 * the queue): 70 clones bound to the nodes in turn, each polled by a
 * thread on its node, and a burst from every CPU.
 */
TEST_F_TIMEOUT(lone, many_pollers, 180)
{
	int ncpu = nr_cpus_online(), cpu, idx, i, n = 0;
	struct caller *c = calloc(ncpu * BURST_PER_CPU, sizeof(*c));
	pthread_barrier_t start;
	char mnt[64], prefix[32];
	struct fsrv srv;

	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	ASSERT_NE(NULL, c);
	snprintf(mnt, sizeof(mnt), "/tmp/pollers-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&srv, mnt));
	srv.style = FSRV_POLL;
	for (i = 0; i < 70; i++) {
		cpu = i % ncpu;
		idx = fsrv_clone(&srv);
		ASSERT_LT(0, idx);
		ASSERT_EQ(0, fsrv_bind(&srv, idx, FUSE_DEV_BIND_NODE, -1,
				       cpu_node(cpu)));
		ASSERT_EQ(0, fsrv_start_reader(&srv, idx, cpu));
	}
	srv.reading[0] = true;
	ASSERT_EQ(0, fsrv_wait_readers(&srv, 70, 20000));
	pthread_barrier_init(&start, NULL, ncpu * BURST_PER_CPU + 1);
	for (cpu = 0; cpu < ncpu; cpu++) {
		for (i = 0; i < BURST_PER_CPU; i++, n++) {
			snprintf(prefix, sizeof(prefix), "polled%d", n);
			caller_start(&c[n], mnt, prefix, cpu, SEQ, &start);
		}
	}
	pthread_barrier_wait(&start);
	EXPECT_EQ(n, callers_join(c, n));
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, c[i].err);
	EXPECT_EQ(n * SEQ, fsrv_count_name_prefix(&srv, "polled", -1));
	pthread_barrier_destroy(&start);
	fsrv_destroy(&srv);
	rmdir(mnt);
	free(c);
}

TEST_HARNESS_MAIN
