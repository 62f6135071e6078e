// SPDX-License-Identifier: GPL-2.0
/*
 * The paths where a request could get lost once clones are bound:
 * interrupts, forgets, FUSE_NOTIFY_RESEND, poll, abort with requests
 * queued on every clone, and a requester killed while its request waits.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "kselftest_harness.h"

#ifndef FUSE_UNIQUE_RESEND
#define FUSE_UNIQUE_RESEND (1ULL << 63)
#endif

/* Wait up to 5 s for @cond */
#define WAIT_FOR(cond) ({					\
	int __t;						\
	for (__t = 0; __t < 1000 && !(cond); __t++)		\
		usleep(5000);					\
	(cond);							\
})

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
	int a, b;	/* clones bound to CPU 0 and CPU 1 */
};

FIXTURE_SETUP(paths)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART */
	nheld = 0;
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/paths-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&self->srv, self->mnt));
	self->srv.hook = hold_hook;
	self->a = fsrv_clone(&self->srv);
	self->b = fsrv_clone(&self->srv);
	ASSERT_EQ(0, fsrv_bind(&self->srv, self->a, FUSE_DEV_BIND_CPU, 0, -1));
	ASSERT_EQ(0, fsrv_bind(&self->srv, self->b, FUSE_DEV_BIND_CPU, 1, -1));
}

FIXTURE_TEARDOWN(paths)
{
	fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

TEST_F(paths, interrupt_goes_to_the_reading_clone)
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
	EXPECT_EQ(count_op(&self->srv, FUSE_INTERRUPT, -1),
		  count_op(&self->srv, FUSE_INTERRUPT, self->a));
	/* The daemon answers the interrupted request on its clone */
	EXPECT_EQ(0, fsrv_reply(self->srv.fds[self->a], held[0].unique,
				-EINTR, NULL, 0));
	EXPECT_EQ(EINTR, fsrv_job_wait(&j));
}

TEST_F(paths, interrupt_eagain_requeues_on_the_same_clone)
{
	struct fsrv_job j;
	int n;

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
	n = count_op(&self->srv, FUSE_INTERRUPT, -1);
	EXPECT_EQ(n, count_op(&self->srv, FUSE_INTERRUPT, self->b));
	EXPECT_EQ(0, fsrv_reply(self->srv.fds[self->b], held[0].unique,
				-EINTR, NULL, 0));
	EXPECT_EQ(EINTR, fsrv_job_wait(&j));
}

TEST_F(paths, resend_reads_each_again_once_on_its_clone)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh), .error = FUSE_NOTIFY_RESEND,
	};
	struct fsrv_job j[2];
	int i, fd_idx;

	fsrv_start(&self->srv);
	fsrv_job_stat(&j[0], self->mnt, "hold-rs0", 0);
	fsrv_job_stat(&j[1], self->mnt, "hold-rs1", 1);
	ASSERT_TRUE(WAIT_FOR(nheld == 2));
	ASSERT_EQ((ssize_t)sizeof(oh),
		  write(self->srv.fds[0], &oh, sizeof(oh)));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, fsrv_job_wait(&j[i]));
		/* Read twice: held, then resent and answered */
		EXPECT_EQ(2, fsrv_find_name(&self->srv, j[i].name, &fd_idx));
		EXPECT_EQ(i ? self->b : self->a, fd_idx);
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
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(1, write(fd, "2", 1));
	close(fd);
	TH_LOG("caches dropped");
	EXPECT_TRUE(WAIT_FOR(self->srv.forget_nlookup == self->srv.lookups));
	TH_LOG("%llu lookups, %llu returned by forgets (%d FORGET, %d BATCH_FORGET)",
	       (unsigned long long)self->srv.lookups,
	       (unsigned long long)self->srv.forget_nlookup,
	       count_op(&self->srv, FUSE_FORGET, -1),
	       count_op(&self->srv, FUSE_BATCH_FORGET, -1));
	EXPECT_GE(self->srv.lookups, 2000);
	/* Forgets too went to the bound clones */
	EXPECT_EQ(0, count_op(&self->srv, FUSE_FORGET, 0) +
		     count_op(&self->srv, FUSE_BATCH_FORGET, 0));
}

TEST_F(paths, poll_wakes_only_the_clone_that_has_work)
{
	struct pollfd pa = { .fd = self->srv.fds[self->a], .events = POLLIN };
	struct pollfd pb = { .fd = self->srv.fds[self->b], .events = POLLIN };
	struct fsrv_job j;

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
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(ECONNABORTED, fsrv_job_wait(&j[i]));
	}
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
	/* Clones a and b are bound to CPUs 0 and 1; one more per CPU above */
	for (cpu = 2; cpu < ncpu; cpu++) {
		c = fsrv_clone(&self->srv);
		ASSERT_EQ(cpu + 1, c);
		ASSERT_EQ(0, fsrv_bind(&self->srv, c, FUSE_DEV_BIND_CPU, cpu, -1));
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
	ASSERT_EQ(0, set_online(last, true));
	EXPECT_TRUE(routed_to(&self->srv, last, "after", last + 1));
}

TEST_HARNESS_MAIN
