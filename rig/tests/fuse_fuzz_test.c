// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzzer of /dev/fuse and FUSE_DEV_IOC_BIND: random clones, binds
 * (random flags, CPUs, nodes, padding and pointers), reads of random
 * sizes, answers and garbage written back, polls, closes, and
 * EPOLLEXCLUSIVE pollers armed on random devices (so that wakeups stop at
 * them and requests are left on devices' queues), in random order
 * over two mounted connections, a third one aborted from the start, and
 * some fds that are not FUSE devices, for a fixed number of steps from a
 * seed.
 *
 * The fuzzer keeps a model of every FUSE fd it has: its connection and
 * its binding.  Every bind and clone must give exactly what the contract
 * says (uapi/linux/fuse.h): EPERM for an fd of no connection, EFAULT for
 * a bad pointer, EINVAL for bad flags, padding, CPU or node, EBUSY for a
 * CPU another device of the connection is bound to, ENOTCONN for a bind
 * (not an unbind) once the connection is aborted, and success otherwise;
 * an error must not change the binding, which the model's EBUSY
 * predictions would then miss.
 * Other FUSE ioctl numbers must be ENOTTY.  Once the fuzzer's fds are
 * closed, every request it left queued or unanswered must be served or
 * ended: the first connection then answers every CPU and its clients all
 * finish, and the second, aborted, lets its clients go.
 *
 * FUSE_FUZZ_STEPS and FUSE_FUZZ_SEED in the environment override the
 * defaults.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "kselftest_harness.h"

#define NSLOTS		16
#define NCONN		3	/* a and b mounted, c aborted */
#define NSLEEPERS	2
#define MAX_IDS		4096	/* CPUs and nodes the model knows */

enum slot_kind { SLOT_NONE, SLOT_FUSE, SLOT_OTHER };

/* What the fuzzer knows of an fd: a slot, or a connection's mount fd */
struct dev {
	int fd;			/* -1: none */
	enum slot_kind kind;
	int conn;		/* 0: none, else 1 + index into fuzz.conn */
	uint32_t flags;		/* its binding, as the model has it */
	int cpu, node;
};

/*
 * A thread asleep in epoll_wait() on an EPOLLEXCLUSIVE set of one
 * device, armed after whatever binding it has: a request routed to that
 * device reserves it.  It never reads, so the request stays on the
 * device's queue until the fuzzer reads or closes the device.
 */
struct sleeper {
	pthread_t thr;
	int cmd;		/* an epoll fd to take, -2: drop, -1: done */
	int fd;			/* the device its set holds, -1: none */
	bool stop;
	unsigned long woken;
};

struct fuzz {
	unsigned int rnd;
	struct dev dev[NSLOTS + NCONN];	/* the slots, then the mount fds */
	struct fsrv *conn[NCONN];
	bool aborted[NCONN];
	struct sleeper sl[NSLEEPERS];
	bool cpu_possible[MAX_IDS], node_possible[MAX_IDS];
	char *bad_page;		/* a page with none mapped after it */
	unsigned long steps[16], bad;
	unsigned long binds_ok, binds_failed, clones_ok;
	char last_bad[256];
};

static unsigned int rnd(struct fuzz *z)
{
	z->rnd ^= z->rnd << 13;
	z->rnd ^= z->rnd >> 17;
	z->rnd ^= z->rnd << 5;
	return z->rnd;
}

static void bad(struct fuzz *z, const char *fmt, ...)
{
	va_list ap;

	z->bad++;
	va_start(ap, fmt);
	vsnprintf(z->last_bad, sizeof(z->last_bad), fmt, ap);
	va_end(ap);
	/* The first few in full; the count and the last one say the rest */
	if (z->bad <= 20)
		printf("# %s\n", z->last_bad);
}

/* A sysfs list of ids ("0-3,5") into @set; 0, or -1 if unreadable */
static int read_id_list(const char *path, bool *set)
{
	char buf[256], *p;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (p = strtok(buf, ",\n"); p; p = strtok(NULL, ",\n")) {
		int lo, hi;

		if (sscanf(p, "%d-%d", &lo, &hi) != 2)
			hi = lo = atoi(p);
		for (; lo <= hi && lo < MAX_IDS; lo++)
			set[lo] = true;
	}
	return 0;
}

static struct dev *find_dev(struct fuzz *z, int fd)
{
	int i;

	if (fd < 0)
		return NULL;
	for (i = 0; i < NSLOTS + NCONN; i++)
		if (z->dev[i].fd == fd)
			return &z->dev[i];
	return NULL;
}

/* A random fd: a slot, a mount fd, or nonsense (never 0 to 2) */
static int any_fd(struct fuzz *z)
{
	int fd;

	switch (rnd(z) % 8) {
	case 0:
	case 1:
		return z->dev[NSLOTS + rnd(z) % NCONN].fd;
	case 2:
		fd = (int)(rnd(z) % 1024) - 1;
		return fd >= 0 && fd <= 2 ? -1 : fd;
	default:
		return z->dev[rnd(z) % NSLOTS].fd;
	}
}

static bool possible(const bool *set, int id)
{
	return id >= 0 && id < MAX_IDS && set[id];
}

/* Errors the contract allows for a bind, as a mask; 0: it must succeed */
#define E_PERM		(1 << 0)
#define E_FAULT		(1 << 1)
#define E_INVAL		(1 << 2)
#define E_BUSY		(1 << 3)
#define E_NOTCONN	(1 << 4)

static unsigned int errno_bit(int err)
{
	switch (err) {
	case EPERM:
		return E_PERM;
	case EFAULT:
		return E_FAULT;
	case EINVAL:
		return E_INVAL;
	case EBUSY:
		return E_BUSY;
	case ENOTCONN:
		return E_NOTCONN;
	default:
		return 1 << 31;
	}
}

static unsigned int bind_allows(struct fuzz *z, struct dev *d,
				const struct fuse_dev_bind *b, bool bad_ptr)
{
	unsigned int allow = 0;
	int i;

	/* Which of several errors comes first is not the contract's */
	if (!d->conn)
		return E_PERM | (bad_ptr ? E_FAULT : 0);
	if (bad_ptr)
		return E_FAULT;
	if (b->padding)
		allow |= E_INVAL;
	switch (b->flags) {
	case 0:
		if (b->cpu != -1 || b->node != -1)
			allow |= E_INVAL;
		break;
	case FUSE_DEV_BIND_CPU:
		if (b->node != -1 || !possible(z->cpu_possible, b->cpu))
			allow |= E_INVAL;
		for (i = 0; i < NSLOTS + NCONN; i++)
			if (&z->dev[i] != d && z->dev[i].fd >= 0 &&
			    z->dev[i].conn == d->conn &&
			    z->dev[i].flags == FUSE_DEV_BIND_CPU &&
			    z->dev[i].cpu == b->cpu)
				allow |= E_BUSY;
		break;
	case FUSE_DEV_BIND_NODE:
		if (b->cpu != -1 || !possible(z->node_possible, b->node))
			allow |= E_INVAL;
		break;
	default:
		allow |= E_INVAL;
	}
	/* Unbinding an aborted connection's device succeeds */
	if (z->aborted[d->conn - 1] && b->flags)
		allow |= E_NOTCONN;
	return allow;
}

static void step_bind(struct fuzz *z)
{
	static const uint32_t flags[] = {
		0, FUSE_DEV_BIND_CPU, FUSE_DEV_BIND_NODE,
		FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_NODE, 4, 0x80000000u,
	};
	struct fuse_dev_bind b, *arg = &b;
	int fd = any_fd(z), ret, err;
	unsigned int allow, r;
	bool bad_ptr = false;
	struct dev *d;

	b.flags = flags[rnd(z) % 6];
	b.cpu = (int)(rnd(z) % 8) - 2;
	b.node = (int)(rnd(z) % 5) - 2;
	b.padding = rnd(z) % 8 ? 0 : rnd(z);
	/* Mostly what a daemon would ask, so that binds succeed too */
	if (rnd(z) % 2) {
		if (b.flags == FUSE_DEV_BIND_CPU)
			b.node = -1;
		else if (b.flags == FUSE_DEV_BIND_NODE)
			b.cpu = -1;
		else if (!b.flags)
			b.cpu = b.node = -1;
	}
	if (rnd(z) % 16 == 0)
		b.cpu = rnd(z);
	r = rnd(z) % 16;
	if (r < 3) {
		static const char *const bads[] = { NULL, (char *)1, NULL };

		arg = (void *)(r == 2 ? z->bad_page + 4096 - 8 : bads[r]);
		bad_ptr = true;
	}
	ret = ioctl(fd, FUSE_DEV_IOC_BIND, arg);
	err = errno;
	d = find_dev(z, fd);
	if (!d)
		return;		/* closed or not ours: EBADF, ENOTTY */
	if (d->kind != SLOT_FUSE) {
		if (!ret || err != ENOTTY)
			bad(z, "BIND on /dev/null: %s",
			    ret ? strerror(err) : "ok");
		return;
	}
	allow = bind_allows(z, d, &b, bad_ptr);
	if (!ret && allow) {
		bad(z, "BIND {%#x, %d, %d, %u}%s on conn %d succeeded (allowed %#x)",
		    b.flags, b.cpu, b.node, b.padding,
		    bad_ptr ? " (bad pointer)" : "", d->conn, allow);
	} else if (ret && !(errno_bit(err) & allow)) {
		bad(z, "BIND {%#x, %d, %d, %u}%s on conn %d: %s (allowed %#x)",
		    b.flags, b.cpu, b.node, b.padding,
		    bad_ptr ? " (bad pointer)" : "", d->conn, strerror(err),
		    allow);
	}
	if (ret) {
		z->binds_failed++;
		return;
	}
	z->binds_ok++;
	d->flags = b.flags;
	d->cpu = b.cpu;
	d->node = b.node;
}

static void step_open(struct fuzz *z)
{
	struct dev *d = &z->dev[rnd(z) % NSLOTS];

	if (d->fd >= 0)
		return;
	if (rnd(z) % 4) {
		d->fd = open("/dev/fuse", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		d->kind = SLOT_FUSE;
	} else {
		d->fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		d->kind = SLOT_OTHER;
	}
	if (d->fd < 0)
		d->kind = SLOT_NONE;
	d->conn = 0;
	d->flags = 0;
	d->cpu = d->node = -1;
}

static void step_clone(struct fuzz *z)
{
	struct dev *d = &z->dev[rnd(z) % NSLOTS], *s;
	uint32_t src = any_fd(z);
	bool bad_ptr = rnd(z) % 16 == 0;
	int ret, err, want;

	if (d->fd < 0)
		return;
	ret = ioctl(d->fd, FUSE_DEV_IOC_CLONE, bad_ptr ? NULL : (void *)&src);
	err = ret ? errno : 0;
	s = find_dev(z, (int)src);
	if (d->kind == SLOT_OTHER)
		want = ENOTTY;
	else if (bad_ptr)
		want = EFAULT;
	else if (!s || s->kind != SLOT_FUSE || !s->conn || d->conn)
		want = EINVAL;
	else
		want = 0;
	/* Linux 7.3 refuses a source without a connection with EPERM */
	if (want == EINVAL && err == EPERM && s && s->kind == SLOT_FUSE &&
	    !s->conn)
		want = EPERM;
	if (err != want)
		bad(z, "CLONE of fd %d onto %s fd of conn %d: %s, not %s",
		    (int)src, d->kind == SLOT_FUSE ? "a FUSE" : "another",
		    d->conn, strerror(err), strerror(want));
	if (!ret && d->kind == SLOT_FUSE && s) {
		d->conn = s->conn;
		z->clones_ok++;
	}
}

static void sleeper_on_signal(int sig)
{
}

static void *sleeper_main(void *p)
{
	struct sleeper *s = p;
	struct epoll_event ev;
	int ep = -1, cmd;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		cmd = __atomic_load_n(&s->cmd, __ATOMIC_ACQUIRE);
		if (cmd != -1) {
			if (ep >= 0)
				close(ep);
			ep = cmd >= 0 ? cmd : -1;
			__atomic_store_n(&s->cmd, -1, __ATOMIC_RELEASE);
		}
		if (ep < 0) {
			usleep(1000);
			continue;
		}
		/* Woken for a request: leave it there, and sleep a while */
		if (epoll_wait(ep, &ev, 1, 1000) > 0) {
			s->woken++;
			usleep(2000);
		}
	}
	if (ep >= 0)
		close(ep);
	return NULL;
}

/* Give sleeper @s @cmd (an epoll fd, or -2 to drop its set) and wait */
static void sleeper_cmd(struct sleeper *s, int cmd, int fd)
{
	__atomic_store_n(&s->cmd, cmd, __ATOMIC_RELEASE);
	while (__atomic_load_n(&s->cmd, __ATOMIC_ACQUIRE) != -1) {
		pthread_kill(s->thr, SIGUSR1);
		usleep(100);
	}
	s->fd = fd;
}

static void step_arm(struct fuzz *z)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE };
	struct dev *d = &z->dev[rnd(z) % NSLOTS];
	struct sleeper *s = &z->sl[rnd(z) % NSLEEPERS];
	int ep;

	if (d->kind != SLOT_FUSE)
		return;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, d->fd, &ev)) {
		close(ep);
		return;
	}
	sleeper_cmd(s, ep, d->fd);
}

static void step_close(struct fuzz *z)
{
	struct dev *d = &z->dev[rnd(z) % NSLOTS];
	int i;

	if (d->fd < 0)
		return;
	/*
	 * No epoll set may hold it: epoll_wait() takes a reference to the
	 * file while it polls, and the device would then go a little after
	 * close(), its binding with it, unknown to the model.
	 */
	for (i = 0; i < NSLEEPERS; i++)
		if (z->sl[i].fd == d->fd)
			sleeper_cmd(&z->sl[i], -2, -1);
	close(d->fd);
	d->fd = -1;
	d->kind = SLOT_NONE;
	d->conn = 0;
	d->flags = 0;
}

static void step_poll(struct fuzz *z)
{
	struct pollfd p = { .fd = any_fd(z), .events = POLLIN | POLLOUT };

	poll(&p, 1, 0);
}

/* Read a request, if any, and answer it well, badly, or not at all */
static void step_read(struct fuzz *z)
{
	static char buf[FSRV_BUFSIZE];
	static const size_t sizes[] = {
		0, 1, 39, 40, 4096, 8191, FUSE_MIN_READ_BUFFER, sizeof(buf),
	};
	struct fuse_in_header *in = (void *)buf;
	struct dev *d = &z->dev[rnd(z) % NSLOTS];
	struct fsrv *owner;
	ssize_t n;

	if (d->kind != SLOT_FUSE)
		return;
	n = read(d->fd, buf, sizes[rnd(z) % 8]);
	if (n < (ssize_t)sizeof(*in))
		return;
	switch (rnd(z) % 4) {
	case 0:
	case 1:
		/* A proper answer, through either connection's handler */
		owner = z->conn[rnd(z) % 2];
		owner->fds[FSRV_MAX_FDS - 1] = d->fd;
		fsrv_handle(owner, FSRV_MAX_FDS - 1, in, in + 1);
		break;
	case 2: {
		/* Garbage: random length, unique and error */
		struct fuse_out_header oh = {
			.len = rnd(z) % 64,
			.error = -(int)(rnd(z) % 600) + (rnd(z) % 4 ? 0 : 1000),
			.unique = rnd(z) % 2 ? in->unique : rnd(z),
		};
		char junk[64];
		struct iovec iov[2] = {
			{ &oh, sizeof(oh) },
			{ junk, rnd(z) % sizeof(junk) },
		};

		memset(junk, rnd(z), sizeof(junk));
		if (writev(d->fd, iov, 2) < 0)
			break;
		break;
	}
	default:
		break;	/* left unanswered, on the fd's processing queue */
	}
}

static void step_write_garbage(struct fuzz *z)
{
	char junk[256];
	size_t i, len = rnd(z) % sizeof(junk);

	for (i = 0; i < len; i++)
		junk[i] = rnd(z);
	if (write(any_fd(z), junk, len) < 0)
		return;
}

static void step_ioctl_other(struct fuzz *z)
{
	/* Other numbers in the FUSE ioctl space, with small arguments */
	static char arg[64];
	unsigned int nr = 3 + rnd(z) % 253;
	int fd = any_fd(z), ret;
	struct dev *d;

	if (nr == _IOC_NR(FUSE_DEV_IOC_BIND))
		return;
	ret = ioctl(fd, _IOC(rnd(z) % 4, FUSE_DEV_IOC_MAGIC, nr,
			     rnd(z) % sizeof(arg)), arg);
	d = find_dev(z, fd);
	if (d && d->kind == SLOT_FUSE && (!ret || errno != ENOTTY))
		bad(z, "FUSE ioctl number %u: %s, not ENOTTY", nr,
		    ret ? strerror(errno) : "ok");
}

/* Clients that keep a connection busy while the fuzzer plays with it */
struct client {
	const char *mnt;
	int cpu;
	bool stop;		/* set by the main thread */
	bool exited;
	unsigned long ok, failed;
	pthread_t thr;
};

static void *client(void *p)
{
	struct client *c = p;
	char path[128];
	struct stat st;
	unsigned long i = 0;

	pin_to_cpu(c->cpu);
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		snprintf(path, sizeof(path), "%s/fz-%d-%lu", c->mnt, c->cpu,
			 i++ % 64);
		if (stat(path, &st))
			c->failed++;
		else
			c->ok++;
	}
	__atomic_store_n(&c->exited, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Stop @n clients; whether all finished within @ms */
static bool stop_clients(struct client *c, int n, int ms)
{
	bool all;
	int i;

	for (i = 0; i < n; i++)
		__atomic_store_n(&c[i].stop, true, __ATOMIC_RELAXED);
	all = FSRV_WAIT(({
		bool done = true;

		for (i = 0; i < n; i++)
			done &= __atomic_load_n(&c[i].exited, __ATOMIC_ACQUIRE);
		done;
	}), ms);
	for (i = 0; i < n && all; i++)
		pthread_join(c[i].thr, NULL);
	return all;
}

FIXTURE(fuzz) {
};

FIXTURE_SETUP(fuzz)
{
	if (fsrv_bind_missing())
		SKIP(return, "%s", fsrv_bind_missing());
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, random_device_and_ioctl_sequences, 600)
{
	static const char *const mnts[NCONN] = {
		"/tmp/fuzz-a", "/tmp/fuzz-b", "/tmp/fuzz-c",
	};
	struct sigaction sa = { .sa_handler = sleeper_on_signal };
	static struct fsrv srv[NCONN];
	static struct fuzz z;
	struct client ca[4], cb[4];
	unsigned long steps = 20000, s, oks = 0;
	int ncpu = nr_cpus_online(), i, nc;
	struct fsrv_job j;
	bool a_done, b_done;

	if (getenv("FUSE_FUZZ_STEPS"))
		steps = strtoul(getenv("FUSE_FUZZ_STEPS"), NULL, 0);
	z.rnd = getenv("FUSE_FUZZ_SEED") ?
		strtoul(getenv("FUSE_FUZZ_SEED"), NULL, 0) : 20261204;
	if (!z.rnd)
		z.rnd = 1;
	TH_LOG("%lu steps, seed %u", steps, z.rnd);
	ASSERT_EQ(0, read_id_list("/sys/devices/system/cpu/possible",
				  z.cpu_possible));
	/* No node list without CONFIG_NUMA: node 0 alone */
	if (read_id_list("/sys/devices/system/node/possible",
			 z.node_possible))
		z.node_possible[0] = true;
	z.bad_page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, z.bad_page);
	ASSERT_EQ(0, munmap(z.bad_page + 4096, 4096));
	for (i = 0; i < NSLOTS; i++)
		z.dev[i] = (struct dev){ .fd = -1, .cpu = -1, .node = -1 };
	for (i = 0; i < NCONN; i++) {
		ASSERT_EQ(0, fsrv_mount(&srv[i], mnts[i]));
		srv[i].nolog = true;
		z.conn[i] = &srv[i];
		z.dev[NSLOTS + i] = (struct dev){
			.fd = srv[i].fds[0], .kind = SLOT_FUSE, .conn = i + 1,
			.cpu = -1, .node = -1,
		};
	}
	/* c: bound to CPU 0, then aborted, for EBUSY before ENOTCONN */
	ASSERT_EQ(0, fsrv_bind(&srv[2], 0, FUSE_DEV_BIND_CPU, 0, -1));
	z.dev[NSLOTS + 2].flags = FUSE_DEV_BIND_CPU;
	z.dev[NSLOTS + 2].cpu = 0;
	ASSERT_EQ(0, fsrv_conn_write(&srv[2], "abort", "1"));
	z.aborted[2] = true;

	/* SIGUSR1 gets a sleeper out of epoll_wait() for a command */
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	for (i = 0; i < NSLEEPERS; i++) {
		z.sl[i].cmd = -1;
		z.sl[i].fd = -1;
		ASSERT_EQ(0, pthread_create(&z.sl[i].thr, NULL, sleeper_main,
					    &z.sl[i]));
	}
	/* a's mount fd has a reader; b is served by what the fuzzer reads */
	ASSERT_EQ(0, fsrv_start_reader(&srv[0], 0, -1));
	nc = ncpu < 4 ? ncpu : 4;
	for (i = 0; i < nc; i++) {
		ca[i] = (struct client){ .mnt = mnts[0], .cpu = i };
		cb[i] = (struct client){ .mnt = mnts[1], .cpu = i };
		pthread_create(&ca[i].thr, NULL, client, &ca[i]);
		pthread_create(&cb[i].thr, NULL, client, &cb[i]);
	}

	for (s = 0; s < steps; s++) {
		unsigned int k = rnd(&z) % 12;

		z.steps[k]++;
		switch (k) {
		case 0:
			step_open(&z);
			break;
		case 1:
			step_clone(&z);
			break;
		case 2:
		case 3:
			step_bind(&z);
			break;
		case 4:
			step_arm(&z);
			break;
		case 5:
		case 6:
			step_read(&z);
			break;
		case 7:
			step_write_garbage(&z);
			break;
		case 8:
			step_poll(&z);
			break;
		case 9:
			step_close(&z);
			break;
		case 10:
			step_ioctl_other(&z);
			break;
		case 11:
			step_clone(&z);
			break;
		}
	}
	TH_LOG("steps: open %lu clone %lu bind %lu arm %lu read %lu",
	       z.steps[0], z.steps[1] + z.steps[11], z.steps[2] + z.steps[3],
	       z.steps[4], z.steps[5] + z.steps[6]);
	TH_LOG("steps: garbage %lu poll %lu close %lu other ioctls %lu",
	       z.steps[7], z.steps[8], z.steps[9], z.steps[10]);
	TH_LOG("binds: %lu ok, %lu failed; clones: %lu; sleepers woken: %lu, %lu",
	       z.binds_ok, z.binds_failed, z.clones_ok, z.sl[0].woken,
	       z.sl[1].woken);
	EXPECT_EQ(0, z.bad) TH_LOG("last: %s", z.last_bad);
	/* Binds that should succeed did, or the model saw nothing */
	EXPECT_GT(z.binds_ok, 0);

	/* Close the fuzzer's fds: what they held moves or ends */
	for (i = 0; i < NSLEEPERS; i++) {
		__atomic_store_n(&z.sl[i].stop, true, __ATOMIC_RELEASE);
		while (pthread_tryjoin_np(z.sl[i].thr, NULL)) {
			pthread_kill(z.sl[i].thr, SIGUSR1);
			usleep(1000);
		}
		if (z.sl[i].cmd >= 0)
			close(z.sl[i].cmd);
	}
	for (i = 0; i < NSLOTS; i++)
		if (z.dev[i].fd >= 0)
			close(z.dev[i].fd);
	/* a still answers every CPU, through its mount fd's reader */
	for (i = 0; i < nc; i++) {
		fsrv_job_stat(&j, mnts[0], "after", i);
		EXPECT_TRUE(FSRV_WAIT(fsrv_job_done(&j), 20000))
			TH_LOG("CPU %d: stat stuck", i);
		if (!fsrv_job_done(&j))
			break;
		EXPECT_EQ(0, fsrv_job_wait(&j)) TH_LOG("CPU %d", i);
	}
	/* Every request a's clients made is answered or ended: they finish */
	a_done = stop_clients(ca, nc, 20000);
	EXPECT_TRUE(a_done);
	/* b has no reader left: its clients go when it is aborted */
	ASSERT_EQ(0, fsrv_conn_write(&srv[1], "abort", "1"));
	b_done = stop_clients(cb, nc, 20000);
	EXPECT_TRUE(b_done);
	for (i = 0; i < nc; i++) {
		TH_LOG("CPU %d: a %lu ok %lu failed, b %lu ok %lu failed", i,
		       ca[i].ok, ca[i].failed, cb[i].ok, cb[i].failed);
		oks += ca[i].ok;
	}
	EXPECT_GT(oks, 0);
	if (!a_done || !b_done)
		return;	/* stuck threads: the harness ends the process */
	for (i = 0; i < NCONN; i++) {
		fsrv_destroy(&srv[i]);
		rmdir(mnts[i]);
	}
}

TEST_HARNESS_MAIN
