// SPDX-License-Identifier: GPL-2.0
/*
 * Baseline /dev/fuse behaviour that must hold with and without per-device
 * input queues, with nothing bound: mount and INIT, requests
 * served through FUSE_DEV_IOC_CLONE clones, replies on the wrong clone,
 * interrupts answered on another clone, abort, the end of the connection,
 * and FUSE_DEV_IOC_CLONE's errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "../../kselftest_harness.h"

FIXTURE(dev) {
	struct fsrv srv;
	char mnt[64];
};

FIXTURE_SETUP(dev)
{
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/dev-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&self->srv, self->mnt));
}

FIXTURE_TEARDOWN(dev)
{
	fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

TEST_F(dev, mount_and_init)
{
	char path[128];
	struct stat st;

	EXPECT_GE(self->srv.minor, 36);
	fsrv_start(&self->srv);
	ASSERT_EQ(0, stat(self->mnt, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	snprintf(path, sizeof(path), "%s/hello", self->mnt);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(4096, st.st_size);
	snprintf(path, sizeof(path), "%s/noent", self->mnt);
	EXPECT_EQ(-1, stat(path, &st));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(1, fsrv_find_name(&self->srv, "hello", NULL));
}

TEST_F(dev, read_through_clones)
{
	char path[128], buf[4096];
	int i, fd, per_fd = 0, total = 0;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(i + 1, fsrv_clone(&self->srv));
	fsrv_start(&self->srv);
	for (i = 0; i < 200; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/c-%d", self->mnt, i);
		ASSERT_EQ(0, stat(path, &st));
	}
	snprintf(path, sizeof(path), "%s/data", self->mnt);
	fd = open(path, O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(4096, read(fd, buf, sizeof(buf)));
	EXPECT_EQ('a', buf[0]);
	EXPECT_EQ('a' + 4095 % 26, buf[4095]);
	close(fd);
	for (i = 0; i < 4; i++) {
		per_fd = fsrv_count_name_prefix(&self->srv, "c-", i);
		total += per_fd;
	}
	/* Every request answered exactly once, by one of the fds */
	EXPECT_EQ(200, total);
	EXPECT_EQ(200, fsrv_count_name_prefix(&self->srv, "c-", -1));
}

TEST_F(dev, reply_on_wrong_clone_is_enoent)
{
	char buf[FSRV_BUFSIZE];
	struct fuse_in_header *in = (void *)buf;
	struct fuse_entry_out eo = {};
	struct fsrv_job job;
	ssize_t n;
	int b;

	b = fsrv_clone(&self->srv);
	ASSERT_EQ(1, b);
	fsrv_job_stat(&job, self->mnt, "wrongclone", -1);
	/* Read the LOOKUP on the mount fd, answer it on the clone */
	n = read(self->srv.fds[0], buf, sizeof(buf));
	ASSERT_GT(n, (ssize_t)sizeof(*in));
	ASSERT_EQ(FUSE_LOOKUP, in->opcode);
	eo.nodeid = 1234;
	eo.attr.ino = 1234;
	eo.attr.mode = S_IFREG | 0644;
	eo.attr.nlink = 1;
	EXPECT_EQ(-ENOENT, fsrv_reply(self->srv.fds[b], in->unique, 0, &eo,
				      sizeof(eo)));
	/* The fd that read it can answer it */
	EXPECT_EQ(0, fsrv_reply(self->srv.fds[0], in->unique, 0, &eo,
				sizeof(eo)));
	/* stat() goes on with a GETATTR: serve it */
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_job_wait(&job));
}

static void on_signal(int sig)
{
}

/* Read one message from @fd within 5 s: its length, or -1 */
static ssize_t read_within(int fd, char *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, 5000) != 1)
		return -1;
	return read(fd, buf, len);
}

/*
 * Any clone may read the interrupt of a request that another clone holds,
 * and the daemon answers it on the fd it read it from: libfuse answers
 * EAGAIN there when it does not know the request, so that the interrupt
 * comes again.  The kernel must take that answer and queue it again.
 * With FUSE_TEST_STOCK=1 in the environment, check what a kernel without
 * that fix does instead: it answers ENOENT, and the interrupt is lost.
 */
TEST_F(dev, interrupt_reply_on_another_clone)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no restart */
	char buf[FSRV_BUFSIZE];
	struct fuse_in_header *in = (void *)buf;
	struct fuse_interrupt_in *ii = (void *)(in + 1);
	struct fsrv_job job;
	uint64_t unique;
	int b;

	b = fsrv_clone(&self->srv);
	ASSERT_EQ(1, b);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	fsrv_job_stat(&job, self->mnt, "held", -1);
	/* The mount fd reads the LOOKUP and holds it */
	ASSERT_GT(read_within(self->srv.fds[0], buf, sizeof(buf)),
		  (ssize_t)sizeof(*in));
	ASSERT_EQ(FUSE_LOOKUP, in->opcode);
	unique = in->unique;
	ASSERT_TRUE(FSRV_WAIT(__atomic_load_n(&job.tid, __ATOMIC_ACQUIRE),
			      5000));
	ASSERT_EQ(0, syscall(SYS_tgkill, getpid(), job.tid, SIGUSR1));
	/* The clone reads its interrupt, and answers "not yet" */
	ASSERT_GT(read_within(self->srv.fds[b], buf, sizeof(buf)),
		  (ssize_t)sizeof(*in));
	ASSERT_EQ(FUSE_INTERRUPT, in->opcode);
	ASSERT_EQ(unique, ii->unique);
	if (getenv("FUSE_TEST_STOCK")) {
		EXPECT_EQ(-ENOENT, fsrv_reply(self->srv.fds[b], in->unique,
					      -EAGAIN, NULL, 0));
		EXPECT_EQ(-1, read_within(self->srv.fds[b], buf, sizeof(buf)));
		EXPECT_EQ(0, fsrv_reply(self->srv.fds[0], unique, -EINTR,
					NULL, 0));
		EXPECT_EQ(EINTR, fsrv_job_wait(&job));
		return;
	}
	EXPECT_EQ(0, fsrv_reply(self->srv.fds[b], in->unique, -EAGAIN,
				NULL, 0));
	/* So the interrupt comes again */
	ASSERT_GT(read_within(self->srv.fds[b], buf, sizeof(buf)),
		  (ssize_t)sizeof(*in));
	EXPECT_EQ(FUSE_INTERRUPT, in->opcode);
	EXPECT_EQ(unique, ii->unique);
	/* The holder ends the request as interrupted */
	EXPECT_EQ(0, fsrv_reply(self->srv.fds[0], unique, -EINTR, NULL, 0));
	EXPECT_EQ(EINTR, fsrv_job_wait(&job));
}

TEST_F(dev, abort_gives_enotconn)
{
	char path[128];
	struct stat st;

	fsrv_start(&self->srv);
	snprintf(path, sizeof(path), "%s/before", self->mnt);
	ASSERT_EQ(0, stat(path, &st));
	ASSERT_EQ(0, fsrv_conn_write(&self->srv, "abort", "1"));
	snprintf(path, sizeof(path), "%s/after", self->mnt);
	EXPECT_EQ(-1, stat(path, &st));
	EXPECT_EQ(ENOTCONN, errno);
}

TEST_F(dev, closing_every_fd_ends_the_connection)
{
	struct pollfd pfd = { .events = POLLIN };
	struct fsrv_job job;
	char path[128];
	struct stat st;
	int i;

	ASSERT_EQ(1, fsrv_clone(&self->srv));
	ASSERT_EQ(2, fsrv_clone(&self->srv));
	/*
	 * No reader: the request stays queued until the last fd closes.  It
	 * is counted as waiting before it is queued, so wait until it can be
	 * read: closed before, it would fail with ENOTCONN instead.
	 */
	fsrv_job_stat(&job, self->mnt, "pending", -1);
	pfd.fd = self->srv.fds[0];
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	for (i = 0; i < self->srv.nfds; i++) {
		close(self->srv.fds[i]);
		self->srv.fds[i] = -1;
	}
	EXPECT_EQ(ECONNABORTED, fsrv_job_wait(&job));
	snprintf(path, sizeof(path), "%s/after", self->mnt);
	EXPECT_EQ(-1, stat(path, &st));
	EXPECT_EQ(ENOTCONN, errno);
}

TEST_F(dev, poll_reports_pending)
{
	struct pollfd pfd = { .fd = self->srv.fds[0], .events = POLLIN };
	struct fsrv_job job;

	EXPECT_EQ(0, poll(&pfd, 1, 0));
	fsrv_job_stat(&job, self->mnt, "polled", -1);
	EXPECT_EQ(1, poll(&pfd, 1, 5000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_job_wait(&job));
}

TEST_F(dev, clone_ioctl_errors)
{
	uint32_t src;
	int fd, null_fd, other;

	fd = open("/dev/fuse", O_RDWR);
	ASSERT_GE(fd, 0);

	/* Bad fd */
	src = (uint32_t)-1;
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_CLONE, &src));
	EXPECT_EQ(EINVAL, errno);

	/* An fd that is not /dev/fuse */
	null_fd = open("/dev/null", O_RDWR);
	ASSERT_GE(null_fd, 0);
	src = null_fd;
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_CLONE, &src));
	EXPECT_EQ(EINVAL, errno);

	/* A /dev/fuse fd with no connection (EPERM on Linux 7.3) */
	other = open("/dev/fuse", O_RDWR);
	ASSERT_GE(other, 0);
	src = other;
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_CLONE, &src));
	EXPECT_TRUE(errno == EINVAL || errno == EPERM);

	/* Bad pointer */
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_CLONE, (void *)8));
	EXPECT_EQ(EFAULT, errno);

	/* Good, then cloning again onto the same fd */
	src = self->srv.fds[0];
	EXPECT_EQ(0, ioctl(fd, FUSE_DEV_IOC_CLONE, &src));
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_CLONE, &src));
	EXPECT_EQ(EINVAL, errno);

	/* An unknown ioctl */
	EXPECT_EQ(-1, ioctl(fd, _IO(FUSE_DEV_IOC_MAGIC, 200)));
	EXPECT_EQ(ENOTTY, errno);

	close(other);
	close(null_fd);
	close(fd);
}

TEST_HARNESS_MAIN
