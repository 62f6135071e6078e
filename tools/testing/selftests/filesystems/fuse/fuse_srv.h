/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small raw /dev/fuse server for the FUSE per-device input queue selftests: no
 * libfuse, one reader thread per fd, and a log of which fd read each
 * request on which CPU.
 */
#ifndef FUSE_SRV_H
#define FUSE_SRV_H

#include <linux/fuse.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/*
 * FUSE_NOTIFY_RESEND and its flag came with protocol 7.40 (Linux 6.9); a
 * tree with an older <linux/fuse.h> builds the tests with these, and
 * fsrv_resend_missing() skips what needs them.
 */
#if FUSE_KERNEL_MINOR_VERSION < 40
#define FUSE_NOTIFY_RESEND	7
#define FUSE_UNIQUE_RESEND	0x8000000000000000ULL
#endif

#define FSRV_MAX_FDS	80
/* The fd_idx of what FUSE-over-io-uring carried (fsrv_uring_start()) */
#define FSRV_RING_IDX	(-2)
#define FSRV_BUFSIZE	(FUSE_MIN_READ_BUFFER + 256 * 1024)

struct fsrv_rec {
	uint32_t opcode;
	int fd_idx;		/* which srv->fds read it, or FSRV_RING_IDX */
	int cpu;		/* CPU of the reader when the read returned */
	int qid;		/* the io-uring queue that carried it, or -1 */
	uint64_t unique;
	uint64_t nodeid;
	uint32_t pid;		/* in.h.pid: the issuing thread, 0 if none */
	char name[56];		/* LOOKUP name */
};

struct fsrv;
struct fsrv_uring;

/*
 * How a reader thread waits for requests, as daemons do:
 *   FSRV_BLOCKING  read() on a blocking fd
 *   FSRV_POLL      poll() for POLLIN, then read() on a blocking fd
 *   FSRV_EPOLL_LT  a level-triggered epoll set, one read() per event
 *   FSRV_EPOLL_ET  an edge-triggered epoll set, read() until EAGAIN
 *   FSRV_EPOLL_EXCL an epoll set of its own with EPOLLEXCLUSIVE, read()
 *                  until EAGAIN
 *   FSRV_URING     io_uring IORING_OP_READ on a blocking fd
 *   FSRV_SIGIO     O_ASYNC: wait for SIGIO, then read() until EAGAIN
 *   FSRV_SPLICE    splice() from the fd into a pipe, then read the pipe
 *   FSRV_WORKER    read() on a blocking fd, and hand each request to a
 *                  worker thread of the reader's, which writes the reply
 *                  while the reader reads on; started by the reader, it
 *                  runs where the reader may (a pinned reader's, on its CPU)
 * The styles that read until EAGAIN set O_NONBLOCK on the fd.
 */
enum fsrv_style {
	FSRV_BLOCKING,
	FSRV_POLL,
	FSRV_EPOLL_LT,
	FSRV_EPOLL_ET,
	FSRV_EPOLL_EXCL,
	FSRV_URING,
	FSRV_SIGIO,
	FSRV_SPLICE,
	FSRV_WORKER,
	FSRV_NR_STYLES
};

extern const char *const fsrv_style_name[FSRV_NR_STYLES];

/*
 * Called by a reader for every request before the default handling;
 * return true if the hook answered (or chose not to answer) the request.
 */
typedef bool (*fsrv_hook_t)(struct fsrv *srv, int fd_idx,
			    const struct fuse_in_header *in, const void *arg);

struct fsrv {
	char mnt[128];
	int nfds;
	int fds[FSRV_MAX_FDS];
	int reader_cpu[FSRV_MAX_FDS];	/* -1: do not pin */
	bool reading[FSRV_MAX_FDS];
	pthread_t thr[4 * FSRV_MAX_FDS];	/* reader threads */
	pid_t tid[4 * FSRV_MAX_FDS];		/* their thread ids */
	int nthr;
	uint32_t minor;
	unsigned int conn;		/* fusectl connection number */
	fsrv_hook_t hook;
	void *priv;
	bool nolog;			/* no request log (benchmarks) */
	enum fsrv_style style;		/* how its readers wait */
	int started;			/* readers that reached their loop */

	pthread_mutex_t lock;		/* protects what follows */
	struct fsrv_rec *log;
	size_t nlog, cap;
	uint64_t forget_nlookup;	/* sum of nlookup in (batch) forgets */
	uint64_t lookups;		/* successful LOOKUP replies */
	uint64_t interrupts;

	bool uring_init;		/* INIT agreed on FUSE_OVER_IO_URING */
	bool timeouts;			/* INIT set a request timeout */
	size_t max_payload;		/* the kernel's largest ring payload */
	struct fsrv_uring *uring;	/* the ring's threads, once started */
};

/* What fsrv_mount() answers FUSE_INIT with, beyond its defaults */
struct fsrv_opts {
	uint32_t init_flags;		/* e.g. FUSE_WRITEBACK_CACHE */
	uint16_t max_background;	/* default 64 */
	/*
	 * Answer FUSE_OVER_IO_URING when the kernel offers it (see
	 * fsrv_uring_missing()).  Until fsrv_uring_start() has registered
	 * an entry on every queue, the kernel then holds new requests back
	 * (fuse_block_alloc()); forced ones (args->force) still go to
	 * /dev/fuse, as forgets and interrupts always do.
	 */
	bool io_uring;
	/*
	 * Ask the kernel to abort the connection when a request waits longer
	 * than this many seconds (FUSE_REQUEST_TIMEOUT, Linux 6.14), where it
	 * offers that; srv->timeouts says whether it did.
	 */
	uint16_t request_timeout;
};

int fsrv_mount(struct fsrv *srv, const char *mnt);
int fsrv_mount_opts(struct fsrv *srv, const char *mnt,
		    const struct fsrv_opts *opts);
int fsrv_clone(struct fsrv *srv);
/* A clone of the mount fd into srv->fds[idx], replacing nothing: 0 or -errno */
int fsrv_clone_at(struct fsrv *srv, int idx);
/* FUSE_DEV_IOC_BIND of srv->fds[idx]: 0 or -errno */
int fsrv_bind(struct fsrv *srv, int idx, uint32_t flags, int cpu, int node);

/*
 * Why a test that binds cannot run here, or NULL: a kernel without
 * FUSE_DEV_IOC_BIND answers ENOTTY where ours answers EPERM (an fd with
 * no connection).
 */
const char *fsrv_bind_missing(void);

/* Why a reader style cannot run here (io_uring off or absent), or NULL */
const char *fsrv_style_missing(enum fsrv_style style);

/*
 * Why a test of FUSE_NOTIFY_RESEND cannot run on @srv's connection, or
 * NULL: the kernel's protocol is older than 7.40 (Linux 6.9).
 */
const char *fsrv_resend_missing(const struct fsrv *srv);

double fsrv_now_ms(void);

/* Wait up to @ms milliseconds for @cond, evaluated every millisecond */
#define FSRV_WAIT(cond, ms) ({						\
	double __end = fsrv_now_ms() + (ms);				\
	bool __ok;							\
									\
	for (;;) {							\
		__ok = (cond);						\
		if (__ok || fsrv_now_ms() >= __end)			\
			break;						\
		usleep(1000);						\
	}								\
	__ok;								\
})
int fsrv_start_reader(struct fsrv *srv, int idx, int cpu);
/* Wait until @n readers run their loop and have had time to block */
int fsrv_wait_readers(struct fsrv *srv, int n, int timeout_ms);
/* Wait until every reader thread sleeps (in read(), or where it waits) */
int fsrv_wait_idle(struct fsrv *srv, int timeout_ms);
/* Whether thread @tid of this process sleeps (state S) */
bool fsrv_thread_sleeps(pid_t tid);
/* Wait until thread @tid of this process sleeps: 0 or -ETIMEDOUT */
int fsrv_wait_asleep(pid_t tid, int timeout_ms);
void fsrv_start(struct fsrv *srv);
void fsrv_destroy(struct fsrv *srv);
uint64_t fsrv_ino(const char *name);
int fsrv_reply(int fd, uint64_t unique, int error, const void *data,
	       size_t len);
/*
 * Answer a request read by srv->fds[@idx], or, with FSRV_RING_IDX, the
 * ring request that the calling ring thread handles (in a hook)
 */
int fsrv_answer(struct fsrv *srv, int idx, uint64_t unique, int error,
		const void *data, size_t len);
void fsrv_handle(struct fsrv *srv, int idx, const struct fuse_in_header *in,
		 const void *arg);

/* Helpers for tests */
/*
 * LOOKUPs of names starting with @prefix that srv->fds[@fd_idx] read
 * (FSRV_RING_IDX: the ring; -1: any reader)
 */
int fsrv_count_name_prefix(struct fsrv *srv, const char *prefix, int fd_idx);
int fsrv_find_name(struct fsrv *srv, const char *name, int *fd_idx);
int fsrv_conn_file(struct fsrv *srv, const char *file, char *buf, size_t len);
int fsrv_conn_write(struct fsrv *srv, const char *file, const char *val);
/* Write @val to the file at @path (sysfs, procfs): 0 or -errno */
int fsrv_write_file(const char *path, const char *val);
int fsrv_wait_waiting(struct fsrv *srv, int n, int timeout_ms);
/*
 * Reap child @pid within @ms; if it is stuck, print the connection's
 * waiting count and the child's kernel stack, and return -ETIMEDOUT
 */
int fsrv_wait_child(struct fsrv *srv, pid_t pid, int ms, int *status);
/* The fd index (into srv->fds) that read the LOOKUP of @name, or -1 */
int fsrv_reader_of(struct fsrv *srv, const char *name);
/* stat() of a name in a thread pinned to a CPU (-1: not pinned) */
struct fsrv_job {
	char path[160];
	const char *name;	/* in path, after the mount point */
	int cpu;
	int err;		/* -1 while running, then 0 or an errno */
	pid_t tid;
	pthread_t thr;
};

void fsrv_job_stat(struct fsrv_job *j, const char *mnt, const char *name,
		   int cpu);
bool fsrv_job_done(struct fsrv_job *j);
int fsrv_job_wait(struct fsrv_job *j);

/*
 * FUSE-over-io-uring: after a mount with fsrv_opts.io_uring, the ring
 * has a queue per possible CPU (nr_cpus_possible()), and is used once
 * every queue has an entry.  fsrv_uring_start() registers @depth entries
 * on each queue from the last one it registered up to @nr_queues (-1:
 * all), from one io_uring per online CPU, in a thread pinned there (the
 * queues of offline CPUs share an unpinned thread).  Each request is
 * logged with fd_idx FSRV_RING_IDX, its queue, and the thread's CPU, and
 * handled as fsrv_handle() does, after the hook.  A request that the hook
 * leaves unanswered keeps its entry until the connection ends.  Returns
 * 0, or -errno: -EOPNOTSUPP where INIT did not agree on io-uring or
 * there is no ring support here, else the first registration's error.
 * fsrv_uring_stop() ends the threads (fsrv_destroy() does, after the
 * abort).
 */
int fsrv_uring_start(struct fsrv *srv, int nr_queues, int depth);
void fsrv_uring_stop(struct fsrv *srv);
/*
 * Why FUSE-over-io-uring cannot run here, or NULL: built without the
 * io-uring uapi or liburing, a kernel without it, enable_uring off, no
 * io_uring; with @srv, also a mount whose INIT did not agree on it
 */
const char *fsrv_uring_missing(const struct fsrv *srv);
/* fuse's enable_uring parameter: 1 (Y), 0 (N), or -errno */
int fsrv_uring_enabled(void);
/* Set it (as root, before the mount): 0 or -errno */
int fsrv_uring_enable(bool on);

int pin_to_cpu(int cpu);
int nr_cpus_online(void);
/* The possible CPUs: the number of the kernel's ring queues */
int nr_cpus_possible(void);
int cpu_node(int cpu);
bool cpu_online_(int cpu);

#endif
