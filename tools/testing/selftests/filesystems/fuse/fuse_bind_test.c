// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE_DEV_IOC_BIND: its errors (and that a failed bind changes nothing),
 * where requests go when the readers of the bound clones are idle (the
 * CPU map, computed here from the machine's own topology by the rules of
 * Documentation/filesystems/fuse/fuse-clone-queues.rst), and what happens to a
 * request that waits on a clone's own queue when that clone is closed or
 * unbound, its caller is killed or interrupted, or the connection is
 * aborted; where a request goes when its clone's reader is busy after a
 * reply or gone, and a background request (readahead, async direct I/O)
 * when its CPU is busy; and that interrupts, forgets and resent requests
 * reach a reader.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/aio_abi.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "../../kselftest_harness.h"

#define MAX_LAYOUT	4
#define ROUNDS		3	/* requests from each CPU */

/* Wait up to 5 s for @cond */
#define WAIT_FOR(cond) FSRV_WAIT(cond, 5000)

static void on_signal(int sig)
{
}

static int bind_fd(int fd, uint32_t flags, int cpu, int node)
{
	struct fuse_dev_bind b = { .flags = flags, .cpu = cpu, .node = node };

	return ioctl(fd, FUSE_DEV_IOC_BIND, &b) ? -errno : 0;
}

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

/* stat() @name from @cpu, and wait for it: 0 or an errno */
static int stat_from(struct fsrv *srv, const char *name, int cpu)
{
	struct fsrv_job j;

	fsrv_job_stat(&j, srv->mnt, name, cpu);
	return fsrv_job_wait(&j);
}

/* ---------------------------------------------------------------- */

struct binding {
	uint32_t flags;
	int cpu;
	int node;
};

#define CPU(c)	{ FUSE_DEV_BIND_CPU, (c), -1 }
#define NODE(n)	{ FUSE_DEV_BIND_NODE, -1, (n) }

static int node_distance(int from, int to)
{
	char path[96];
	int d = 0, i;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/node/node%d/distance", from);
	f = fopen(path, "r");
	if (!f)
		return from == to ? 10 : 20;
	for (i = 0; i <= to && fscanf(f, "%d", &d) == 1; i++)
		;
	fclose(f);
	return d;
}

static int binding_node(const struct binding *b)
{
	return b->flags == FUSE_DEV_BIND_CPU ? cpu_node(b->cpu) : b->node;
}

/*
 * The clone (index into @l) the CPU map gives @cpu: the clone bound to it;
 * else the clones on the nearest node with any, in the order they were
 * bound, the node's other CPUs taking turns in CPU order.
 */
static int expected_clone(const struct binding *l, int n, int cpu)
{
	int i, c, node = cpu_node(cpu), best = INT_MAX, turn = 0;
	int cand[MAX_LAYOUT], ncand = 0;
	bool exact;

	for (i = 0; i < n; i++)
		if (l[i].flags == FUSE_DEV_BIND_CPU && l[i].cpu == cpu)
			return i;
	for (i = 0; i < n; i++)
		if (node_distance(node, binding_node(&l[i])) < best)
			best = node_distance(node, binding_node(&l[i]));
	for (i = 0; i < n; i++)
		if (node_distance(node, binding_node(&l[i])) == best)
			cand[ncand++] = i;
	for (c = 0; c < cpu; c++) {
		if (cpu_node(c) != node)
			continue;
		exact = false;
		for (i = 0; i < n; i++)
			exact |= l[i].flags == FUSE_DEV_BIND_CPU &&
				 l[i].cpu == c;
		turn += !exact;
	}
	return cand[turn % ncand];
}

FIXTURE(route) {
	struct fsrv srv;
	char mnt[64];
	const char *skip;	/* older harnesses run the test anyway */
};

FIXTURE_VARIANT(route) {
	int nr;
	struct binding layout[MAX_LAYOUT];
	int per_clone;
};

FIXTURE_VARIANT_ADD(route, per_cpu) {
	.nr = 4, .layout = { CPU(0), CPU(1), CPU(2), CPU(3) }, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(route, per_cpu_two_readers) {
	.nr = 4, .layout = { CPU(0), CPU(1), CPU(2), CPU(3) }, .per_clone = 2,
};

FIXTURE_VARIANT_ADD(route, per_node) {
	.nr = 2, .layout = { NODE(0), NODE(1) }, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(route, cpus_0_1) {
	.nr = 2, .layout = { CPU(0), CPU(1) }, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(route, cpu1_only) {
	.nr = 1, .layout = { CPU(1) }, .per_clone = 1,
};

FIXTURE_VARIANT_ADD(route, cpu0_and_node1) {
	.nr = 2, .layout = { CPU(0), NODE(1) }, .per_clone = 1,
};

/*
 * Mount, and bind a clone by each of the @nr bindings of @l, with
 * @per_clone readers on the bound CPU, or on the node's first CPU; the
 * mount fd is not read.  Returns why it cannot run here, or NULL.
 */
static const char *serve_layout(struct __test_metadata *_metadata,
				struct fsrv *srv, const char *mnt,
				const struct binding *l, int nr, int per_clone)
{
	static char why[64];
	int i, k, reader_cpu, ncpu = nr_cpus_online();

	if (fsrv_bind_missing())
		return fsrv_bind_missing();
	for (i = 0; i < nr; i++) {
		if ((l[i].flags == FUSE_DEV_BIND_CPU && l[i].cpu >= ncpu) ||
		    (l[i].flags == FUSE_DEV_BIND_NODE &&
		     cpu_node(ncpu - 1) < l[i].node)) {
			snprintf(why, sizeof(why), "needs CPU %d and node %d",
				 l[i].cpu, l[i].node);
			return why;
		}
	}
	if (fsrv_mount(srv, mnt))
		return "cannot mount";
	for (i = 0; i < nr; i++) {
		EXPECT_EQ(i + 1, fsrv_clone(srv));
		EXPECT_EQ(0, fsrv_bind(srv, i + 1, l[i].flags, l[i].cpu,
				       l[i].node));
		reader_cpu = l[i].cpu;
		for (k = 0; reader_cpu < 0 && k < ncpu; k++)
			if (cpu_node(k) == l[i].node)
				reader_cpu = k;
		for (k = 0; k < per_clone; k++)
			EXPECT_EQ(0, fsrv_start_reader(srv, i + 1, reader_cpu));
	}
	srv->reading[0] = true;
	EXPECT_EQ(0, fsrv_wait_readers(srv, srv->nthr, 10000));
	return NULL;
}

FIXTURE_SETUP(route)
{
	const char *why;

	snprintf(self->mnt, sizeof(self->mnt), "/tmp/route-%d", getpid());
	why = serve_layout(_metadata, &self->srv, self->mnt, variant->layout,
			   variant->nr, variant->per_clone);
	self->skip = why;
	if (why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(route)
{
	if (self->srv.nfds)
		fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

/*
 * One request at a time from each CPU, every reader asleep in read():
 * each request is read by the clone the map gives its CPU.
 */
TEST_F(route, idle_readers_read_what_their_cpus_issue)
{
	int cpu, r, fd_idx, want, ncpu = nr_cpus_online();
	char name[32];

	if (self->skip)
		SKIP(return, "%s", self->skip);
	for (cpu = 0; cpu < ncpu; cpu++) {
		want = expected_clone(variant->layout, variant->nr, cpu) + 1;
		for (r = 0; r < ROUNDS; r++) {
			ASSERT_EQ(0, fsrv_wait_idle(&self->srv, 5000));
			snprintf(name, sizeof(name), "cpu%d-%d", cpu, r);
			ASSERT_EQ(0, stat_from(&self->srv, name, cpu));
			ASSERT_EQ(1, fsrv_find_name(&self->srv, name, &fd_idx));
			EXPECT_EQ(want, fd_idx)
				TH_LOG("%s: read by clone %d, not %d", name,
				       fd_idx, want);
		}
	}
}

/* ---------------------------------------------------------------- */

FIXTURE(bind) {
	struct fsrv srv;
	char mnt[64];
	int a, b;	/* two clones */
};

FIXTURE_SETUP(bind)
{
	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	if (nr_cpus_online() < 2)
		SKIP(return, "needs 2 CPUs");
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/bind-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&self->srv, self->mnt));
	self->a = fsrv_clone(&self->srv);
	self->b = fsrv_clone(&self->srv);
	ASSERT_EQ(1, self->a);
	ASSERT_EQ(2, self->b);
}

FIXTURE_TEARDOWN(bind)
{
	if (self->srv.nfds)
		fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

TEST_F(bind, cpu_node_and_unbind)
{
	int fd = self->srv.fds[self->a];

	EXPECT_EQ(0, bind_fd(fd, FUSE_DEV_BIND_CPU, 1, -1));
	EXPECT_EQ(0, bind_fd(fd, FUSE_DEV_BIND_CPU, 1, -1));
	EXPECT_EQ(0, bind_fd(fd, FUSE_DEV_BIND_NODE, -1, cpu_node(1)));
	EXPECT_EQ(0, bind_fd(fd, 0, -1, -1));
	EXPECT_EQ(0, bind_fd(fd, 0, -1, -1));
	/* An fd never bound is unbound already */
	EXPECT_EQ(0, bind_fd(self->srv.fds[self->b], 0, -1, -1));
	/* The mount fd binds too */
	EXPECT_EQ(0, bind_fd(self->srv.fds[0], FUSE_DEV_BIND_CPU, 0, -1));
}

/* Every bad argument is EINVAL, and the binding stays as it was */
TEST_F(bind, bad_input_is_einval_and_changes_nothing)
{
	static const struct fuse_dev_bind bad[] = {
		{ .flags = FUSE_DEV_BIND_CPU, .cpu = 1, .node = -1,
		  .padding = 1 },
		{ .flags = 1 << 2, .cpu = 1, .node = -1 },
		{ .flags = 1u << 31, .cpu = -1, .node = -1 },
		{ .flags = FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_NODE, .cpu = 1,
		  .node = 0 },
		{ .flags = FUSE_DEV_BIND_CPU, .cpu = -1, .node = -1 },
		{ .flags = FUSE_DEV_BIND_CPU, .cpu = -2, .node = -1 },
		{ .flags = FUSE_DEV_BIND_CPU, .cpu = INT_MAX, .node = -1 },
		{ .flags = FUSE_DEV_BIND_CPU, .cpu = 1, .node = 0 },
		{ .flags = FUSE_DEV_BIND_NODE, .cpu = -1, .node = -1 },
		{ .flags = FUSE_DEV_BIND_NODE, .cpu = -1, .node = INT_MAX },
		{ .flags = FUSE_DEV_BIND_NODE, .cpu = 0, .node = 0 },
		{ .flags = 0, .cpu = 0, .node = -1 },
		{ .flags = 0, .cpu = -1, .node = 0 },
	};
	int fd = self->srv.fds[self->a], fd_idx;
	unsigned int i;
	char name[32];

	ASSERT_EQ(0, bind_fd(fd, FUSE_DEV_BIND_CPU, 1, -1));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-1, ioctl(fd, FUSE_DEV_IOC_BIND, &bad[i]))
			TH_LOG("case %u", i);
		EXPECT_EQ(EINVAL, errno) TH_LOG("case %u", i);
	}
	/* Still bound to CPU 1: its idle reader reads what CPU 1 issues */
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, self->a, 1));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, self->b, 0));
	self->srv.reading[0] = true;
	ASSERT_EQ(0, fsrv_wait_readers(&self->srv, 2, 10000));
	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, fsrv_wait_idle(&self->srv, 5000));
		snprintf(name, sizeof(name), "after-%u", i);
		ASSERT_EQ(0, stat_from(&self->srv, name, 1));
		ASSERT_EQ(1, fsrv_find_name(&self->srv, name, &fd_idx));
		EXPECT_EQ(self->a, fd_idx);
	}
}

TEST_F(bind, bad_pointer_is_efault)
{
	EXPECT_EQ(-1, ioctl(self->srv.fds[self->a], FUSE_DEV_IOC_BIND,
			    (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

/* A CPU has one clone: a second one is EBUSY until the first lets go */
TEST_F(bind, second_clone_on_a_cpu_is_ebusy)
{
	int a = self->srv.fds[self->a], b = self->srv.fds[self->b];

	ASSERT_EQ(0, bind_fd(a, FUSE_DEV_BIND_CPU, 1, -1));
	EXPECT_EQ(-EBUSY, bind_fd(b, FUSE_DEV_BIND_CPU, 1, -1));
	/* Nodes take any number */
	EXPECT_EQ(0, bind_fd(b, FUSE_DEV_BIND_NODE, -1, cpu_node(1)));
	EXPECT_EQ(0, bind_fd(a, FUSE_DEV_BIND_NODE, -1, cpu_node(1)));
	EXPECT_EQ(0, bind_fd(b, FUSE_DEV_BIND_CPU, 1, -1));
	EXPECT_EQ(-EBUSY, bind_fd(a, FUSE_DEV_BIND_CPU, 1, -1));
	/* Closing the clone frees its CPU */
	close(self->srv.fds[self->b]);
	self->srv.fds[self->b] = -1;
	EXPECT_EQ(0, bind_fd(a, FUSE_DEV_BIND_CPU, 1, -1));
}

TEST_F(bind, fd_without_connection_is_eperm)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EPERM, bind_fd(fd, FUSE_DEV_BIND_CPU, 0, -1));
	EXPECT_EQ(-EPERM, bind_fd(fd, 0, -1, -1));
	close(fd);
}

TEST_F(bind, aborted_connection_is_enotconn)
{
	ASSERT_EQ(0, fsrv_conn_write(&self->srv, "abort", "1"));
	EXPECT_EQ(-ENOTCONN, bind_fd(self->srv.fds[self->a],
				     FUSE_DEV_BIND_CPU, 0, -1));
	/* Unbinding still works */
	EXPECT_EQ(0, bind_fd(self->srv.fds[self->a], 0, -1, -1));
}

/* A possible CPU binds while offline, and its clone serves once online */
TEST_F(bind, offline_cpu_binds)
{
	int cpu = nr_cpus_online() - 1, fd_idx;
	char path[96];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	if (cpu == 0 || fsrv_write_file(path, "0"))
		SKIP(return, "cannot take CPU %d offline", cpu);
	EXPECT_EQ(0, bind_fd(self->srv.fds[self->a], FUSE_DEV_BIND_CPU, cpu,
			     -1));
	ASSERT_EQ(0, fsrv_write_file(path, "1"));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, self->a, cpu));
	ASSERT_EQ(0, fsrv_start_reader(&self->srv, self->b, 0));
	self->srv.reading[0] = true;
	ASSERT_EQ(0, fsrv_wait_readers(&self->srv, 2, 10000));
	ASSERT_EQ(0, fsrv_wait_idle(&self->srv, 5000));
	ASSERT_EQ(0, stat_from(&self->srv, "back-online", cpu));
	ASSERT_EQ(1, fsrv_find_name(&self->srv, "back-online", &fd_idx));
	EXPECT_EQ(self->a, fd_idx);
}

/* ---------------------------------------------------------------- */

/*
 * A request waits on its clone's queue, and the wakeup it makes stops at
 * the first reader it reaches: an EPOLLEXCLUSIVE poller of that clone
 * that does not read after its wakeup leaves it there.  What then becomes
 * of it?  Clone d is bound to CPU 1; the mount fd has a blocking reader,
 * asleep, which no wakeup reaches while d's poller takes it.
 */
/* Clone d, bound to CPU 1 and read by nobody; the mount fd's reader on CPU 0 */
static void queue_start(struct __test_metadata *_metadata, struct fsrv *srv,
			int *d)
{
	*d = fsrv_clone(srv);
	ASSERT_EQ(1, *d);
	ASSERT_EQ(0, fsrv_bind(srv, *d, FUSE_DEV_BIND_CPU, 1, -1));
	ASSERT_EQ(0, fsrv_start_reader(srv, 0, 0));
	srv->reading[*d] = true;
	ASSERT_EQ(0, fsrv_wait_readers(srv, 1, 10000));
}

FIXTURE(queue) {
	struct fsrv srv;
	char mnt[64];
	int d, ep;
};

FIXTURE_SETUP(queue)
{
	struct sigaction sa = { .sa_handler = on_signal };

	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
	if (nr_cpus_online() < 2)
		SKIP(return, "needs 2 CPUs");
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART */
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/queue-%d", getpid());
	ASSERT_EQ(0, fsrv_mount(&self->srv, self->mnt));
	queue_start(_metadata, &self->srv, &self->d);
	self->ep = -1;
}

FIXTURE_TEARDOWN(queue)
{
	if (self->ep >= 0)
		close(self->ep);
	if (self->srv.nfds)
		fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

/* A thread asleep in epoll_wait() on an EPOLLEXCLUSIVE set */
struct poller {
	pthread_t thr;
	pid_t tid;
	int ep, n;
};

static void *poller_wait(void *p)
{
	struct poller *w = p;
	struct epoll_event ev;

	__atomic_store_n(&w->tid, gettid(), __ATOMIC_RELEASE);
	w->n = epoll_wait(w->ep, &ev, 1, 5000);
	return NULL;
}

/* Arm a poller of d's fd, and wait until it sleeps in epoll_wait() */
static void poller_arm(struct __test_metadata *_metadata, struct poller *w,
		       int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE };

	w->ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_EQ(0, epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev));
	w->tid = 0;
	ASSERT_EQ(0, pthread_create(&w->thr, NULL, poller_wait, w));
	ASSERT_TRUE(WAIT_FOR(__atomic_load_n(&w->tid, __ATOMIC_ACQUIRE)));
	ASSERT_EQ(0, fsrv_wait_asleep(w->tid, 5000));
}

/*
 * Arm an EPOLLEXCLUSIVE poller on d, start @j's stat() of @name on CPU 1,
 * and wait for the poller's wakeup: the request then waits on d's queue.
 */
static void stage(struct __test_metadata *_metadata, struct fsrv *srv,
		  int d, int *ep, struct fsrv_job *j, const char *name)
{
	struct pollfd pfd = { .fd = srv->fds[d], .events = POLLIN };
	struct poller w;

	poller_arm(_metadata, &w, pfd.fd);
	*ep = w.ep;
	fsrv_job_stat(j, srv->mnt, name, 1);
	pthread_join(w.thr, NULL);
	ASSERT_EQ(1, w.n);
	/* On d, and not on the shared queue, which the mount fd reads */
	usleep(100000);
	ASSERT_EQ(0, fsrv_find_name(srv, name, NULL));
	ASSERT_EQ(1, poll(&pfd, 1, 0));
}

/* Read and answer one request from d, without blocking: its opcode */
static int serve_one(struct fsrv *srv, int idx)
{
	char buf[FSRV_BUFSIZE];
	struct fuse_in_header *in = (void *)buf;
	ssize_t n = read(srv->fds[idx], buf, sizeof(buf));

	if (n < (ssize_t)sizeof(*in))
		return n < 0 ? -errno : -EIO;
	fsrv_handle(srv, idx, in, in + 1);
	return in->opcode;
}

TEST_F(queue, close_moves_it_to_the_shared_queue)
{
	struct fsrv_job j;
	int fd_idx;

	stage(_metadata, &self->srv, self->d, &self->ep, &j, "closed");
	close(self->srv.fds[self->d]);
	self->srv.fds[self->d] = -1;
	EXPECT_EQ(0, fsrv_job_wait(&j));
	ASSERT_EQ(1, fsrv_find_name(&self->srv, "closed", &fd_idx));
	EXPECT_EQ(0, fd_idx);
}

/* Unbound, d hands it to the shared queue, where the mount fd reads it */
TEST_F(queue, unbind_moves_it_to_the_shared_queue)
{
	struct fsrv_job j;
	int fd_idx;

	stage(_metadata, &self->srv, self->d, &self->ep, &j, "unbound");
	ASSERT_EQ(0, bind_fd(self->srv.fds[self->d], 0, -1, -1));
	EXPECT_EQ(0, fsrv_job_wait(&j));
	ASSERT_EQ(1, fsrv_find_name(&self->srv, "unbound", &fd_idx));
	EXPECT_EQ(0, fd_idx);
}

/* A caller killed while its request waits there takes it off */
TEST_F(queue, killed_caller_takes_it_off)
{
	char path[96], buf[8];
	struct poller w;
	struct stat st;
	int status;
	pid_t pid;

	poller_arm(_metadata, &w, self->srv.fds[self->d]);
	self->ep = w.ep;
	snprintf(path, sizeof(path), "%s/killed", self->mnt);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		pin_to_cpu(1);
		_exit(stat(path, &st) ? errno : 0);
	}
	pthread_join(w.thr, NULL);
	ASSERT_EQ(1, w.n);
	usleep(100000);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(0, fsrv_wait_child(&self->srv, pid, 5000, &status));
	EXPECT_TRUE(WIFSIGNALED(status));
	fcntl(self->srv.fds[self->d], F_SETFL, O_NONBLOCK);
	EXPECT_EQ(-EAGAIN, serve_one(&self->srv, self->d));
	ASSERT_GT(fsrv_conn_file(&self->srv, "waiting", buf, sizeof(buf)), 0);
	EXPECT_EQ(0, atoi(buf));
	EXPECT_EQ(0, fsrv_find_name(&self->srv, "killed", NULL));
}

TEST_F(queue, abort_ends_it)
{
	struct fsrv_job j;

	stage(_metadata, &self->srv, self->d, &self->ep, &j, "aborted");
	ASSERT_EQ(0, fsrv_conn_write(&self->srv, "abort", "1"));
	EXPECT_EQ(ECONNABORTED, fsrv_job_wait(&j));
}

/*
 * Request timeouts (FUSE_REQUEST_TIMEOUT, Linux 6.14): a request held on
 * d's queue as above is found by the timeout check as one on the shared
 * queue would be, and the connection is aborted.  The check runs every
 * 15 s, and takes at least 15 s as the timeout.
 */
FIXTURE(timeout) {
	struct fsrv srv;
	char mnt[64];
	int d, ep;
	const char *skip;
};

/*
 * The setup skips through self->skip, never SKIP(): 6.1's harness runs
 * the test after a skip in the setup, later ones skip the teardown.
 */
FIXTURE_SETUP(timeout)
{
	struct fsrv_opts opts = { .request_timeout = 1 };

	self->ep = -1;
	self->skip = fsrv_bind_missing();
	if (!self->skip && nr_cpus_online() < 2)
		self->skip = "needs 2 CPUs";
	if (self->skip)
		return;
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/timeout-%d", getpid());
	ASSERT_EQ(0, fsrv_mount_opts(&self->srv, self->mnt, &opts));
	if (!self->srv.timeouts) {
		self->skip = "no request timeouts (FUSE_REQUEST_TIMEOUT, Linux 6.14)";
		return;
	}
	queue_start(_metadata, &self->srv, &self->d);
}

FIXTURE_TEARDOWN(timeout)
{
	if (self->ep >= 0)
		close(self->ep);
	if (self->srv.nfds)
		fsrv_destroy(&self->srv);
	if (self->mnt[0])
		rmdir(self->mnt);
}

TEST_F_TIMEOUT(timeout, request_on_a_device_queue_times_out, 120)
{
	struct fsrv_job j;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	stage(_metadata, &self->srv, self->d, &self->ep, &j, "late");
	EXPECT_EQ(ECONNABORTED, fsrv_job_wait(&j));
}

/*
 * Its caller is interrupted while it waits: no interrupt is sent for a
 * request that nobody read; once d reads it, the interrupt follows, on the
 * shared queue, where the mount fd's reader reads it.
 */
TEST_F(queue, interrupt_follows_once_it_is_read)
{
	struct fsrv_job j;
	char buf[FSRV_BUFSIZE];
	struct fuse_in_header *in = (void *)buf;

	stage(_metadata, &self->srv, self->d, &self->ep, &j, "interrupted");
	ASSERT_TRUE(WAIT_FOR(__atomic_load_n(&j.tid, __ATOMIC_ACQUIRE) != 0));
	ASSERT_EQ(0, pthread_kill(j.thr, SIGUSR1));
	usleep(100000);
	EXPECT_EQ(0, count_op(&self->srv, FUSE_INTERRUPT, -1));
	fcntl(self->srv.fds[self->d], F_SETFL, O_NONBLOCK);
	ASSERT_GT(read(self->srv.fds[self->d], buf, sizeof(buf)),
		  (ssize_t)sizeof(*in));
	ASSERT_EQ(FUSE_LOOKUP, in->opcode);
	EXPECT_TRUE(WAIT_FOR(count_op(&self->srv, FUSE_INTERRUPT, 0) == 1));
	EXPECT_EQ(0, fsrv_reply(self->srv.fds[self->d], in->unique, -EINTR,
				NULL, 0));
	EXPECT_EQ(EINTR, fsrv_job_wait(&j));
}

/*
 * An epoll set armed before the bind waits on the shared queue alone
 * (epoll does not register again): its requests are served from there.
 */
TEST_F(queue, epoll_armed_before_the_bind_is_served)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE };
	int e = fsrv_clone(&self->srv), cpu = nr_cpus_online() - 1;
	struct fsrv_job j;

	ASSERT_LT(0, e);
	self->ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD, self->srv.fds[e],
			       &ev));
	ASSERT_EQ(0, fsrv_bind(&self->srv, e, FUSE_DEV_BIND_CPU, cpu, -1));
	fsrv_job_stat(&j, self->mnt, "armed-before", cpu);
	EXPECT_EQ(0, fsrv_job_wait(&j));
	EXPECT_EQ(1, fsrv_find_name(&self->srv, "armed-before", NULL));
}

/* ---------------------------------------------------------------- */

/*
 * A request whose clone has no idle reader goes to an idle reader of its
 * node, and to another node's only when its own has none.  A clone bound
 * to each CPU: one reader pinned to CPU 0's, two to each other CPU's, so
 * that CPU 0's node has an idle reader for a caller that waits for each
 * answer.  CPU 0's reader answers "near-hold" and then stays busy until
 * the test lets it go, as a handler that blocks or lingers after its reply
 * does: it sleeps, it spins, or its thread exits.
 */
#define NEAR_N		100	/* stat() calls in a row from CPU 0 */
#define NEST_LOAD	8	/* callers on each other CPU */

enum linger { LINGER_SLEEP, LINGER_SPIN, LINGER_EXIT };

FIXTURE(nearest) {
	struct fsrv srv;
	char mnt[64];
	const char *skip;
};

FIXTURE_VARIANT(nearest) {
	enum linger linger;
};

FIXTURE_VARIANT_ADD(nearest, sleeping) { .linger = LINGER_SLEEP };
FIXTURE_VARIANT_ADD(nearest, spinning) { .linger = LINGER_SPIN };
FIXTURE_VARIANT_ADD(nearest, exiting) { .linger = LINGER_EXIT };

static enum linger linger;
static bool lingering;

static bool nest_go;

/*
 * The handler of "near-nest" stats "near-inner" first, as a stacked file
 * system would, once the test says go
 */
static bool nest_hook(struct fsrv *srv, const struct fuse_in_header *in,
		      const void *arg)
{
	char path[160];
	struct stat st;

	while (!__atomic_load_n(&nest_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	snprintf(path, sizeof(path), "%s/near-inner", srv->mnt);
	if (stat(path, &st))
		fsrv_reply(srv->fds[1], in->unique, -errno, NULL, 0);
	return false;
}

static bool linger_hook(struct fsrv *srv, int idx,
			const struct fuse_in_header *in, const void *arg)
{
	if (in->opcode == FUSE_LOOKUP && !strcmp(arg, "near-nest"))
		return nest_hook(srv, in, arg);
	/* The load's handlers take their time, as a backend's I/O does */
	if (in->opcode == FUSE_LOOKUP && !strncmp(arg, "load-", 5))
		usleep(2000);
	if (in->opcode != FUSE_LOOKUP || strcmp(arg, "near-hold"))
		return false;
	fsrv_handle(srv, idx, in, arg);
	if (linger == LINGER_EXIT)
		pthread_exit(NULL);
	while (__atomic_load_n(&lingering, __ATOMIC_ACQUIRE))
		if (linger == LINGER_SLEEP)
			usleep(1000);
	return true;
}

FIXTURE_SETUP(nearest)
{
	/* Async direct I/O sends each read as a background request */
	struct fsrv_opts opts = { .init_flags = FUSE_ASYNC_DIO };
	int ncpu = nr_cpus_online(), cpu, idx;

	self->skip = fsrv_bind_missing();
	if (!self->skip && (ncpu < 3 || ncpu + 1 > FSRV_MAX_FDS ||
			    cpu_node(1) != cpu_node(0)))
		self->skip = "needs CPUs 0 and 1 on one node, and a third CPU";
	if (self->skip)
		SKIP(return, "%s", self->skip);
	linger = variant->linger;
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/nearest-%d", getpid());
	ASSERT_EQ(0, fsrv_mount_opts(&self->srv, self->mnt, &opts));
	self->srv.hook = linger_hook;
	for (cpu = 0; cpu < ncpu; cpu++) {
		idx = fsrv_clone(&self->srv);
		ASSERT_EQ(cpu + 1, idx);
		ASSERT_EQ(0, fsrv_bind(&self->srv, idx, FUSE_DEV_BIND_CPU,
				       cpu, -1));
		ASSERT_EQ(0, fsrv_start_reader(&self->srv, idx, cpu));
		if (cpu)
			ASSERT_EQ(0, fsrv_start_reader(&self->srv, idx, cpu));
	}
	self->srv.reading[0] = true;	/* the mount fd is not read */
	ASSERT_EQ(0, fsrv_wait_readers(&self->srv, self->srv.nthr, 10000));
}

FIXTURE_TEARDOWN(nearest)
{
	__atomic_store_n(&lingering, false, __ATOMIC_RELEASE);
	if (self->srv.nfds)
		fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

/*
 * With CPU 0's reader busy, NEAR_N stat() calls in a row from CPU 0 are
 * all answered before it is let go, at least 99 % of them on CPU 0's
 * node, and none by that reader.
 */
TEST_F_TIMEOUT(nearest, busy_reader_hands_on_within_the_node, 120)
{
	int i, fd_idx = -1, on_node = 0, by_held = 0, all = 0;
	char path[96];
	struct stat st;
	size_t k;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	/* Every reader asleep: the CPU's own takes its request */
	ASSERT_EQ(0, fsrv_wait_idle(&self->srv, 10000));
	__atomic_store_n(&lingering, true, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pin_to_cpu(0));
	snprintf(path, sizeof(path), "%s/near-hold", self->mnt);
	ASSERT_EQ(0, stat(path, &st));
	ASSERT_EQ(1, fsrv_find_name(&self->srv, "near-hold", &fd_idx));
	ASSERT_EQ(1, fd_idx);
	for (i = 0; i < NEAR_N; i++) {
		snprintf(path, sizeof(path), "%s/near-%d", self->mnt, i);
		ASSERT_EQ(0, stat(path, &st));
	}
	__atomic_store_n(&lingering, false, __ATOMIC_RELEASE);
	pthread_mutex_lock(&self->srv.lock);
	for (k = 0; k < self->srv.nlog; k++) {
		const struct fsrv_rec *r = &self->srv.log[k];

		if (r->opcode != FUSE_LOOKUP || strncmp(r->name, "near-", 5) ||
		    !strcmp(r->name, "near-hold"))
			continue;
		all++;
		on_node += cpu_node(r->cpu) == cpu_node(0);
		by_held += r->fd_idx == 1;
	}
	pthread_mutex_unlock(&self->srv.lock);
	TH_LOG("%d of %d read on CPU 0's node, %d by CPU 0's busy reader",
	       on_node, all, by_held);
	EXPECT_EQ(NEAR_N, all);
	EXPECT_GE(on_node * 100, all * 99);
	EXPECT_EQ(0, by_held);
}

/* Callers that keep a CPU's readers busy, 2 ms a request, until told to stop */
struct load {
	pthread_t thr;
	char mnt[64];
	int cpu;
	bool *stop;
};

static void *load_run(void *p)
{
	struct load *l = p;
	char path[96];
	struct stat st;
	int i;

	pin_to_cpu(l->cpu);
	for (i = 0; !__atomic_load_n(l->stop, __ATOMIC_ACQUIRE); i++) {
		snprintf(path, sizeof(path), "%s/load-%d-%d", l->mnt, l->cpu,
			 i % 64);
		stat(path, &st);
	}
	return NULL;
}

/*
 * CPU 0's reader handles a request by making one more to the same mount,
 * from CPU 0, and waits for it; every other CPU's readers have requests
 * of their own CPU waiting all the while.  The nested request must not
 * wait for the load to end: stock serves it in its turn.
 */
TEST_F_TIMEOUT(nearest, nested_request_is_served_under_load, 120)
{
	int ncpu = nr_cpus_online(), cpu, i, n = 0, fd_idx = -1;
	struct load *l = calloc(ncpu * NEST_LOAD, sizeof(*l));
	bool stop = false, served;
	struct fsrv_job j;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	ASSERT_NE(NULL, l);
	/* Every reader asleep: CPU 0's own takes it, and holds it */
	ASSERT_EQ(0, fsrv_wait_idle(&self->srv, 10000));
	fsrv_job_stat(&j, self->mnt, "near-nest", 0);
	ASSERT_TRUE(FSRV_WAIT(fsrv_find_name(&self->srv, "near-nest",
					     &fd_idx) == 1, 10000));
	ASSERT_EQ(1, fd_idx);
	for (cpu = 1; cpu < ncpu; cpu++) {
		for (i = 0; i < NEST_LOAD; i++, n++) {
			snprintf(l[n].mnt, sizeof(l[n].mnt), "%s", self->mnt);
			l[n].cpu = cpu;
			l[n].stop = &stop;
			ASSERT_EQ(0, pthread_create(&l[n].thr, NULL, load_run,
						    &l[n]));
		}
	}
	usleep(300000);
	__atomic_store_n(&nest_go, true, __ATOMIC_RELEASE);
	served = FSRV_WAIT(fsrv_job_done(&j), 10000);
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		pthread_join(l[i].thr, NULL);
	free(l);
	EXPECT_TRUE(served);
	EXPECT_EQ(0, fsrv_job_wait(&j));
	EXPECT_EQ(1, fsrv_find_name(&self->srv, "near-inner", NULL));
}

/* The READs in the log, and in *@on_cpu those read on @cpu */
static int count_reads(struct fsrv *srv, int cpu, int *on_cpu)
{
	int reads = 0;
	size_t i;

	*on_cpu = 0;
	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++) {
		if (srv->log[i].opcode != FUSE_READ)
			continue;
		reads++;
		*on_cpu += srv->log[i].cpu == cpu;
	}
	pthread_mutex_unlock(&srv->lock);
	return reads;
}

/*
 * A consumer pinned to CPU 1 reads files sequentially through the page
 * cache and computes on each chunk: readahead's background READs must not
 * wait for CPU 1's readers, which can run only when the consumer yields.
 * At most half of them are read on CPU 1.
 */
TEST_F_TIMEOUT(nearest, background_reads_skip_the_issuing_cpu, 120)
{
	char path[96], buf[16384];
	int f, fd, reads = 0, on_cpu1 = 0;
	double spin;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, pin_to_cpu(1));
	for (f = 0; f < 4; f++) {
		snprintf(path, sizeof(path), "%s/big-ra%d", self->mnt, f);
		fd = open(path, O_RDONLY);
		ASSERT_LE(0, fd);
		while (read(fd, buf, sizeof(buf)) > 0)
			for (spin = fsrv_now_ms() + 0.3; fsrv_now_ms() < spin;)
				;
		close(fd);
	}
	reads = count_reads(&self->srv, 1, &on_cpu1);
	TH_LOG("%d of %d READs read on CPU 1", on_cpu1, reads);
	EXPECT_LT(0, reads);
	EXPECT_LE(on_cpu1 * 2, reads);
}

#define AIO_DEPTH	8	/* reads in flight */
#define AIO_ROUNDS	8

/*
 * An I/O engine on CPU 1 sends @depth direct reads of @mnt's aio-file at
 * a time with io_submit(), AIO_DEPTH * AIO_ROUNDS in all, and waits for
 * their completion in io_getevents() (@wait) or polls without yielding.
 * All are served, right, within the watchdog; the READs read on CPU 1 go
 * to *@on_cpu1.
 */
/* Why the AIO tests cannot run: the fixture's @skip, or no Linux AIO */
static const char *aio_skip(const char *skip)
{
	aio_context_t ctx = 0;

	if (skip)
		return skip;
	if (syscall(SYS_io_setup, 1, &ctx))
		return "no Linux AIO here";
	syscall(SYS_io_destroy, ctx);
	return NULL;
}

static int aio_engine(struct __test_metadata *_metadata, struct fsrv *srv,
		      const char *mnt, int depth, bool wait, int *on_cpu1)
{
	struct iocb cb[AIO_DEPTH], *cbp[AIO_DEPTH];
	struct io_event ev[AIO_DEPTH];
	struct timespec zero = { 0 };
	int fd, i, k, n, done, round, reads;
	aio_context_t ctx = 0;
	char path[96], *buf;
	double end;
	size_t j;

	ASSERT_EQ(0, pin_to_cpu(1));
	ASSERT_EQ(0, syscall(SYS_io_setup, AIO_DEPTH, &ctx));
	buf = aligned_alloc(4096, AIO_DEPTH * 4096);
	ASSERT_NE(NULL, buf);
	memset(buf, 0, AIO_DEPTH * 4096);
	snprintf(path, sizeof(path), "%s/aio-file", mnt);
	fd = open(path, O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	for (round = 0; round < AIO_ROUNDS * AIO_DEPTH / depth; round++) {
		for (i = 0; i < depth; i++) {
			memset(&cb[i], 0, sizeof(cb[i]));
			cb[i].aio_fildes = fd;
			cb[i].aio_lio_opcode = IOCB_CMD_PREAD;
			cb[i].aio_buf = (uintptr_t)(buf + i * 4096);
			cb[i].aio_nbytes = 4096;
			cbp[i] = &cb[i];
		}
		ASSERT_EQ(depth, syscall(SYS_io_submit, ctx, depth, cbp));
		end = fsrv_now_ms() + 30000;
		for (done = 0; done < depth && fsrv_now_ms() < end;) {
			n = syscall(SYS_io_getevents, ctx, wait, depth - done,
				    ev, wait ? NULL : &zero);
			ASSERT_LE(0, n);
			for (k = 0; k < n; k++)
				EXPECT_EQ(4096, ev[k].res);
			done += n;
		}
		ASSERT_EQ(depth, done);
		for (j = 0; j < depth * 4096; j++)
			ASSERT_EQ((char)('a' + j % 4096 % 26), buf[j]);
		memset(buf, 0, AIO_DEPTH * 4096);
	}
	syscall(SYS_io_destroy, ctx);
	close(fd);
	free(buf);
	reads = count_reads(srv, 1, on_cpu1);
	TH_LOG("%d of %d READs read on CPU 1", *on_cpu1, reads);
	EXPECT_EQ(AIO_DEPTH * AIO_ROUNDS, reads);
	return reads;
}

/*
 * Each of those reads is routed as a synchronous request, to CPU 1's
 * readers first: the engine is preempted by the reader it wakes.
 */
TEST_F_TIMEOUT(nearest, async_direct_reads_of_a_polling_engine_are_served,
	       120)
{
	const char *skip = aio_skip(self->skip);
	int on_cpu1;

	if (skip)
		SKIP(return, "%s", skip);
	aio_engine(_metadata, &self->srv, self->mnt, AIO_DEPTH, false,
		   &on_cpu1);
}

/* One read at a time, waited for: CPU 1's readers, one asleep, read it */
TEST_F_TIMEOUT(nearest, async_direct_reads_of_a_waiting_engine_stay_on_its_cpu,
	       120)
{
	const char *skip = aio_skip(self->skip);
	int reads, on_cpu1;

	if (skip)
		SKIP(return, "%s", skip);
	reads = aio_engine(_metadata, &self->srv, self->mnt, 1, true, &on_cpu1);
	EXPECT_LE(reads * 3, on_cpu1 * 4);
}

/*
 * A real-time engine, one read at a time, is not preempted by CPU 1's
 * readers: its reads wake them last, and at most half are read there.
 */
TEST_F_TIMEOUT(nearest, async_direct_reads_of_a_realtime_engine_skip_its_cpu,
	       120)
{
	struct sched_param rt = { .sched_priority = 1 }, other = { 0 };
	const char *skip = aio_skip(self->skip);
	int reads, on_cpu1;

	if (skip)
		SKIP(return, "%s", skip);
	if (sched_setscheduler(0, SCHED_FIFO, &rt))
		SKIP(return, "no SCHED_FIFO here (%s)", strerror(errno));
	reads = aio_engine(_metadata, &self->srv, self->mnt, 1, false, &on_cpu1);
	sched_setscheduler(0, SCHED_OTHER, &other);
	EXPECT_LE(on_cpu1 * 2, reads);
}

#define WAITED_READS	32

/*
 * Direct pread()s from CPU 1 of a file opened without FOPEN_DIRECT_IO:
 * async direct I/O sends each as a background request, but its issuer
 * waits for it at once, so CPU 1's readers, two of them and one always
 * asleep, read it first.
 */
TEST_F_TIMEOUT(nearest, waited_direct_reads_stay_on_the_issuing_cpu, 120)
{
	int fd, i, reads, on_cpu1;
	char path[96], *buf;
	size_t j;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	buf = aligned_alloc(4096, 4096);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, pin_to_cpu(1));
	snprintf(path, sizeof(path), "%s/big-waited", self->mnt);
	fd = open(path, O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	for (i = 0; i < WAITED_READS; i++) {
		ASSERT_EQ(4096, pread(fd, buf, 4096, i * 4096));
		for (j = 0; j < 4096; j++)
			ASSERT_EQ((char)('a' + (i * 4096 + j) % 26), buf[j]);
	}
	close(fd);
	free(buf);
	reads = count_reads(&self->srv, 1, &on_cpu1);
	TH_LOG("%d of %d READs read on CPU 1", on_cpu1, reads);
	EXPECT_EQ(WAITED_READS, reads);
	EXPECT_LE(reads * 3, on_cpu1 * 4);
}

/*
 * One clone, bound to CPU 1, with one reader, and nothing else reading:
 * readahead from CPU 1, background requests that wake the readers of
 * their CPU's clone last, is still served, by that reader.
 */
TEST(lone_clone_serves_its_cpus_background_requests)
{
	static const struct binding l[] = { CPU(1) };
	char mnt[64], path[96], buf[16384];
	struct fsrv srv;
	const char *why;
	ssize_t n, total = 0;
	int fd;

	snprintf(mnt, sizeof(mnt), "/tmp/lone-%d", getpid());
	why = serve_layout(_metadata, &srv, mnt, l, 1, 1);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, pin_to_cpu(1));
	snprintf(path, sizeof(path), "%s/big-lone", mnt);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	EXPECT_EQ(1024 * 1024, total);
	EXPECT_LT(0, count_op(&srv, FUSE_READ, 1));
	fsrv_destroy(&srv);
	rmdir(mnt);
}

/*
 * A request whose clone's reader sleeps is left to that reader: another
 * reader looks at a device's queue only where its node's hint says that
 * work was left to others.  Clones bound to CPUs 0 and 1 of one node; CPU
 * 1's clone is read by a thread that spins on non-blocking reads and
 * never sleeps.  NEAR_N stat() calls from CPU 0, each once CPU 0's reader
 * sleeps, are all read by that reader, none by the spinner.
 */
struct spinner {
	struct fsrv *srv;
	int lookups;		/* "left-" LOOKUPs it read */
	bool stop;
};

static void *spinner_run(void *p)
{
	struct spinner *sp = p;
	struct fsrv *srv = sp->srv;
	struct fuse_in_header *in;
	char *buf = malloc(FSRV_BUFSIZE);
	ssize_t n;

	pin_to_cpu(1);
	while (buf && !__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
		n = read(srv->fds[2], buf, FSRV_BUFSIZE);
		if (n < (ssize_t)sizeof(*in))
			continue;
		in = (void *)buf;
		if (in->opcode == FUSE_LOOKUP && !strncmp((char *)(in + 1),
							  "left-", 5))
			sp->lookups++;
		fsrv_handle(srv, 2, in, in + 1);
	}
	free(buf);
	return NULL;
}

TEST(other_readers_leave_a_woken_readers_request)
{
	static const struct binding l[] = { CPU(0) };
	struct spinner sp = { 0 };
	int i, by_own = 0;
	char mnt[64], path[96];
	struct fsrv srv;
	pthread_t thr;
	struct stat st;
	const char *why;
	size_t k;

	if (nr_cpus_online() < 2 || cpu_node(0) != cpu_node(1))
		SKIP(return, "needs CPUs 0 and 1 on one node");
	snprintf(mnt, sizeof(mnt), "/tmp/left-%d", getpid());
	why = serve_layout(_metadata, &srv, mnt, l, 1, 1);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(2, fsrv_clone(&srv));
	ASSERT_EQ(0, fsrv_bind(&srv, 2, FUSE_DEV_BIND_CPU, 1, -1));
	fcntl(srv.fds[2], F_SETFL, O_NONBLOCK);
	srv.reading[2] = true;
	sp.srv = &srv;
	ASSERT_EQ(0, pthread_create(&thr, NULL, spinner_run, &sp));
	ASSERT_EQ(0, pin_to_cpu(0));
	for (i = 0; i < NEAR_N; i++) {
		ASSERT_EQ(0, fsrv_wait_asleep(srv.tid[0], 10000));
		snprintf(path, sizeof(path), "%s/left-%d", mnt, i);
		ASSERT_EQ(0, stat(path, &st));
	}
	__atomic_store_n(&sp.stop, true, __ATOMIC_RELEASE);
	pthread_join(thr, NULL);
	pthread_mutex_lock(&srv.lock);
	for (k = 0; k < srv.nlog; k++) {
		const struct fsrv_rec *r = &srv.log[k];

		if (r->opcode != FUSE_LOOKUP || strncmp(r->name, "left-", 5))
			continue;
		by_own += r->fd_idx == 1;
	}
	pthread_mutex_unlock(&srv.lock);
	TH_LOG("%d of %d read by CPU 0's reader, %d by CPU 1's spinner",
	       by_own, NEAR_N, sp.lookups);
	EXPECT_EQ(NEAR_N, by_own);
	EXPECT_EQ(0, sp.lookups);
	fsrv_destroy(&srv);
	rmdir(mnt);
}

/* ---------------------------------------------------------------- */

/*
 * Readers of bound clones hold the LOOKUPs of "hold..." names unanswered
 * until the daemon sends FUSE_NOTIFY_RESEND; each is read again once.
 */
static uint64_t held_unique[8];
static int nheld;

static bool hold_hook(struct fsrv *srv, int idx,
		      const struct fuse_in_header *in, const void *arg)
{
	if (in->opcode != FUSE_LOOKUP || strncmp(arg, "hold", 4) ||
	    (in->unique & FUSE_UNIQUE_RESEND))
		return false;
	pthread_mutex_lock(&srv->lock);
	held_unique[nheld++] = in->unique;
	pthread_mutex_unlock(&srv->lock);
	return true;
}

/* One clone bound to each of the first two CPUs, one reader each */
FIXTURE(paths) {
	struct fsrv srv;
	char mnt[64];
	const char *skip;
};

FIXTURE_SETUP(paths)
{
	static const struct binding l[] = { CPU(0), CPU(1) };
	const char *why;

	snprintf(self->mnt, sizeof(self->mnt), "/tmp/paths-%d", getpid());
	why = serve_layout(_metadata, &self->srv, self->mnt, l, 2, 1);
	self->skip = why;
	if (why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(paths)
{
	if (self->srv.nfds)
		fsrv_destroy(&self->srv);
	rmdir(self->mnt);
}

static int nheld_now(struct fsrv *srv)
{
	int n;

	pthread_mutex_lock(&srv->lock);
	n = nheld;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

TEST_F(paths, resend_reads_each_again_once)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh), .error = FUSE_NOTIFY_RESEND,
	};
	struct fsrv_job j[2];
	int i, fd_idx;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	if (fsrv_resend_missing(&self->srv))
		SKIP(return, "%s", fsrv_resend_missing(&self->srv));
	nheld = 0;
	self->srv.hook = hold_hook;
	fsrv_job_stat(&j[0], self->mnt, "hold-rs0", 0);
	fsrv_job_stat(&j[1], self->mnt, "hold-rs1", 1);
	ASSERT_TRUE(WAIT_FOR(nheld_now(&self->srv) == 2));
	ASSERT_EQ((ssize_t)sizeof(oh),
		  write(self->srv.fds[1], &oh, sizeof(oh)));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, fsrv_job_wait(&j[i]));
		/* Read twice: held, then resent and answered */
		EXPECT_EQ(2, fsrv_find_name(&self->srv, j[i].name, &fd_idx));
	}
	self->srv.hook = NULL;
}

/* Every lookup comes back in a forget, through the shared queue */
TEST_F_TIMEOUT(paths, forgets_return_every_lookup, 180)
{
	char path[128];
	struct stat st;
	int cpu, i, fd;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	for (cpu = 0; cpu < 2 && cpu < nr_cpus_online(); cpu++) {
		ASSERT_EQ(0, pin_to_cpu(cpu));
		for (i = 0; i < 1000; i++) {
			snprintf(path, sizeof(path), "%s/f%d-%d", self->mnt,
				 cpu, i % 700);
			ASSERT_EQ(0, stat(path, &st));
		}
	}
	/*
	 * drop_caches is best effort: the shrinkers stop once a pass frees
	 * little, and an inode they passed over is evicted by the next drop.
	 * A forget that was lost would never come.
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
	EXPECT_TRUE(WAIT_FOR(self->srv.forget_nlookup == self->srv.lookups));
	TH_LOG("%llu lookups, %llu returned by forgets",
	       (unsigned long long)self->srv.lookups,
	       (unsigned long long)self->srv.forget_nlookup);
	EXPECT_GE(self->srv.lookups, 1000);
}

TEST_HARNESS_MAIN
