// SPDX-License-Identifier: GPL-2.0
/*
 * Stress of FUSE clone queues: a client thread on every CPU issues mixed
 * operations while a chaos thread binds, unbinds, rebinds, closes and
 * re-clones the daemon's fds, and every few seconds aborts the connection
 * and mounts a new one.  Some handlers hold their request for a random
 * time, and some make a request of their own mount before they answer,
 * so that readers are busy and requests go to the shared queue around
 * them.  Some clients keep Linux AIO direct reads in flight: background
 * requests (FUSE_ASYNC_DIO), which an abort meets while they are sent
 * from the background queue and while they end.
 *
 * Both sides count.  Every "tracked" operation is a LOOKUP of a name never
 * used before (an O_PATH open, which sends nothing else); the server counts, per name, the answers it wrote
 * successfully and the client notes which lookups succeeded.  At the end
 * the two must agree name by name: nothing answered twice, nothing
 * answered and lost, nothing succeeded unanswered.  An operation may fail
 * only while an abort is under way, and only with the errors an abort
 * gives.  No operation may take longer than the hang limit.
 *
 * usage: fuse_stress_test [-d SECONDS] [-r REMOUNT_SECONDS] [-s SEED]
 *                         [-H HANG_SECONDS]
 * Prints TAP.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fuse_srv.h"

#define MNT		"/tmp/stress"
#define MAX_CPUS	16
#define NSLOTS		(MAX_CPUS + 2)	/* fd 0 is the mount fd, never closed */
#define MAX_SEQ		(1u << 21)

enum {
	OP_TRACKED, OP_GETATTR, OP_READ, OP_CREATE, OP_READDIR, OP_HOLD,
	OP_NESTED, OP_AREAD, NR_OPS
};
static const char *const op_names[NR_OPS] = {
	"tracked lookup", "getattr", "open+read+close", "create+unlink",
	"readdir", "held lookup", "nested lookup", "aio direct read",
};

static int duration = 20, remount_every = 5, hang_limit = 60;
static bool calm;	/* -n: no chaos, for comparison */
static unsigned int seed = 1;
static int ncpu;
static atomic_int stop_all;

/* Odd while an abort and remount is under way */
static atomic_uint epoch;

/* Per name: answers the server wrote, and whether the client saw success */
static _Atomic unsigned char *answered[MAX_CPUS];
static unsigned char *client_ok[MAX_CPUS];
static unsigned char *client_err[MAX_CPUS];	/* errno of a failed lookup */

struct client {
	int cpu;
	pthread_t thr;
	unsigned int seq;
	unsigned int rnd;
	_Atomic long long op_start;	/* ns; 0 while between operations */
	long long longest;
	unsigned long ok[NR_OPS], failed[NR_OPS], unexpected;
	int last_errno, last_op;
};

static struct client clients[MAX_CPUS];

/* The daemon: one fsrv per mount generation, slots of fds with readers */
struct slot {
	pthread_t thr;
	bool running;
	atomic_int stop;
	atomic_int exited;
};

static struct fsrv srv;
static struct slot slots[NSLOTS];
static atomic_ulong srv_requests, srv_answers;

static struct {
	unsigned long binds, bind_fail, bind_busy, unbinds, closes, aborts;
	long long remount_ns;
} chaos;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned int rnd(unsigned int *state)
{
	*state = *state * 1103515245 + 12345;
	return *state >> 8;
}

static void on_sigusr2(int sig)
{
}

/* A tracked name: "t-CPU-SEQ" */
static bool tracked(const char *name, unsigned int *cpu, unsigned int *seq)
{
	return sscanf(name, "t-%u-%u", cpu, seq) == 2 && *cpu < MAX_CPUS &&
	       *seq < MAX_SEQ;
}

static void *reader(void *p)
{
	int idx = (long)p;
	struct slot *s = &slots[idx];
	char *buf = malloc(FSRV_BUFSIZE);
	unsigned int cpu, seq, seed_r = idx;
	char name[16];

	snprintf(name, sizeof(name), "reader-%d", idx);
	pthread_setname_np(pthread_self(), name);

	while (buf && !atomic_load(&s->stop)) {
		ssize_t n = read(srv.fds[idx], buf, FSRV_BUFSIZE);
		struct fuse_in_header *in = (void *)buf;
		const char *name = (const char *)(in + 1);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ENOENT)
				continue;
			break;	/* the connection ended */
		}
		if ((size_t)n < sizeof(*in))
			continue;
		atomic_fetch_add(&srv_requests, 1);
		if (in->opcode == FUSE_LOOKUP && !strncmp(name, "h-", 2)) {
			/* A handler that takes its time */
			usleep(rand_r(&seed_r) % 30000);
		} else if (in->opcode == FUSE_LOOKUP && !strncmp(name, "n-", 2)) {
			/* A handler that uses its own mount first */
			char path[128];
			struct stat st;

			snprintf(path, sizeof(path), MNT "/nn-%s", name + 2);
			stat(path, &st);
		}
		if (in->opcode == FUSE_LOOKUP && tracked(name, &cpu, &seq)) {
			struct fuse_entry_out e = {};

			e.nodeid = fsrv_ino(name);
			e.attr.ino = e.nodeid;
			e.attr.mode = S_IFREG | 0644;
			e.attr.nlink = 1;
			e.attr.size = 4096;
			e.attr_valid = 3600;
			if (!fsrv_reply(srv.fds[idx], in->unique, 0, &e,
					sizeof(e))) {
				atomic_fetch_add(&answered[cpu][seq], 1);
				atomic_fetch_add(&srv_answers, 1);
			}
			continue;
		}
		fsrv_handle(&srv, idx, in, in + 1);
	}
	free(buf);
	atomic_store(&s->exited, 1);
	return NULL;
}

static void start_reader(int idx)
{
	struct slot *s = &slots[idx];

	atomic_store(&s->stop, 0);
	atomic_store(&s->exited, 0);
	if (pthread_create(&s->thr, NULL, reader, (void *)(long)idx)) {
		perror("pthread_create");
		exit(1);
	}
	s->running = true;
}

/* Make the reader of @idx leave read() and wait for it */
static void stop_reader(int idx)
{
	struct slot *s = &slots[idx];

	if (!s->running)
		return;
	atomic_store(&s->stop, 1);
	while (!atomic_load(&s->exited)) {
		pthread_kill(s->thr, SIGUSR2);
		usleep(2000);
	}
	pthread_join(s->thr, NULL);
	s->running = false;
}

static void random_bind(int idx, unsigned int *r)
{
	int how = rnd(r) % 4, cpu = rnd(r) % ncpu, ret;

	if (srv.fds[idx] < 0)
		return;
	if (how == 0) {
		ret = fsrv_bind(&srv, idx, 0, -1, -1);
		chaos.unbinds++;
	} else if (how == 1) {
		ret = fsrv_bind(&srv, idx, FUSE_DEV_BIND_NODE, -1,
				cpu_node(cpu));
		chaos.binds++;
	} else {
		ret = fsrv_bind(&srv, idx, FUSE_DEV_BIND_CPU, cpu, -1);
		chaos.binds++;
	}
	/*
	 * The connection may have been aborted under us, or another device
	 * be bound to that CPU already (EBUSY); nothing else
	 */
	if (ret == -EBUSY) {
		chaos.bind_busy++;
	} else if (ret && ret != -ENOTCONN) {
		printf("# bind of slot %d failed: %s\n", idx, strerror(-ret));
		chaos.bind_fail++;
	}
}

/* A new connection: the mount fd, one clone per CPU plus one, readers */
static void mount_generation(unsigned int *r)
{
	int i, ret;

	ret = fsrv_mount_opts(&srv, MNT, &(struct fsrv_opts){
				      .init_flags = FUSE_ASYNC_DIO });
	if (ret) {
		printf("# mount: %s\n", strerror(-ret));
		exit(1);
	}
	srv.nolog = true;
	srv.nfds = NSLOTS;
	for (i = 1; i < NSLOTS && i <= ncpu + 1; i++) {
		if (fsrv_clone_at(&srv, i)) {
			printf("# clone failed\n");
			exit(1);
		}
		if (rnd(r) % 3)
			random_bind(i, r);
	}
	for (; i < NSLOTS; i++)
		srv.fds[i] = -1;
	for (i = 0; i < NSLOTS; i++)
		if (srv.fds[i] >= 0)
			start_reader(i);
}

static void end_generation(void)
{
	int i;

	fsrv_conn_write(&srv, "abort", "1");
	umount2(MNT, MNT_DETACH);
	for (i = 0; i < NSLOTS; i++) {
		long long t0 = now_ns();

		stop_reader(i);
		if (now_ns() - t0 > 500000000LL)
			printf("# slot %d: its reader took %lld ms to stop\n", i,
			       (now_ns() - t0) / 1000000);
		if (srv.fds[i] >= 0)
			close(srv.fds[i]);
		srv.fds[i] = -1;
	}
}

static atomic_int chaos_done;

static void *chaos_thread(void *p)
{
	long long end = now_ns() + duration * 1000000000LL;
	long long next_abort = now_ns() + remount_every * 1000000000LL;
	unsigned int r = seed * 7919;

	pthread_setname_np(pthread_self(), "chaos");
	while (now_ns() < end) {
		int idx = 1 + rnd(&r) % (ncpu + 1);

		usleep(10000 + rnd(&r) % 60000);
		if (calm)
			continue;
		if (now_ns() >= next_abort) {
			long long t0 = now_ns();

			atomic_fetch_add(&epoch, 1);	/* odd: aborting */
			end_generation();
			chaos.aborts++;
			mount_generation(&r);
			atomic_fetch_add(&epoch, 1);
			chaos.remount_ns += now_ns() - t0;
			next_abort = now_ns() + remount_every * 1000000000LL;
			continue;
		}
		switch (rnd(&r) % 3) {
		case 0:
		case 1:
			random_bind(idx, &r);
			break;
		case 2:
			/* Close a clone with requests possibly queued on it */
			stop_reader(idx);
			if (srv.fds[idx] >= 0)
				close(srv.fds[idx]);
			srv.fds[idx] = -1;
			chaos.closes++;
			if (fsrv_clone_at(&srv, idx) == 0) {
				if (rnd(&r) % 2)
					random_bind(idx, &r);
				start_reader(idx);
			}
			break;
		}
	}
	atomic_store(&chaos_done, 1);
	return NULL;
}

/* Where each thread of ours is: its name, the slot it reads, its stack */
static void dump_threads(void)
{
	char path[300], buf[4096];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	ssize_t n;
	int fd, i;

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "/proc/self/task/%s/%s",
				 de->d_name, i ? "stack" : "comm");
			fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			buf[n > 0 ? n : 0] = 0;
			if (i)
				printf("%s", buf);
			else
				printf("# thread %s, %s", de->d_name, buf);
		}
	}
	closedir(d);
}

static bool abort_errno(int err)
{
	return err == ECONNABORTED || err == ENOTCONN || err == ENOENT ||
	       err == ENODEV;
}

#define AIO_DEPTH	4

/*
 * AIO_DEPTH 4 KiB O_DIRECT reads of the client's file, submitted at once
 * and reaped, each checked: the file's bytes, or an error.
 */
static int do_aread(struct client *c)
{
	struct iocb cbs[AIO_DEPTH], *cbp[AIO_DEPTH];
	struct timespec ts = { .tv_sec = hang_limit };
	struct io_event ev[AIO_DEPTH];
	aio_context_t ctx = 0;
	int fd, i, j, err = 0;
	long n = 0, done = 0, got;
	char path[64], *buf;

	snprintf(path, sizeof(path), MNT "/r-%d", c->cpu);
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return errno;
	if (posix_memalign((void **)&buf, 4096, AIO_DEPTH * 4096)) {
		close(fd);
		return ENOMEM;
	}
	if (syscall(SYS_io_setup, AIO_DEPTH, &ctx)) {
		err = errno;
		goto out;
	}
	for (i = 0; i < AIO_DEPTH; i++) {
		cbs[i] = (struct iocb){
			.aio_fildes = fd,
			.aio_lio_opcode = IOCB_CMD_PREAD,
			.aio_buf = (unsigned long)(buf + i * 4096),
			.aio_nbytes = 4096,
			.aio_data = i,
		};
		cbp[i] = &cbs[i];
	}
	n = syscall(SYS_io_submit, ctx, AIO_DEPTH, cbp);
	if (n < 0)
		err = errno;
	while (done < n) {
		got = syscall(SYS_io_getevents, ctx, n - done, n - done, ev, &ts);
		if (got <= 0) {
			err = got ? errno : ETIMEDOUT;
			break;
		}
		for (j = 0; j < got; j++) {
			const char *b = buf + ev[j].data * 4096;

			if (ev[j].res < 0) {
				err = err ?: -ev[j].res;
				continue;
			}
			for (i = 0; i < ev[j].res; i++)
				if (b[i] != 'a' + i % 26)
					break;
			if (ev[j].res != 4096 || i != 4096) {
				printf("# CPU %d: bad aio data (%lld bytes)\n",
				       c->cpu, (long long)ev[j].res);
				err = EIO;
			}
		}
		done += got;
	}
	/* Waits for whatever is still in flight */
	syscall(SYS_io_destroy, ctx);
out:
	free(buf);
	close(fd);
	return err;
}

static int do_op(struct client *c, int op)
{
	char path[128], buf[4096];
	struct stat st;
	unsigned int seq;
	DIR *d;
	int fd, i;
	ssize_t n;

	switch (op) {
	case OP_TRACKED:
		seq = c->seq++;
		snprintf(path, sizeof(path), MNT "/t-%d-%u", c->cpu, seq);
		/*
		 * O_PATH: the LOOKUP and nothing else.  stat() would also
		 * send a GETATTR when an inode was evicted while the LOOKUP
		 * was out (fuse_change_attributes_common() then keeps the
		 * attributes invalid), and an abort can fail that GETATTR
		 * after the LOOKUP was answered.
		 */
		fd = open(path, O_PATH | O_CLOEXEC);
		if (fd < 0) {
			client_err[c->cpu][seq] = errno;
			return errno;
		}
		close(fd);
		client_ok[c->cpu][seq] = 1;
		return 0;
	case OP_GETATTR:
		snprintf(path, sizeof(path), MNT "/g-%d", c->cpu);
		return stat(path, &st) ? errno : 0;
	case OP_READ:
		snprintf(path, sizeof(path), MNT "/r-%d", c->cpu);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return errno;
		n = pread(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			i = errno;
			close(fd);
			return i;
		}
		for (i = 0; i < n; i++)
			if (buf[i] != 'a' + i % 26)
				break;
		close(fd);
		if (n != sizeof(buf) || i != n) {
			printf("# CPU %d: bad data (%zd bytes)\n", c->cpu, n);
			return EIO;
		}
		return 0;
	case OP_CREATE:
		/* A name the server says is not there; a new one each time,
		 * so that a create that landed on the bare mount point during
		 * a remount does not meet the next one.  In a directory of its
		 * own: a create locks its directory exclusively, and a handler
		 * looking up a name in the root while an outer LOOKUP holds
		 * the root shared would wait behind that writer forever (a
		 * deadlock of nested requests in any FUSE daemon).
		 */
		snprintf(path, sizeof(path), MNT "/dir-c/noent-c-%d-%u",
			 c->cpu, c->seq++);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0)
			return errno;
		close(fd);
		return unlink(path) ? errno : 0;
	case OP_HOLD:
	case OP_NESTED:
		snprintf(path, sizeof(path), MNT "/%s-%d-%u",
			 op == OP_HOLD ? "h" : "n", c->cpu, c->seq++);
		return stat(path, &st) ? errno : 0;
	case OP_AREAD:
		return do_aread(c);
	case OP_READDIR:
		d = opendir(MNT);
		if (!d)
			return errno;
		errno = 0;
		while (readdir(d))
			;
		i = errno;
		closedir(d);
		return i;
	}
	return EINVAL;
}

static void *client_thread(void *p)
{
	struct client *c = p;
	char name[16];

	snprintf(name, sizeof(name), "client-%d", c->cpu);
	pthread_setname_np(pthread_self(), name);
	if (pin_to_cpu(c->cpu)) {
		printf("# cannot pin to CPU %d\n", c->cpu);
		c->unexpected++;
		return NULL;
	}
	while (!atomic_load(&stop_all) && c->seq < MAX_SEQ - 1) {
		int op = rnd(&c->rnd) % 11, err;
		unsigned int e0, e1;
		long long t0, t;

		op = op < 4 ? OP_TRACKED : op - 3;	/* 4 in 11 tracked */
		e0 = atomic_load(&epoch);
		t0 = now_ns();
		atomic_store(&c->op_start, t0);
		err = do_op(c, op);
		atomic_store(&c->op_start, 0);
		t = now_ns() - t0;
		if (t > c->longest)
			c->longest = t;
		e1 = atomic_load(&epoch);
		if (!err) {
			c->ok[op]++;
			continue;
		}
		c->failed[op]++;
		/* Failing is fine only across an abort, with its errors */
		if ((e0 == e1 && !(e0 & 1)) || !abort_errno(err)) {
			c->unexpected++;
			c->last_errno = err;
			c->last_op = op;
		}
	}
	return NULL;
}

static int tap_n;

static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigusr2 };
	unsigned long unexpected = 0, lost = 0, phantom = 0, twice = 0;
	unsigned long tracked_ok = 0, ops = 0, failed = 0;
	long long longest = 0, end;
	pthread_t chaos_thr;
	bool hung = false;
	char diag[4096];
	int opt, i, op;
	unsigned int s;

	while ((opt = getopt(argc, argv, "d:r:s:H:n")) != -1) {
		switch (opt) {
		case 'd':
			duration = atoi(optarg);
			break;
		case 'r':
			remount_every = atoi(optarg);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'H':
			hang_limit = atoi(optarg);
			break;
		case 'n':
			calm = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-d secs] [-r secs] [-s seed] [-H secs]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..6\n");
	printf("# stress: %d s, abort and remount every %d s, seed %u\n",
	       duration, remount_every, seed);
	sigaction(SIGUSR2, &sa, NULL);	/* no SA_RESTART: read() returns */
	ncpu = nr_cpus_online();
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (i = 0; i < ncpu; i++) {
		answered[i] = calloc(MAX_SEQ, 1);
		client_ok[i] = calloc(MAX_SEQ, 1);
		client_err[i] = calloc(MAX_SEQ, 1);
		if (!answered[i] || !client_ok[i] || !client_err[i]) {
			printf("Bail out! no memory\n");
			return 1;
		}
	}
	mkdir(MNT, 0755);
	s = seed;
	mount_generation(&s);

	for (i = 0; i < ncpu; i++) {
		clients[i].cpu = i;
		clients[i].rnd = seed * 31 + i;
		pthread_create(&clients[i].thr, NULL, client_thread, &clients[i]);
	}
	pthread_create(&chaos_thr, NULL, chaos_thread, NULL);

	/*
	 * Watchdog: no operation may take longer than the hang limit, and the
	 * chaos thread must finish (it waits for readers to leave read())
	 */
	end = now_ns() + (duration + 2) * 1000000000LL;
	while (!hung && (now_ns() < end || !atomic_load(&chaos_done))) {
		static int tick;

		sleep(1);
		if (++tick % 5 == 0) {
			unsigned long n = 0;

			for (i = 0; i < ncpu; i++)
				for (op = 0; op < NR_OPS; op++)
					n += clients[i].ok[op];
			printf("# %d s: %lu operations done, %lu aborts\n",
			       tick, n, chaos.aborts);
		}
		for (i = 0; i < ncpu; i++) {
			long long t0 = atomic_load(&clients[i].op_start);

			if (t0 && now_ns() - t0 > hang_limit * 1000000000LL) {
				printf("# CPU %d: operation stuck for %d s\n",
				       i, hang_limit);
				hung = true;
			}
		}
		if (now_ns() > end + hang_limit * 1000000000LL) {
			printf("# the chaos thread is stuck\n");
			hung = true;
		}
	}
	if (hung) {
		int fd = open("/proc/sysrq-trigger", O_WRONLY);

		/* Every task's kernel stack, on the console */
		if (fd >= 0 && write(fd, "t", 1) != 1)
			printf("# no sysrq\n");
		if (fd >= 0)
			close(fd);
		dump_threads();
		if (fsrv_conn_file(&srv, "waiting", diag, sizeof(diag)) > 0)
			printf("# waiting: %s", diag);
		tap(false, "no operation hung");
		fflush(stdout);
		/* Nothing else can be trusted; the guest's watchdog ends it */
		_exit(1);
	}
	pthread_join(chaos_thr, NULL);
	atomic_store(&stop_all, 1);
	for (i = 0; i < ncpu; i++)
		pthread_join(clients[i].thr, NULL);

	/* After all that, the last connection still serves every CPU */
	for (i = 0; i < ncpu; i++) {
		struct stat st;
		char path[64];

		snprintf(path, sizeof(path), MNT "/final-%d", i);
		if (pin_to_cpu(i) || stat(path, &st)) {
			printf("# final stat on CPU %d: %s\n", i, strerror(errno));
			unexpected++;
		}
	}
	end_generation();

	for (i = 0; i < ncpu; i++) {
		struct client *c = &clients[i];
		unsigned int q;

		for (q = 0; q < c->seq; q++) {
			unsigned char a = atomic_load(&answered[i][q]);

			if (a > 1)
				twice++;
			else if (a && !client_ok[i][q] && lost++ < 5)
				printf("# lost: t-%d-%u answered, the client got %s\n",
				       i, q, strerror(client_err[i][q]));
			else if (!a && client_ok[i][q])
				phantom++;
			tracked_ok += client_ok[i][q];
		}
		for (op = 0; op < NR_OPS; op++) {
			ops += c->ok[op] + c->failed[op];
			failed += c->failed[op];
		}
		unexpected += c->unexpected;
		if (c->unexpected)
			printf("# CPU %d: %lu unexpected failures, last: %s: %s\n",
			       i, c->unexpected, op_names[c->last_op],
			       strerror(c->last_errno));
		if (c->longest > longest)
			longest = c->longest;
	}
	printf("# clients: %lu operations, %lu failed during aborts; tracked lookups: %lu succeeded\n",
	       ops, failed - unexpected, tracked_ok);
	for (op = 0; op < NR_OPS; op++) {
		unsigned long ok = 0, bad = 0;

		for (i = 0; i < ncpu; i++) {
			ok += clients[i].ok[op];
			bad += clients[i].failed[op];
		}
		printf("#   %-16s %8lu ok %6lu failed\n", op_names[op], ok, bad);
	}
	printf("# server: %lu requests read, %lu tracked lookups answered\n",
	       atomic_load(&srv_requests), atomic_load(&srv_answers));
	printf("# chaos: %lu binds (%lu refused as busy, %lu failed), %lu unbinds, %lu clones closed and re-cloned, %lu aborts and remounts\n",
	       chaos.binds, chaos.bind_busy, chaos.bind_fail, chaos.unbinds,
	       chaos.closes, chaos.aborts);
	printf("# longest operation: %lld ms; abort and remount took %lld ms on average\n",
	       longest / 1000000,
	       chaos.aborts ? chaos.remount_ns / chaos.aborts / 1000000 : 0);

	tap(true, "no operation hung (limit %d s)", hang_limit);
	tap(!lost && !phantom && tracked_ok == atomic_load(&srv_answers),
	    "every tracked lookup answered exactly once: client %lu, server %lu, lost %lu, unanswered %lu",
	    tracked_ok, atomic_load(&srv_answers), lost, phantom);
	tap(!twice, "no request answered twice (%lu)", twice);
	tap(!unexpected, "operations failed only across aborts, with abort errors (%lu not)",
	    unexpected);
	tap(!chaos.bind_fail, "every bind of the chaos thread succeeded, met an abort or a busy CPU");
	tap(calm || (chaos.aborts > 0 && chaos.closes > 0 && chaos.binds > 0 &&
		     tracked_ok > 0),
	    "the chaos happened and requests flowed");
	rmdir(MNT);
	return 0;
}
