// SPDX-License-Identifier: GPL-2.0
/*
 * Clone queues under fire: background requests (readahead, writeback,
 * async release) routed by the CPU that made them, epoll and O_ASYNC of
 * strict clones, umount -f and daemon death with requests queued on every clone,
 * and binding from an unprivileged user namespace.
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
#include <grp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "../../kselftest_harness.h"

/* Wait up to 5 s for @cond */
#define WAIT_FOR(cond) FSRV_WAIT(cond, 5000)

#define MAX_CPUS	16

/*
 * Clone one fd per online CPU and bind it there, reader pinned to it;
 * clone[cpu] gets its index in srv->fds.  Returns the number of CPUs.
 * The bindings are strict: these tests check where each request is routed,
 * which work-conserving clones may change when a reader is busy
 * (fuse_wc_test covers that).
 */
static int bind_every_cpu(struct fsrv *srv, int clone[MAX_CPUS])
{
	int ncpu = nr_cpus_online(), cpu;

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (cpu = 0; cpu < ncpu; cpu++) {
		clone[cpu] = fsrv_clone(srv);
		if (clone[cpu] < 0 ||
		    fsrv_bind(srv, clone[cpu], FUSE_DEV_BIND_CPU |
			      FUSE_DEV_BIND_STRICT, cpu, -1))
			return -1;
		srv->reader_cpu[clone[cpu]] = cpu;
	}
	return ncpu;
}

/* Show the requests about @ino that a clone other than @fd_idx read */
static void show_strays(struct fsrv *srv, uint64_t ino, int fd_idx)
{
	size_t i;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++) {
		struct fsrv_rec *r = &srv->log[i];

		if (r->nodeid == ino && r->fd_idx != fd_idx &&
		    r->opcode != FUSE_FORGET && r->opcode != FUSE_BATCH_FORGET)
			fprintf(stderr, "# stray: opcode %u read by fd %d on CPU %d\n",
				r->opcode, r->fd_idx, r->cpu);
	}
	pthread_mutex_unlock(&srv->lock);
}

/*
 * Whether the flusher wrote @ino back itself: writeback of an inode ends
 * with a SETATTR of its times from the writing thread, and one that
 * neither @tid nor an unknown thread (pid 0) sent came from a kworker.
 * Its WRITEs carry no pid and are routed by the kworker's CPU.
 */
static bool flushed_by_other(struct fsrv *srv, uint64_t ino, pid_t tid)
{
	bool other = false;
	size_t i;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++) {
		struct fsrv_rec *r = &srv->log[i];

		if (r->nodeid == ino && r->opcode == FUSE_SETATTR &&
		    r->pid && r->pid != (uint32_t)tid)
			other = true;
	}
	pthread_mutex_unlock(&srv->lock);
	return other;
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

	/* Strict binding: where requests are read is exactly where they go */
	if (fsrv_bind_missing(FUSE_DEV_BIND_STRICT))
		SKIP(return, "%s", fsrv_bind_missing(FUSE_DEV_BIND_STRICT));
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

static int write_file(const char *path, const char *val);

/*
 * Writeback that a flusher kworker starts is made, and so routed, on the
 * kworker's CPU.  Keep the kworkers out of this test: no periodic
 * writeback, and no early background writeback from FUSE's strict
 * per-device dirty limit; the test's own fsync() and close() write back.
 */
static char saved_interval[32];

static int quiet_writeback(unsigned int conn)
{
	char path[96];
	int fd, n, ret;

	fd = open("/proc/sys/vm/dirty_writeback_centisecs", O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, saved_interval, sizeof(saved_interval) - 1);
	close(fd);
	saved_interval[n > 0 ? n : 0] = 0;
	ret = write_file("/proc/sys/vm/dirty_writeback_centisecs", "0");
	snprintf(path, sizeof(path), "/sys/class/bdi/0:%u/strict_limit",
		 conn & 0xfffff);
	if (!ret) {
		ret = write_file(path, "0");
		/* No such knob before Linux 6.2: the limit stays, and the
		 * flusher may start writeback early (flushed_by_other())
		 */
		if (ret == -ENOENT)
			ret = 0;
	}
	snprintf(path, sizeof(path), "/sys/class/bdi/0:%u/max_ratio",
		 conn & 0xfffff);
	if (!ret)
		ret = write_file(path, "100");
	return ret;
}

static void restore_writeback(void)
{
	if (saved_interval[0])
		write_file("/proc/sys/vm/dirty_writeback_centisecs",
			   saved_interval);
}

struct bg_work {
	const char *mnt;
	int cpu;
	pid_t tid;
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
	w->tid = gettid();
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

TEST_F_TIMEOUT(fire, background_requests_route_by_their_cpu, 300)
{
	struct bg_work w[MAX_CPUS];
	pthread_t thr[MAX_CPUS];
	uint64_t ra, wb;
	int cpu;

	ASSERT_EQ(0, quiet_writeback(self->srv.conn));
	fsrv_start(&self->srv);
	/* All CPUs at once: their background requests queue up behind
	 * each other and are sent when another CPU's one ends.
	 */
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		w[cpu] = (struct bg_work){ .mnt = self->mnt, .cpu = cpu, .err = -1 };
		ASSERT_EQ(0, pthread_create(&thr[cpu], NULL, bg_worker, &w[cpu]));
	}
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		pthread_join(thr[cpu], NULL);
		EXPECT_EQ(0, w[cpu].err) TH_LOG("CPU %d: %s", cpu, w[cpu].what);
	}
	restore_writeback();
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
		TH_LOG("CPU %d: %d READ, %d WRITE, %d RELEASE, read by clone %d: %d of %d",
		       cpu, count_node(&self->srv, ra, FUSE_READ, -1),
		       count_node(&self->srv, wb, FUSE_WRITE, -1),
		       count_node(&self->srv, ra, FUSE_RELEASE, -1) +
		       count_node(&self->srv, wb, FUSE_RELEASE, -1), c,
		       count_node(&self->srv, ra, 0, c) +
		       count_node(&self->srv, wb, 0, c),
		       count_node(&self->srv, ra, 0, -1) +
		       count_node(&self->srv, wb, 0, -1));
		EXPECT_GE(count_node(&self->srv, ra, FUSE_READ, -1), 1);
		EXPECT_GE(count_node(&self->srv, wb, FUSE_WRITE, -1), 1);
		EXPECT_EQ(1, count_node(&self->srv, ra, FUSE_RELEASE, -1));
		EXPECT_EQ(1, count_node(&self->srv, wb, FUSE_RELEASE, -1));
		/* Every request about this CPU's files went to its clone */
		EXPECT_EQ(count_node(&self->srv, ra, 0, -1),
			  count_node(&self->srv, ra, 0, c));
		if (!flushed_by_other(&self->srv, wb, w[cpu].tid)) {
			EXPECT_EQ(count_node(&self->srv, wb, 0, -1),
				  count_node(&self->srv, wb, 0, c));
		} else {
			/* Only the release is surely this CPU's */
			TH_LOG("CPU %d: the flusher wrote big-wb-%d back", cpu, cpu);
			EXPECT_EQ(1, count_node(&self->srv, wb, FUSE_RELEASE, c));
		}
		show_strays(&self->srv, ra, c);
		show_strays(&self->srv, wb, c);
	}
}

TEST_F(fire, epoll_wakes_only_the_clone_that_has_work)
{
	struct epoll_event ev, got[4];
	int ep[2], i;
	struct fsrv_job j;

	for (i = 0; i < 2; i++) {
		ep[i] = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_GE(ep[i], 0);
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		ASSERT_EQ(0, epoll_ctl(ep[i], EPOLL_CTL_ADD,
				       self->srv.fds[self->clone[i]], &ev));
	}
	fsrv_job_stat(&j, self->mnt, "ep-1", 1);
	EXPECT_EQ(1, epoll_wait(ep[1], got, 4, 5000));
	EXPECT_EQ(0, epoll_wait(ep[0], got, 4, 200));
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_job_wait(&j));
	for (i = 0; i < 2; i++)
		close(ep[i]);
}

/*
 * O_ASYNC is registered on the connection's shared queue, as on stock: a
 * request for a strict clone signals it, and may signal the others too.
 */
TEST_F(fire, o_async_signals_the_clone_that_has_work)
{
	struct timespec ts = { .tv_sec = 5 };
	struct fsrv_job j;
	siginfo_t si;
	sigset_t set;
	int i, fd;

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
	do {
		i = sigtimedwait(&set, &si, &ts);
	} while (i == SIGRTMIN + 2);
	ASSERT_EQ(SIGRTMIN + 1, i);
	EXPECT_EQ(self->srv.fds[self->clone[0]], si.si_fd);
	fsrv_start(&self->srv);
	EXPECT_EQ(0, fsrv_job_wait(&j));
	for (i = 0; i < 2; i++) {
		fd = self->srv.fds[self->clone[i]];
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_ASYNC);
	}
	/* Drop what the answer and the release may have raised */
	ts.tv_nsec = 0;
	while (sigtimedwait(&set, &si, &ts) > 0)
		;
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static bool ended(int err)
{
	return err == ECONNABORTED || err == ENOTCONN;
}

TEST_F(fire, umount_force_ends_requests_queued_on_every_clone)
{
	struct fsrv_job j[MAX_CPUS];
	int cpu, ret;

	/* Nobody reads: one request waits on each clone */
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		char name[32];

		snprintf(name, sizeof(name), "umf-%d", cpu);
		fsrv_job_stat(&j[cpu], self->mnt, name, cpu);
	}
	for (cpu = 0; cpu < self->ncpu; cpu++)
		ASSERT_TRUE(WAIT_FOR(fsrv_queued_on(&self->srv,
						    self->clone[cpu]) == 1));
	ret = umount2(self->mnt, MNT_FORCE);
	EXPECT_TRUE(ret == 0 || errno == EBUSY);
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		EXPECT_TRUE(WAIT_FOR(fsrv_job_done(&j[cpu])));
		EXPECT_TRUE(ended(fsrv_job_wait(&j[cpu])))
			TH_LOG("CPU %d: %s", cpu, strerror(j[cpu].err));
	}
}

/*
 * A daemon in a child process, nobody reading; the parent queues a request
 * on every clone and kills it.
 */
TEST(daemon_death_ends_requests_queued_on_every_clone)
{
	struct fsrv_job j[MAX_CPUS];
	struct fsrv view = {};
	char mnt[64];
	int pfd[2], msg[2], ncpu, cpu, status;
	pid_t pid;

	if (fsrv_bind_missing(0))
		SKIP(return, "%s", fsrv_bind_missing(0));
	snprintf(mnt, sizeof(mnt), "/tmp/death-%d", getpid());
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		static struct fsrv srv;
		int clone[MAX_CPUS];

		msg[0] = -1;
		msg[1] = 0;
		close(pfd[0]);
		if (!fsrv_mount(&srv, mnt)) {
			msg[1] = srv.conn;
			msg[0] = bind_every_cpu(&srv, clone);
		}
		if (write(pfd[1], msg, sizeof(msg)) != sizeof(msg))
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(sizeof(msg), read(pfd[0], msg, sizeof(msg)));
	ncpu = msg[0];
	view.conn = msg[1];
	ASSERT_GE(ncpu, 2);
	for (cpu = 0; cpu < ncpu; cpu++) {
		char name[32];

		snprintf(name, sizeof(name), "death-%d", cpu);
		fsrv_job_stat(&j[cpu], mnt, name, cpu);
	}
	/* The mount fd is device 0; the clones follow in CPU order */
	for (cpu = 0; cpu < ncpu; cpu++)
		ASSERT_TRUE(WAIT_FOR(fsrv_queued_on(&view, cpu + 1) == 1));
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
	UNS_BIND, UNS_GET_BIND, UNS_ROUTE, UNS_PIPE,
};

/*
 * An unprivileged user (uid 1000) in a new user and mount namespace
 * mounts a FUSE file system, clones fds and binds them; requests then go
 * to the bound clones.  The parent checks the binding in fusectl.
 */
TEST(unprivileged_user_namespace_binds_its_clones)
{
	char mnt[64], buf[4096], path[64];
	int pfd[2], gate[2], status, conn = 0, lines = 0;
	struct fsrv view = {};
	char *line, *save;
	pid_t pid;

	if (fsrv_bind_missing(0))
		SKIP(return, "%s", fsrv_bind_missing(0));
	snprintf(mnt, sizeof(mnt), "/tmp/userns-%d", getpid());
	ASSERT_EQ(0, mkdir(mnt, 0755));
	ASSERT_EQ(0, chown(mnt, 1000, 1000));
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(0, pipe(gate));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		static struct fsrv srv;
		struct fuse_dev_bind b;
		struct stat st;
		char path[128];
		int c[2], i = 0, fd_idx;

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
			if (ioctl(srv.fds[c[i]], FUSE_DEV_IOC_GET_BIND, &b) ||
			    b.flags != FUSE_DEV_BIND_CPU || b.cpu != i)
				_exit(UNS_GET_BIND);
		}
		fsrv_start(&srv);
		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "%s/uns-%d", mnt, i);
			if (pin_to_cpu(i) || stat(path, &st) ||
			    fsrv_find_name(&srv, path + strlen(mnt) + 1,
					   &fd_idx) != 1 || fd_idx != c[i])
				_exit(UNS_ROUTE);
		}
		if (write(pfd[1], &srv.conn, sizeof(int)) != sizeof(int))
			_exit(UNS_PIPE);
		/* Stay mounted until the parent has looked */
		if (read(gate[0], buf, 1) < 0)
			_exit(UNS_PIPE);
		fsrv_destroy(&srv);
		_exit(UNS_OK);
	}
	close(pfd[1]);
	close(gate[0]);
	/* The child has its namespace: map its uid and gid 1000 to 0 there */
	ASSERT_EQ(sizeof(conn), read(pfd[0], &conn, sizeof(conn)));
	snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
	EXPECT_EQ(0, write_file(path, "deny"));
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	EXPECT_EQ(0, write_file(path, "0 1000 1"));
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	EXPECT_EQ(0, write_file(path, "0 1000 1"));
	ASSERT_EQ(1, write(gate[1], "g", 1));
	if (read(pfd[0], &conn, sizeof(conn)) == sizeof(conn)) {
		/* The init namespace's fusectl shows the two bound clones */
		view.conn = conn;
		ASSERT_GT(fsrv_conn_file(&view, "dev_queues", buf,
					 sizeof(buf)), 0);
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			unsigned int id;
			char bind[8];

			if (sscanf(line, "%u %7s", &id, bind) == 2 &&
			    !strcmp(bind, "cpu"))
				lines++;
		}
		EXPECT_EQ(2, lines) TH_LOG("dev_queues:\n%s", buf);
	}
	close(gate[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(UNS_OK, WEXITSTATUS(status));
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

/* One connection's fds cannot reach another connection's queues */
TEST(connections_stay_apart)
{
	struct fuse_dev_bind bind = {
		.flags = FUSE_DEV_BIND_CPU, .cpu = 1, .node = -1,
	};
	static struct fsrv a, b;
	char before[4096], after[4096];
	uint32_t src;
	int fd, ca, cb;

	if (fsrv_bind_missing(0))
		SKIP(return, "%s", fsrv_bind_missing(0));

	ASSERT_EQ(0, fsrv_mount(&a, "/tmp/apart-a"));
	ASSERT_EQ(0, fsrv_mount(&b, "/tmp/apart-b"));
	ca = fsrv_clone(&a);
	cb = fsrv_clone(&b);
	ASSERT_EQ(0, fsrv_bind(&b, cb, FUSE_DEV_BIND_CPU, 1, -1));
	ASSERT_GT(fsrv_conn_file(&b, "dev_queues", before, sizeof(before)), 0);
	/* A clone of a cannot become a clone of b */
	src = b.fds[0];
	EXPECT_EQ(-1, ioctl(a.fds[ca], FUSE_DEV_IOC_CLONE, &src));
	EXPECT_EQ(EINVAL, errno);
	/* Binding and unbinding a's fds leaves b as it was */
	EXPECT_EQ(0, fsrv_bind(&a, ca, FUSE_DEV_BIND_CPU, 1, -1));
	EXPECT_EQ(0, fsrv_bind(&a, 0, FUSE_DEV_BIND_NODE, -1, 0));
	EXPECT_EQ(0, fsrv_bind(&a, ca, 0, -1, -1));
	ASSERT_GT(fsrv_conn_file(&b, "dev_queues", after, sizeof(after)), 0);
	EXPECT_STREQ(before, after);
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
