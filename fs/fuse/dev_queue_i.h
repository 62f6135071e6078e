/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FUSE: per-device input queues and CPU-aware, work-conserving routing.
 *
 * See Documentation/filesystems/fuse-clone-queues.rst for the model.
 */
#ifndef _FS_FUSE_DEV_QUEUE_I_H
#define _FS_FUSE_DEV_QUEUE_I_H

#include "fuse_i.h"

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/init.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/seqlock.h>
#include <linux/timer.h>
#include <linux/topology.h>
#include <linux/types.h>

/* Queues a connection may have; their index is part of the unique ids */
#define FUSE_DEVQ_MAX_QUEUES	BIT(16)

/* The flags of struct fuse_dev_bind this kernel knows */
#define FUSE_DEVQ_BIND_FLAGS	(FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_NODE | \
				 FUSE_DEV_BIND_STRICT)

struct seq_file;

/**
 * enum fuse_devq_level - where a request came from, seen from its reader
 * @FUSE_DEVQ_LOCAL_CPU: the reader is bound to the CPU the request came from
 * @FUSE_DEVQ_LOCAL_NODE: the reader is bound to that CPU's node, or to
 *	another CPU on it
 * @FUSE_DEVQ_REMOTE: the reader is bound elsewhere
 * @FUSE_DEVQ_NR_LEVELS: number of levels
 */
enum fuse_devq_level {
	FUSE_DEVQ_LOCAL_CPU,
	FUSE_DEVQ_LOCAL_NODE,
	FUSE_DEVQ_REMOTE,
	FUSE_DEVQ_NR_LEVELS,
};

/**
 * enum fuse_devq_move - why work left the queue the routing rules chose
 * @FUSE_DEVQ_MOVE_BUSY: at enqueue, the chosen queue's readers were all busy
 *	and another bound reader was idle
 * @FUSE_DEVQ_MOVE_STOLEN: an idle reader took it from a busy sibling
 * @FUSE_DEVQ_MOVE_INTR: an idle reader took a FUSE_INTERRUPT from a busy
 *	sibling
 * @FUSE_DEVQ_NR_MOVES: number of reasons
 */
enum fuse_devq_move {
	FUSE_DEVQ_MOVE_BUSY,
	FUSE_DEVQ_MOVE_STOLEN,
	FUSE_DEVQ_MOVE_INTR,
	FUSE_DEVQ_NR_MOVES,
};

/**
 * struct fuse_devq - the input queue of a /dev/fuse device
 * @iq: the queue; @iq.lock protects what is queued and the flags below
 *	marked (q)
 * @fc: the connection
 * @fud: the device it serves; NULL while it waits in the connection's pool
 *	(changed under the connection's devqs mutex)
 * @entry: on fuse_devqs.queues (devqs mutex)
 * @index: number of the queue in its connection, part of its unique ids
 * @id_base: the bits its unique ids start from, see fuse_devq_unique()
 * @pooled: the queue waits in the pool for a new device (devqs mutex)
 * @routable: (q) the routing map may send requests here
 * @used: (q) the device was bound at least once, so it reads this queue
 * @strict: requests routed here are read only by this device, which reads
 *	nothing but them (and the shared queue)
 * @bind_flags: FUSE_DEV_BIND_CPU, FUSE_DEV_BIND_NODE or 0 (devqs mutex)
 * @cpu: bound CPU, or -1 (devqs mutex)
 * @node: bound node, or the node of the bound CPU, or NUMA_NO_NODE
 * @home: node the routing map places the queue on (lockless readers)
 * @waiters: readers of the device in read() that have not taken work yet
 * @poll_idle: the device's last read or poll found nothing (a poll or
 *	epoll loop is about to wait)
 * @overdue: work waited here a whole steal delay while the device's
 *	readers took nothing
 * @taken: work the device's readers took from this queue, for the watch
 * @watch_taken: @taken when the watch timer was armed
 * @in_handler: a reader of the device took a request and has not answered
 *	since: with no reader waiting, the device is busy
 * @timer: watches work queued while no reader waited, see
 *	fuse_devq_watch()
 * @level: requests the device read, by where they came from (device's
 *	processing-queue lock)
 * @took: work the device's readers took over from others, by reason
 * @gave: work routed here that others took, by reason
 *
 * Every /dev/fuse device has one, from the moment it is attached to a
 * connection; it is used once the device is bound.  A queue lives as long
 * as its connection: when its device goes, it returns to the connection's
 * pool for the next device, so a stale pointer to it (in fuse_req.fiq or
 * in the routing map) is always safe to lock.
 */
struct fuse_devq {
	struct fuse_iqueue iq;
	struct fuse_conn *fc;
	struct fuse_dev *fud;
	struct list_head entry;
	unsigned int index;
	u64 id_base;
	bool pooled;
	bool routable;
	bool used;
	bool strict;
	u32 bind_flags;
	int cpu;
	int node;
	int home;
	atomic_t waiters;
	bool poll_idle;
	bool overdue;
	bool in_handler;
	unsigned long taken;
	unsigned long watch_taken;
	struct timer_list timer;
	u64 level[FUSE_DEVQ_NR_LEVELS];
	atomic_long_t took[FUSE_DEVQ_NR_MOVES];
	atomic_long_t gave[FUSE_DEVQ_NR_MOVES];
};

/**
 * struct fuse_devq_span - where one CPU's requests go
 * @start: first candidate in fuse_devq_map.slots
 * @count: number of candidates
 * @level: how the candidates match the CPU (enum fuse_devq_level)
 * @node: the node of the CPU
 */
struct fuse_devq_span {
	u32 start;
	u32 count;
	u16 node;
	u8 level;
};

/**
 * struct fuse_devq_map - the routing table of a connection
 * @rcu: for freeing after readers are done, when it is replaced by a
 *	larger one
 * @seq: in-place rebuilds; written with the shared queue's lock held
 * @cursor: per-CPU position among several candidates
 * @distance: synthetic node distances (KUnit), else NULL for node_distance()
 * @nr_cpus: entries in @span
 * @nr_nodes: entries in @node_start, less one
 * @nr_queues: bound queues; they are the first entries of @slots
 * @capacity: bound queues the map has room for
 * @node_start: per node, where its list starts in @slots
 * @nearest: per node, the nearest node with bound queues, or NUMA_NO_NODE
 * @slots: all bound queues, then the per-node lists, then the per-CPU lists
 * @span: per CPU, its candidates in @slots
 *
 * One allocation, rebuilt in place under the connection's devqs mutex when a
 * binding changes (so that an unbind or a close never needs memory), and
 * replaced through RCU only when it must grow.  A sender looks up its CPU
 * in O(1).
 */
struct fuse_devq_map {
	struct rcu_head rcu;
	seqcount_spinlock_t seq;
	unsigned int __percpu *cursor;
	const u8 *distance;
	unsigned int nr_cpus;
	unsigned int nr_nodes;
	unsigned int nr_queues;
	unsigned int capacity;
	u32 *node_start;
	s16 *nearest;
	struct fuse_devq **slots;
	struct fuse_devq_span span[];
};

/**
 * struct fuse_devq_topo - CPU topology a routing table is built for
 * @nr_cpus: CPUs numbered 0 .. @nr_cpus - 1
 * @nr_nodes: nodes numbered 0 .. @nr_nodes - 1
 * @cpu_node: node of each CPU, or NULL for the machine's cpu_to_node()
 * @distance: @nr_nodes x @nr_nodes distances, or NULL for node_distance()
 *
 * The KUnit tests pass synthetic topologies.
 */
struct fuse_devq_topo {
	unsigned int nr_cpus;
	unsigned int nr_nodes;
	const int *cpu_node;
	const u8 *distance;
};

/**
 * struct fuse_devq_choice - what fuse_devq_choose() decided
 * @routed: the queue the routing rules name
 * @busy: @routed's readers were all busy
 * @spilled: the request goes to an idle reader instead of @routed
 */
struct fuse_devq_choice {
	struct fuse_devq *routed;
	bool busy;
	bool spilled;
};

extern const struct fuse_iqueue_ops fuse_devq_fiq_ops;

/* Is @fiq a device's own queue, rather than a connection's shared one? */
static inline bool fuse_iq_is_devq(const struct fuse_iqueue *fiq)
{
	return fiq->ops == &fuse_devq_fiq_ops;
}

static inline struct fuse_devq *fuse_devq_of(struct fuse_iqueue *fiq)
{
	return container_of(fiq, struct fuse_devq, iq);
}

/* Is there something to read on @fiq?  Safe without its lock. */
static inline bool fuse_devq_has_work(struct fuse_iqueue *fiq)
{
	return !list_empty(&fiq->pending) || !list_empty(&fiq->interrupts) ||
	       READ_ONCE(fiq->forget_list_head.next);
}

static inline bool fuse_devq_iq_ready(struct fuse_iqueue *fiq)
{
	return !READ_ONCE(fiq->connected) || fuse_devq_has_work(fiq);
}

/*
 * Any reader of the connection may take work from a busy queue, bound or
 * not (a daemon may keep unbound readers beside bound ones), but not a
 * strict one: it reads what is routed to it alone.
 */
static inline bool fuse_devq_may_steal(struct fuse_devq *q)
{
	return q && !READ_ONCE(q->strict) && READ_ONCE(q->fc->devqs.help);
}

bool fuse_devq_queue_req(struct fuse_conn *fc, struct fuse_req *req);
bool fuse_devq_queue_forget(struct fuse_conn *fc,
			    struct fuse_forget_link *forget);
struct fuse_iqueue *__fuse_devq_lock_readable(struct fuse_devq *q,
					      struct fuse_iqueue *shared)
	__acquires(&shared->lock);

/**
 * fuse_devq_routing - do new requests go to device queues?
 * @devqs: the connection's device-queue state
 *
 * Once a device of the connection was bound, requests and forgets are
 * routed by fuse_devq_queue_req() and fuse_devq_queue_forget(); before,
 * they go to the shared queue as if there were no device queues.  A first
 * binding publishes the routing map with the shared queue locked, so a
 * sender that finds none there may queue there.
 *
 * Return: true if a routing map exists.
 */
static inline bool fuse_devq_routing(struct fuse_devqs *devqs)
{
	return rcu_access_pointer(devqs->map);
}

/**
 * fuse_devq_lock_readable - lock the queue a device's reader reads next
 * @q: the device's queue, or NULL
 * @shared: the connection's shared queue
 *
 * A device that was never bound reads the shared queue, as if there were
 * no device queues.  One that was reads what is left on the shared queue first,
 * then its own queue.  Either takes work from a busy bound queue when it
 * has none, if any device is bound (__fuse_devq_lock_readable() does the
 * uncommon cases).  The caller checks, under the lock, whether there is
 * anything to read.
 *
 * Return: the queue, locked.  (For sparse the lock taken is @shared's; it
 * is that of the queue returned.)
 */
static inline struct fuse_iqueue *
fuse_devq_lock_readable(struct fuse_devq *q, struct fuse_iqueue *shared)
	__acquires(&shared->lock)
{
	bool used = q && READ_ONCE(q->used);
	struct fuse_iqueue *home = used ? &q->iq : shared;

	if (unlikely(used && fuse_devq_has_work(shared)) ||
	    unlikely(fuse_devq_may_steal(q) && !fuse_devq_iq_ready(home)))
		return __fuse_devq_lock_readable(q, shared);
	spin_lock(&home->lock);
	return home;
}

/*
 * Unique ids handed out by device queues: bit 62 set, so that they never
 * meet the ids of the shared queue's counter (which would need 2^61
 * requests to reach it); the queue's index in bits 46-61; the queue's own
 * counter, which steps by FUSE_REQ_ID_STEP under the queue's lock, in
 * bits 1-45.  Bit 0 (FUSE_INT_REQ_BIT) and bit 63 (FUSE_UNIQUE_RESEND)
 * stay clear.  Two requests of one connection can only share an id if one
 * of them is still unanswered after 2^44 later requests of its queue.
 */
#define FUSE_DEVQ_UNIQUE_BIT	BIT_ULL(62)
#define FUSE_DEVQ_INDEX_SHIFT	46
#define FUSE_DEVQ_CTR_MASK	(BIT_ULL(FUSE_DEVQ_INDEX_SHIFT) - 1)

/**
 * fuse_devq_unique - the unique id of a request queued on a device queue
 * @q: the queue, locked
 * @ctr: its counter, just stepped
 *
 * No preemption or per-CPU state is involved: the counter belongs to the
 * queue and moves under its lock, and the index keeps queues apart.
 *
 * Return: the id.
 */
static inline u64 fuse_devq_unique(struct fuse_devq *q, u64 ctr)
{
	lockdep_assert_held(&q->iq.lock);
	return q->id_base | (ctr & FUSE_DEVQ_CTR_MASK);
}

/**
 * fuse_devq_next_unique - the unique id of a request queued on @fiq
 * @fiq: an input queue, locked: the shared one or a device queue
 *
 * Return: the id.
 */
static inline u64 fuse_devq_next_unique(struct fuse_iqueue *fiq)
{
	fiq->reqctr += FUSE_REQ_ID_STEP;
	if (fuse_iq_is_devq(fiq))
		return fuse_devq_unique(fuse_devq_of(fiq), fiq->reqctr);
	return fiq->reqctr;
}

/* A reader of @q took work: not idle any more, busy if it must answer */
static inline void fuse_devq_busy_now(struct fuse_devq *q,
				      struct fuse_req *req)
{
	/* Flips with every request: no point in reading it first */
	if (req && test_bit(FR_ISREPLY, &req->flags))
		WRITE_ONCE(q->in_handler, true);
	if (unlikely(READ_ONCE(q->poll_idle)))
		WRITE_ONCE(q->poll_idle, false);
}

void __fuse_devq_left_behind(struct fuse_devq *q);
void __fuse_devq_took(struct fuse_devq *q, struct fuse_iqueue *fiq,
		      struct fuse_req *req, bool intr);

/**
 * fuse_devq_took - a device's reader takes work from @fiq, locked
 * @q: the device's queue, or NULL
 * @fiq: the queue it takes from
 * @req: the request, for requests; NULL for a forget or an interrupt
 * @intr: it is an interrupt
 *
 * If a reader leaves work behind on its own queue as it goes into a
 * handler, with no other reader of the device waiting, idle readers are
 * told to take it.
 */
static inline void fuse_devq_took(struct fuse_devq *q,
				  struct fuse_iqueue *fiq, struct fuse_req *req,
				  bool intr)
{
	if (!q)
		return;
	if (fiq != &q->iq) {
		/* Not a never-bound device on the shared queue, as before */
		if (fuse_iq_is_devq(fiq) || READ_ONCE(q->used))
			__fuse_devq_took(q, fiq, req, intr);
		return;
	}
	fuse_devq_busy_now(q, req);
	WRITE_ONCE(q->taken, q->taken + 1);
	if (unlikely(READ_ONCE(q->overdue)))
		WRITE_ONCE(q->overdue, false);
	if (req && !list_empty(&fiq->pending) && READ_ONCE(q->in_handler))
		__fuse_devq_left_behind(q);
}

/**
 * fuse_devq_read_done - count a request a device read
 * @q: the device's queue, or NULL
 * @req: the request
 *
 * Called under the device's processing-queue lock.
 */
static inline void fuse_devq_read_done(struct fuse_devq *q,
				       struct fuse_req *req)
{
	u32 flags = q ? READ_ONCE(q->bind_flags) : 0;

	if (!flags)
		return;
	if ((flags & FUSE_DEV_BIND_CPU) && req->cpu == READ_ONCE(q->cpu))
		q->level[FUSE_DEVQ_LOCAL_CPU]++;
	else if (cpu_to_node(req->cpu) == READ_ONCE(q->node))
		q->level[FUSE_DEVQ_LOCAL_NODE]++;
	else
		q->level[FUSE_DEVQ_REMOTE]++;
}

/**
 * fuse_devq_replied - a device's reader answered a request
 * @q: the device's queue, or NULL
 *
 * The reader is on its way back to read(): the device is not busy.
 */
static inline void fuse_devq_replied(struct fuse_devq *q)
{
	if (q)
		WRITE_ONCE(q->in_handler, false);
}

/**
 * fuse_devq_unidle - a reader that waited takes work, or leaves read()
 * @q: the device's queue
 * @idle: set by fuse_devq_wait(); cleared here
 *
 * Called with the queue the reader takes from locked, so that whoever
 * takes that queue's lock next sees the reader busy and the work gone.
 */
static inline void fuse_devq_unidle(struct fuse_devq *q, bool *idle)
{
	if (*idle) {
		atomic_dec(&q->waiters);
		*idle = false;
	}
}

void __fuse_devq_leave(struct fuse_devq *q);

/**
 * fuse_devq_leave - a reader leaves read() without taking work
 * @q: the device's queue
 * @idle: as for fuse_devq_unidle()
 *
 * On a signal, or a nonblocking read that found nothing.  If the reader
 * was counted as waiting and work waits on its queue with no other reader
 * waiting, the work is watched like work queued while the reader was
 * away: idle readers take it if the reader does not come back in time.
 */
static inline void fuse_devq_leave(struct fuse_devq *q, bool *idle)
{
	if (*idle) {
		fuse_devq_unidle(q, idle);
		__fuse_devq_leave(q);
	}
}

int __init fuse_devq_init(void);
void fuse_devq_exit(void);
void fuse_devqs_init(struct fuse_devqs *devqs);
void fuse_devqs_free(struct fuse_conn *fc);
int fuse_devq_attach(struct fuse_conn *fc, struct fuse_dev *fud);
void fuse_devq_detach(struct fuse_dev *fud);
void fuse_devq_dev_release(struct fuse_dev *fud);
void fuse_devq_queued_intr(struct fuse_conn *fc, struct fuse_iqueue *fiq);
void fuse_devq_nothing(struct fuse_dev *fud);
int fuse_devq_wait(struct fuse_dev *fud, bool *idle);
__poll_t fuse_devq_poll(struct fuse_dev *fud);
#ifdef FUSE_UNIQUE_RESEND
void fuse_devq_resend(struct fuse_conn *fc, struct list_head *reqs,
		      struct list_head *to_end);
#endif
long fuse_devq_ioctl_bind(struct fuse_dev *fud,
			  const struct fuse_dev_bind __user *argp);
long fuse_devq_ioctl_get_bind(struct fuse_dev *fud,
			      struct fuse_dev_bind __user *argp);
int fuse_devq_show(struct seq_file *m, struct fuse_conn *fc);

#if IS_ENABLED(CONFIG_KUNIT)
/* For the KUnit tests (dev_queue_kunit.c); static otherwise */
struct fuse_devq_map *fuse_devq_map_alloc(const struct fuse_devq_topo *topo,
					  unsigned int capacity,
					  spinlock_t *lock,
					  unsigned int __percpu *cursor);
void fuse_devq_map_fill(struct fuse_devq_map *map,
			const struct fuse_devq_topo *topo);
void fuse_devq_map_free(struct fuse_devq_map *map);
struct fuse_devq *fuse_devq_map_choose(struct fuse_devq_map *map,
				       unsigned int cpu,
				       struct fuse_devq_choice *ch);
bool fuse_devq_map_has(struct fuse_devq_map *map, unsigned int cpu,
		       struct fuse_devq *q);
void fuse_devq_queue_init(struct fuse_devq *q, struct fuse_conn *fc,
			  unsigned int index);
#endif

#endif /* _FS_FUSE_DEV_QUEUE_I_H */
