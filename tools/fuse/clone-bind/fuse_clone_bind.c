// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_clone_bind.so: bind the /dev/fuse clones of an unmodified daemon to
 * CPUs (FUSE_DEV_IOC_BIND) and pin the thread that serves each clone to its
 * CPU.  Preload it into a dynamically linked daemon:
 *
 *   LD_PRELOAD=/path/to/fuse_clone_bind.so my_fuse_daemon -o clone_fd ...
 *
 * It watches ioctl(FUSE_DEV_IOC_CLONE): each new clone is bound to the next
 * CPU (or node) in turn.  It cannot pin the thread that clones: libfuse's
 * multithreaded loop clones in the thread that *starts* a worker (the main
 * thread, or a busy worker starting one more) and the new worker reads the
 * clone.  So the pinning waits for the first read(), readv() or splice() of
 * a bound clone: the thread doing it is pinned to the clone's CPU (node).
 * The cost on every read is one array load and compare.
 *
 * Environment:
 *   FUSE_CLONE_BIND=cpu|node|off   bind each clone to a CPU (default), to a
 *                                  NUMA node, or do nothing
 *   FUSE_CLONE_BIND_CPUS=LIST      CPUs to use, e.g. "0-3,8", in the order
 *                                  given; default: every CPU the process
 *                                  may run on (sched_getaffinity), node by
 *                                  node in turn (the first CPU of each node,
 *                                  then the second of each, ...)
 *   FUSE_CLONE_BIND_DEBUG=1        one line on stderr per binding and pin
 *
 * On a kernel without FUSE_DEV_IOC_BIND (stock fuse.ko: ENOTTY) it turns
 * itself off for the process, silently, and changes nothing.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/fuse.h>

#ifndef FUSE_DEV_IOC_BIND
/* From the series' include/uapi/linux/fuse.h, for older system headers */
struct fuse_dev_bind {
	uint32_t	flags;
	int32_t		cpu;
	int32_t		node;
	uint32_t	padding;
};

#define FUSE_DEV_BIND_CPU	0x1
#define FUSE_DEV_BIND_NODE	0x2
#define FUSE_DEV_IOC_BIND	_IOW(FUSE_DEV_IOC_MAGIC, 255, struct fuse_dev_bind)
#endif

#define FCB_MAX_FD	65536
#define FCB_MAX_NODES	1024
#define FUSE_MINOR	229

enum fcb_mode { FCB_OFF, FCB_CPU, FCB_NODE };

static enum fcb_mode mode = FCB_OFF;
static int debug;
static int disabled;		/* the kernel cannot bind */

/* What clones are bound to, in turn: CPUs, or nodes with their CPU sets */
static int *targets;
static cpu_set_t *target_cpus;	/* per node target: its allowed CPUs */
static unsigned int ntargets;
static unsigned int next_target;
static unsigned int next_seq;

/*
 * Per fd: 0, or the key of its binding: a sequence number in the high half
 * (so that a reused fd does not match a stale key) and the target index in
 * the low half.  Each thread remembers the key it was pinned for.
 */
#define KEY_SHIFT	(sizeof(unsigned long) * 4)
#define KEY_TARGET(k)	((k) & ((1UL << KEY_SHIFT) - 1))

static unsigned long fd_key[FCB_MAX_FD];
static __thread unsigned long tls_key __attribute__((tls_model("initial-exec")));
static __thread int tls_fd __attribute__((tls_model("initial-exec")));

static int (*real_ioctl)(int, unsigned long, ...);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_splice)(int, loff_t *, int, loff_t *, size_t,
			      unsigned int);
static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

static void say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	if (!debug)
		return;
	n = snprintf(buf, sizeof(buf), "fuse_clone_bind[%d]: ", getpid());
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, n) < 0)
		return;
}

static void resolve(void)
{
	real_ioctl = dlsym(RTLD_NEXT, "ioctl");
	real_read = dlsym(RTLD_NEXT, "read");
	real_readv = dlsym(RTLD_NEXT, "readv");
	real_splice = dlsym(RTLD_NEXT, "splice");
	real_close = dlsym(RTLD_NEXT, "close");
	real_dup2 = dlsym(RTLD_NEXT, "dup2");
	real_dup3 = dlsym(RTLD_NEXT, "dup3");
}

/* Parse "0-3,8,10-11" into @out in the order given; returns the count */
static int parse_cpulist(const char *s, int *out, int max)
{
	int n = 0;

	while (*s) {
		char *end;
		long a, b;

		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		a = strtol(s, &end, 10);
		if (end == s || a < 0)
			return -1;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -1;
			s = end;
		}
		if (*s && *s != ',' && !isspace((unsigned char)*s))
			return -1;
		for (; a <= b; a++) {
			if (a >= CPU_SETSIZE)
				return -1;
			if (n < max)
				out[n++] = a;
		}
	}
	return n;
}

/* cpu_node[cpu] from /sys/devices/system/node; 0 where unknown */
static int cpu_node[CPU_SETSIZE], cpu_rank[CPU_SETSIZE];

static void read_topology(void)
{
	static int cpus[CPU_SETSIZE];
	struct dirent *de;
	DIR *d;
	int i;

	d = opendir("/sys/devices/system/node");
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[300], line[4096];
		int node, n;
		FILE *f;

		if (sscanf(de->d_name, "node%d", &node) != 1 ||
		    node < 0 || node >= FCB_MAX_NODES)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/%s/cpulist",
			 de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			n = parse_cpulist(line, cpus, CPU_SETSIZE);
			for (i = 0; i < n; i++)
				cpu_node[cpus[i]] = node;
		}
		fclose(f);
	}
	closedir(d);
}

static int cmp_spread(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (cpu_rank[x] != cpu_rank[y])
		return cpu_rank[x] - cpu_rank[y];
	if (cpu_node[x] != cpu_node[y])
		return cpu_node[x] - cpu_node[y];
	return x - y;
}

static void setup_targets(void)
{
	static int cpus[CPU_SETSIZE];
	const char *list = getenv("FUSE_CLONE_BIND_CPUS");
	cpu_set_t allowed;
	int ncpus = 0, i, n;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	read_topology();

	if (list && *list) {
		int given[CPU_SETSIZE];

		n = parse_cpulist(list, given, CPU_SETSIZE);
		if (n < 0) {
			fprintf(stderr, "fuse_clone_bind: bad FUSE_CLONE_BIND_CPUS=\"%s\": off\n",
				list);
			return;
		}
		for (i = 0; i < n; i++) {
			int j, dup = 0;

			for (j = 0; j < ncpus; j++)
				dup |= cpus[j] == given[i];
			if (dup)
				continue;
			if (!CPU_ISSET(given[i], &allowed)) {
				say("cpu %d is not allowed: left out", given[i]);
				continue;
			}
			cpus[ncpus++] = given[i];
		}
	} else {
		/*
		 * Node by node: the first allowed CPU of each node, then the
		 * second of each, ...: sort by (rank in node, node, cpu)
		 */
		static int rank[FCB_MAX_NODES];

		for (i = 0; i < CPU_SETSIZE; i++) {
			if (!CPU_ISSET(i, &allowed))
				continue;
			cpus[ncpus++] = i;
			cpu_rank[i] = rank[cpu_node[i]]++;
		}
		qsort(cpus, ncpus, sizeof(*cpus), cmp_spread);
	}
	if (!ncpus)
		return;

	targets = calloc(ncpus, sizeof(*targets));
	if (!targets)
		return;
	if (mode == FCB_CPU) {
		memcpy(targets, cpus, ncpus * sizeof(*targets));
		ntargets = ncpus;
		return;
	}
	/* Nodes in the order their CPUs come, each with its CPUs */
	target_cpus = calloc(ncpus, sizeof(*target_cpus));
	if (!target_cpus)
		return;
	for (i = 0; i < ncpus; i++) {
		int node = cpu_node[cpus[i]];
		unsigned int t;

		for (t = 0; t < ntargets && targets[t] != node; t++)
			;
		if (t == ntargets) {
			targets[ntargets++] = node;
			CPU_ZERO(&target_cpus[t]);
		}
		CPU_SET(cpus[i], &target_cpus[t]);
	}
}

__attribute__((constructor))
static void fcb_init(void)
{
	const char *m = getenv("FUSE_CLONE_BIND");
	const char *dbg = getenv("FUSE_CLONE_BIND_DEBUG");

	resolve();
	debug = dbg && *dbg && strcmp(dbg, "0");
	if (!m || !*m || !strcmp(m, "cpu")) {
		mode = FCB_CPU;
	} else if (!strcmp(m, "node")) {
		mode = FCB_NODE;
	} else {
		if (strcmp(m, "off"))
			fprintf(stderr,
				"fuse_clone_bind: bad FUSE_CLONE_BIND=\"%s\" (cpu, node or off): off\n",
				m);
		return;
	}
	setup_targets();
	if (!ntargets) {
		mode = FCB_OFF;
		say("no CPU to bind clones to: off");
		return;
	}
	say("binding clones per %s over %u %s",
	    mode == FCB_CPU ? "cpu" : "node", ntargets,
	    mode == FCB_CPU ? "cpus" : "nodes");
}

/* A clone was made on @fd: bind it to the next target in turn */
static void bind_clone(int fd)
{
	unsigned int tries;

	if (fd < 0 || fd >= FCB_MAX_FD) {
		say("fd %d is too high to track: not bound", fd);
		return;
	}
	for (tries = 0; tries < ntargets; tries++) {
		unsigned int t = __atomic_fetch_add(&next_target, 1,
						    __ATOMIC_RELAXED) % ntargets;
		struct fuse_dev_bind b = {
			.flags = mode == FCB_CPU ? FUSE_DEV_BIND_CPU :
						   FUSE_DEV_BIND_NODE,
			.cpu = mode == FCB_CPU ? targets[t] : -1,
			.node = mode == FCB_CPU ? -1 : targets[t],
		};
		unsigned long seq, mask = (1UL << KEY_SHIFT) - 1;

		if (real_ioctl(fd, FUSE_DEV_IOC_BIND, &b)) {
			if (errno == ENOTTY || errno == EINVAL) {
				/* Stock fuse.ko: nothing to do, ever */
				__atomic_store_n(&disabled, 1, __ATOMIC_RELAXED);
				say("FUSE_DEV_IOC_BIND: %s: binding off",
				    strerror(errno));
				return;
			}
			if (errno == ENXIO)	/* offline: try the next */
				continue;
			say("fd %d: FUSE_DEV_IOC_BIND %s %d: %s: not bound", fd,
			    mode == FCB_CPU ? "cpu" : "node", targets[t],
			    strerror(errno));
			return;
		}
		seq = __atomic_add_fetch(&next_seq, 1, __ATOMIC_RELAXED) & mask;
		if (!seq)
			seq = __atomic_add_fetch(&next_seq, 1, __ATOMIC_RELAXED) & mask;
		__atomic_store_n(&fd_key[fd], seq << KEY_SHIFT | t, __ATOMIC_RELEASE);
		say("fd %d bound to %s %d", fd, mode == FCB_CPU ? "cpu" : "node",
		    targets[t]);
		return;
	}
	say("fd %d: every target is offline: not bound", fd);
}

static int is_fuse_dev(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISCHR(st.st_mode) &&
	       major(st.st_rdev) == 10 && minor(st.st_rdev) == FUSE_MINOR;
}

/* The slow path: the calling thread reads a bound clone it is not pinned for */
static void pin_reader(int fd, unsigned long key)
{
	unsigned int t = KEY_TARGET(key);
	cpu_set_t one, *set;
	int saved = errno;

	/* Still serving the clone it was pinned for: leave it there */
	if (tls_key && __atomic_load_n(&fd_key[tls_fd], __ATOMIC_ACQUIRE) == tls_key)
		return;
	/* Closed behind our back and reused for something else: forget it */
	if (!is_fuse_dev(fd)) {
		__atomic_compare_exchange_n(&fd_key[fd], &key, 0, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		errno = saved;
		return;
	}
	if (mode == FCB_CPU) {
		CPU_ZERO(&one);
		CPU_SET(targets[t], &one);
		set = &one;
	} else {
		set = &target_cpus[t];
	}
	tls_key = key;
	tls_fd = fd;
	if (sched_setaffinity(0, sizeof(*set), set))
		say("thread %d: cannot pin to %s %d: %s", gettid(),
		    mode == FCB_CPU ? "cpu" : "node", targets[t],
		    strerror(errno));
	else
		say("thread %d reads fd %d: pinned to %s %d", gettid(), fd,
		    mode == FCB_CPU ? "cpu" : "node", targets[t]);
	errno = saved;
}

static inline void check_reader(int fd)
{
	unsigned long key;

	if ((unsigned int)fd >= FCB_MAX_FD)
		return;
	key = __atomic_load_n(&fd_key[fd], __ATOMIC_ACQUIRE);
	if (__builtin_expect(key && key != tls_key, 0))
		pin_reader(fd, key);
}

static inline void forget_fd(int fd)
{
	if ((unsigned int)fd < FCB_MAX_FD &&
	    __atomic_load_n(&fd_key[fd], __ATOMIC_RELAXED))
		__atomic_store_n(&fd_key[fd], 0, __ATOMIC_RELEASE);
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);

	if (!real_ioctl)
		resolve();
	ret = real_ioctl(fd, request, arg);
	if (request == FUSE_DEV_IOC_CLONE && !ret && mode != FCB_OFF &&
	    !__atomic_load_n(&disabled, __ATOMIC_RELAXED)) {
		int saved = errno;

		bind_clone(fd);
		errno = saved;
	}
	return ret;
}

ssize_t read(int fd, void *buf, size_t count)
{
	if (!real_read)
		resolve();
	check_reader(fd);
	return real_read(fd, buf, count);
}

ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	if (!real_readv)
		resolve();
	check_reader(fd);
	return real_readv(fd, iov, iovcnt);
}

ssize_t splice(int fd_in, loff_t *off_in, int fd_out, loff_t *off_out,
	       size_t len, unsigned int flags)
{
	if (!real_splice)
		resolve();
	check_reader(fd_in);
	return real_splice(fd_in, off_in, fd_out, off_out, len, flags);
}

int close(int fd)
{
	if (!real_close)
		resolve();
	forget_fd(fd);
	return real_close(fd);
}

int dup2(int oldfd, int newfd)
{
	if (!real_dup2)
		resolve();
	if (oldfd != newfd)
		forget_fd(newfd);
	return real_dup2(oldfd, newfd);
}

int dup3(int oldfd, int newfd, int flags)
{
	if (!real_dup3)
		resolve();
	if (oldfd != newfd)
		forget_fd(newfd);
	return real_dup3(oldfd, newfd, flags);
}
