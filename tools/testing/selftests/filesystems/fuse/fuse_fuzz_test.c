// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzzer of /dev/fuse and the per-device queue ioctls: random clones, binds
 * (random flags, CPUs, nodes, padding and pointers), GET_BIND, reads of
 * random sizes, answers and garbage written back, polls and closes, in
 * random order over two mounted connections and some fds that are not
 * FUSE devices, for a fixed number of steps from a seed.
 *
 * Checked: our ioctls fail only with their documented errors, a failed
 * bind changes nothing (GET_BIND before and after), and once the fuzzer's
 * fds are closed every request it left queued or unanswered is served
 * or ended: the first connection then answers every CPU, and the second,
 * aborted, lets its waiters go.  The kernel log must stay clean.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_srv.h"
#include "../../kselftest_harness.h"

#define NSLOTS		16

enum slot_kind { SLOT_NONE, SLOT_FUSE, SLOT_OTHER };

struct fuzz {
	unsigned int rnd;
	int fd[NSLOTS];
	enum slot_kind kind[NSLOTS];
	struct fsrv *a, *b;
	unsigned long steps[16], bad_errno, changed;
	char last_bad[128];
};

static unsigned int rnd(struct fuzz *z)
{
	z->rnd ^= z->rnd << 13;
	z->rnd ^= z->rnd >> 17;
	z->rnd ^= z->rnd << 5;
	return z->rnd;
}

static void bad(struct fuzz *z, const char *what, int err)
{
	z->bad_errno++;
	snprintf(z->last_bad, sizeof(z->last_bad), "%s: %s", what,
		 strerror(err));
}

/* A random fd: a slot, one of the mount fds, or nonsense */
static int any_fd(struct fuzz *z)
{
	switch (rnd(z) % 8) {
	case 0:
		return z->a->fds[0];
	case 1:
		return z->b->fds[0];
	case 2:
		return (int)(rnd(z) % 1024) - 1;
	default:
		return z->fd[rnd(z) % NSLOTS];
	}
}

static bool is_fuse_fd(struct fuzz *z, int fd)
{
	int i;

	if (fd < 0)
		return false;
	if (fd == z->a->fds[0] || fd == z->b->fds[0])
		return true;
	for (i = 0; i < NSLOTS; i++)
		if (z->fd[i] == fd)
			return z->kind[i] == SLOT_FUSE;
	return false;
}

static bool bind_errno_ok(int err)
{
	return err == EPERM || err == EFAULT || err == EINVAL ||
	       err == ENXIO || err == ENOTCONN;
}

static void step_bind(struct fuzz *z)
{
	static const uint32_t flags[] = {
		0, FUSE_DEV_BIND_CPU, FUSE_DEV_BIND_NODE,
		FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_NODE, 4, 0x80000000u,
	};
	struct fuse_dev_bind b, before, after;
	int fd = any_fd(z), ret, err, got_before;
	void *arg = &b;

	b.flags = flags[rnd(z) % 6];
	b.cpu = (int)(rnd(z) % 8) - 2;
	b.node = (int)(rnd(z) % 5) - 2;
	b.padding = rnd(z) % 8 ? 0 : rnd(z);
	if (rnd(z) % 16 == 0)
		b.cpu = rnd(z);
	if (rnd(z) % 16 == 0)
		arg = rnd(z) % 2 ? NULL : (void *)1;
	got_before = ioctl(fd, FUSE_DEV_IOC_GET_BIND, &before);
	ret = ioctl(fd, FUSE_DEV_IOC_BIND, arg);
	err = errno;
	if (!is_fuse_fd(z, fd))
		return;		/* not ours to judge: ENOTTY, EBADF */
	if (ret && !bind_errno_ok(err)) {
		bad(z, "FUSE_DEV_IOC_BIND", err);
		return;
	}
	if (ret && !got_before &&
	    (ioctl(fd, FUSE_DEV_IOC_GET_BIND, &after) ||
	     memcmp(&before, &after, sizeof(after)))) {
		z->changed++;
		snprintf(z->last_bad, sizeof(z->last_bad),
			 "a failed bind (%s) changed the binding", strerror(err));
	}
}

static void step_get_bind(struct fuzz *z)
{
	struct fuse_dev_bind b;
	int fd = any_fd(z), ret;

	ret = ioctl(fd, FUSE_DEV_IOC_GET_BIND, rnd(z) % 8 ? &b : NULL);
	if (ret && is_fuse_fd(z, fd) && errno != EPERM && errno != EFAULT &&
	    errno != ENOTCONN)
		bad(z, "FUSE_DEV_IOC_GET_BIND", errno);
	if (!ret && (b.flags & ~(FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_NODE) ||
		     b.padding))
		bad(z, "GET_BIND reported nonsense", EINVAL);
}

static void step_open(struct fuzz *z)
{
	int i = rnd(z) % NSLOTS;

	if (z->fd[i] >= 0)
		return;
	if (rnd(z) % 4) {
		z->fd[i] = open("/dev/fuse", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		z->kind[i] = SLOT_FUSE;
	} else {
		z->fd[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
		z->kind[i] = SLOT_OTHER;
	}
	if (z->fd[i] < 0)
		z->kind[i] = SLOT_NONE;
}

static void step_clone(struct fuzz *z)
{
	int i = rnd(z) % NSLOTS;
	uint32_t src = any_fd(z);

	if (z->fd[i] < 0)
		return;
	ioctl(z->fd[i], FUSE_DEV_IOC_CLONE, rnd(z) % 16 ? (void *)&src : NULL);
}

static void step_close(struct fuzz *z)
{
	int i = rnd(z) % NSLOTS;

	if (z->fd[i] < 0)
		return;
	close(z->fd[i]);
	z->fd[i] = -1;
	z->kind[i] = SLOT_NONE;
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
	int i = rnd(z) % NSLOTS, fd = z->fd[i];
	struct fsrv *owner;
	ssize_t n;

	if (fd < 0 || z->kind[i] != SLOT_FUSE)
		return;
	n = read(fd, buf, sizes[rnd(z) % 8]);
	if (n < (ssize_t)sizeof(*in))
		return;
	switch (rnd(z) % 4) {
	case 0:
	case 1:
		/* A proper answer, through either connection's handler */
		owner = rnd(z) % 2 ? z->a : z->b;
		owner->fds[FSRV_MAX_FDS - 1] = fd;
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
		writev(fd, iov, 2);
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
	write(any_fd(z), junk, len);
}

static void step_ioctl_other(struct fuzz *z)
{
	/* Other numbers in the FUSE ioctl space, with small arguments */
	static char arg[64];
	unsigned int nr = 3 + rnd(z) % 252;

	if (nr == 254 || nr == 255)
		return;
	ioctl(any_fd(z), _IOC(rnd(z) % 4, FUSE_DEV_IOC_MAGIC, nr,
			      rnd(z) % sizeof(arg)), arg);
}

/* Clients that keep a connection busy while the fuzzer plays with it */
struct client {
	const char *mnt;
	int cpu;
	bool stop;		/* set by the main thread */
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
	return NULL;
}

FIXTURE(fuzz) {
};

FIXTURE_SETUP(fuzz)
{
	if (fsrv_bind_missing(0))
		SKIP(return, "%s", fsrv_bind_missing(0));
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, random_device_and_ioctl_sequences, 600)
{
	static struct fsrv a, b;
	struct client ca[4], cb[4];
	unsigned long steps = 20000, s;
	struct fuzz z = {};
	struct stat st;
	int ncpu = nr_cpus_online(), i, nc;
	char path[64];

	if (getenv("FUSE_FUZZ_STEPS"))
		steps = strtoul(getenv("FUSE_FUZZ_STEPS"), NULL, 0);
	z.rnd = getenv("FUSE_FUZZ_SEED") ?
		strtoul(getenv("FUSE_FUZZ_SEED"), NULL, 0) : 20261130;
	if (!z.rnd)
		z.rnd = 1;
	TH_LOG("%lu steps, seed %u", steps, z.rnd);
	for (i = 0; i < NSLOTS; i++)
		z.fd[i] = -1;
	ASSERT_EQ(0, fsrv_mount(&a, "/tmp/fuzz-a"));
	ASSERT_EQ(0, fsrv_mount(&b, "/tmp/fuzz-b"));
	a.nolog = true;
	b.nolog = true;
	z.a = &a;
	z.b = &b;
	/* a's mount fd has a reader; b is served only by what the fuzzer reads */
	ASSERT_EQ(0, fsrv_start_reader(&a, 0, -1));
	nc = ncpu < 4 ? ncpu : 4;
	for (i = 0; i < nc; i++) {
		ca[i] = (struct client){ .mnt = "/tmp/fuzz-a", .cpu = i };
		cb[i] = (struct client){ .mnt = "/tmp/fuzz-b", .cpu = i };
		pthread_create(&ca[i].thr, NULL, client, &ca[i]);
		pthread_create(&cb[i].thr, NULL, client, &cb[i]);
	}

	for (s = 0; s < steps; s++) {
		unsigned int k = rnd(&z) % 11;

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
			step_get_bind(&z);
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
		}
	}
	TH_LOG("steps: open %lu clone %lu bind %lu get_bind %lu read %lu",
	       z.steps[0], z.steps[1], z.steps[2] + z.steps[3], z.steps[4],
	       z.steps[5] + z.steps[6]);
	TH_LOG("steps: garbage %lu poll %lu close %lu other ioctls %lu",
	       z.steps[7], z.steps[8], z.steps[9], z.steps[10]);
	EXPECT_EQ(0, z.bad_errno) TH_LOG("%s", z.last_bad);
	EXPECT_EQ(0, z.changed) TH_LOG("%s", z.last_bad);

	/* Close the fuzzer's fds: what they held moves or ends */
	for (i = 0; i < NSLOTS; i++)
		if (z.fd[i] >= 0)
			close(z.fd[i]);
	/* The mount fd may have been bound: serve a's clients again */
	fsrv_bind(&a, 0, 0, -1, -1);
	for (i = 0; i < nc; i++) {
		snprintf(path, sizeof(path), "/tmp/fuzz-a/after-%d", i);
		ASSERT_EQ(0, pin_to_cpu(i));
		EXPECT_EQ(0, stat(path, &st)) TH_LOG("CPU %d: %s", i,
						     strerror(errno));
	}
	for (i = 0; i < nc; i++) {
		__atomic_store_n(&ca[i].stop, true, __ATOMIC_RELAXED);
		__atomic_store_n(&cb[i].stop, true, __ATOMIC_RELAXED);
	}
	for (i = 0; i < nc; i++)
		pthread_join(ca[i].thr, NULL);
	/* b has no reader left: its waiters go when it is aborted */
	ASSERT_EQ(0, fsrv_conn_write(&b, "abort", "1"));
	for (i = 0; i < nc; i++)
		pthread_join(cb[i].thr, NULL);
	for (i = 0; i < nc; i++)
		TH_LOG("CPU %d: a %lu ok %lu failed, b %lu ok %lu failed", i,
		       ca[i].ok, ca[i].failed, cb[i].ok, cb[i].failed);
	fsrv_destroy(&a);
	fsrv_destroy(&b);
	rmdir("/tmp/fuzz-a");
	rmdir("/tmp/fuzz-b");
}

TEST_HARNESS_MAIN
