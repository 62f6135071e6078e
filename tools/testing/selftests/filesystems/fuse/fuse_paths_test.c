// SPDX-License-Identifier: GPL-2.0
/*
 * The paths where a request could get lost once clones are bound:
 * interrupts, forgets, FUSE_NOTIFY_RESEND (also racing the close of the
 * clone that read the requests and the death of their callers), poll and
 * epoll (armed before or after the binding), O_ASYNC racing the binding,
 * abort with requests queued on every clone, a requester killed while its
 * request waits, requests queued before the first binding under load, and
 * CPU hotplug.
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "../../kselftest_harness.h"

/* Wait up to 5 s for @cond */
#define WAIT_FOR(cond) FSRV_WAIT(cond, 5000)

static int count_op(struct fsrv *srv, uint32_t opcode, int fd_idx)
{
	size_t i;
	int n = 0;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++)
		if (srv->log[i].opcode == opcode &&
		    (fd_idx < 0 || srv->log[i].fd_idx == fd_idx))
			n++;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

static void on_usr1(int sig)
{
}

/* Held LOOKUPs: names starting with "hold" get no answer from the reader */
struct held {
	uint64_t unique;
	int fd_idx;
	char name[48];
};

static struct held held[16];
static int nheld;

static bool hold_hook(struct fsrv *srv, int idx, const struct fuse_in_header *in,
		      const void *arg)
{
	if (in->opcode != FUSE_LOOKUP || strncmp(arg, "hold", 4) ||
	    (in->unique & FUSE_UNIQUE_RESEND))
		return false;
	pthread_mutex_lock(&srv->lock);
	held[nheld].unique = in->unique;
	held[nheld].fd_idx = idx;
	snprintf(held[nheld].name, sizeof(held[nheld].name), "%s",
		 (const char *)arg);
	nheld++;
	pthread_mutex_unlock(&srv->lock);
	return true;
}

FIXTURE(paths) {
	struct fsrv srv;
	char mnt[64];
	int a, b;	/* clones bound to CPU 0 and CPU 1, strict */
};

FIXTURE_SETUP(paths)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART */
	nheld = 0;
	if (fsrv_bind_missing(0))
		SKIP(return, "%s", fsrv_bind_missing(0));
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/paths-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&self->srv, self->mnt));
	self->srv.hook = hold_hook;
	self->a = fsrv_clone(&self->srv);
	self->b = fsrv_clone(&self->srv);
	/*
	 * Strict, so that what waits, and where, is exact: a work-conserving
	 * clone's requests wait on the shared queue when nobody reads
	 */
	ASSERT_EQ(0, fsrv_bind(&self->srv, self->a, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 0, -1));
	ASSERT_EQ(0, fsrv_bind(&self->srv, self->b, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 1, -1));
}

FIXTURE_TEARDOWN(paths)
{
	fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

/* Interrupts go to the shared queue, which every clone reads */
TEST_F(paths, interrupt_reaches_the_daemon)
{
	struct fsrv_job j;

	fsrv_start(&self->srv);
	fsrv_job_stat(&j, self->mnt, "hold-intr", 0);
	ASSERT_TRUE(WAIT_FOR(nheld == 1));
	EXPECT_EQ(self->a, held[0].fd_idx);
	ASSERT_TRUE(WAIT_FOR(__atomic_load_n(&j.tid, __ATOMIC_ACQUIRE) != 0));
	/* A signal to the requester: the kernel sends FUSE_INTERRUPT */
	ASSERT_EQ(0, pthread_kill(j.thr, SIGUSR1));
	ASSERT_TRUE(WAIT_FOR(count_op(&self->srv, FUSE_INTERRUPT, -1) >= 1));
	/* The daemon answers the interrupted request on its clone */
	EXPECT_EQ(0, fsrv_reply(self->srv.fds[self->a], held[0].unique,
				-EINTR, NULL, 0));
	EXPECT_EQ(EINTR, fsrv_job_wait(&j));
}

TEST_F(paths, interrupt_eagain_requeues)
{
	struct fsrv_job j;

	fsrv_start(&self->srv);
	fsrv_job_stat(&j, self->mnt, "hold-again", 1);
	ASSERT_TRUE(WAIT_FOR(nheld == 1));
	EXPECT_EQ(self->b, held[0].fd_idx);
	ASSERT_TRUE(WAIT_FOR(__atomic_load_n(&j.tid, __ATOMIC_ACQUIRE) != 0));
	ASSERT_EQ(0, pthread_kill(j.thr, SIGUSR1));
	ASSERT_TRUE(WAIT_FOR(count_op(&self->srv, FUSE_INTERRUPT, -1) >= 1));
	/* EAGAIN: "not now"; the kernel queues the interrupt again */
	EXPECT_EQ(0, fsrv_reply(self->srv.fds[self->b],
				held[0].unique | 1, -EAGAIN, NULL, 0));
	ASSERT_TRUE(WAIT_FOR(count_op(&self->srv, FUSE_INTERRUPT, -1) >= 2));
	EXPECT_EQ(0, fsrv_reply(self->srv.fds[self->b], held[0].unique,
				-EINTR, NULL, 0));
	EXPECT_EQ(EINTR, fsrv_job_wait(&j));
}

TEST_F(paths, resend_reads_each_again_once)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh), .error = FUSE_NOTIFY_RESEND,
	};
	struct fsrv_job j[2];
	int i, fd_idx;

	if (fsrv_resend_missing(&self->srv))
		SKIP(return, "%s", fsrv_resend_missing(&self->srv));
	fsrv_start(&self->srv);
	fsrv_job_stat(&j[0], self->mnt, "hold-rs0", 0);
	fsrv_job_stat(&j[1], self->mnt, "hold-rs1", 1);
	ASSERT_TRUE(WAIT_FOR(nheld == 2));
	ASSERT_EQ((ssize_t)sizeof(oh),
		  write(self->srv.fds[0], &oh, sizeof(oh)));
	/* Resent requests go to the shared queue, which every clone reads */
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, fsrv_job_wait(&j[i]));
		/* Read twice: held, then resent and answered */
		EXPECT_EQ(2, fsrv_find_name(&self->srv, j[i].name, &fd_idx));
	}
}

TEST_F_TIMEOUT(paths, forgets_return_every_lookup, 180)
{
	char path[128];
	struct stat st;
	int cpu, i, fd;

	fsrv_start(&self->srv);
	for (cpu = 0; cpu < 2; cpu++) {
		ASSERT_EQ(0, pin_to_cpu(cpu));
		for (i = 0; i < 1000; i++) {
			snprintf(path, sizeof(path), "%s/f%d-%d", self->mnt,
				 cpu, i % 700);
			ASSERT_EQ(0, stat(path, &st));
		}
	}
	TH_LOG("%llu lookups answered; dropping caches",
	       (unsigned long long)self->srv.lookups);
	/*
	 * drop_caches is best effort: the shrinkers stop once a pass frees
	 * little, and an inode they passed over (referenced again, or on
	 * the LRU of a node they did not finish) is evicted by the next
	 * drop.  A forget that was lost would never come.
	 */
	for (i = 0; i < 10; i++) {
		fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(1, write(fd, "2", 1));
		close(fd);
		if (FSRV_WAIT(self->srv.forget_nlookup == self->srv.lookups,
			      1000))
			break;
	}
	TH_LOG("caches dropped %d times", i + 1);
	EXPECT_TRUE(WAIT_FOR(self->srv.forget_nlookup == self->srv.lookups));
	TH_LOG("%llu lookups, %llu returned by forgets (%d FORGET, %d BATCH_FORGET)",
	       (unsigned long long)self->srv.lookups,
	       (unsigned long long)self->srv.forget_nlookup,
	       count_op(&self->srv, FUSE_FORGET, -1),
	       count_op(&self->srv, FUSE_BATCH_FORGET, -1));
	EXPECT_GE(self->srv.lookups, 2000);
}

TEST_F(paths, poll_wakes_only_the_clone_that_has_work)
{
	struct pollfd pa = { .fd = self->srv.fds[self->a], .events = POLLIN };
	struct pollfd pb = { .fd = self->srv.fds[self->b], .events = POLLIN };
	struct fsrv_job j;

	/* Strict: what is routed to a is never b's to take */
	ASSERT_EQ(0, fsrv_bind(&self->srv, self->a, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 0, -1));
	ASSERT_EQ(0, fsrv_bind(&self->srv, self->b, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 1, -1));
	fsrv_job_stat(&j, self->mnt, "polled", 0);
	EXPECT_EQ(1, poll(&pa, 1, 5000));
	EXPECT_TRUE(pa.revents & POLLIN);
	EXPECT_EQ(0, poll(&pb, 1, 200));
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_job_wait(&j));
}

TEST_F(paths, abort_ends_requests_queued_on_every_clone)
{
	struct fsrv_job j[2];
	int i;

	/* Nobody reads: one request waits on each clone */
	fsrv_job_stat(&j[0], self->mnt, "ab0", 0);
	fsrv_job_stat(&j[1], self->mnt, "ab1", 1);
	ASSERT_TRUE(WAIT_FOR(fsrv_queued_on(&self->srv, self->a) == 1 &&
			     fsrv_queued_on(&self->srv, self->b) == 1));
	ASSERT_EQ(0, fsrv_conn_write(&self->srv, "abort", "1"));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(ECONNABORTED, fsrv_job_wait(&j[i]));
}

TEST_F(paths, killed_requester_leaves_its_clone_queue)
{
	char path[128];
	struct stat st;
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		pin_to_cpu(0);
		snprintf(path, sizeof(path), "%s/killed", self->mnt);
		stat(path, &st);
		_exit(0);
	}
	ASSERT_TRUE(WAIT_FOR(fsrv_queued_on(&self->srv, self->a) == 1));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	/* Taken off clone a's queue, under that queue's lock */
	EXPECT_TRUE(WAIT_FOR(fsrv_queued_on(&self->srv, self->a) == 0));
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_find_name(&self->srv, "killed", NULL));
	snprintf(path, sizeof(path), "%s/alive", self->mnt);
	EXPECT_EQ(0, stat(path, &st));
}

static int set_online(int cpu, bool on)
{
	char path[96];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/* Requests from @cpu (pinned) are all read by clone @want */
static bool routed_to(struct fsrv *srv, int cpu, const char *prefix, int want)
{
	char path[256];
	struct stat st;
	int i, fd_idx;

	if (pin_to_cpu(cpu))
		return false;
	for (i = 0; i < 10; i++) {
		char name[48];

		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		snprintf(path, sizeof(path), "%s/%s", srv->mnt, name);
		if (stat(path, &st) || fsrv_find_name(srv, name, &fd_idx) != 1 ||
		    fd_idx != want)
			return false;
	}
	return true;
}

TEST_F(paths, cpu_hotplug_keeps_routing_exact)
{
	int ncpu = nr_cpus_online(), last = ncpu - 1, c, cpu;

	if (ncpu < 3)
		SKIP(return, "needs 3 CPUs");
	/*
	 * Clones a and b are bound to CPUs 0 and 1; one more per CPU above;
	 * strict, so that where each request is routed is what is checked
	 */
	ASSERT_EQ(0, fsrv_bind(&self->srv, self->a, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 0, -1));
	ASSERT_EQ(0, fsrv_bind(&self->srv, self->b, FUSE_DEV_BIND_CPU |
			       FUSE_DEV_BIND_STRICT, 1, -1));
	for (cpu = 2; cpu < ncpu; cpu++) {
		c = fsrv_clone(&self->srv);
		ASSERT_EQ(cpu + 1, c);
		ASSERT_EQ(0, fsrv_bind(&self->srv, c, FUSE_DEV_BIND_CPU |
				       FUSE_DEV_BIND_STRICT, cpu, -1));
	}
	fsrv_start(&self->srv);
	ASSERT_TRUE(routed_to(&self->srv, last, "before", last + 1));
	if (set_online(last, false))
		SKIP(return, "no CPU hotplug");
	/* The bound CPU is gone; the others still get exactly their clone */
	for (cpu = 0; cpu < last; cpu++) {
		char prefix[16];

		snprintf(prefix, sizeof(prefix), "off%d", cpu);
		EXPECT_TRUE(routed_to(&self->srv, cpu, prefix, cpu + 1));
	}
	/* The map covers every possible CPU: back online, routed as before */
	ASSERT_EQ(0, set_online(last, true));
	EXPECT_TRUE(routed_to(&self->srv, last, "after", last + 1));
}

/* ---- a connection of its own: the mount fd (not read) and clones ---- */

FIXTURE(own) {
	struct fsrv srv;
	char mnt[64];
};

FIXTURE_SETUP(own)
{
	if (fsrv_bind_missing(0))
		SKIP(return, "%s", fsrv_bind_missing(0));
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/own-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&self->srv, self->mnt));
}

FIXTURE_TEARDOWN(own)
{
	fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

struct poller {
	int fd, ret;
	short revents;
};

static void *poll_thread(void *p)
{
	struct poller *pl = p;
	struct pollfd pfd = { .fd = pl->fd, .events = POLLIN };

	pl->ret = poll(&pfd, 1, 5000);
	pl->revents = pfd.revents;
	return NULL;
}

enum arm { EPOLL_THEN_BIND, BIND_THEN_EPOLL, POLL_THEN_BIND, BIND_THEN_POLL };

/*
 * A daemon waits for clone c with epoll or poll, set up before or after
 * binding c; a request from CPU 0 then goes to c, and must wake it.
 */
static void wait_then_bind(struct __test_metadata *_metadata, struct fsrv *srv,
			   enum arm how)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct poller pl = { .ret = -1 };
	int c = fsrv_clone(srv), ep = -1;
	struct fsrv_job j;
	pthread_t thr;

	ASSERT_GT(c, 0);
	pl.fd = srv->fds[c];
	if (how == EPOLL_THEN_BIND || how == BIND_THEN_EPOLL) {
		ep = epoll_create1(0);
		ASSERT_GE(ep, 0);
	}
	if (how == EPOLL_THEN_BIND)
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, srv->fds[c], &ev));
	if (how == POLL_THEN_BIND) {
		ASSERT_EQ(0, pthread_create(&thr, NULL, poll_thread, &pl));
		usleep(100000);		/* asleep in poll() */
	}
	ASSERT_EQ(0, fsrv_bind(srv, c, FUSE_DEV_BIND_CPU, 0, -1));
	if (how == BIND_THEN_EPOLL)
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, srv->fds[c], &ev));
	if (how == BIND_THEN_POLL)
		ASSERT_EQ(0, pthread_create(&thr, NULL, poll_thread, &pl));

	fsrv_job_stat(&j, srv->mnt, "waited-for", 0);
	if (ep >= 0) {
		EXPECT_EQ(1, epoll_wait(ep, &out, 1, 5000));
		EXPECT_TRUE(out.events & EPOLLIN);
		close(ep);
	} else {
		ASSERT_EQ(0, pthread_join(thr, NULL));
		EXPECT_EQ(1, pl.ret);
		EXPECT_TRUE(pl.revents & POLLIN);
	}
	ASSERT_EQ(0, fsrv_start_reader(srv, c, -1));
	EXPECT_EQ(0, fsrv_job_wait(&j));
	EXPECT_EQ(c, fsrv_reader_of(srv, "waited-for"));
}

TEST_F(own, epoll_armed_before_bind_wakes)
{
	wait_then_bind(_metadata, &self->srv, EPOLL_THEN_BIND);
}

TEST_F(own, epoll_armed_after_bind_wakes)
{
	wait_then_bind(_metadata, &self->srv, BIND_THEN_EPOLL);
}

TEST_F(own, poll_sleeping_across_bind_wakes)
{
	wait_then_bind(_metadata, &self->srv, POLL_THEN_BIND);
}

TEST_F(own, poll_after_bind_wakes)
{
	wait_then_bind(_metadata, &self->srv, BIND_THEN_POLL);
}

struct toggler {
	int fd, rounds;
	bool end_on;
};

static void *toggle_async(void *p)
{
	struct toggler *t = p;
	int fl = fcntl(t->fd, F_GETFL), i;

	for (i = 0; i < t->rounds; i++) {
		fcntl(t->fd, F_SETFL, fl | O_ASYNC);
		fcntl(t->fd, F_SETFL, fl & ~O_ASYNC);
	}
	if (t->end_on)
		fcntl(t->fd, F_SETFL, fl | O_ASYNC);
	return NULL;
}

/* SIGIOs pending for this process, collected without waiting */
static int take_sigio(void)
{
	struct timespec zero = { 0, 0 };
	sigset_t set;
	int n = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	while (sigtimedwait(&set, NULL, &zero) == SIGIO)
		n++;
	return n;
}

TEST_F_TIMEOUT(own, o_async_racing_bind_signals_exactly, 240)
{
	int round, c, d, lost = 0, stale = 0;
	struct toggler t;
	pthread_t thr;
	sigset_t set;

	/* SIGIO is collected with sigtimedwait(), never delivered */
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, NULL));
	/* d reads what CPU 0 sends while no clone is bound to CPU 0 */
	d = fsrv_clone(&self->srv);
	ASSERT_EQ(0, fsrv_bind(&self->srv, d, FUSE_DEV_BIND_CPU, 1, -1));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, d, -1));

	for (round = 0; round < 400; round++) {
		struct fsrv_job j;
		char name[32];
		int got, want;

		c = fsrv_clone(&self->srv);
		ASSERT_GT(c, 0);
		ASSERT_EQ(0, fcntl(self->srv.fds[c], F_SETOWN, getpid()));
		t = (struct toggler){ self->srv.fds[c], 3, round & 1 };
		ASSERT_EQ(0, pthread_create(&thr, NULL, toggle_async, &t));
		/* The first binding of c, while O_ASYNC comes and goes */
		ASSERT_EQ(0, fsrv_bind(&self->srv, c, FUSE_DEV_BIND_CPU |
				       FUSE_DEV_BIND_STRICT, 0, -1));
		ASSERT_EQ(0, pthread_join(thr, NULL));
		take_sigio();

		/* One request to c: SIGIO exactly when O_ASYNC is on */
		snprintf(name, sizeof(name), "sigio-%d", round);
		fsrv_job_stat(&j, self->mnt, name, 0);
		/* Device ids: 0 the mount fd, 1 d, then one per round */
		ASSERT_TRUE(WAIT_FOR(fsrv_queued_on(&self->srv, 2 + round) == 1));
		got = take_sigio();
		want = t.end_on;
		lost += want && !got;
		stale += !want && got;
		/* c goes; d gets the request */
		close(self->srv.fds[c]);
		self->srv.fds[c] = -1;
		self->srv.nfds--;
		EXPECT_EQ(0, fsrv_job_wait(&j));
	}
	EXPECT_EQ(0, lost) TH_LOG("%d registrations lost", lost);
	EXPECT_EQ(0, stale) TH_LOG("%d signals after O_ASYNC was cleared",
				   stale);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* Resend, close of the reading clone and SIGKILL of the caller at once */
struct racer {
	pthread_barrier_t *go;
	int fd;
	pid_t pid;
	int what;
};

static void *race_one(void *p)
{
	struct racer *r = p;
	struct fuse_out_header oh = {
		.len = sizeof(oh), .error = FUSE_NOTIFY_RESEND,
	};

	pthread_barrier_wait(r->go);
	switch (r->what) {
	case 0:
		if (write(r->fd, &oh, sizeof(oh)) < 0)
			break;
		break;
	case 1:
		close(r->fd);
		break;
	case 2:
		kill(r->pid, SIGKILL);
		break;
	}
	return NULL;
}

TEST_F_TIMEOUT(own, resend_races_close_and_sigkill, 300)
{
	char *buf = malloc(FSRV_BUFSIZE), path[128];
	int round, c, d, i, status, rounds = 1500;
	struct fuse_in_header *in = (void *)buf;
	double end = fsrv_now_ms() + 150000;
	pthread_barrier_t go;
	struct racer r[3];
	pthread_t thr[3];
	struct stat st;
	pid_t pid;

	if (fsrv_resend_missing(&self->srv))
		SKIP(free(buf); return, "%s", fsrv_resend_missing(&self->srv));
	d = fsrv_clone(&self->srv);
	ASSERT_EQ(0, fsrv_bind(&self->srv, d, FUSE_DEV_BIND_CPU, 1, -1));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, d, -1));
	pthread_barrier_init(&go, NULL, 3);

	/* 1500 rounds, or what 150 s allow on a loaded host (about 1000) */
	for (round = 0; round < rounds && fsrv_now_ms() < end; round++) {
		c = fsrv_clone(&self->srv);
		ASSERT_GT(c, 0);
		ASSERT_EQ(0, fsrv_bind(&self->srv, c, FUSE_DEV_BIND_CPU |
				       FUSE_DEV_BIND_STRICT, 0, -1));
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			/* A caller, not the daemon: no fd of the daemon's */
			for (i = 0; i < self->srv.nfds; i++)
				close(self->srv.fds[i]);
			pin_to_cpu(0);
			snprintf(path, sizeof(path), "%s/race-%d", self->mnt,
				 round);
			_exit(stat(path, &st) ? 1 : 0);
		}
		/* c reads the request and holds it */
		ASSERT_GT(read(self->srv.fds[c], buf, FSRV_BUFSIZE),
			  (ssize_t)sizeof(*in));
		EXPECT_EQ(FUSE_LOOKUP, in->opcode);
		r[0] = (struct racer){ &go, self->srv.fds[0], pid, 0 };
		r[1] = (struct racer){ &go, self->srv.fds[c], pid, 1 };
		r[2] = (struct racer){ &go, -1, pid, 2 };
		for (i = 0; i < 3; i++)
			pthread_create(&thr[i], NULL, race_one, &r[i]);
		for (i = 0; i < 3; i++)
			pthread_join(thr[i], NULL);
		self->srv.fds[c] = -1;
		self->srv.nfds--;
		ASSERT_EQ(0, fsrv_wait_child(&self->srv, pid, 10000, &status))
			TH_LOG("round %d", round);
	}
	pthread_barrier_destroy(&go);
	free(buf);
	TH_LOG("%d rounds", round);
	EXPECT_GE(round, 200);
	/* Nothing left behind, and the connection still works */
	for (i = 0; i < FSRV_MAX_FDS; i++)
		EXPECT_LE(fsrv_queued_on(&self->srv, i), 0);
	ASSERT_EQ(0, pin_to_cpu(0));
	snprintf(path, sizeof(path), "%s/after-races", self->mnt);
	EXPECT_EQ(0, stat(path, &st));
}

struct load {
	struct fsrv *srv;
	int cpu;
	bool *stop;
	int n;
};

static void *load_loop(void *p)
{
	struct load *l = p;
	char path[160];
	struct stat st;

	pin_to_cpu(l->cpu);
	while (!__atomic_load_n(l->stop, __ATOMIC_RELAXED)) {
		snprintf(path, sizeof(path), "%s/load-%d-%d", l->srv->mnt,
			 l->cpu, l->n++);
		stat(path, &st);
	}
	return NULL;
}

TEST_F_TIMEOUT(own, queued_before_first_bind_do_not_starve, 120)
{
	int ncpu = nr_cpus_online(), cpu, i, c[FSRV_MAX_FDS];
	struct load l[4 * FSRV_MAX_FDS];
	pthread_t thr[4 * FSRV_MAX_FDS];
	bool stop = false;
	struct fsrv_job early[8];
	char name[32];
	int nload = 0;

	/* Eight requests wait on the shared queue: nothing bound, no reader */
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "early-%d", i);
		fsrv_job_stat(&early[i], self->mnt, name, i % ncpu);
	}
	ASSERT_EQ(0, fsrv_wait_waiting(&self->srv, 8, 5000));
	/* Then every CPU binds a clone and is kept busy by four callers */
	for (cpu = 0; cpu < ncpu; cpu++) {
		c[cpu] = fsrv_clone(&self->srv);
		ASSERT_EQ(0, fsrv_bind(&self->srv, c[cpu], FUSE_DEV_BIND_CPU,
				       cpu, -1));
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		for (i = 0; i < 4; i++) {
			l[nload] = (struct load){ &self->srv, cpu, &stop, 0 };
			pthread_create(&thr[nload], NULL, load_loop, &l[nload]);
			nload++;
		}
	usleep(200000);
	for (cpu = 0; cpu < ncpu; cpu++)
		ASSERT_EQ(0, fsrv_start_reader(&self->srv, c[cpu], cpu));
	/* The early ones are served within a second, load or not */
	for (i = 0; i < 8; i++)
		EXPECT_TRUE(WAIT_FOR(fsrv_job_done(&early[i])) &&
			    early[i].err == 0);
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "early-%d", i);
		EXPECT_EQ(1, fsrv_find_name(&self->srv, name, NULL));
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < nload; i++)
		pthread_join(thr[i], NULL);
	for (i = 0; i < 8; i++)
		fsrv_job_wait(&early[i]);
	EXPECT_EQ(0, fsrv_dq_field(&self->srv, 0, 4));
}

TEST_HARNESS_MAIN
