/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Staging a request on a bound device's own queue, for the rig's guest
 * tests of per-device input queues.
 *
 * A request goes to the device its CPU maps to only if a reader of that
 * device is woken for it right then: one asleep in read(), or an
 * EPOLLEXCLUSIVE poller of the device asleep in epoll_wait(), its epoll
 * set armed after the bind.  A holder is such a poller that never reads:
 * the request it was woken for stays on the device's queue until the
 * device is read or closed, or the connection is aborted.
 *
 * An fd with no binding and no reader reads the shared queue alone:
 * take_shared() drains it, to tell whether a request went there.
 */
#ifndef FUSE_HOLDER_H
#define FUSE_HOLDER_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "fuse_srv.h"

struct holder {
	int fd;			/* the device */
	int ep;			/* an epoll set holding only @fd */
	pid_t tid;
	bool done;		/* epoll_wait() returned */
	int got;		/* what it returned, or -errno */
	uint32_t events;
	pthread_t thr;
	bool running;
};

static void holder_on_signal(int sig)
{
}

static void *holder_main(void *p)
{
	struct holder *h = p;
	struct epoll_event ev = {};
	int n;

	__atomic_store_n(&h->tid, gettid(), __ATOMIC_RELEASE);
	/* Long enough for any test; holder_stop() cuts it short */
	n = epoll_wait(h->ep, &ev, 1, 120000);
	h->got = n < 0 ? -errno : n;
	h->events = n > 0 ? ev.events : 0;
	__atomic_store_n(&h->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Arm a holder on @fd, which must be bound already (an epoll set armed
 * before the bind does not wait on the device's own queue), and wait
 * until it sleeps in epoll_wait(): 0, or -errno.
 */
static inline int holder_arm(struct holder *h, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE };
	struct sigaction sa = { .sa_handler = holder_on_signal };

	memset(h, 0, sizeof(*h));
	h->fd = fd;
	/* SIGUSR1 ends epoll_wait() with EINTR: how holder_stop() ends it */
	sigaction(SIGUSR1, &sa, NULL);
	h->ep = epoll_create1(EPOLL_CLOEXEC);
	if (h->ep < 0)
		return -errno;
	if (epoll_ctl(h->ep, EPOLL_CTL_ADD, fd, &ev) ||
	    pthread_create(&h->thr, NULL, holder_main, h)) {
		close(h->ep);
		h->ep = -1;
		return -EINVAL;
	}
	h->running = true;
	/* Its tid first, then nothing but epoll_wait() can put it to sleep */
	if (!FSRV_WAIT(__atomic_load_n(&h->tid, __ATOMIC_ACQUIRE) &&
		       (fsrv_thread_sleeps(h->tid) ||
			__atomic_load_n(&h->done, __ATOMIC_ACQUIRE)), 10000))
		return -ETIMEDOUT;
	/* Woken already: something was there to read before the request */
	return __atomic_load_n(&h->done, __ATOMIC_ACQUIRE) ? -EBUSY : 0;
}

/* Whether the holder was woken for something to read within @ms */
static inline bool holder_woken(struct holder *h, int ms)
{
	return FSRV_WAIT(__atomic_load_n(&h->done, __ATOMIC_ACQUIRE), ms) &&
	       h->got == 1 && (h->events & EPOLLIN);
}

/* Whether the holder is still asleep after @ms */
static inline bool holder_sleeps_on(struct holder *h, int ms)
{
	usleep(ms * 1000);
	return !__atomic_load_n(&h->done, __ATOMIC_ACQUIRE);
}

static inline void holder_stop(struct holder *h)
{
	if (!h->running)
		return;
	while (!__atomic_load_n(&h->done, __ATOMIC_ACQUIRE)) {
		pthread_kill(h->thr, SIGUSR1);
		usleep(1000);
	}
	pthread_join(h->thr, NULL);
	close(h->ep);
	h->ep = -1;
	h->running = false;
}

/*
 * Whether @in is the request @opcode about @nodeid, or with @name: a
 * LOOKUP of a name that starts with @name
 */
static inline bool is_request(const struct fuse_in_header *in,
			      uint32_t opcode, uint64_t nodeid,
			      const char *name)
{
	if (in->opcode != opcode)
		return false;
	if (name)
		return opcode == FUSE_LOOKUP &&
		       !strncmp((const char *)(in + 1), name, strlen(name));
	return in->nodeid == nodeid;
}

/*
 * Read without blocking, through srv->fds[@idx] (no binding and no reader
 * of its own), what waits on the shared queue, and answer it as the server
 * does.  Returns how many of those were the request of is_request(), or
 * -errno.  Forgets land there too; they need no answer.
 */
static inline int take_shared(struct fsrv *srv, int idx, uint32_t opcode,
			      uint64_t nodeid, const char *name)
{
	int fd = srv->fds[idx], fl = fcntl(fd, F_GETFL), n = 0;
	char *buf = malloc(FSRV_BUFSIZE);
	struct fuse_in_header *in = (void *)buf;
	ssize_t len;

	if (!buf || fcntl(fd, F_SETFL, fl | O_NONBLOCK)) {
		free(buf);
		return -ENOMEM;
	}
	while ((len = read(fd, buf, FSRV_BUFSIZE)) >= (ssize_t)sizeof(*in)) {
		if (is_request(in, opcode, nodeid, name))
			n++;
		fsrv_handle(srv, idx, in, in + 1);
	}
	if (len < 0 && errno != EAGAIN)
		n = -errno;
	fcntl(fd, F_SETFL, fl);
	free(buf);
	return n;
}

/*
 * Read one request without blocking from srv->fds[@idx] into @buf (of
 * FSRV_BUFSIZE): its length, or -errno.  A bound device reads its own
 * queue first.
 */
static inline ssize_t read_now(struct fsrv *srv, int idx, char *buf)
{
	int fd = srv->fds[idx], fl = fcntl(fd, F_GETFL);
	ssize_t len;

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	len = read(fd, buf, FSRV_BUFSIZE);
	if (len < 0)
		len = -errno;
	fcntl(fd, F_SETFL, fl);
	return len;
}

#endif
