// SPDX-License-Identifier: GPL-2.0
/*
 * Bound devices under fire: background requests (readahead, writeback,
 * async release) with a bound device on every CPU, a background request
 * routed by the CPU that made it rather than the one that sent it, epoll
 * and O_ASYNC of bound devices, umount -f and daemon death with requests
 * waiting on every device's own queue, binding from an unprivileged user
 * namespace, and connections kept apart.
 *
 * A request waits on the queue of the device its CPU maps to, and its
 * wakeup stops at the first reader it reaches; these tests keep one there
 * with a holder (fuse_holder.h), an EPOLLEXCLUSIVE poller of the device
 * that does not read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "fuse_holder.h"
#include "kselftest_harness.h"

/* Wait up to 10 s for @cond: TCG guests are slow */
#define WAIT_FOR(cond) FSRV_WAIT(cond, 10000)

#define MAX_CPUS	16

/*
 * Clone one fd per online CPU and bind it there, its reader (if one is
 * started) pinned to it; clone[cpu] gets its index in srv->fds.  Returns
 * the number of CPUs.
 */
static int bind_every_cpu(struct fsrv *srv, int clone[MAX_CPUS])
{
	int ncpu = nr_cpus_online(), cpu;

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (cpu = 0; cpu < ncpu; cpu++) {
		clone[cpu] = fsrv_clone(srv);
		if (clone[cpu] < 0 ||
		    fsrv_bind(srv, clone[cpu], FUSE_DEV_BIND_CPU, cpu, -1))
			return -1;
		srv->reader_cpu[clone[cpu]] = cpu;
	}
	return ncpu;
}

/* Log records of node @ino with @opcode (0: any but forgets) */
static int count_node(struct fsrv *srv, uint64_t ino, uint32_t opcode,
		      int fd_idx)
{
	size_t i;
	int n = 0;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++) {
		struct fsrv_rec *r = &srv->log[i];

		if (r->nodeid != ino || r->opcode == FUSE_FORGET ||
		    r->opcode == FUSE_BATCH_FORGET)
			continue;
		if ((!opcode || r->opcode == opcode) &&
		    (fd_idx < 0 || r->fd_idx == fd_idx))
			n++;
	}
	pthread_mutex_unlock(&srv->lock);
	return n;
}

static bool ended(int err)
{
	return err == ECONNABORTED || err == ENOTCONN;
}

FIXTURE(fire) {
	struct fsrv srv;
	char mnt[64];
	int clone[MAX_CPUS];
	int ncpu;
};

FIXTURE_SETUP(fire)
{
	/* Writeback caching; one background request at a time, so that
	 * background requests wait in the connection's queue and are sent
	 * from whichever CPU finished the one before.
	 */
	struct fsrv_opts opts = {
		.init_flags = FUSE_WRITEBACK_CACHE,
		.max_background = 1,
	};

	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/fire-%d", getpid());
	ASSERT_EQ(0, fsrv_mount_opts(&self->srv, self->mnt, &opts));
	self->ncpu = bind_every_cpu(&self->srv, self->clone);
	ASSERT_GE(self->ncpu, 2);
}

FIXTURE_TEARDOWN(fire)
{
	fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

struct bg_work {
	const char *mnt;
	int cpu;
	int err;
	char what[160];
};

/* Record why @w failed (errno at the time), for the test to report */
static void *bg_fail(struct bg_work *w, const char *what, long long arg)
{
	int err = errno;

	snprintf(w->what, sizeof(w->what), "%s %lld", what, arg);
	w->err = err ? err : -1;
	return NULL;
}

/* Readahead, then writeback through fsync(), then the async releases */
static void *bg_worker(void *p)
{
	struct bg_work *w = p;
	char path[128], buf[4096];
	off_t off = 0;
	ssize_t n;
	int fd, i;

	errno = 0;
	if (pin_to_cpu(w->cpu))
		return bg_fail(w, "pin", w->cpu);
	snprintf(path, sizeof(path), "%s/big-ra-%d", w->mnt, w->cpu);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return bg_fail(w, path, 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++)
			if (buf[i] != 'a' + (off + i) % 26)
				return bg_fail(w, "bad byte at", off + i);
		off += n;
	}
	if (n < 0 || off != 1024 * 1024)
		return bg_fail(w, "read after bytes", off);
	close(fd);

	snprintf(path, sizeof(path), "%s/big-wb-%d", w->mnt, w->cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return bg_fail(w, path, 0);
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < 64; i++)
		if (pwrite(fd, buf, sizeof(buf), i * sizeof(buf)) != sizeof(buf))
			return bg_fail(w, "pwrite", 0);
	if (fsync(fd))
		return bg_fail(w, "fsync", 0);
	close(fd);
	w->err = 0;
	return NULL;
}

/*
 * Every CPU at once through its bound device, with one background request
 * at a time: readahead and writeback queue up behind each other and are
 * sent when another CPU's ends.  Where each is read depends on whether its
 * device's reader sleeps at that moment (a busy one leaves it to the
 * shared queue), so only the share read by the CPU's own device is shown;
 * what must hold is that everything is served once and right.
 */
TEST_F_TIMEOUT(fire, background_requests_are_served, 300)
{
	struct bg_work w[MAX_CPUS];
	pthread_t thr[MAX_CPUS];
	uint64_t ra, wb;
	int cpu;

	fsrv_start(&self->srv);
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		w[cpu] = (struct bg_work){ .mnt = self->mnt, .cpu = cpu, .err = -1 };
		ASSERT_EQ(0, pthread_create(&thr[cpu], NULL, bg_worker, &w[cpu]));
	}
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		pthread_join(thr[cpu], NULL);
		EXPECT_EQ(0, w[cpu].err) TH_LOG("CPU %d: %s", cpu, w[cpu].what);
	}
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		char name[32];
		int c = self->clone[cpu];

		snprintf(name, sizeof(name), "big-ra-%d", cpu);
		ra = fsrv_ino(name);
		snprintf(name, sizeof(name), "big-wb-%d", cpu);
		wb = fsrv_ino(name);
		/* The releases are sent in the background after close() */
		ASSERT_TRUE(WAIT_FOR(count_node(&self->srv, ra, FUSE_RELEASE, -1) &&
				     count_node(&self->srv, wb, FUSE_RELEASE, -1)));
		TH_LOG("CPU %d: %d READ, %d WRITE, read by its own device: %d of %d",
		       cpu, count_node(&self->srv, ra, FUSE_READ, -1),
		       count_node(&self->srv, wb, FUSE_WRITE, -1),
		       count_node(&self->srv, ra, 0, c) +
		       count_node(&self->srv, wb, 0, c),
		       count_node(&self->srv, ra, 0, -1) +
		       count_node(&self->srv, wb, 0, -1));
		EXPECT_GE(count_node(&self->srv, ra, FUSE_READ, -1), 1);
		EXPECT_GE(count_node(&self->srv, wb, FUSE_WRITE, -1), 1);
		EXPECT_EQ(1, count_node(&self->srv, ra, FUSE_RELEASE, -1));
		EXPECT_EQ(1, count_node(&self->srv, wb, FUSE_RELEASE, -1));
	}
}

/* Hold the RELEASE of bg_held_ino unanswered: its unique, for the test */
static uint64_t bg_held_ino, bg_held_unique;

static bool hold_release(struct fsrv *srv, int fd_idx,
			 const struct fuse_in_header *in, const void *arg)
{
	if (in->opcode != FUSE_RELEASE || in->nodeid != bg_held_ino)
		return false;
	__atomic_store_n(&bg_held_unique, in->unique, __ATOMIC_RELEASE);
	return true;
}

/*
 * A background request waits in the connection's background queue while
 * another is out, and is sent when that one is answered, from the CPU of
 * the answer.  It goes where it was made, and does not wake the readers of
 * the device bound to that CPU, which could not run before its issuer
 * yields: the RELEASE made on CPU 0 and sent by an answer written on CPU 1
 * wakes neither CPU 0's device's holder nor CPU 1's, and an idle reader
 * elsewhere (the mount fd's) takes it.
 */
TEST_F(fire, background_request_passes_over_its_cpus_readers)
{
	int a = self->clone[0], b = self->clone[1], held, queued, pin[2];
	char path[128];
	struct holder ha, hb;
	uint64_t unique;

	bg_held_ino = fsrv_ino("bg-held");
	bg_held_unique = 0;
	self->srv.hook = hold_release;
	/* Only the mount fd is read: the idle reader that is not bound */
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, 0, -1));
	ASSERT_EQ(0, fsrv_wait_readers(&self->srv, 1, 5000));

	/*
	 * O_PATH opens keep the inodes, so that the end of a RELEASE does
	 * not evict one: its FORGET would go to the shared queue and might
	 * wake a holder.
	 */
	ASSERT_EQ(0, pin_to_cpu(1));
	snprintf(path, sizeof(path), "%s/bg-held", self->mnt);
	pin[0] = open(path, O_PATH);
	held = open(path, O_RDONLY);
	ASSERT_GE(pin[0], 0);
	ASSERT_GE(held, 0);
	ASSERT_EQ(0, pin_to_cpu(0));
	snprintf(path, sizeof(path), "%s/bg-queued", self->mnt);
	pin[1] = open(path, O_PATH);
	queued = open(path, O_RDONLY);
	ASSERT_GE(pin[1], 0);
	ASSERT_GE(queued, 0);

	/* The first RELEASE is out, and held */
	ASSERT_EQ(0, pin_to_cpu(1));
	ASSERT_EQ(0, close(held));
	ASSERT_TRUE(WAIT_FOR(__atomic_load_n(&bg_held_unique,
					     __ATOMIC_ACQUIRE)));
	/* The second, made on CPU 0, waits for it in the background queue */
	ASSERT_EQ(0, pin_to_cpu(0));
	ASSERT_EQ(0, close(queued));

	/*
	 * The reader asleep again (it served the FLUSH of each close) before
	 * the holders arm: pollers wait on the shared waitqueue too, and an
	 * exclusive wakeup takes the first waiter there, as on stock.
	 */
	ASSERT_EQ(0, fsrv_wait_idle(&self->srv, 5000));
	ASSERT_EQ(0, holder_arm(&ha, self->srv.fds[a]));
	ASSERT_EQ(0, holder_arm(&hb, self->srv.fds[b]));
	/* Answered on CPU 1, which sends the second */
	ASSERT_EQ(0, pin_to_cpu(1));
	unique = __atomic_load_n(&bg_held_unique, __ATOMIC_ACQUIRE);
	ASSERT_EQ(0, fsrv_reply(self->srv.fds[0], unique, 0, NULL, 0));

	EXPECT_TRUE(WAIT_FOR(count_node(&self->srv, fsrv_ino("bg-queued"),
					FUSE_RELEASE, 0) == 1));
	EXPECT_TRUE(holder_sleeps_on(&ha, 300));
	EXPECT_TRUE(holder_sleeps_on(&hb, 0));
	holder_stop(&ha);
	holder_stop(&hb);
	close(pin[0]);
	close(pin[1]);
	self->srv.hook = NULL;
}

/*
 * EPOLLEXCLUSIVE pollers of two bound devices, armed after the bind: a
 * request from CPU 1 wakes the poller of CPU 1's device alone and waits
 * on that device's queue until a reader takes it.
 */
TEST_F(fire, epoll_exclusive_wakes_only_the_device_that_has_work)
{
	struct holder h[2];
	struct fsrv_job j;
	int i, fd_idx = -1;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, holder_arm(&h[i], self->srv.fds[self->clone[i]]));
	fsrv_job_stat(&j, self->mnt, "ep-1", 1);
	EXPECT_TRUE(holder_woken(&h[1], 10000));
	EXPECT_TRUE(holder_sleeps_on(&h[0], 300));
	EXPECT_FALSE(fsrv_job_done(&j));
	for (i = 0; i < 2; i++)
		holder_stop(&h[i]);
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_job_wait(&j));
	EXPECT_EQ(1, fsrv_find_name(&self->srv, "ep-1", &fd_idx));
}

/*
 * A level-triggered epoll poller does not stop a wakeup: the request of
 * its device's CPU wakes it, and then every poller of the connection.
 */
TEST_F(fire, epoll_level_triggered_is_not_reserved)
{
	struct epoll_event ev, got[4];
	struct fsrv_job j;
	int ep[2], i;

	for (i = 0; i < 2; i++) {
		ep[i] = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_GE(ep[i], 0);
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		ASSERT_EQ(0, epoll_ctl(ep[i], EPOLL_CTL_ADD,
				       self->srv.fds[self->clone[i]], &ev));
	}
	fsrv_job_stat(&j, self->mnt, "lt-1", 1);
	EXPECT_EQ(1, epoll_wait(ep[1], got, 4, 10000));
	EXPECT_EQ(1, epoll_wait(ep[0], got, 4, 10000));
	/* The mount fd reads the shared queue alone: it is there */
	EXPECT_TRUE(WAIT_FOR(take_shared(&self->srv, 0, FUSE_LOOKUP, 0,
					 "lt-1") == 1));
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_job_wait(&j));
	for (i = 0; i < 2; i++)
		close(ep[i]);
}

/*
 * O_ASYNC registers on the connection's shared queue, as on stock, and
 * an O_ASYNC reader sleeps on no waitqueue: a request's wakeup goes on
 * to the last level and signals every device's owner, each with its own
 * fd.
 */
TEST_F(fire, o_async_signals_through_the_shared_queue)
{
	struct timespec ts = { .tv_sec = 10 };
	int i, fd, sig, seen = 0;
	struct fsrv_job j;
	siginfo_t si;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sigaddset(&set, SIGRTMIN + 2);
	/* Blocked here and in the job thread, which inherits the mask */
	ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &set, NULL));
	for (i = 0; i < 2; i++) {
		fd = self->srv.fds[self->clone[i]];
		ASSERT_EQ(0, fcntl(fd, F_SETOWN, getpid()));
		ASSERT_EQ(0, fcntl(fd, F_SETSIG, SIGRTMIN + 1 + i));
		ASSERT_EQ(0, fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC));
	}
	fsrv_job_stat(&j, self->mnt, "async-0", 0);
	while (seen != 3) {
		sig = sigtimedwait(&set, &si, &ts);
		if (sig < 0)
			break;
		i = sig - SIGRTMIN - 1;
		EXPECT_EQ(self->srv.fds[self->clone[i]], si.si_fd);
		seen |= 1 << i;
	}
	EXPECT_EQ(3, seen);
	EXPECT_TRUE(WAIT_FOR(take_shared(&self->srv, 0, FUSE_LOOKUP, 0,
					 "async-0") == 1));
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_job_wait(&j));
	for (i = 0; i < 2; i++) {
		fd = self->srv.fds[self->clone[i]];
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_ASYNC);
	}
	/* Drop what the answer and the release may have raised */
	ts.tv_sec = 0;
	while (sigtimedwait(&set, &si, &ts) > 0)
		;
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/*
 * Put a LOOKUP of "@prefix-CPU" on every CPU's device's own queue: a
 * holder per device, then a stat() from each CPU.  Returns how many
 * holders were woken; @h and @j are the caller's.
 */
static int stage_every_cpu(struct fsrv *srv, const int *clone, int ncpu,
			   const char *mnt, const char *prefix,
			   struct holder *h, struct fsrv_job *j)
{
	int cpu, woken = 0;
	char name[32];

	for (cpu = 0; cpu < ncpu; cpu++)
		if (holder_arm(&h[cpu], srv->fds[clone[cpu]]))
			return -1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		snprintf(name, sizeof(name), "%s-%d", prefix, cpu);
		fsrv_job_stat(&j[cpu], mnt, name, cpu);
		woken += holder_woken(&h[cpu], 10000);
	}
	return woken;
}

TEST_F(fire, umount_force_ends_requests_queued_on_every_clone)
{
	struct holder h[MAX_CPUS];
	struct fsrv_job j[MAX_CPUS];
	int cpu, ret;

	/* Nobody reads: one request waits on each device's own queue */
	ASSERT_EQ(self->ncpu, stage_every_cpu(&self->srv, self->clone,
					      self->ncpu, self->mnt, "umf",
					      h, j));
	ret = umount2(self->mnt, MNT_FORCE);
	EXPECT_TRUE(ret == 0 || errno == EBUSY);
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		EXPECT_TRUE(WAIT_FOR(fsrv_job_done(&j[cpu])));
		EXPECT_TRUE(ended(fsrv_job_wait(&j[cpu])))
			TH_LOG("CPU %d: %s", cpu, strerror(j[cpu].err));
		holder_stop(&h[cpu]);
	}
}

/* Read @len bytes from @fd within @ms: 0, or -1 */
static int read_within(int fd, void *buf, size_t len, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	return read(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

/*
 * A daemon in a child process stages a request on every device's own
 * queue (the parent makes them, the child's holders take them) and is
 * killed: closing its devices moves the requests to the shared queue, and
 * closing the last one ends them all.
 */
TEST(daemon_death_ends_requests_queued_on_every_clone)
{
	struct fsrv_job j[MAX_CPUS];
	int pfd[2], msg[2], res[2], ncpu, cpu, status;
	char mnt[64];
	pid_t pid;

	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	snprintf(mnt, sizeof(mnt), "/tmp/death-%d", getpid());
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		static struct holder h[MAX_CPUS];
		static struct fsrv srv;
		int clone[MAX_CPUS];

		msg[0] = -1;
		msg[1] = 0;
		close(pfd[0]);
		if (!fsrv_mount(&srv, mnt)) {
			msg[1] = srv.conn;
			msg[0] = bind_every_cpu(&srv, clone);
		}
		for (cpu = 0; cpu < msg[0]; cpu++)
			if (holder_arm(&h[cpu], srv.fds[clone[cpu]]))
				msg[0] = -1;
		if (write(pfd[1], msg, sizeof(msg)) != sizeof(msg))
			_exit(1);
		/* Each holder is woken by its CPU's request, which stays */
		res[0] = 0;
		for (cpu = 0; cpu < msg[0]; cpu++)
			res[0] += holder_woken(&h[cpu], 10000);
		res[1] = 0;
		if (write(pfd[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ncpu = read_within(pfd[0], msg, sizeof(msg), 30000) ? -1 : msg[0];
	if (ncpu < 2) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		umount2(mnt, MNT_DETACH);
		rmdir(mnt);
		ASSERT_GE(ncpu, 2);
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		char name[32];

		snprintf(name, sizeof(name), "death-%d", cpu);
		fsrv_job_stat(&j[cpu], mnt, name, cpu);
	}
	EXPECT_EQ(0, read_within(pfd[0], res, sizeof(res),
				 10000 * ncpu + 5000));
	EXPECT_EQ(ncpu, res[0]);
	EXPECT_EQ(0, res[1]);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	for (cpu = 0; cpu < ncpu; cpu++) {
		EXPECT_TRUE(WAIT_FOR(fsrv_job_done(&j[cpu])));
		EXPECT_TRUE(ended(fsrv_job_wait(&j[cpu])))
			TH_LOG("CPU %d: %s", cpu, strerror(j[cpu].err));
	}
	EXPECT_EQ(0, umount2(mnt, MNT_DETACH));
	rmdir(mnt);
}

static int write_file(const char *path, const char *val)
{
	int ret = fsrv_write_file(path, val);

	if (ret)
		fprintf(stderr, "# %s: %s\n", path, strerror(-ret));
	return ret;
}

/* Steps of the user-namespace child, reported as its exit code */
enum {
	UNS_OK, UNS_SETID, UNS_UNSHARE, UNS_MAPS, UNS_MOUNT, UNS_CLONE,
	UNS_BIND, UNS_BUSY, UNS_ROUTE, UNS_PIPE,
};

/*
 * An unprivileged user (uid 1000) in a new user and mount namespace
 * mounts a FUSE file system, clones fds and binds them under the same
 * rules as root (a second device on a bound CPU is EBUSY); requests made
 * on a CPU then go to its device while that device's reader sleeps.
 * What the binding is can no longer be read back from fusectl: where the
 * requests are read is the check.
 */
TEST(unprivileged_user_namespace_binds_its_clones)
{
	int pfd[2], gate[2], status, i = 0;
	char mnt[64], path[64], buf[8];
	pid_t pid;

	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	if (nr_cpus_online() < 2)
		SKIP(return, "needs 2 CPUs");
	snprintf(mnt, sizeof(mnt), "/tmp/userns-%d", getpid());
	ASSERT_EQ(0, mkdir(mnt, 0755));
	ASSERT_EQ(0, chown(mnt, 1000, 1000));
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(0, pipe(gate));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		static struct fsrv srv;
		struct stat st;
		char path[128];
		int c[2], fd_idx = -1;

		close(pfd[0]);
		close(gate[1]);
		if (setgroups(0, NULL) || setresgid(1000, 1000, 1000) ||
		    setresuid(1000, 1000, 1000))
			_exit(UNS_SETID);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
			_exit(UNS_UNSHARE);
		/* The parent maps us to root in here, as newuidmap would */
		if (write(pfd[1], &i, sizeof(i)) != sizeof(i) ||
		    read(gate[0], buf, 1) != 1 || getuid() != 0)
			_exit(UNS_MAPS);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
			fprintf(stderr, "# mount --make-rprivate /: %s\n",
				strerror(errno));
			_exit(UNS_MOUNT);
		}
		i = fsrv_mount(&srv, mnt);
		if (i) {
			fprintf(stderr, "# mount in the namespace: %s\n",
				strerror(-i));
			_exit(UNS_MOUNT);
		}
		for (i = 0; i < 2; i++) {
			c[i] = fsrv_clone(&srv);
			if (c[i] < 0)
				_exit(UNS_CLONE);
			if (fsrv_bind(&srv, c[i], FUSE_DEV_BIND_CPU, i, -1))
				_exit(UNS_BIND);
		}
		if (fsrv_bind(&srv, c[1], FUSE_DEV_BIND_CPU, 0, -1) != -EBUSY)
			_exit(UNS_BUSY);
		fsrv_start(&srv);
		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "%s/uns-%d", mnt, i);
			/*
			 * Every reader asleep first: one on its way back
			 * from the last reply may take work from any queue
			 */
			if (pin_to_cpu(i) || fsrv_wait_idle(&srv, 5000) ||
			    stat(path, &st) ||
			    fsrv_find_name(&srv, path + strlen(mnt) + 1,
					   &fd_idx) != 1 || fd_idx != c[i]) {
				fprintf(stderr,
					"# uns-%d: read by fd %d, not %d\n",
					i, fd_idx, c[i]);
				_exit(UNS_ROUTE);
			}
		}
		fsrv_destroy(&srv);
		_exit(UNS_OK);
	}
	close(pfd[1]);
	close(gate[0]);
	/* The child has its namespace: map its uid and gid 1000 to 0 there */
	ASSERT_EQ(sizeof(i), read(pfd[0], &i, sizeof(i)));
	snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
	EXPECT_EQ(0, write_file(path, "deny"));
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	EXPECT_EQ(0, write_file(path, "0 1000 1"));
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	EXPECT_EQ(0, write_file(path, "0 1000 1"));
	ASSERT_EQ(1, write(gate[1], "g", 1));
	close(gate[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(UNS_OK, WEXITSTATUS(status));
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

/*
 * One connection's fds cannot reach another connection's devices: a
 * clone of one cannot become the other's, a CPU bound in one is free in
 * the other (EBUSY is per connection), and binding and unbinding one's
 * fds leaves the other's routing as it was.
 */
TEST(connections_stay_apart)
{
	struct fuse_dev_bind bind = {
		.flags = FUSE_DEV_BIND_CPU, .cpu = 1, .node = -1,
	};
	static struct fsrv a, b;
	struct fsrv_job j;
	uint32_t src;
	int fd, ca, cb, fd_idx = -1;

	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	if (nr_cpus_online() < 2)
		SKIP(return, "needs 2 CPUs");

	ASSERT_EQ(0, fsrv_mount(&a, "/tmp/apart-a"));
	ASSERT_EQ(0, fsrv_mount(&b, "/tmp/apart-b"));
	ca = fsrv_clone(&a);
	cb = fsrv_clone(&b);
	ASSERT_GT(ca, 0);
	ASSERT_GT(cb, 0);
	ASSERT_EQ(0, fsrv_bind(&b, cb, FUSE_DEV_BIND_CPU, 1, -1));
	/* A clone of a cannot become a clone of b */
	src = b.fds[0];
	EXPECT_EQ(-1, ioctl(a.fds[ca], FUSE_DEV_IOC_CLONE, &src));
	EXPECT_EQ(EINVAL, errno);
	/* b's device on CPU 1 does not make CPU 1 busy in a; a's own does */
	EXPECT_EQ(0, fsrv_bind(&a, ca, FUSE_DEV_BIND_CPU, 1, -1));
	EXPECT_EQ(-EBUSY, fsrv_bind(&a, 0, FUSE_DEV_BIND_CPU, 1, -1));
	EXPECT_EQ(0, fsrv_bind(&a, 0, FUSE_DEV_BIND_NODE, -1, cpu_node(1)));
	EXPECT_EQ(0, fsrv_bind(&a, ca, 0, -1, -1));

	/* b still sends CPU 1's requests to cb, a now to its mount fd */
	fsrv_start(&a);
	fsrv_start(&b);
	/* An unbound reader awake takes work from any queue: all asleep */
	ASSERT_EQ(0, fsrv_wait_idle(&a, 5000));
	ASSERT_EQ(0, fsrv_wait_idle(&b, 5000));
	fsrv_job_stat(&j, "/tmp/apart-b", "apart-b", 1);
	EXPECT_EQ(0, fsrv_job_wait(&j));
	EXPECT_EQ(1, fsrv_find_name(&b, "apart-b", &fd_idx));
	EXPECT_EQ(cb, fd_idx);
	fsrv_job_stat(&j, "/tmp/apart-a", "apart-a", 1);
	EXPECT_EQ(0, fsrv_job_wait(&j));
	EXPECT_EQ(1, fsrv_find_name(&a, "apart-a", &fd_idx));
	EXPECT_EQ(0, fd_idx);

	/* An fd of no connection binds nothing */
	fd = open("/dev/fuse", O_RDWR);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_BIND, &bind));
	EXPECT_EQ(EPERM, errno);
	close(fd);
	fsrv_destroy(&a);
	fsrv_destroy(&b);
	rmdir("/tmp/apart-a");
	rmdir("/tmp/apart-b");
}

TEST_HARNESS_MAIN
