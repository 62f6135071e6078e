// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE: per-device input queues and CPU-aware, work-conserving routing.
 *
 * Every /dev/fuse device has an input queue of its own, used once the
 * device is bound with FUSE_DEV_IOC_BIND.  While any device of a
 * connection is bound, requests are routed by the CPU they were issued on:
 * to a device bound to that CPU, else to one bound to its node (or to a CPU
 * on it), else to one on the nearest node.  With nothing bound the
 * connection uses its shared queue, fuse_conn.iq, exactly as before.
 *
 * Routing is work-conserving, as the shared queue is: a request whose
 * device has no idle reader (all of them inside handlers) goes to an idle
 * bound reader instead, nearest first; a reader about to sleep takes work
 * from a busy sibling; and work that waits longer than a short delay on a
 * queue whose reader does not come back is taken by an idle reader.
 * Devices bound with FUSE_DEV_BIND_STRICT keep exact placement.
 *
 * Locking: fuse_devqs.mutex serializes everything that changes bindings
 * or the routing map, and every path that holds two input-queue locks at
 * once (moving requests between queues), so two queue locks are never
 * taken in opposite orders.  Each queue's iq.lock protects what is queued
 * on it.  The map is changed with the shared queue's lock held, which
 * orders it against senders that found no bound device.  Readers that take
 * work from other queues hold one queue lock at a time.
 */

#include "dev_queue_i.h"

#include <kunit/visibility.h>
#include <linux/bits.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/export.h>
#include <linux/nodemask.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

/*
 * How long work may wait on a queue whose readers neither sleep in read()
 * nor hold a request (a reader that answered and has not come back) before
 * an idle reader takes it.  A reader that answered is back in read() within
 * microseconds on real hardware, so this only fires for readers that went
 * off to do something else, or whose CPU is taken by other work.  Busy
 * readers need no delay: their work goes to idle readers at once.
 */
#define FUSE_DEVQ_STEAL_DELAY_MS	10

/* Map nodes that cannot be represented in a span */
#define FUSE_DEVQ_NO_NODE		U16_MAX

static unsigned long fuse_devq_steal_delay;

/* A reader of @q sleeps in read(), or its poll loop is about to wait */
static bool fuse_devq_idle(struct fuse_devq *q)
{
	return atomic_read(&q->waiters) || READ_ONCE(q->poll_idle);
}

/*
 * Every reader of @q is inside a handler: none waits, and one took a
 * request it has not answered.  A reader that answered and has not called
 * read() again yet is on its way back, not busy.
 */
static bool fuse_devq_busy(struct fuse_devq *q)
{
	return !fuse_devq_idle(q) && READ_ONCE(q->in_handler);
}

/* ---- the routing map ---- */

static int fuse_devq_topo_node(const struct fuse_devq_topo *topo,
			       unsigned int cpu)
{
	int nd;

	if (cpu >= topo->nr_cpus)
		return NUMA_NO_NODE;
	nd = topo->cpu_node ? topo->cpu_node[cpu] : cpu_to_node(cpu);
	return nd >= 0 && nd < topo->nr_nodes ? nd : NUMA_NO_NODE;
}

static int fuse_devq_queue_node(const struct fuse_devq_topo *topo,
				const struct fuse_devq *q)
{
	if (q->bind_flags & FUSE_DEV_BIND_CPU)
		return fuse_devq_topo_node(topo, q->cpu);
	if (q->node >= 0 && q->node < topo->nr_nodes)
		return q->node;
	return NUMA_NO_NODE;
}

static int fuse_devq_distance(const struct fuse_devq_map *map, int a, int b)
{
	if (map->distance)
		return map->distance[a * map->nr_nodes + b];
	return node_distance(a, b);
}

/**
 * fuse_devq_map_alloc - allocate a routing map
 * @topo: the CPUs and nodes it is for
 * @capacity: bound queues it must have room for
 * @lock: the lock its writers hold (the shared queue's)
 * @cursor: per-CPU positions among candidates, kept by the caller
 *
 * Return: the map, with no queue in it, or NULL.
 */
VISIBLE_IF_KUNIT struct fuse_devq_map *fuse_devq_map_alloc(const struct fuse_devq_topo *topo,
							   unsigned int capacity, spinlock_t *lock,
							   unsigned int __percpu *cursor)
{
	size_t size, slots, node_start;
	struct fuse_devq_map *map;

	if (!topo->nr_nodes || topo->nr_nodes >= FUSE_DEVQ_NO_NODE ||
	    capacity > FUSE_DEVQ_MAX_QUEUES)
		return NULL;
	/* The spans are 12 bytes: keep the queue pointers aligned */
	slots = ALIGN(struct_size(map, span, topo->nr_cpus), sizeof(void *));
	/*
	 * Three lists of at most @capacity each, and room for a fourth: a
	 * sender reading a span while the map is refilled may see a start
	 * (at most 3 * capacity) and a count (at most capacity) of different
	 * fills, and stays within the slots until its sequence-count retry.
	 */
	node_start = size_add(slots, size_mul(4 * capacity, sizeof(void *)));
	size = size_add(node_start, size_mul(topo->nr_nodes + 1, sizeof(u32)));
	size = size_add(size, size_mul(topo->nr_nodes, sizeof(s16)));
	map = kvzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!map)
		return NULL;
	seqcount_spinlock_init(&map->seq, lock);
	map->cursor = cursor;
	map->distance = topo->distance;
	map->nr_cpus = topo->nr_cpus;
	map->nr_nodes = topo->nr_nodes;
	map->capacity = capacity;
	map->slots = (void *)map + slots;
	map->node_start = (void *)map + node_start;
	map->nearest = (void *)(map->node_start + topo->nr_nodes + 1);
	return map;
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devq_map_alloc);

/**
 * fuse_devq_map_free - free a routing map now
 * @map: the map, or NULL; its cursor belongs to the caller
 */
VISIBLE_IF_KUNIT void fuse_devq_map_free(struct fuse_devq_map *map)
{
	kvfree(map);
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devq_map_free);

/*
 * The node with bound queues nearest to @node (which has none); among
 * several as near, the first after @node in numbering order, so that
 * nodes without queues spread over their equally near neighbours.
 */
static int fuse_devq_nearest(const struct fuse_devq_map *map, int node)
{
	int m, best = NUMA_NO_NODE, bestd = INT_MAX, d;
	unsigned int k;

	for (k = 1; k < map->nr_nodes; k++) {
		m = (node + k) % map->nr_nodes;
		if (map->node_start[m + 1] == map->node_start[m])
			continue;
		d = fuse_devq_distance(map, node, m);
		if (d < bestd) {
			best = m;
			bestd = d;
		}
	}
	return best;
}

/**
 * fuse_devq_map_fill - compute the candidates of every CPU
 * @map: the map; its first @map->nr_queues slots hold the bound queues,
 *	in the order they are to be preferred
 * @topo: the CPUs and nodes
 *
 * For each CPU the candidates are the queues bound to it; if there are
 * none, the queues bound to its node or to a CPU on its node; if there are
 * none, those of the nearest node with bound queues (node_distance()).
 * Each list is a slice of @map->slots, so the map needs at most three
 * slots per bound queue (it has four: fuse_devq_map_alloc()) and one span
 * per CPU, and is rebuilt without allocating.  Called with @map->seq
 * write-locked, or on a map no sender can see yet.
 */
VISIBLE_IF_KUNIT void fuse_devq_map_fill(struct fuse_devq_map *map,
					 const struct fuse_devq_topo *topo)
{
	unsigned int n = map->nr_queues, pos = n, i, cpu, node;
	struct fuse_devq **slots = map->slots;
	int nd;

	for (i = 0; i < n; i++)
		WRITE_ONCE(slots[i]->home, fuse_devq_queue_node(topo, slots[i]));

	/* Per node, the queues bound to it or to a CPU on it */
	for (node = 0; node < map->nr_nodes; node++) {
		map->node_start[node] = pos;
		for (i = 0; i < n; i++)
			if (slots[i]->home == node)
				slots[pos++] = slots[i];
	}
	map->node_start[map->nr_nodes] = pos;
	for (node = 0; node < map->nr_nodes; node++)
		map->nearest[node] = fuse_devq_nearest(map, node);

	/* Per CPU, the queues bound to it: a counting sort by CPU */
	memset(map->span, 0, map->nr_cpus * sizeof(*map->span));
	for (i = 0; i < n; i++)
		if ((slots[i]->bind_flags & FUSE_DEV_BIND_CPU) &&
		    slots[i]->cpu >= 0 && slots[i]->cpu < map->nr_cpus)
			map->span[slots[i]->cpu].count++;
	for (cpu = 0; cpu < map->nr_cpus; cpu++) {
		map->span[cpu].start = pos;
		pos += map->span[cpu].count;
		map->span[cpu].count = 0;
	}
	for (i = 0; i < n; i++) {
		struct fuse_devq_span *s;

		if (!(slots[i]->bind_flags & FUSE_DEV_BIND_CPU) ||
		    slots[i]->cpu < 0 || slots[i]->cpu >= map->nr_cpus)
			continue;
		s = &map->span[slots[i]->cpu];
		slots[s->start + s->count++] = slots[i];
	}

	for (cpu = 0; cpu < map->nr_cpus; cpu++) {
		struct fuse_devq_span *s = &map->span[cpu];

		nd = fuse_devq_topo_node(topo, cpu);
		s->node = nd >= 0 ? nd : FUSE_DEVQ_NO_NODE;
		if (!n)
			continue;
		if (s->count) {
			s->level = FUSE_DEVQ_LOCAL_CPU;
			continue;
		}
		if (nd >= 0 && map->node_start[nd + 1] == map->node_start[nd])
			nd = map->nearest[nd];
		else if (nd >= 0)
			s->level = FUSE_DEVQ_LOCAL_NODE;
		if (nd >= 0) {
			s->start = map->node_start[nd];
			s->count = map->node_start[nd + 1] - map->node_start[nd];
		} else {
			s->start = 0;
			s->count = n;
		}
		if (s->level != FUSE_DEVQ_LOCAL_NODE)
			s->level = FUSE_DEVQ_REMOTE;
	}

	/*
	 * No slot is NULL once the map is seen: a sender reading a span
	 * torn by a refill finds some bound queue there, which its retry
	 * then replaces with the right one.
	 */
	if (n)
		for (i = pos; i < 4 * map->capacity; i++)
			slots[i] = slots[0];
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devq_map_fill);

/*
 * A non-strict bound queue other than @except whose reader is free: an
 * idle one on @node; else, if @back, one on @node whose reader is on its
 * way back to read(); else an idle one on the nearest node, or (@back) one
 * on its way back there.  Safe without the map's sequence count (used
 * from the timer): a torn view only makes a worse choice.
 */
static struct fuse_devq *fuse_devq_find_idle(struct fuse_devq_map *map,
					     int node,
					     struct fuse_devq *except,
					     bool back)
{
	unsigned int i, n = min(READ_ONCE(map->nr_queues), map->capacity);
	struct fuse_devq *c, *best = NULL;
	long d, bestd = LONG_MAX;
	int home;

	for (i = 0; i < n; i++) {
		c = READ_ONCE(map->slots[i]);
		if (!c || c == except || READ_ONCE(c->strict))
			continue;
		if (fuse_devq_idle(c))
			d = 0;
		else if (back && !fuse_devq_busy(c))
			d = 1;
		else
			continue;
		home = READ_ONCE(c->home);
		if (home == node && !d)
			return c;
		/* Same node first, then by distance; idle before back */
		if (home != node)
			d += 2 + 2L * (node >= 0 && node < map->nr_nodes &&
				       home >= 0 && home < map->nr_nodes ?
				       fuse_devq_distance(map, node, home) : 255);
		if (d < bestd) {
			best = c;
			bestd = d;
		}
	}
	return best;
}

/*
 * fuse_devq_choose - the queue a request from @cpu goes to
 * @map: the routing map, read under its sequence count
 * @cpu: the CPU the request was issued on
 * @ch: cleared by the caller; gets what was decided
 *
 * Among the CPU's candidates, the one this CPU used last, while it is not
 * busy (a reader that just answered is about to read again, with a warm
 * cache); else one with an idle reader, else one that is not busy; if all
 * are busy, a free bound reader elsewhere: on the CPU's node first (idle,
 * else on its way back), then on the nearest node; if every reader is
 * busy, the routed queue, where the first reader to be free takes it.
 * Strict candidates take turns and never give work away.
 *
 * Return: the queue, or NULL while nothing is bound.
 */
static __always_inline struct fuse_devq *
fuse_devq_choose(struct fuse_devq_map *map, unsigned int cpu,
		 struct fuse_devq_choice *ch)
{
	struct fuse_devq **cand, *q, *c;
	struct fuse_devq_span s;
	unsigned int i = 0, j, k;

	if (unlikely(cpu >= map->nr_cpus))
		cpu = 0;
	s = map->span[cpu];
	if (!s.count)
		return NULL;
	cand = &map->slots[s.start];
	if (s.count > 1) {
		i = this_cpu_read(*map->cursor);
		if (i >= s.count)
			i = 0;
	}
	q = cand[i];
	ch->routed = q;
	if (READ_ONCE(q->strict)) {
		if (s.count > 1)
			this_cpu_write(*map->cursor, i + 1 < s.count ? i + 1 : 0);
		return q;
	}
	if (!fuse_devq_busy(q))
		return q;

	for (k = 1; k < s.count; k++) {
		j = i + k < s.count ? i + k : i + k - s.count;
		c = cand[j];
		if (!READ_ONCE(c->strict) && fuse_devq_idle(c)) {
			this_cpu_write(*map->cursor, j);
			return c;
		}
	}
	for (k = 1; k < s.count; k++) {
		j = i + k < s.count ? i + k : i + k - s.count;
		c = cand[j];
		if (!READ_ONCE(c->strict) && !fuse_devq_busy(c)) {
			this_cpu_write(*map->cursor, j);
			return c;
		}
	}
	c = fuse_devq_find_idle(map, s.node == FUSE_DEVQ_NO_NODE ?
			      NUMA_NO_NODE : s.node, q, true);
	if (c) {
		ch->spilled = true;
		return c;
	}
	ch->busy = true;
	return q;
}

#if IS_ENABLED(CONFIG_KUNIT)
/* fuse_devq_choose() for the KUnit tests, with @ch cleared first */
struct fuse_devq *fuse_devq_map_choose(struct fuse_devq_map *map,
				       unsigned int cpu,
				       struct fuse_devq_choice *ch)
{
	ch->routed = NULL;
	ch->busy = false;
	ch->spilled = false;
	return fuse_devq_choose(map, cpu, ch);
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devq_map_choose);
#endif

/**
 * fuse_devq_map_has - is @q among the candidates of @cpu?
 * @map: the map
 * @cpu: the CPU
 * @q: the queue
 *
 * Return: true if requests from @cpu may stay on @q.
 */
VISIBLE_IF_KUNIT bool fuse_devq_map_has(struct fuse_devq_map *map, unsigned int cpu,
					struct fuse_devq *q)
{
	struct fuse_devq_span s;
	unsigned int i;

	if (cpu >= map->nr_cpus)
		cpu = 0;
	s = map->span[cpu];
	for (i = 0; i < s.count; i++)
		if (map->slots[s.start + i] == q)
			return true;
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devq_map_has);

/* ---- queues and their connection ---- */

static void fuse_devq_timer_fn(struct timer_list *t);

/**
 * fuse_devq_queue_init - initialize a device queue
 * @q: the queue, zeroed
 * @fc: its connection (NULL in KUnit tests)
 * @index: its number in the connection
 */
VISIBLE_IF_KUNIT void fuse_devq_queue_init(struct fuse_devq *q, struct fuse_conn *fc,
					   unsigned int index)
{
	fuse_iqueue_init(&q->iq, &fuse_devq_fiq_ops, NULL);
	q->fc = fc;
	q->index = index;
	q->id_base = FUSE_DEVQ_UNIQUE_BIT | ((u64)index << FUSE_DEVQ_INDEX_SHIFT);
	q->cpu = -1;
	q->node = NUMA_NO_NODE;
	q->home = NUMA_NO_NODE;
	INIT_LIST_HEAD(&q->entry);
	timer_setup(&q->timer, fuse_devq_timer_fn, 0);
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devq_queue_init);

/**
 * fuse_devqs_init - initialize the device-queue state of a connection
 * @devqs: the state, zeroed
 */
void fuse_devqs_init(struct fuse_devqs *devqs)
{
	mutex_init(&devqs->mutex);
	INIT_LIST_HEAD(&devqs->queues);
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devqs_init);

/**
 * fuse_devqs_free - free the queues and routing map of a connection
 * @fc: the connection, whose last reference is gone
 */
void fuse_devqs_free(struct fuse_conn *fc)
{
	struct fuse_devq *q, *next;

	list_for_each_entry_safe(q, next, &fc->devqs.queues, entry) {
		timer_shutdown_sync(&q->timer);
		WARN_ON(fuse_devq_has_work(&q->iq));
		list_del(&q->entry);
		kfree(q);
	}
	fuse_devq_map_free(rcu_dereference_protected(fc->devqs.map, 1));
	RCU_INIT_POINTER(fc->devqs.map, NULL);
	free_percpu(fc->devqs.cursor);
	fc->devqs.cursor = NULL;
	mutex_destroy(&fc->devqs.mutex);
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devqs_free);

/**
 * fuse_devq_attach - give a new device its input queue
 * @fc: the connection it is joining
 * @fud: the device, not yet installed
 *
 * Reuses a queue of the connection's pool, whose device is gone and whose
 * requests have all ended, or allocates one (accounted to the caller's
 * memory cgroup, on the caller's node).  The queue exists before the
 * device can be polled, so poll, epoll and O_ASYNC registered at any time
 * see its wakeups.
 *
 * Return: 0, -ENOMEM, or -ENOSPC if the connection has FUSE_DEVQ_MAX_QUEUES
 * devices already.
 */
int fuse_devq_attach(struct fuse_conn *fc, struct fuse_dev *fud)
{
	struct fuse_devq *q;
	int err = 0;

	mutex_lock(&fc->devqs.mutex);
	list_for_each_entry(q, &fc->devqs.queues, entry)
		if (q->pooled)
			goto found;
	err = -ENOSPC;
	if (fc->devqs.nr_queues >= FUSE_DEVQ_MAX_QUEUES)
		goto out;
	err = -ENOMEM;
	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		goto out;
	fuse_devq_queue_init(q, fc, fc->devqs.nr_queues++);
	list_add_tail(&q->entry, &fc->devqs.queues);
	err = 0;
found:
	spin_lock(&fc->iq.lock);
	spin_lock_nested(&q->iq.lock, SINGLE_DEPTH_NESTING);
	q->iq.connected = fc->iq.connected;
	q->fud = fud;
	q->pooled = false;
	WRITE_ONCE(q->used, false);
	WRITE_ONCE(q->bind_flags, 0);
	WRITE_ONCE(q->cpu, -1);
	WRITE_ONCE(q->node, NUMA_NO_NODE);
	WRITE_ONCE(q->strict, false);
	WRITE_ONCE(q->poll_idle, false);
	WRITE_ONCE(q->overdue, false);
	WRITE_ONCE(q->in_handler, false);
	memset(q->level, 0, sizeof(q->level));
	spin_unlock(&q->iq.lock);
	spin_unlock(&fc->iq.lock);
	memset(q->took, 0, sizeof(q->took));
	memset(q->gave, 0, sizeof(q->gave));
	fud->devq = q;
out:
	mutex_unlock(&fc->devqs.mutex);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devq_attach);

/**
 * fuse_devq_detach - a device is freed: its queue returns to the pool
 * @fud: the device; its release, if it had one, has ended its requests
 *
 * Only now, with every request the device read ended, may another device
 * reuse the queue: before, it could read an interrupt for a request it
 * never read.
 */
void fuse_devq_detach(struct fuse_dev *fud)
{
	struct fuse_devq *q = fud->devq;
	struct fuse_conn *fc;

	if (!q)
		return;
	fc = q->fc;
	mutex_lock(&fc->devqs.mutex);
	spin_lock(&q->iq.lock);
	WARN_ON(q->routable || fuse_devq_has_work(&q->iq));
	q->fud = NULL;
	q->pooled = true;
	spin_unlock(&q->iq.lock);
	mutex_unlock(&fc->devqs.mutex);
	fud->devq = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(fuse_devq_detach);

/* ---- sending ---- */

/*
 * The bound queue a request from @cpu goes to now, or NULL for the shared
 * queue.  Under the devqs mutex the map cannot change under the caller.
 */
static __always_inline struct fuse_devq *
fuse_devq_pick(struct fuse_conn *fc, int cpu, struct fuse_devq_choice *ch)
{
	struct fuse_devq *q = NULL;
	struct fuse_devq_map *map;
	unsigned int seq;

	rcu_read_lock();
	map = rcu_dereference(fc->devqs.map);
	if (map) {
		do {
			seq = read_seqcount_begin(&map->seq);
			q = fuse_devq_choose(map, cpu, ch);
		} while (read_seqcount_retry(&map->seq, seq));
	}
	rcu_read_unlock();
	/* Queues live as long as the connection: no RCU needed from here */
	return q;
}

/* Any bound queue in the map?  Under the shared queue's lock. */
static bool fuse_devq_active_locked(struct fuse_conn *fc)
{
	struct fuse_devq_map *map;

	map = rcu_dereference_check(fc->devqs.map, lockdep_is_held(&fc->iq.lock));
	return map && map->nr_queues;
}

/*
 * fuse_devq_lock_target - lock the input queue a new request goes to
 * @fc: the connection, which has a routing map (fuse_devq_routing())
 * @cpu: the CPU the request was issued on
 * @ch: gets what the routing decided, for fuse_devq_queued()
 *
 * The device queue the CPU routes to, or the shared queue if no device is
 * bound any more.
 *
 * Return: the queue, locked; it may be disconnected.  (For sparse the
 * lock taken is the shared queue's; it is that of the queue returned.)
 */
static __always_inline struct fuse_iqueue *
fuse_devq_lock_target(struct fuse_conn *fc, int cpu,
		      struct fuse_devq_choice *ch)
	__acquires(&fc->iq.lock)
{
	struct fuse_iqueue *shared = &fc->iq;
	struct fuse_devq *q;

	for (;;) {
		ch->routed = NULL;
		ch->busy = false;
		ch->spilled = false;
		q = fuse_devq_pick(fc, cpu, ch);
		if (q) {
			spin_lock(&q->iq.lock);
			/* Unbound since it was picked: the map already says so */
			if (likely(q->routable))
				return &q->iq;
			spin_unlock(&q->iq.lock);
			continue;
		}
		spin_lock(&shared->lock);
		/* A binding was made while we took the lock: route again */
		if (likely(!fuse_devq_active_locked(fc)))
			return shared;
		spin_unlock(&shared->lock);
	}
}

/*
 * Wake an idle bound reader, nearest @node first; if there is none, the
 * unbound readers, which wait on the shared queue.  Returns whether a bound
 * one was found.
 */
static bool fuse_devq_wake_idle(struct fuse_conn *fc, int node,
				struct fuse_devq *except)
{
	struct fuse_devq *c = NULL;
	struct fuse_devq_map *map;

	rcu_read_lock();
	map = rcu_dereference(fc->devqs.map);
	if (map)
		c = fuse_devq_find_idle(map, node, except, false);
	if (c)
		wake_up(&c->iq.waitq);
	rcu_read_unlock();
	return c;
}

/*
 * Work waits on @q, whose readers are all busy: have idle bound readers
 * look for it.  The full barrier pairs with the one in fuse_devq_wait():
 * either the reader going to sleep sees the hint, or we see it waiting.
 */
static void fuse_devq_need_help(struct fuse_conn *fc, struct fuse_devq *q)
{
	/*
	 * The work and the busy mark before the look at the hint: a reader
	 * that cleared it meanwhile (fuse_devq_victim()) then sees the work on
	 * its second look, or we see the hint cleared and set it again.
	 */
	smp_mb();
	if (!READ_ONCE(fc->devqs.help))
		WRITE_ONCE(fc->devqs.help, 1);
	/* The hint before the look at waiters; pairs with fuse_devq_wait() */
	smp_mb();
	if (fuse_devq_wake_idle(fc, READ_ONCE(q->home), q))
		return;
	/* Unbound readers; the barrier above orders this look at them too */
	if (waitqueue_active(&fc->iq.waitq))
		wake_up(&fc->iq.waitq);
}

/* Work was queued on @q while no reader of it waited: keep an eye on it */
static void fuse_devq_watch(struct fuse_devq *q)
{
	if (!timer_pending(&q->timer)) {
		WRITE_ONCE(q->watch_taken, READ_ONCE(q->taken));
		mod_timer(&q->timer, jiffies + fuse_devq_steal_delay);
	}
}

static void fuse_devq_timer_fn(struct timer_list *t)
{
	struct fuse_devq *q = from_timer(q, t, timer);
	unsigned long taken = READ_ONCE(q->taken);

	if (!READ_ONCE(q->routable) || READ_ONCE(q->strict) ||
	    atomic_read(&q->waiters) || !fuse_devq_has_work(&q->iq))
		return;
	/* Its readers took work meanwhile: they are coming back to it */
	if (taken != READ_ONCE(q->watch_taken)) {
		WRITE_ONCE(q->watch_taken, taken);
		mod_timer(t, jiffies + fuse_devq_steal_delay);
		return;
	}
	/*
	 * Fired a whole delay late: this CPU itself was not running (a
	 * virtual CPU the host did not schedule, interrupts held off), so
	 * neither was the reader.  Give it the delay again.
	 */
	if (time_after(jiffies, t->expires + fuse_devq_steal_delay)) {
		mod_timer(t, jiffies + fuse_devq_steal_delay);
		return;
	}
	/* Its readers did not come back in time: idle readers may take it */
	WRITE_ONCE(q->overdue, true);
	fuse_devq_need_help(q->fc, q);
	mod_timer(&q->timer, jiffies + fuse_devq_steal_delay);
}

/*
 * After work was queued on a device queue whose reader does not wait, or
 * that the routing moved: see fuse_devq_queued().
 */
static void __fuse_devq_queued(struct fuse_conn *fc, struct fuse_iqueue *fiq,
			       const struct fuse_devq_choice *ch)
{
	struct fuse_devq *q = fuse_devq_of(fiq);

	if (ch->spilled) {
		atomic_long_inc(&ch->routed->gave[FUSE_DEVQ_MOVE_BUSY]);
		atomic_long_inc(&q->took[FUSE_DEVQ_MOVE_BUSY]);
	}
	if (READ_ONCE(q->strict))
		return;
	if (!atomic_read(&q->waiters))
		fuse_devq_watch(q);
	if (ch->busy)
		fuse_devq_need_help(fc, q);
}

/*
 * fuse_devq_queued - after a request or forget was queued, unlocked
 * @fc: the connection
 * @fiq: the queue it went to
 * @ch: what fuse_devq_lock_target() decided
 *
 * Nothing to do when it went to the shared queue, or where the routing
 * left it on a device queue whose reader waits, is strict, or is already
 * watched: the request path's common cases, a reader that waits and one
 * on its way back from answering.
 */
static __always_inline void fuse_devq_queued(struct fuse_conn *fc,
					     struct fuse_iqueue *fiq,
					     const struct fuse_devq_choice *ch)
{
	struct fuse_devq *q;

	if (!fuse_iq_is_devq(fiq))
		return;
	q = fuse_devq_of(fiq);
	if (likely(!ch->spilled && !ch->busy) &&
	    (atomic_read(&q->waiters) || READ_ONCE(q->strict) ||
	     timer_pending(&q->timer)))
		return;
	__fuse_devq_queued(fc, fiq, ch);
}

/* fuse_dev_wake_and_unlock(), inline on the routed request path */
static __always_inline void fuse_devq_wake_and_unlock(struct fuse_iqueue *fiq)
	__releases(fiq->lock)
{
	wake_up(&fiq->waitq);
	kill_fasync(&fiq->fasync, SIGIO, POLL_IN);
	spin_unlock(&fiq->lock);
}

/**
 * fuse_devq_queue_req - queue a request where its CPU routes it
 * @fc: the connection, which has a routing map (fuse_devq_routing())
 * @req: the request
 *
 * On the device queue the routing names (or, if no device is bound any
 * more, on the shared queue), with a unique id of that queue.
 *
 * Return: false if that queue is disconnected: the caller ends @req.
 */
bool fuse_devq_queue_req(struct fuse_conn *fc, struct fuse_req *req)
{
	struct fuse_devq_choice ch;
	struct fuse_iqueue *fiq;

	fiq = fuse_devq_lock_target(fc, req->cpu, &ch);
	if (!fiq->connected) {
		spin_unlock(&fiq->lock);
		return false;
	}
	if (req->in.h.opcode != FUSE_NOTIFY_REPLY)
		req->in.h.unique = fuse_devq_next_unique(fiq);
	list_add_tail(&req->list, &fiq->pending);
	fuse_req_set_fiq(req, fiq);
	fuse_devq_wake_and_unlock(fiq);
	fuse_devq_queued(fc, fiq, &ch);
	return true;
}

/**
 * fuse_devq_queue_forget - queue a forget where the evicting CPU routes it
 * @fc: the connection, which has a routing map (fuse_devq_routing())
 * @forget: the forget
 *
 * Return: false if the queue is disconnected: the caller frees @forget.
 */
bool fuse_devq_queue_forget(struct fuse_conn *fc,
			    struct fuse_forget_link *forget)
{
	struct fuse_devq_choice ch;
	struct fuse_iqueue *fiq;

	fiq = fuse_devq_lock_target(fc, raw_smp_processor_id(), &ch);
	if (!fiq->connected) {
		spin_unlock(&fiq->lock);
		return false;
	}
	fiq->forget_list_tail->next = forget;
	fiq->forget_list_tail = forget;
	fuse_devq_wake_and_unlock(fiq);
	fuse_devq_queued(fc, fiq, &ch);
	return true;
}

/**
 * fuse_devq_queued_intr - after a FUSE_INTERRUPT was queued, unlocked
 * @fc: the connection
 * @fiq: the queue of the device that read the request
 *
 * If every reader of that device is busy (typically in the very request
 * being interrupted), any idle bound reader may read the interrupt.
 */
void fuse_devq_queued_intr(struct fuse_conn *fc, struct fuse_iqueue *fiq)
{
	struct fuse_devq *q;

	if (!fuse_iq_is_devq(fiq)) {
		/* Read by an unbound device: bound readers help if none waits */
		if (rcu_access_pointer(fc->devqs.map) && !wq_has_sleeper(&fiq->waitq))
			fuse_devq_wake_idle(fc, NUMA_NO_NODE, NULL);
		return;
	}
	q = fuse_devq_of(fiq);
	if (!READ_ONCE(q->routable) || READ_ONCE(q->strict))
		return;
	if (fuse_devq_busy(q))
		fuse_devq_need_help(fc, q);
	else if (!atomic_read(&q->waiters))
		fuse_devq_watch(q);
}

/*
 * Work was put on @fiq by a move rather than by the routing (a drain after
 * a binding changed, a resend): watch it and call for help as the routing
 * does, so that it does not wait behind a busy reader.  Called with no
 * lock or with the lock of the queue it was moved from.
 */
static void fuse_devq_kick(struct fuse_conn *fc, struct fuse_iqueue *fiq)
{
	struct fuse_devq_choice ch = {};

	if (!fuse_iq_is_devq(fiq))
		return;
	ch.busy = fuse_devq_busy(fuse_devq_of(fiq));
	__fuse_devq_queued(fc, fiq, &ch);
}

/* ---- reading ---- */

/* Can an idle reader of another queue take work from @v? */
static bool fuse_devq_stealable(struct fuse_devq *v)
{
	return READ_ONCE(v->routable) && !READ_ONCE(v->strict) &&
	       !atomic_read(&v->waiters) && fuse_devq_has_work(&v->iq) &&
	       (READ_ONCE(v->overdue) || fuse_devq_busy(v));
}

/*
 * A bound queue other than @q with work for @q's device to take: on the
 * device's node first (its CPU's, if it is not bound), then the nearest.
 */
static struct fuse_devq *fuse_devq_find_victim(struct fuse_devq *q)
{
	unsigned int i, n;
	struct fuse_devq *c, *best = NULL;
	struct fuse_devq_map *map;
	int node, d, bestd = INT_MAX, home;

	node = READ_ONCE(q->routable) ? READ_ONCE(q->home) : numa_node_id();
	rcu_read_lock();
	map = rcu_dereference(q->fc->devqs.map);
	n = map ? min(READ_ONCE(map->nr_queues), map->capacity) : 0;
	for (i = 0; i < n; i++) {
		c = READ_ONCE(map->slots[i]);
		if (!c || c == q || !fuse_devq_stealable(c))
			continue;
		home = READ_ONCE(c->home);
		if (home == node) {
			best = c;
			break;
		}
		d = node >= 0 && node < map->nr_nodes &&
		    home >= 0 && home < map->nr_nodes ?
			fuse_devq_distance(map, node, home) : INT_MAX - 1;
		if (d < bestd) {
			best = c;
			bestd = d;
		}
	}
	rcu_read_unlock();
	return best;
}

/*
 * A busy queue whose work @q's reader may take, or NULL; the hint that
 * there is such work is cleared once a look finds none.
 */
static struct fuse_devq *fuse_devq_victim(struct fuse_devq *q)
{
	struct fuse_devq *v;
	struct fuse_conn *fc;

	if (!fuse_devq_may_steal(q))
		return NULL;
	fc = q->fc;
	v = fuse_devq_find_victim(q);
	if (!v) {
		/* Nothing left: clear the hint, then look once more */
		WRITE_ONCE(fc->devqs.help, 0);
		/* Cleared before the second look; pairs with fuse_devq_need_help() */
		smp_mb();
		v = fuse_devq_find_victim(q);
		if (v)
			WRITE_ONCE(fc->devqs.help, 1);
	}
	return v;
}

/**
 * __fuse_devq_lock_readable - fuse_devq_lock_readable() when the shared queue
 *	has work for a bound device, or busy queues may have work to take
 * @q: the device's queue, or NULL
 * @shared: the connection's shared queue
 *
 * Return: the queue, locked.
 */
struct fuse_iqueue *__fuse_devq_lock_readable(struct fuse_devq *q,
					      struct fuse_iqueue *shared)
	__acquires(&shared->lock)
{
	bool used = q && READ_ONCE(q->used);
	struct fuse_iqueue *home = used ? &q->iq : shared;
	struct fuse_devq *v;

	/* An abort disconnects the device's own queue too */
	if (used && fuse_devq_has_work(shared)) {
		spin_lock(&shared->lock);
		if (!shared->connected || fuse_devq_has_work(shared))
			return shared;
		spin_unlock(&shared->lock);
	}
	if (fuse_devq_may_steal(q) && !fuse_devq_iq_ready(home)) {
		v = fuse_devq_victim(q);
		if (v) {
			spin_lock(&v->iq.lock);
			if (v->iq.connected && fuse_devq_stealable(v))
				return &v->iq;
			spin_unlock(&v->iq.lock);
		}
	}
	spin_lock(&home->lock);
	return home;
}

/**
 * fuse_devq_nothing - a read found nothing and does not wait
 * @fud: the device
 *
 * An O_NONBLOCK read that gets EAGAIN, or a poll without EPOLLIN: the
 * daemon's poll loop is about to wait, so the device counts as idle.
 */
void fuse_devq_nothing(struct fuse_dev *fud)
{
	struct fuse_devq *q = fud->devq;

	if (q && READ_ONCE(q->used) && !READ_ONCE(q->poll_idle))
		WRITE_ONCE(q->poll_idle, true);
}

/**
 * __fuse_devq_left_behind - a reader goes into a handler, work left queued
 * @q: its device's queue, locked
 *
 * If no other reader of the device waits, idle readers are told to take
 * the rest.
 */
void __fuse_devq_left_behind(struct fuse_devq *q)
{
	if (!atomic_read(&q->waiters) && !READ_ONCE(q->strict) &&
	    READ_ONCE(q->routable))
		fuse_devq_need_help(q->fc, q);
}

/*
 * A reader goes into a handler with work from another queue while work
 * waits on its own (queued while it waited, so nobody watches it).
 */
static void fuse_devq_own_left_behind(struct fuse_devq *q,
				      struct fuse_req *req)
{
	if (req && READ_ONCE(q->in_handler) && fuse_devq_has_work(&q->iq))
		__fuse_devq_left_behind(q);
}

/**
 * __fuse_devq_took - a device's reader takes work from another queue than
 *	its own: see fuse_devq_took()
 * @q: the device's queue
 * @fiq: the queue it takes from, locked
 * @req: the request, for requests; NULL for a forget or an interrupt
 * @intr: it is an interrupt
 *
 * A bound reader takes the interrupts of the requests it reads, wherever
 * they were queued; an unbound one leaves them to the shared queue, as
 * with no device ever bound.
 */
void __fuse_devq_took(struct fuse_devq *q, struct fuse_iqueue *fiq,
		      struct fuse_req *req, bool intr)
{
	struct fuse_iqueue *shared = &q->fc->iq;
	enum fuse_devq_move why;
	struct fuse_devq *v;

	if (fiq == shared) {
		/* A device never bound reads as if there were no device queues */
		if (!READ_ONCE(q->used))
			return;
		fuse_devq_busy_now(q, req);
		if (req && READ_ONCE(q->routable))
			fuse_req_set_fiq(req, &q->iq);
		fuse_devq_own_left_behind(q, req);
		return;
	}

	/* Taken from a busy device */
	fuse_devq_busy_now(q, req);
	fuse_devq_own_left_behind(q, req);
	if (req)
		fuse_req_set_fiq(req, READ_ONCE(q->routable) ? &q->iq : shared);
	v = fuse_devq_of(fiq);
	why = intr ? FUSE_DEVQ_MOVE_INTR : FUSE_DEVQ_MOVE_STOLEN;
	atomic_long_inc(&v->gave[why]);
	atomic_long_inc(&q->took[why]);
}

/**
 * __fuse_devq_leave - a reader leaves read() without work: see fuse_devq_leave()
 * @q: its device's queue
 */
void __fuse_devq_leave(struct fuse_devq *q)
{
	if (!atomic_read(&q->waiters) && !READ_ONCE(q->strict) &&
	    READ_ONCE(q->routable) && fuse_devq_has_work(&q->iq))
		fuse_devq_watch(q);
}

/**
 * fuse_devq_wait - wait until a device may have something to read
 * @fud: the device
 * @idle: the caller's note that this reader counts as idle; set here, and
 *	cleared by fuse_devq_unidle() once the reader takes work or leaves
 *
 * A device that was never bound waits on the shared queue alone, as if
 * there were no device queues.  One that was waits on its own queue, and on the
 * shared one while it is not bound.  Either wakes for work it may take
 * from busy bound queues.  A reader stays idle from the moment it waits
 * until it has taken work, so that one that was woken for work is not
 * mistaken for a busy one.
 *
 * Return: 0, or -ERESTARTSYS on a signal.
 */
int fuse_devq_wait(struct fuse_dev *fud, bool *idle)
{
	struct fuse_iqueue *shared = &fud->fc->iq;
	struct fuse_devq *q = fud->devq;
	DEFINE_WAIT(own_wait);
	DEFINE_WAIT(shared_wait);
	bool on_shared = false;
	int err = 0;

	if (!q || !READ_ONCE(q->used))
		return wait_event_interruptible_exclusive(shared->waitq,
				fuse_devq_iq_ready(shared) ||
				(q && READ_ONCE(q->used)) ||
				(fuse_devq_may_steal(q) && fuse_devq_find_victim(q)));

	if (!*idle) {
		atomic_inc(&q->waiters);
		*idle = true;
		/* Pairs with fuse_devq_need_help() */
		smp_mb__after_atomic();
	}
	for (;;) {
		/*
		 * A wakeup takes the entry it came through off its queue:
		 * queue both again on every pass, or the next call for help
		 * on the shared queue would not reach this reader.
		 */
		prepare_to_wait_exclusive(&q->iq.waitq, &own_wait,
					  TASK_INTERRUPTIBLE);
		if (!READ_ONCE(q->routable)) {
			prepare_to_wait_exclusive(&shared->waitq, &shared_wait,
						  TASK_INTERRUPTIBLE);
			on_shared = true;
		}
		if (fuse_devq_iq_ready(&q->iq) || fuse_devq_iq_ready(shared) ||
		    (fuse_devq_may_steal(q) && fuse_devq_find_victim(q)))
			break;
		if (signal_pending(current)) {
			err = -ERESTARTSYS;
			break;
		}
		schedule();
	}
	finish_wait(&q->iq.waitq, &own_wait);
	if (on_shared)
		finish_wait(&shared->waitq, &shared_wait);
	return err;
}

/**
 * fuse_devq_poll - what a device's own queue offers to poll()
 * @fud: the device; the shared queue had nothing
 *
 * Return: EPOLLIN | EPOLLRDNORM if there is work for it, EPOLLERR if its
 * queue is disconnected, else 0 (and the device counts as idle).
 */
__poll_t fuse_devq_poll(struct fuse_dev *fud)
{
	struct fuse_devq *q = fud->devq;
	__poll_t mask = 0;

	if (!q)
		return 0;
	if (READ_ONCE(q->used)) {
		spin_lock(&q->iq.lock);
		if (!q->iq.connected)
			mask = EPOLLERR;
		else if (fuse_devq_has_work(&q->iq))
			mask = EPOLLIN | EPOLLRDNORM;
		spin_unlock(&q->iq.lock);
	}
	if (!mask && fuse_devq_may_steal(q) && fuse_devq_find_victim(q))
		mask = EPOLLIN | EPOLLRDNORM;
	if (!mask)
		fuse_devq_nothing(fud);
	return mask;
}

/* ---- moving queued work ---- */

/* End requests that found their queue disconnected, as an abort would. */
static void fuse_devq_end(struct list_head *to_end)
{
	struct fuse_req *req, *next;

	list_for_each_entry_safe(req, next, to_end, list) {
		list_del_init(&req->list);
		req->out.h.error = -ECONNABORTED;
		fuse_request_end(req);
	}
}

/*
 * The queue a request from @cpu goes to, or NULL if it is @src (under the
 * devqs mutex: the map and the bindings cannot change).
 */
static struct fuse_iqueue *fuse_devq_other(struct fuse_conn *fc, int cpu,
					   struct fuse_iqueue *src)
{
	struct fuse_devq_choice ch;
	struct fuse_devq *t;
	struct fuse_iqueue *to;

	lockdep_assert_held(&fc->devqs.mutex);
	t = fuse_devq_pick(fc, cpu, &ch);
	to = t ? &t->iq : &fc->iq;
	return to == src ? NULL : to;
}

/*
 * Move what is pending on @src to where the current map sends it, leaving
 * what may stay on a queue that is still bound.  Called with the devqs mutex
 * and @src's lock held, after a binding changed.  Interrupts stay: they
 * belong to requests @src's device read.
 */
static void fuse_devq_drain_locked(struct fuse_conn *fc, struct fuse_iqueue *src,
				   struct list_head *to_end)
{
	struct fuse_devq *q = fuse_iq_is_devq(src) ? fuse_devq_of(src) : NULL;
	struct fuse_forget_link *forgets = src->forget_list_head.next;
	struct fuse_devq_map *map = rcu_dereference_protected(fc->devqs.map,
				lockdep_is_held(&fc->devqs.mutex));
	bool keep = q && q->routable;
	struct fuse_req *req, *next;
	struct fuse_iqueue *to;
	LIST_HEAD(moving);

	list_splice_init(&src->pending, &moving);
	list_for_each_entry_safe(req, next, &moving, list) {
		if (keep && fuse_devq_map_has(map, req->cpu, q))
			to = NULL;
		else
			to = fuse_devq_other(fc, req->cpu, src);
		if (!to) {
			list_move_tail(&req->list, &src->pending);
			continue;
		}
		spin_lock_nested(&to->lock, SINGLE_DEPTH_NESTING);
		if (to->connected) {
			list_move_tail(&req->list, &to->pending);
			fuse_req_set_fiq(req, to);
			fuse_dev_wake_and_unlock(to);
			fuse_devq_kick(fc, to);
		} else {
			clear_bit(FR_PENDING, &req->flags);
			list_move_tail(&req->list, to_end);
			spin_unlock(&to->lock);
		}
	}

	if (!forgets || keep)
		return;
	to = fuse_devq_other(fc, raw_smp_processor_id(), src);
	if (!to)
		return;
	spin_lock_nested(&to->lock, SINGLE_DEPTH_NESTING);
	src->forget_list_head.next = NULL;
	if (to->connected) {
		to->forget_list_tail->next = forgets;
		to->forget_list_tail = src->forget_list_tail;
		fuse_dev_wake_and_unlock(to);
		fuse_devq_kick(fc, to);
	} else {
		spin_unlock(&to->lock);
		while (forgets) {
			struct fuse_forget_link *f = forgets;

			forgets = f->next;
			kfree(f);
		}
	}
	src->forget_list_tail = &src->forget_list_head;
}

/* ---- bindings ---- */

static int fuse_devq_nr_bound(struct fuse_conn *fc)
{
	struct fuse_devq *q;
	int n = 0;

	list_for_each_entry(q, &fc->devqs.queues, entry)
		if (q->fud && q->bind_flags)
			n++;
	return n;
}

/*
 * Rebuild the routing map from the bindings: in place, or into @grown,
 * which then replaces it.  Never fails; senders see the old map or the new
 * one, never a mix.
 */
static void fuse_devq_republish(struct fuse_conn *fc, struct fuse_devq_map *grown)
{
	struct fuse_devq_topo topo = {
		.nr_cpus = nr_cpu_ids, .nr_nodes = nr_node_ids,
	};
	struct fuse_devq_map *map, *old = NULL;
	struct fuse_devq *q;
	unsigned int n = 0;

	lockdep_assert_held(&fc->devqs.mutex);
	map = grown ?: rcu_dereference_protected(fc->devqs.map,
				lockdep_is_held(&fc->devqs.mutex));
	spin_lock(&fc->iq.lock);
	write_seqcount_begin(&map->seq);
	list_for_each_entry(q, &fc->devqs.queues, entry)
		if (q->fud && q->bind_flags && !WARN_ON(n >= map->capacity))
			WRITE_ONCE(map->slots[n++], q);
	WRITE_ONCE(map->nr_queues, n);
	fuse_devq_map_fill(map, &topo);
	write_seqcount_end(&map->seq);
	if (grown)
		old = rcu_replace_pointer(fc->devqs.map, grown,
					  lockdep_is_held(&fc->devqs.mutex));
	spin_unlock(&fc->iq.lock);
	if (old)
		kvfree_rcu(old, rcu);
	fc->devqs.rebuilds++;
}

/* A map with room for @need bound queues, if the current one has none */
static int fuse_devq_grow(struct fuse_conn *fc, unsigned int need,
			  struct fuse_devq_map **grown)
{
	struct fuse_devq_topo topo = {
		.nr_cpus = nr_cpu_ids, .nr_nodes = nr_node_ids,
	};
	struct fuse_devq_map *map = rcu_dereference_protected(fc->devqs.map,
				lockdep_is_held(&fc->devqs.mutex));
	bool new_cursor = false;

	*grown = NULL;
	if (map && need <= map->capacity)
		return 0;
	if (!fc->devqs.cursor) {
		fc->devqs.cursor = alloc_percpu_gfp(unsigned int,
						    GFP_KERNEL_ACCOUNT);
		if (!fc->devqs.cursor)
			return -ENOMEM;
		new_cursor = true;
	}
	*grown = fuse_devq_map_alloc(&topo, roundup_pow_of_two(max(need, 4U)),
				     &fc->iq.lock, fc->devqs.cursor);
	if (*grown)
		return 0;
	/* A failed first binding leaves nothing behind */
	if (new_cursor) {
		free_percpu(fc->devqs.cursor);
		fc->devqs.cursor = NULL;
	}
	return -ENOMEM;
}

/*
 * Change the binding of @q to @b (flags 0: unbind) and move what is queued
 * to where the new map sends it.  Only the allocation of a larger map can
 * fail, before anything changed; an unbind never allocates.
 */
static int fuse_devq_set_binding(struct fuse_conn *fc, struct fuse_devq *q,
				 const struct fuse_dev_bind *b)
{
	u32 flags = b->flags & (FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_NODE);
	bool strict = b->flags & FUSE_DEV_BIND_STRICT;
	int node = flags & FUSE_DEV_BIND_CPU ? cpu_to_node(b->cpu) : b->node;
	int bound = fuse_devq_nr_bound(fc);
	bool was = q->bind_flags;
	struct fuse_devq_map *grown;
	LIST_HEAD(to_end);
	int err;

	lockdep_assert_held(&fc->devqs.mutex);
	if (q->bind_flags == flags && q->cpu == b->cpu && q->node == node &&
	    q->strict == strict)
		return 0;
	if (flags) {
		err = fuse_devq_grow(fc, bound + !was, &grown);
		if (err)
			return err;
		/* Routable before senders can find it in the map */
		spin_lock(&q->iq.lock);
		WRITE_ONCE(q->routable, true);
		WRITE_ONCE(q->used, true);
		spin_unlock(&q->iq.lock);
	} else {
		grown = NULL;
	}

	WRITE_ONCE(q->bind_flags, flags);
	WRITE_ONCE(q->cpu, flags & FUSE_DEV_BIND_CPU ? b->cpu : -1);
	WRITE_ONCE(q->node, flags ? node : NUMA_NO_NODE);
	WRITE_ONCE(q->strict, strict);
	fuse_devq_republish(fc, grown);

	spin_lock(&q->iq.lock);
	WRITE_ONCE(q->routable, flags != 0);
	if (was)
		fuse_devq_drain_locked(fc, &q->iq, &to_end);
	spin_unlock(&q->iq.lock);

	/* The first binding: what waits on the shared queue goes to its CPU */
	if (!bound && flags) {
		spin_lock(&fc->iq.lock);
		fuse_devq_drain_locked(fc, &fc->iq, &to_end);
		spin_unlock(&fc->iq.lock);
	}

	/*
	 * Let the readers look again: a newly bound one at its own queue, an
	 * unbound one at the shared queue too.
	 */
	wake_up_all(&q->iq.waitq);
	wake_up_all(&fc->iq.waitq);
	fuse_devq_end(&to_end);
	return 0;
}

static int fuse_devq_check_bind(const struct fuse_dev_bind *b)
{
	u32 strict = b->flags & FUSE_DEV_BIND_STRICT;

	if (b->padding || (b->flags & ~FUSE_DEVQ_BIND_FLAGS))
		return -EINVAL;

	switch (b->flags & ~FUSE_DEV_BIND_STRICT) {
	case 0:
		if (strict || b->cpu != -1 || b->node != NUMA_NO_NODE)
			return -EINVAL;
		return 0;
	case FUSE_DEV_BIND_CPU:
		if (b->cpu < 0 || b->cpu >= nr_cpu_ids || !cpu_possible(b->cpu))
			return -EINVAL;
		/* The node FUSE_DEV_IOC_GET_BIND reports is accepted too */
		if (b->node != NUMA_NO_NODE && b->node != cpu_to_node(b->cpu))
			return -EINVAL;
		if (!cpu_online(b->cpu))
			return -ENXIO;
		return 0;
	case FUSE_DEV_BIND_NODE:
		if (b->cpu != -1 || b->node < 0 || b->node >= nr_node_ids ||
		    !node_possible(b->node))
			return -EINVAL;
		if (!cpumask_intersects(cpumask_of_node(b->node),
					cpu_online_mask))
			return -ENXIO;
		return 0;
	}
	return -EINVAL;
}

/**
 * fuse_devq_ioctl_bind - FUSE_DEV_IOC_BIND: bind or unbind a device
 * @fud: the device
 * @argp: the struct fuse_dev_bind
 *
 * Return: 0, or a negative errno as documented in uapi/linux/fuse.h; on
 * error nothing has changed.
 */
long fuse_devq_ioctl_bind(struct fuse_dev *fud,
			  const struct fuse_dev_bind __user *argp)
{
	struct fuse_conn *fc = fud->fc;
	struct fuse_dev_bind b;
	int err;

	if (copy_from_user(&b, argp, sizeof(b)))
		return -EFAULT;
	err = fuse_devq_check_bind(&b);
	if (err)
		return err;
	if (!fud->devq)
		return -EPERM;

	mutex_lock(&fc->devqs.mutex);
	err = -ENOTCONN;
	if (READ_ONCE(fc->connected))
		err = fuse_devq_set_binding(fc, fud->devq, &b);
	mutex_unlock(&fc->devqs.mutex);
	return err;
}

/**
 * fuse_devq_ioctl_get_bind - FUSE_DEV_IOC_GET_BIND: report a device's binding
 * @fud: the device
 * @argp: gets the struct fuse_dev_bind
 *
 * What it reports, given back to FUSE_DEV_IOC_BIND, binds the same way.
 *
 * Return: 0 or -EFAULT.
 */
long fuse_devq_ioctl_get_bind(struct fuse_dev *fud,
			      struct fuse_dev_bind __user *argp)
{
	struct fuse_dev_bind b = { .cpu = -1, .node = NUMA_NO_NODE };
	struct fuse_devq *q = fud->devq;

	if (q) {
		mutex_lock(&fud->fc->devqs.mutex);
		if (q->bind_flags) {
			b.flags = q->bind_flags;
			if (q->strict)
				b.flags |= FUSE_DEV_BIND_STRICT;
			b.cpu = q->cpu;
			b.node = q->node;
		}
		mutex_unlock(&fud->fc->devqs.mutex);
	}
	return copy_to_user(argp, &b, sizeof(b)) ? -EFAULT : 0;
}

/**
 * fuse_devq_dev_release - a device is going away: unbind it, reroute its queue
 * @fud: the device
 *
 * Called before its processing queue is ended.  What is pending on its
 * queue is routed again (to the shared queue if nothing else is bound);
 * interrupts stay, for the requests it read, which the caller ends.  The
 * map is rebuilt in place, so this cannot fail for want of memory.  The
 * queue returns to the pool when the device is freed (fuse_devq_detach()).
 */
void fuse_devq_dev_release(struct fuse_dev *fud)
{
	static const struct fuse_dev_bind unbind = {
		.cpu = -1, .node = NUMA_NO_NODE,
	};
	struct fuse_devq *q = fud->devq;
	struct fuse_conn *fc = fud->fc;
	LIST_HEAD(to_end);

	if (!q)
		return;

	mutex_lock(&fc->devqs.mutex);
	if (q->bind_flags)
		WARN_ON(fuse_devq_set_binding(fc, q, &unbind));
	spin_lock(&q->iq.lock);
	q->fud = NULL;
	fuse_devq_drain_locked(fc, &q->iq, &to_end);
	spin_unlock(&q->iq.lock);
	mutex_unlock(&fc->devqs.mutex);
	fuse_devq_end(&to_end);
}

#ifdef FUSE_UNIQUE_RESEND	/* FUSE_NOTIFY_RESEND, since Linux 6.9 */
/* Put a resent request at the head of @to, locked */
static void fuse_devq_put_back(struct fuse_req *req, struct fuse_iqueue *to,
			       struct list_head *to_end)
{
	if (to->connected) {
		set_bit(FR_PENDING, &req->flags);
		list_add(&req->list, &to->pending);
		fuse_req_set_fiq(req, to);
		wake_up(&to->waitq);
		kill_fasync(&to->fasync, SIGIO, POLL_IN);
	} else {
		list_add_tail(&req->list, to_end);
	}
}

/*
 * A resent request goes back to the head of the queue that owns it: the
 * queue of the device that read it, or the shared one; if that device is
 * gone, it is routed anew.  Both queues are locked while it moves, so a
 * requester that gives up meanwhile finds it where it is.
 */
static void fuse_devq_requeue(struct fuse_conn *fc, struct fuse_req *req,
			      struct list_head *to_end)
{
	struct fuse_iqueue *fiq = fuse_req_lock_fiq(req), *to = NULL;

	/* Prevent a stale intr_entry once the request is queued again */
	if (test_bit(FR_INTERRUPTED, &req->flags))
		list_del_init(&req->intr_entry);
	req->in.h.unique |= FUSE_UNIQUE_RESEND;
	if (fuse_iq_is_devq(fiq) && !fuse_devq_of(fiq)->fud)
		to = fuse_devq_other(fc, req->cpu, fiq);
	if (to) {
		spin_lock_nested(&to->lock, SINGLE_DEPTH_NESTING);
		fuse_devq_put_back(req, to, to_end);
		spin_unlock(&to->lock);
	} else {
		to = fiq;
		fuse_devq_put_back(req, fiq, to_end);
	}
	spin_unlock(&fiq->lock);
	/* On the shared queue while devices are bound: they may help */
	if (!fuse_iq_is_devq(to))
		fuse_devq_queued_intr(fc, to);
	else
		fuse_devq_kick(fc, to);
}

/**
 * fuse_devq_resend - FUSE_NOTIFY_RESEND: queue read requests again
 * @fc: the connection, its devqs mutex held since the requests were taken
 *	off the processing queues
 * @reqs: those requests, oldest first
 * @to_end: gets those whose queue is disconnected
 */
void fuse_devq_resend(struct fuse_conn *fc, struct list_head *reqs,
		      struct list_head *to_end)
{
	struct fuse_req *req, *next;

	lockdep_assert_held(&fc->devqs.mutex);
	/* Newest first, each to the head of its queue: oldest read first */
	list_for_each_entry_safe_reverse(req, next, reqs, list) {
		list_del_init(&req->list);
		fuse_devq_requeue(fc, req, to_end);
	}
}
#endif

/* ---- topology ---- */

static void fuse_devq_topo_workfn(struct work_struct *work)
{
	struct fuse_conn *fc;

	mutex_lock(&fuse_mutex);
	list_for_each_entry(fc, &fuse_conn_list, entry) {
		mutex_lock(&fc->devqs.mutex);
		if (rcu_access_pointer(fc->devqs.map))
			fuse_devq_republish(fc, NULL);
		mutex_unlock(&fc->devqs.mutex);
	}
	mutex_unlock(&fuse_mutex);
}

static DECLARE_WORK(fuse_devq_topo_work, fuse_devq_topo_workfn);
static enum cpuhp_state fuse_devq_hp_state;

/* A CPU came online, perhaps on another node than before: route anew */
static int fuse_devq_cpu_online(unsigned int cpu)
{
	schedule_work(&fuse_devq_topo_work);
	return 0;
}

/**
 * fuse_devq_init - set up device queues at module load
 *
 * Registers the CPU-hotplug callback that rebuilds routing maps.
 *
 * Return: 0 or a negative errno.
 */
int __init fuse_devq_init(void)
{
	int ret;

	fuse_devq_steal_delay = max(msecs_to_jiffies(FUSE_DEVQ_STEAL_DELAY_MS), 1UL);
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "fs/fuse:online",
					fuse_devq_cpu_online, NULL);
	if (ret < 0)
		return ret;
	fuse_devq_hp_state = ret;
	return 0;
}

/**
 * fuse_devq_exit - undo fuse_devq_init() at module unload
 */
void fuse_devq_exit(void)
{
	cpuhp_remove_state_nocalls(fuse_devq_hp_state);
	cancel_work_sync(&fuse_devq_topo_work);
}

/* ---- statistics ---- */

static unsigned int fuse_devq_count_queued(struct fuse_iqueue *fiq)
{
	struct fuse_forget_link *f;
	unsigned int n;

	spin_lock(&fiq->lock);
	n = list_count_nodes(&fiq->pending);
	for (f = fiq->forget_list_head.next; f; f = f->next)
		n++;
	spin_unlock(&fiq->lock);
	return n;
}

static const char *fuse_devq_bind_name(const struct fuse_devq *q)
{
	if (q->bind_flags & FUSE_DEV_BIND_CPU)
		return q->strict ? "cpu!" : "cpu";
	if (q->bind_flags & FUSE_DEV_BIND_NODE)
		return q->strict ? "node!" : "node";
	return "none";
}

/**
 * fuse_devq_show - the fusectl "dev_queues" file of a connection
 * @m: the seq_file
 * @fc: the connection
 *
 * One line for the shared queue (with the number of routing-map rebuilds
 * so far), then one per device: its id, binding,
 * requests and forgets queued now, requests it read (in total, and of
 * those how many came from its CPU, from its node, from elsewhere), and
 * work it took over from other devices and others took from it, by reason.
 *
 * Return: 0.
 */
int fuse_devq_show(struct seq_file *m, struct fuse_conn *fc)
{
	struct fuse_dev *fud;

	seq_puts(m, "dev    bind cpu node queued read local_cpu local_node remote took_busy took_stolen took_intr gave_busy gave_stolen gave_intr\n");
	mutex_lock(&fc->devqs.mutex);
	seq_printf(m, "shared -    -   -    %u - rebuilds %lu\n",
		   fuse_devq_count_queued(&fc->iq), fc->devqs.rebuilds);
	spin_lock(&fc->lock);
	list_for_each_entry(fud, &fc->devices, entry) {
		struct fuse_devq *q = fud->devq;
		u64 lv[FUSE_DEVQ_NR_LEVELS] = {};
		unsigned int queued = 0;
		int i;

		if (!q) {
			seq_printf(m, "%-6u none -1  -1   0 0 0 0 0 0 0 0 0 0 0\n",
				   fud->id);
			continue;
		}
		spin_lock(&fud->pq.lock);
		memcpy(lv, q->level, sizeof(lv));
		spin_unlock(&fud->pq.lock);
		queued = fuse_devq_count_queued(&q->iq);
		seq_printf(m, "%-6u %-4s %-3d %-4d %u %llu %llu %llu %llu",
			   fud->id, fuse_devq_bind_name(q),
			   q->bind_flags ? q->cpu : -1,
			   q->bind_flags ? q->node : NUMA_NO_NODE, queued,
			   lv[0] + lv[1] + lv[2], lv[FUSE_DEVQ_LOCAL_CPU],
			   lv[FUSE_DEVQ_LOCAL_NODE], lv[FUSE_DEVQ_REMOTE]);
		for (i = 0; i < FUSE_DEVQ_NR_MOVES; i++)
			seq_printf(m, " %ld", atomic_long_read(&q->took[i]));
		for (i = 0; i < FUSE_DEVQ_NR_MOVES; i++)
			seq_printf(m, " %ld", atomic_long_read(&q->gave[i]));
		seq_putc(m, '\n');
	}
	spin_unlock(&fc->lock);
	mutex_unlock(&fc->devqs.mutex);
	return 0;
}
