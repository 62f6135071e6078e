// SPDX-License-Identifier: GPL-2.0
/*
 * A small raw /dev/fuse server for the FUSE per-device input queue selftests.
 *
 * The file system: the root directory holds any name you look up; names
 * starting with "noent" do not exist, names starting with "dir" are
 * directories, names starting with "big" are 1 MiB files opened through
 * the page cache (readahead, writeback), everything else is a 4 KiB
 * regular file opened with FOPEN_DIRECT_IO.  File bytes are
 * 'a' + offset % 26; writes are accepted and dropped.  Entry and attribute
 * timeouts are zero, so every stat() reaches the server.
 */
#define _GNU_SOURCE
#include "fuse_srv.h"
#include "../../kselftest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

/*
 * FUSE-over-io-uring needs liburing, and a <linux/fuse.h> of Linux 6.14 or
 * later; the same file builds with older ones, without it
 */
#if defined(HAVE_LIBURING) && defined(FUSE_URING_IN_OUT_HEADER_SZ)
#define FSRV_RING	1
#else
#define FSRV_RING	0
#endif

#define FILE_SIZE	4096
#define BIG_SIZE	(1024 * 1024)
#define INO_DIR		0x1
#define INO_BIG		0x4

static uint64_t name_ino(const char *name)
{
	uint64_t h = 1469598103934665603ULL;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 1099511628211ULL;
	return (h & ~0xffULL) | 2 | (h & 0x1);
}

/* The node id LOOKUP gives @name */
uint64_t fsrv_ino(const char *name)
{
	uint64_t ino = name_ino(name);

	if (!strncmp(name, "dir", 3))
		return ino | INO_DIR;
	ino &= ~(uint64_t)INO_DIR;
	if (!strncmp(name, "big", 3))
		ino |= INO_BIG;
	return ino;
}

int fsrv_reply(int fd, uint64_t unique, int error, const void *data,
	       size_t len)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh) + (error ? 0 : len),
		.error = error,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ &oh, sizeof(oh) },
		{ (void *)data, error ? 0 : len },
	};

	if (writev(fd, iov, 2) < 0)
		return -errno;
	return 0;
}

static int ring_answer(uint64_t unique, int error, const void *data,
		       size_t len);

int fsrv_answer(struct fsrv *srv, int idx, uint64_t unique, int error,
		const void *data, size_t len)
{
	if (idx == FSRV_RING_IDX)
		return ring_answer(unique, error, data, len);
	if (idx < 0 || idx >= FSRV_MAX_FDS)
		return -EBADF;
	return fsrv_reply(srv->fds[idx], unique, error, data, len);
}

static void fill_attr(struct fuse_attr *a, uint64_t ino, bool dir)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = dir ? (S_IFDIR | 0755) : (S_IFREG | 0644);
	a->nlink = dir ? 2 : 1;
	a->size = dir ? 0 : (ino & INO_BIG) ? BIG_SIZE : FILE_SIZE;
	a->blocks = a->size / 512;
	a->blksize = 4096;
}

static bool ino_is_dir(uint64_t ino)
{
	return ino == FUSE_ROOT_ID || (ino & INO_DIR);
}

static void record(struct fsrv *srv, int idx, int qid,
		   const struct fuse_in_header *in, const void *arg)
{
	struct fsrv_rec *r;

	if (srv->nolog)
		return;

	pthread_mutex_lock(&srv->lock);
	if (srv->nlog == srv->cap) {
		srv->cap = srv->cap ? srv->cap * 2 : 1024;
		srv->log = realloc(srv->log, srv->cap * sizeof(*srv->log));
	}
	r = &srv->log[srv->nlog++];
	memset(r, 0, sizeof(*r));
	r->opcode = in->opcode;
	r->fd_idx = idx;
	r->cpu = sched_getcpu();
	r->qid = qid;
	r->unique = in->unique;
	r->nodeid = in->nodeid;
	r->pid = in->pid;
	if (in->opcode == FUSE_LOOKUP)
		snprintf(r->name, sizeof(r->name), "%s", (const char *)arg);
	pthread_mutex_unlock(&srv->lock);
}

void fsrv_handle(struct fsrv *srv, int idx, const struct fuse_in_header *in,
		 const void *arg)
{
	union {
		struct fuse_entry_out entry;
		struct fuse_attr_out attr;
		struct fuse_open_out open;
		struct fuse_statfs_out statfs;
		char data[FILE_SIZE];
	} out;
	memset(&out, 0, sizeof(out));

	switch (in->opcode) {
	case FUSE_LOOKUP: {
		const char *name = arg;
		bool dir = !strncmp(name, "dir", 3);
		uint64_t ino = fsrv_ino(name);

		if (!strncmp(name, "noent", 5)) {
			fsrv_answer(srv, idx, in->unique, -ENOENT, NULL, 0);
			break;
		}
		out.entry.nodeid = ino;
		fill_attr(&out.entry.attr, ino, dir);
		if (fsrv_answer(srv, idx, in->unique, 0, &out.entry,
				sizeof(out.entry)) == 0)
			__atomic_fetch_add(&srv->lookups, 1, __ATOMIC_RELAXED);
		break;
	}
	case FUSE_CREATE: {
		const struct fuse_create_in *ci = arg;
		const char *name = (const char *)(ci + 1);
		struct {
			struct fuse_entry_out entry;
			struct fuse_open_out open;
		} co = {};
		uint64_t ino = name_ino(name) & ~1ULL;

		co.entry.nodeid = ino;
		/* Cache the new entry, so that unlink() finds it */
		co.entry.entry_valid = 3600;
		fill_attr(&co.entry.attr, ino, false);
		co.open.fh = ino;
		co.open.open_flags = FOPEN_DIRECT_IO;
		if (fsrv_answer(srv, idx, in->unique, 0, &co, sizeof(co)) == 0)
			__atomic_fetch_add(&srv->lookups, 1, __ATOMIC_RELAXED);
		break;
	}
	case FUSE_UNLINK:
		fsrv_answer(srv, idx, in->unique, 0, NULL, 0);
		break;
	case FUSE_GETATTR:
		fill_attr(&out.attr.attr, in->nodeid, ino_is_dir(in->nodeid));
		fsrv_answer(srv, idx, in->unique, 0, &out.attr,
			    sizeof(out.attr));
		break;
	case FUSE_SETATTR:
		fill_attr(&out.attr.attr, in->nodeid, ino_is_dir(in->nodeid));
		fsrv_answer(srv, idx, in->unique, 0, &out.attr,
			    sizeof(out.attr));
		break;
	case FUSE_OPEN:
		out.open.fh = in->nodeid;
		if (!(in->nodeid & INO_BIG))
			out.open.open_flags = FOPEN_DIRECT_IO;
		fsrv_answer(srv, idx, in->unique, 0, &out.open,
			    sizeof(out.open));
		break;
	case FUSE_OPENDIR:
		out.open.fh = in->nodeid;
		fsrv_answer(srv, idx, in->unique, 0, &out.open,
			    sizeof(out.open));
		break;
	case FUSE_READ: {
		const struct fuse_read_in *ri = arg;
		uint64_t size = in->nodeid & INO_BIG ? BIG_SIZE : FILE_SIZE;
		size_t n = 0, i;
		char *data;

		if (ri->offset < size)
			n = size - ri->offset;
		if (n > ri->size)
			n = ri->size;
		data = n > sizeof(out.data) ? malloc(n) : out.data;
		for (i = 0; i < n; i++)
			data[i] = 'a' + (ri->offset + i) % 26;
		fsrv_answer(srv, idx, in->unique, 0, data, n);
		if (data != out.data)
			free(data);
		break;
	}
	case FUSE_WRITE: {
		const struct fuse_write_in *wi = arg;
		struct fuse_write_out wo = { .size = wi->size };

		fsrv_answer(srv, idx, in->unique, 0, &wo, sizeof(wo));
		break;
	}
	case FUSE_READDIR: {
		const struct fuse_read_in *ri = arg;
		static const char *const names[] = { ".", "..", "file0" };
		size_t len = 0, i;

		for (i = ri->offset; i < 3; i++) {
			struct fuse_dirent *de = (void *)(out.data + len);
			size_t sz = FUSE_DIRENT_SIZE(&(struct fuse_dirent){
				.namelen = strlen(names[i]) });

			if (len + sz > ri->size)
				break;
			memset(de, 0, sz);
			de->ino = i < 2 ? FUSE_ROOT_ID : name_ino(names[i]);
			de->off = i + 1;
			de->namelen = strlen(names[i]);
			de->type = i < 2 ? DT_DIR : DT_REG;
			memcpy(de->name, names[i], de->namelen);
			len += sz;
		}
		fsrv_answer(srv, idx, in->unique, 0, out.data, len);
		break;
	}
	case FUSE_STATFS:
		out.statfs.st.bsize = 4096;
		out.statfs.st.namelen = 255;
		fsrv_answer(srv, idx, in->unique, 0, &out.statfs,
			    sizeof(out.statfs));
		break;
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
	case FUSE_FSYNC:
	case FUSE_DESTROY:
		fsrv_answer(srv, idx, in->unique, 0, NULL, 0);
		break;
	case FUSE_FORGET: {
		const struct fuse_forget_in *fi = arg;

		pthread_mutex_lock(&srv->lock);
		srv->forget_nlookup += fi->nlookup;
		pthread_mutex_unlock(&srv->lock);
		break;
	}
	case FUSE_BATCH_FORGET: {
		const struct fuse_batch_forget_in *bi = arg;
		const struct fuse_forget_one *one = (const void *)(bi + 1);
		uint32_t i;

		pthread_mutex_lock(&srv->lock);
		for (i = 0; i < bi->count; i++)
			srv->forget_nlookup += one[i].nlookup;
		pthread_mutex_unlock(&srv->lock);
		break;
	}
	case FUSE_INTERRUPT:
		pthread_mutex_lock(&srv->lock);
		srv->interrupts++;
		pthread_mutex_unlock(&srv->lock);
		break;
	default:
		fsrv_answer(srv, idx, in->unique, -EOPNOTSUPP, NULL, 0);
	}
}

struct reader_arg {
	struct fsrv *srv;
	int idx;
	int cpu;	/* several readers of one fd may run on different CPUs */
	pid_t *tid;
};

const char *const fsrv_style_name[FSRV_NR_STYLES] = {
	"blocking", "poll", "epoll_lt", "epoll_et", "epoll_excl", "io_uring",
	"sigio", "splice", "worker",
};

/* A request that a reader handed to its worker (FSRV_WORKER) */
struct work {
	struct work *next;
	char buf[];
};

/* The worker thread of a reader, and what waits for it */
struct worker {
	struct fsrv *srv;
	int idx;
	pthread_t thr;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct work *head, **tail;
	bool stop;
};

/* What a reader's loop keeps between requests */
struct reader {
	struct fsrv *srv;
	int idx, fd;
	int ep;			/* the epoll styles */
	int pipe[2];		/* FSRV_SPLICE */
	sigset_t sigio;		/* FSRV_SIGIO */
#ifdef HAVE_LIBURING
	struct io_uring ring;	/* FSRV_URING */
#endif
	struct worker *worker;	/* FSRV_WORKER */
};

/* Answer what the reader hands over, in order, until told to stop */
static void *worker_run(void *p)
{
	struct worker *w = p;
	struct work *wk;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		wk = w->head;
		if (!wk)
			break;
		w->head = wk->next;
		if (!w->head)
			w->tail = &w->head;
		pthread_mutex_unlock(&w->lock);
		fsrv_handle(w->srv, w->idx, (void *)wk->buf,
			    wk->buf + sizeof(struct fuse_in_header));
		free(wk);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static struct worker *worker_start(struct fsrv *srv, int idx)
{
	struct worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->srv = srv;
	w->idx = idx;
	w->tail = &w->head;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pthread_create(&w->thr, NULL, worker_run, w)) {
		free(w);
		return NULL;
	}
	return w;
}

/* Hand @len bytes of request to @w: 0, or -ENOMEM */
static int worker_queue(struct worker *w, const char *buf, size_t len)
{
	struct work *wk = malloc(sizeof(*wk) + len);

	if (!wk)
		return -ENOMEM;
	memcpy(wk->buf, buf, len);
	wk->next = NULL;
	pthread_mutex_lock(&w->lock);
	*w->tail = wk;
	w->tail = &wk->next;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/* Answer what is queued, then end the worker */
static void worker_stop(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thr, NULL);
	free(w);
}

static int reader_setup(struct reader *r)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct f_owner_ex owner = { F_OWNER_TID, gettid() };
	int fl = fcntl(r->fd, F_GETFL);

	switch (r->srv->style) {
	case FSRV_EPOLL_LT:
	case FSRV_EPOLL_ET:
	case FSRV_EPOLL_EXCL:
		if (r->srv->style == FSRV_EPOLL_ET)
			ev.events |= EPOLLET;
		if (r->srv->style == FSRV_EPOLL_EXCL)
			ev.events |= EPOLLEXCLUSIVE;
		r->ep = epoll_create1(EPOLL_CLOEXEC);
		if (r->ep < 0 || epoll_ctl(r->ep, EPOLL_CTL_ADD, r->fd, &ev))
			return -errno;
		break;
	case FSRV_SIGIO:
		/* Blocked, so that sigwaitinfo() takes it */
		sigemptyset(&r->sigio);
		sigaddset(&r->sigio, SIGIO);
		pthread_sigmask(SIG_BLOCK, &r->sigio, NULL);
		if (fcntl(r->fd, F_SETOWN_EX, &owner) ||
		    fcntl(r->fd, F_SETFL, fl | O_ASYNC))
			return -errno;
		break;
	case FSRV_SPLICE:
		if (pipe2(r->pipe, O_CLOEXEC))
			return -errno;
		fcntl(r->pipe[0], F_SETPIPE_SZ, FSRV_BUFSIZE);
		break;
	case FSRV_URING:
#ifdef HAVE_LIBURING
		return io_uring_queue_init(4, &r->ring, 0);
#else
		return -EOPNOTSUPP;
#endif
	case FSRV_WORKER:
		r->worker = worker_start(r->srv, r->idx);
		return r->worker ? 0 : -ENOMEM;
	default:
		break;
	}
	return 0;
}

static void reader_cleanup(struct reader *r)
{
	if (r->ep >= 0)
		close(r->ep);
	if (r->pipe[0] >= 0) {
		close(r->pipe[0]);
		close(r->pipe[1]);
	}
#ifdef HAVE_LIBURING
	if (r->srv->style == FSRV_URING)
		io_uring_queue_exit(&r->ring);
#endif
	if (r->worker)
		worker_stop(r->worker);
}

/* Wait as the style waits: 0, or -1 when the connection has ended */
static int reader_wait(struct reader *r)
{
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
	struct epoll_event ev;
	int n;

	switch (r->srv->style) {
	case FSRV_POLL:
		do {
			n = poll(&pfd, 1, -1);
		} while (n < 0 && errno == EINTR);
		return n > 0 && !(pfd.revents & (POLLERR | POLLNVAL)) ? 0 : -1;
	case FSRV_EPOLL_LT:
	case FSRV_EPOLL_ET:
	case FSRV_EPOLL_EXCL:
		do {
			n = epoll_wait(r->ep, &ev, 1, -1);
		} while (n < 0 && errno == EINTR);
		return n > 0 && !(ev.events & EPOLLERR) ? 0 : -1;
	case FSRV_SIGIO:
		while (sigwaitinfo(&r->sigio, NULL) < 0)
			if (errno != EINTR)
				return -1;
		return 0;
	default:
		return 0;
	}
}

/* One request into @buf as the style reads it: its length, or -errno */
static ssize_t reader_read(struct reader *r, char *buf)
{
	ssize_t n;

	switch (r->srv->style) {
	case FSRV_SPLICE:
		n = splice(r->fd, NULL, r->pipe[1], NULL, FSRV_BUFSIZE, 0);
		if (n <= 0)
			return n < 0 ? -errno : -ENODEV;
		return read(r->pipe[0], buf, n) == n ? n : -EIO;
#ifdef HAVE_LIBURING
	case FSRV_URING: {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_read(sqe, r->fd, buf, FSRV_BUFSIZE, 0);
		n = io_uring_submit_and_wait(&r->ring, 1);
		if (n < 0)
			return n;
		n = io_uring_wait_cqe(&r->ring, &cqe);
		if (n < 0)
			return n;
		n = cqe->res;
		io_uring_cqe_seen(&r->ring, cqe);
		return n;
	}
#endif
	default:
		n = read(r->fd, buf, FSRV_BUFSIZE);
		return n < 0 ? -errno : n;
	}
}

static void *reader(void *p)
{
	struct reader_arg *ra = p;
	struct reader r = {
		.srv = ra->srv, .idx = ra->idx, .fd = ra->srv->fds[ra->idx],
		.ep = -1, .pipe = { -1, -1 },
	};
	struct fsrv *srv = r.srv;
	char *buf = malloc(FSRV_BUFSIZE);
	bool drain = srv->style == FSRV_EPOLL_ET ||
		     srv->style == FSRV_EPOLL_EXCL || srv->style == FSRV_SIGIO;
	bool waited = false;

	__atomic_store_n(ra->tid, gettid(), __ATOMIC_RELEASE);
	if (ra->cpu >= 0)
		pin_to_cpu(ra->cpu);
	free(ra);
	if (drain || srv->style == FSRV_EPOLL_LT)
		fcntl(r.fd, F_SETFL, fcntl(r.fd, F_GETFL) | O_NONBLOCK);
	if (reader_setup(&r))
		goto out;
	__atomic_fetch_add(&srv->started, 1, __ATOMIC_RELEASE);
	for (;;) {
		struct fuse_in_header *in = (void *)buf;
		ssize_t n;

		/* Wait first, unless the style reads until EAGAIN */
		if (!waited && !drain && reader_wait(&r))
			break;
		waited = false;
		n = reader_read(&r, buf);
		if (n == -EAGAIN && srv->style != FSRV_URING) {
			if (reader_wait(&r))
				break;
			waited = true;
			continue;
		}
		if (n < 0) {
			if (n == -EINTR || n == -EAGAIN || n == -ENOENT)
				continue;
			break;	/* ENODEV, ECONNABORTED: the connection ended */
		}
		if ((size_t)n < sizeof(*in))
			continue;
		record(srv, r.idx, -1, in, in + 1);
		if (srv->hook && srv->hook(srv, r.idx, in, in + 1))
			continue;
		if (r.worker && !worker_queue(r.worker, buf, n))
			continue;
		fsrv_handle(srv, r.idx, in, in + 1);
	}
out:
	reader_cleanup(&r);
	free(buf);
	return NULL;
}

/*
 * The fusectl number of the connection mounted at @mnt, from mountinfo:
 * stat() would need an answer from the server.
 */
static int mount_conn(const char *mnt, unsigned int *conn)
{
	unsigned int maj, min;
	char line[512], point[256];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*u %*u %u:%u %*s %255s", &maj, &min,
			   point) == 3 && !strcmp(point, mnt)) {
			*conn = (maj << 20) | min;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

int fsrv_mount(struct fsrv *srv, const char *mnt)
{
	return fsrv_mount_opts(srv, mnt, NULL);
}

int fsrv_mount_opts(struct fsrv *srv, const char *mnt,
		    const struct fsrv_opts *opts)
{
	static const struct fsrv_opts defaults = { .max_background = 64 };
	char mopts[128], *buf;
	struct fuse_in_header *in;
	struct fuse_init_in *ii;
	struct fuse_init_out io = {};
	ssize_t n;
	int i;

	memset(srv, 0, sizeof(*srv));
	pthread_mutex_init(&srv->lock, NULL);
	for (i = 0; i < FSRV_MAX_FDS; i++)
		srv->reader_cpu[i] = -1;
	snprintf(srv->mnt, sizeof(srv->mnt), "%s", mnt);
	mkdir(mnt, 0755);
	srv->fds[0] = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (srv->fds[0] < 0)
		return -errno;
	srv->nfds = 1;
	if (!opts)
		opts = &defaults;
	snprintf(mopts, sizeof(mopts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0", srv->fds[0]);
	if (mount("fsrv", mnt, "fuse.fsrv", MS_NOSUID | MS_NODEV, mopts))
		return -errno;

	/* Answer INIT here, before any reader runs */
	buf = malloc(FSRV_BUFSIZE);
	n = read(srv->fds[0], buf, FSRV_BUFSIZE);
	in = (void *)buf;
	ii = (void *)(in + 1);
	if (n < (ssize_t)sizeof(*in) || in->opcode != FUSE_INIT) {
		free(buf);
		return -EPROTO;
	}
	io.major = FUSE_KERNEL_VERSION;
	io.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
		   ii->minor : FUSE_KERNEL_MINOR_VERSION;
	io.max_readahead = ii->max_readahead;
	io.flags = ii->flags & (FUSE_ASYNC_READ | FUSE_PARALLEL_DIROPS |
				opts->init_flags);
	io.max_background = opts->max_background;
	io.congestion_threshold = opts->max_background * 3 / 4 ?: 1;
	io.max_write = 128 * 1024;
	io.time_gran = 1;
	srv->minor = io.minor;
	/*
	 * The kernel's max_payload_sz: max_pages stays at
	 * FUSE_DEFAULT_MAX_PAGES_PER_REQ (32) without FUSE_MAX_PAGES
	 */
	srv->max_payload = sysconf(_SC_PAGESIZE) *
			   (io.flags & FUSE_MAX_PAGES ? io.max_pages ?: 1 : 32);
	if (srv->max_payload < io.max_write)
		srv->max_payload = io.max_write;
	if (srv->max_payload < FUSE_MIN_READ_BUFFER)
		srv->max_payload = FUSE_MIN_READ_BUFFER;
#if FSRV_RING
#ifdef FUSE_REQUEST_TIMEOUT
	if (opts->request_timeout && (ii->flags & FUSE_INIT_EXT) &&
	    (ii->flags2 & (FUSE_REQUEST_TIMEOUT >> 32))) {
		io.flags |= FUSE_INIT_EXT;
		io.flags2 |= FUSE_REQUEST_TIMEOUT >> 32;
		io.request_timeout = opts->request_timeout;
		srv->timeouts = true;
	}
#endif
	/* flags2 only counts with FUSE_INIT_EXT */
	if (opts->io_uring && (ii->flags & FUSE_INIT_EXT) &&
	    (ii->flags2 & (FUSE_OVER_IO_URING >> 32))) {
		io.flags |= FUSE_INIT_EXT;
		io.flags2 |= FUSE_OVER_IO_URING >> 32;
		srv->uring_init = true;
	}
#endif
	if (fsrv_reply(srv->fds[0], in->unique, 0, &io, sizeof(io))) {
		free(buf);
		return -EPROTO;
	}
	free(buf);
	return mount_conn(mnt, &srv->conn);
}

int fsrv_clone_at(struct fsrv *srv, int idx)
{
	uint32_t src = srv->fds[0];
	int fd;

	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, FUSE_DEV_IOC_CLONE, &src)) {
		int err = -errno;

		close(fd);
		return err;
	}
	srv->fds[idx] = fd;
	return 0;
}

int fsrv_clone(struct fsrv *srv)
{
	int err;

	if (srv->nfds >= FSRV_MAX_FDS)
		return -EMFILE;
	err = fsrv_clone_at(srv, srv->nfds);
	return err ? err : srv->nfds++;
}

int fsrv_bind(struct fsrv *srv, int idx, uint32_t flags, int cpu, int node)
{
	struct fuse_dev_bind b = {
		.flags = flags, .cpu = cpu, .node = node,
	};

	if (ioctl(srv->fds[idx], FUSE_DEV_IOC_BIND, &b))
		return -errno;
	return 0;
}

const char *fsrv_bind_missing(void)
{
	static char why[80];
	struct fuse_dev_bind b = { .cpu = -1, .node = -1 };
	int fd, err = 0;

	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		err = errno;
	else if (ioctl(fd, FUSE_DEV_IOC_BIND, &b) == 0)
		err = EINVAL;
	else if (errno != EPERM)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (!err)
		return NULL;
	snprintf(why, sizeof(why), "no FUSE_DEV_IOC_BIND (%s)", strerror(err));
	return why;
}

const char *fsrv_style_missing(enum fsrv_style style)
{
#ifdef HAVE_LIBURING
	struct io_uring ring;
	int err;

	if (style != FSRV_URING)
		return NULL;
	err = io_uring_queue_init(2, &ring, 0);
	if (err)
		return "no io_uring here";
	io_uring_queue_exit(&ring);
	return NULL;
#else
	return style == FSRV_URING ? "built without liburing" : NULL;
#endif
}

const char *fsrv_resend_missing(const struct fsrv *srv)
{
	static char why[80];

	if (srv->minor >= 40)
		return NULL;
	snprintf(why, sizeof(why),
		 "no FUSE_NOTIFY_RESEND before protocol 7.40 (this kernel: 7.%u)",
		 srv->minor);
	return why;
}

double fsrv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int fsrv_start_reader(struct fsrv *srv, int idx, int cpu)
{
	struct reader_arg *ra = malloc(sizeof(*ra));

	ra->srv = srv;
	ra->idx = idx;
	ra->cpu = cpu;
	ra->tid = &srv->tid[srv->nthr];
	srv->reader_cpu[idx] = cpu;
	if (srv->nthr == (int)ARRAY_SIZE(srv->thr) ||
	    pthread_create(&srv->thr[srv->nthr], NULL, reader, ra)) {
		free(ra);
		return -1;
	}
	srv->nthr++;
	srv->reading[idx] = true;
	return 0;
}

int fsrv_wait_readers(struct fsrv *srv, int n, int timeout_ms)
{
	int t;

	for (t = 0; t < timeout_ms; t++) {
		if (__atomic_load_n(&srv->started, __ATOMIC_ACQUIRE) >= n) {
			usleep(50000);
			return 0;
		}
		usleep(1000);
	}
	return -ETIMEDOUT;
}

bool fsrv_thread_sleeps(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

int fsrv_wait_asleep(pid_t tid, int timeout_ms)
{
	double end = fsrv_now_ms() + timeout_ms;

	do {
		if (tid && fsrv_thread_sleeps(tid))
			return 0;
		usleep(1000);
	} while (fsrv_now_ms() < end);
	return -ETIMEDOUT;
}

int fsrv_wait_idle(struct fsrv *srv, int timeout_ms)
{
	double end = fsrv_now_ms() + timeout_ms;
	int i;

	do {
		for (i = 0; i < srv->nthr; i++)
			if (!fsrv_thread_sleeps(srv->tid[i]))
				break;
		if (i == srv->nthr)
			return 0;
		usleep(1000);
	} while (fsrv_now_ms() < end);
	return -ETIMEDOUT;
}

void fsrv_start(struct fsrv *srv)
{
	int i;

	for (i = 0; i < srv->nfds; i++)
		if (!srv->reading[i])
			fsrv_start_reader(srv, i, srv->reader_cpu[i]);
	/* A request goes to a bound clone only while a reader waits there */
	fsrv_wait_readers(srv, srv->nthr, 5000);
}

void fsrv_destroy(struct fsrv *srv)
{
	int i;

	/* Ends the connection: every reader's read() then fails */
	fsrv_conn_write(srv, "abort", "1");
	umount2(srv->mnt, MNT_DETACH);
	for (i = 0; i < srv->nthr; i++)
		pthread_join(srv->thr[i], NULL);
	/* Each of its entries ended with the abort */
	fsrv_uring_stop(srv);
	for (i = 0; i < srv->nfds; i++)
		if (srv->fds[i] >= 0)
			close(srv->fds[i]);
	free(srv->log);
	srv->log = NULL;
}

/* ---- FUSE-over-io-uring ---- */

/* The fuse module's switch, read when the kernel answers FUSE_INIT */
#define URING_PARAM	"/sys/module/fuse/parameters/enable_uring"

int fsrv_uring_enabled(void)
{
	int fd = open(URING_PARAM, O_RDONLY);
	char c = 0;

	if (fd < 0)
		return -errno;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == 'Y' || c == '1';
}

int fsrv_uring_enable(bool on)
{
	return fsrv_write_file(URING_PARAM, on ? "Y" : "N");
}

#if FSRV_RING

/*
 * A ring entry: iov[0] is its struct fuse_uring_req_header (in_out holds
 * the fuse_in_header, then our fuse_out_header; op_in the request's first
 * argument; ring_ent_in_out the commit id and payload size), iov[1] its
 * payload buffer, the other arguments, then our reply's.
 */
struct ring_ent {
	struct ring_thr *t;
	uint16_t qid;
	bool registering;	/* its REGISTER has not completed yet */
	bool answered;		/* the handler has answered its request */
	bool dead;		/* a completion with an error ended it */
	struct fuse_uring_req_header *hdr;
	char *payload;
	struct iovec iov[2];
	char *arg;		/* the arguments as /dev/fuse has them */
};

/* A thread with an io_uring of its own, and the entries it serves */
struct ring_thr {
	struct fsrv *srv;
	int cpu;		/* pinned there, or -1 */
	int fd;			/* the /dev/fuse fd of its commands */
	int nents, live;
	struct ring_ent *ents;
	size_t payload_sz;
	struct io_uring ring;
	pthread_t thr;
	int err;		/* the first failed registration's */
	int started;		/* set once its registrations were issued */
	int stop;
	int stop_fd;		/* an eventfd whose poll wakes it to stop */
};

struct fsrv_uring {
	int nq;			/* queues registered so far: 0 .. nq - 1 */
	int nthr;
	struct ring_thr **thr;
};

/* The entry whose request this thread handles, for ring_answer() */
static __thread struct ring_ent *ring_cur;

static int ring_answer(uint64_t unique, int error, const void *data,
		       size_t len)
{
	struct ring_ent *e = ring_cur;
	struct fuse_out_header *oh;

	if (!e || e->answered)
		return -EINVAL;
	/* A reply the payload buffer cannot hold fails the request */
	if (!error && len > e->t->payload_sz)
		error = -EIO;
	if (error)
		len = 0;
	memset(e->hdr->in_out, 0, sizeof(e->hdr->in_out));
	oh = (void *)e->hdr->in_out;
	oh->len = sizeof(*oh) + len;
	oh->error = error;
	oh->unique = unique;
	if (len)
		memcpy(e->payload, data, len);
	/* All that fuse_uring_commit() takes from the payload */
	e->hdr->ring_ent_in_out.payload_sz = len;
	e->answered = true;
	return 0;
}

/* An IORING_OP_URING_CMD of fuse: struct fuse_uring_cmd_req in sqe->cmd */
static int ring_cmd(struct ring_thr *t, struct ring_ent *e, uint32_t op,
		    uint64_t commit_id)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
	char *cmd;
	struct fuse_uring_cmd_req req = {
		.commit_id = commit_id,
		.qid = e->qid,
	};

	if (!sqe) {
		io_uring_submit(&t->ring);
		sqe = io_uring_get_sqe(&t->ring);
		if (!sqe)
			return -EBUSY;
	}
	/* Zeroes the first 64 bytes: flags, __pad1, uring_cmd_flags, ... */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, t->fd, NULL, 0, 0);
	sqe->cmd_op = op;
	if (op == FUSE_IO_URING_CMD_REGISTER) {
		sqe->addr = (uintptr_t)e->iov;
		sqe->len = 2;
	}
	/* The 80 bytes from sqe->cmd on: a 128-byte SQE's second half too */
	cmd = (char *)sqe + offsetof(struct io_uring_sqe, cmd);
	memset(cmd, 0, 80);
	memcpy(cmd, &req, sizeof(req));
	io_uring_sqe_set_data(sqe, e);
	return 0;
}

/* Handle the request that @e's completion brought, and commit the answer */
static void ring_serve(struct ring_thr *t, struct ring_ent *e)
{
	struct fuse_uring_ent_in_out *rio = &e->hdr->ring_ent_in_out;
	uint64_t commit_id = rio->commit_id;
	size_t psz = rio->payload_sz, hl = 0;
	struct fsrv *srv = t->srv;
	struct fuse_in_header in;

	memcpy(&in, e->hdr->in_out, sizeof(in));
	if (psz > t->payload_sz)
		psz = t->payload_sz;
	/* in.len counts every argument: the first went to op_in */
	if (in.len >= sizeof(in) + psz)
		hl = in.len - sizeof(in) - psz;
	if (hl > sizeof(e->hdr->op_in))
		hl = sizeof(e->hdr->op_in);
	memcpy(e->arg, e->hdr->op_in, hl);
	memcpy(e->arg + hl, e->payload, psz);
	e->arg[hl + psz] = 0;

	ring_cur = e;
	e->answered = false;
	record(srv, FSRV_RING_IDX, e->qid, &in, e->arg);
	if (!srv->hook || !srv->hook(srv, FSRV_RING_IDX, &in, e->arg))
		fsrv_handle(srv, FSRV_RING_IDX, &in, e->arg);
	ring_cur = NULL;
	/* Unanswered, it holds the entry until the connection ends */
	if (e->answered &&
	    !ring_cmd(t, e, FUSE_IO_URING_CMD_COMMIT_AND_FETCH, commit_id))
		io_uring_submit(&t->ring);
}

/*
 * Take the completions there are, waiting for one if @wait: a command's,
 * or the poll of t->stop_fd (no entry) that fsrv_uring_stop() fires
 */
static void ring_reap(struct ring_thr *t, bool wait)
{
	struct io_uring_cqe *cqe;
	struct ring_ent *e;
	int err, res;

	if (wait)
		err = io_uring_wait_cqe(&t->ring, &cqe);
	else
		err = io_uring_peek_cqe(&t->ring, &cqe);
	while (!err && cqe) {
		e = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&t->ring, cqe);
		if (!e) {
			/* The stop poll: the caller looks at t->stop */
		} else if (res < 0) {
			/* ENOTCONN once the connection ends */
			if (e->registering && !t->err)
				t->err = res;
			if (!e->dead)
				t->live--;
			e->dead = true;
		} else {
			e->registering = false;
			ring_serve(t, e);
		}
		err = io_uring_peek_cqe(&t->ring, &cqe);
	}
}

static void *ring_thread(void *p)
{
	struct io_uring_params params = { .flags = IORING_SETUP_SQE128 };
	struct ring_thr *t = p;
	struct io_uring_sqe *sqe;
	int i, err;

	if (t->cpu >= 0)
		pin_to_cpu(t->cpu);
	/* One command of each entry in flight at most, and the stop poll */
	err = io_uring_queue_init_params(t->nents < 8 ? 8 : t->nents + 1,
					 &t->ring, &params);
	if (err) {
		t->err = err;
		__atomic_store_n(&t->started, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	for (i = 0; i < t->nents && !err; i++) {
		t->ents[i].registering = true;
		err = ring_cmd(t, &t->ents[i], FUSE_IO_URING_CMD_REGISTER, 0);
	}
	sqe = err ? NULL : io_uring_get_sqe(&t->ring);
	if (sqe) {
		io_uring_prep_poll_add(sqe, t->stop_fd, POLLIN);
		io_uring_sqe_set_data(sqe, NULL);
		err = io_uring_submit(&t->ring);
		err = err < 0 ? err : err == t->nents + 1 ? 0 : -EIO;
	} else if (!err) {
		err = -EBUSY;
	}
	t->live = t->nents;
	/*
	 * The kernel issues each REGISTER as it is submitted: one that
	 * failed has completed already
	 */
	ring_reap(t, false);
	if (err && !t->err)
		t->err = err;
	__atomic_store_n(&t->started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE) && t->live > 0)
		ring_reap(t, true);
	io_uring_queue_exit(&t->ring);
	return NULL;
}

static void ring_thr_free(struct ring_thr *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; t->ents && i < t->nents; i++) {
		free(t->ents[i].hdr);
		free(t->ents[i].payload);
		free(t->ents[i].arg);
	}
	free(t->ents);
	if (t->stop_fd >= 0)
		close(t->stop_fd);
	free(t);
}

static struct ring_thr *ring_thr_new(struct fsrv *srv, int cpu,
				     const int *qids, int nq, int depth)
{
	struct ring_thr *t = calloc(1, sizeof(*t));
	size_t hsz = (sizeof(struct fuse_uring_req_header) + 4095) & ~4095UL;
	int i;

	if (!t)
		return NULL;
	t->srv = srv;
	t->cpu = cpu;
	t->fd = srv->fds[0];
	t->stop_fd = eventfd(0, EFD_CLOEXEC);
	t->payload_sz = srv->max_payload > FSRV_BUFSIZE ? srv->max_payload :
			FSRV_BUFSIZE;
	t->nents = nq * depth;
	t->ents = calloc(t->nents, sizeof(*t->ents));
	for (i = 0; t->ents && i < t->nents; i++) {
		struct ring_ent *e = &t->ents[i];

		e->t = t;
		e->qid = qids[i / depth];
		if (posix_memalign((void **)&e->hdr, 4096, hsz) ||
		    posix_memalign((void **)&e->payload, 4096, t->payload_sz))
			break;
		memset(e->hdr, 0, hsz);
		e->arg = malloc(sizeof(e->hdr->op_in) + t->payload_sz + 1);
		if (!e->arg)
			break;
		e->iov[0].iov_base = e->hdr;
		e->iov[0].iov_len = sizeof(*e->hdr);
		e->iov[1].iov_base = e->payload;
		e->iov[1].iov_len = t->payload_sz;
	}
	if (!t->ents || i < t->nents || t->stop_fd < 0) {
		ring_thr_free(t);
		return NULL;
	}
	return t;
}

int fsrv_uring_start(struct fsrv *srv, int nr_queues, int depth)
{
	struct fsrv_uring *u = srv->uring;
	int q, i, first, nposs = nr_cpus_possible(), noff = 0, err = 0;
	int *off = calloc(nposs, sizeof(*off));
	struct ring_thr *t, **thr;

	if (!srv->uring_init || !off) {
		free(off);
		return srv->uring_init ? -ENOMEM : -EOPNOTSUPP;
	}
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u) {
			free(off);
			return -ENOMEM;
		}
		srv->uring = u;
	}
	if (nr_queues < 0 || nr_queues > nposs)
		nr_queues = nposs;
	if (depth < 1)
		depth = 1;
	if (nr_queues <= u->nq) {
		free(off);
		return 0;
	}
	thr = realloc(u->thr, (u->nthr + nr_queues - u->nq + 1) * sizeof(*thr));
	if (!thr) {
		free(off);
		return -ENOMEM;
	}
	u->thr = thr;
	first = u->nthr;
	for (q = u->nq; q < nr_queues; q++) {
		/* An offline CPU issues nothing: its queue needs an entry */
		if (!cpu_online_(q)) {
			off[noff++] = q;
			continue;
		}
		t = ring_thr_new(srv, q, &q, 1, depth);
		if (!t || pthread_create(&t->thr, NULL, ring_thread, t)) {
			ring_thr_free(t);
			err = -ENOMEM;
			break;
		}
		u->thr[u->nthr++] = t;
	}
	if (!err && noff) {
		t = ring_thr_new(srv, -1, off, noff, depth);
		if (!t || pthread_create(&t->thr, NULL, ring_thread, t)) {
			ring_thr_free(t);
			err = -ENOMEM;
		} else {
			u->thr[u->nthr++] = t;
		}
	}
	free(off);
	for (i = first; i < u->nthr; i++) {
		t = u->thr[i];
		if (!FSRV_WAIT(__atomic_load_n(&t->started, __ATOMIC_ACQUIRE),
			       10000))
			err = err ?: -ETIMEDOUT;
		else if (t->err)
			err = err ?: t->err;
	}
	if (!err)
		u->nq = nr_queues;
	return err;
}

void fsrv_uring_stop(struct fsrv *srv)
{
	struct fsrv_uring *u = srv->uring;
	int i;

	if (!u)
		return;
	for (i = 0; i < u->nthr; i++) {
		__atomic_store_n(&u->thr[i]->stop, 1, __ATOMIC_RELEASE);
		eventfd_write(u->thr[i]->stop_fd, 1);
	}
	for (i = 0; i < u->nthr; i++) {
		pthread_join(u->thr[i]->thr, NULL);
		ring_thr_free(u->thr[i]);
	}
	free(u->thr);
	free(u);
	srv->uring = NULL;
}

const char *fsrv_uring_missing(const struct fsrv *srv)
{
	struct io_uring_params params = { .flags = IORING_SETUP_SQE128 };
	static char why[96];
	struct io_uring ring;
	int on = fsrv_uring_enabled(), err;

	if (on < 0)
		return "no FUSE-over-io-uring here (no enable_uring parameter)";
	if (!on)
		return "FUSE-over-io-uring is off (enable_uring=N)";
	err = io_uring_queue_init_params(2, &ring, &params);
	if (err) {
		snprintf(why, sizeof(why),
			 "no io_uring with 128-byte SQEs (%s)", strerror(-err));
		return why;
	}
	io_uring_queue_exit(&ring);
	if (srv && !srv->uring_init)
		return "FUSE_INIT did not offer FUSE_OVER_IO_URING";
	return NULL;
}

#else /* !FSRV_RING */

static int ring_answer(uint64_t unique, int error, const void *data,
		       size_t len)
{
	return -EOPNOTSUPP;
}

int fsrv_uring_start(struct fsrv *srv, int nr_queues, int depth)
{
	return -EOPNOTSUPP;
}

void fsrv_uring_stop(struct fsrv *srv)
{
}

const char *fsrv_uring_missing(const struct fsrv *srv)
{
#ifndef FUSE_URING_IN_OUT_HEADER_SZ
	return "built against a <linux/fuse.h> without FUSE-over-io-uring";
#else
	return "built without liburing";
#endif
}

#endif /* FSRV_RING */

int fsrv_count_name_prefix(struct fsrv *srv, const char *prefix, int fd_idx)
{
	size_t i, len = strlen(prefix);
	int n = 0;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++)
		if (srv->log[i].opcode == FUSE_LOOKUP &&
		    !strncmp(srv->log[i].name, prefix, len) &&
		    (fd_idx == -1 || srv->log[i].fd_idx == fd_idx))
			n++;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

int fsrv_find_name(struct fsrv *srv, const char *name, int *fd_idx)
{
	size_t i;
	int n = 0;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->nlog; i++) {
		if (srv->log[i].opcode == FUSE_LOOKUP &&
		    !strcmp(srv->log[i].name, name)) {
			if (fd_idx)
				*fd_idx = srv->log[i].fd_idx;
			n++;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return n;
}

int fsrv_conn_file(struct fsrv *srv, const char *file, char *buf, size_t len)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/%s",
		 srv->conn, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

int fsrv_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int fsrv_conn_write(struct fsrv *srv, const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/%s",
		 srv->conn, file);
	return fsrv_write_file(path, val);
}

int fsrv_wait_child(struct fsrv *srv, pid_t pid, int ms, int *status)
{
	char buf[8192], path[64];
	int t, fd;
	ssize_t n;

	for (t = 0; t < ms; t++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 0;
		usleep(1000);
	}
	printf("# child %d stuck for %d ms\n", pid, ms);
	if (fsrv_conn_file(srv, "waiting", buf, sizeof(buf)) > 0)
		printf("# waiting: %s", buf);
	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			printf("# stack of %d:\n%s", pid, buf);
		}
		close(fd);
	}
	fflush(stdout);
	return -ETIMEDOUT;
}

int fsrv_reader_of(struct fsrv *srv, const char *name)
{
	int idx = -1;

	return fsrv_find_name(srv, name, &idx) ? idx : -1;
}

/* Wait until at least @n requests of the connection are waiting */
int fsrv_wait_waiting(struct fsrv *srv, int n, int timeout_ms)
{
	char buf[32];
	int t;

	for (t = 0; t < timeout_ms; t += 5) {
		if (fsrv_conn_file(srv, "waiting", buf, sizeof(buf)) > 0 &&
		    atoi(buf) >= n)
			return 0;
		usleep(5000);
	}
	return -ETIMEDOUT;
}

static void *job_stat(void *p)
{
	struct fsrv_job *j = p;
	struct stat st;
	int err;

	__atomic_store_n(&j->tid, gettid(), __ATOMIC_RELEASE);
	err = j->cpu >= 0 ? pin_to_cpu(j->cpu) : 0;
	if (!err)
		err = stat(j->path, &st) ? errno : 0;
	__atomic_store_n(&j->err, err, __ATOMIC_RELEASE);
	return NULL;
}

void fsrv_job_stat(struct fsrv_job *j, const char *mnt, const char *name,
		   int cpu)
{
	snprintf(j->path, sizeof(j->path), "%s/%s", mnt, name);
	j->name = j->path + strlen(mnt) + 1;
	j->cpu = cpu;
	j->err = -1;
	j->tid = 0;
	if (pthread_create(&j->thr, NULL, job_stat, j))
		j->err = -2;
}

bool fsrv_job_done(struct fsrv_job *j)
{
	return __atomic_load_n(&j->err, __ATOMIC_ACQUIRE) != -1;
}

int fsrv_job_wait(struct fsrv_job *j)
{
	if (j->err != -2)
		pthread_join(j->thr, NULL);
	return j->err;
}

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return sched_getcpu() == cpu ? 0 : -EAGAIN;
}

bool cpu_online_(int cpu)
{
	char path[96], c = '0';
	int fd;

	if (cpu == 0)
		return access("/sys/devices/system/cpu/cpu0", F_OK) == 0;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

int nr_cpus_online(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

int nr_cpus_possible(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int a, b, n = 0;
	char c;

	if (!f)
		return sysconf(_SC_NPROCESSORS_CONF);
	/* "0-3,8-11": ranges, or single CPUs, separated by commas */
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		c = fgetc(f);
		if (c == '-' && fscanf(f, "%d", &b) == 1)
			c = fgetc(f);
		n += b - a + 1;
		if (c != ',')
			break;
	}
	fclose(f);
	return n ?: sysconf(_SC_NPROCESSORS_CONF);
}

int cpu_node(int cpu)
{
	char path[96];
	int node;

	for (node = 0; node < 64; node++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/node%d", cpu, node);
		if (access(path, F_OK) == 0)
			return node;
	}
	return 0;
}
