// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE: /dev/fuse devices bound to CPUs and NUMA nodes
 *
 * A bound device has an input queue of its own, and each CPU maps to a
 * bound device: its own, else one of the nearest node's.  A request waits
 * there and wakes the nearest idle reader: the device's, its node's, the
 * nearest other node's, any.  A reader takes the shared queue's work first,
 * then its device's, then that of hinted nodes, nearest first.
 *
 * Lock order: bind_mutex, fch->lock, a device's queue lock, fch->iq.lock.
 * See Documentation/filesystems/fuse/fuse-clone-queues.rst.
 */

#include "args.h"
#include "dev.h"
#include "fuse_dev_i.h"

#include <linux/nodemask.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

#define CREATE_TRACE_POINTS
#include "dev_bind_trace.h"

/* Enabled at the first binding: until then, no request takes a look */
DEFINE_STATIC_KEY_FALSE(fuse_bind_used);

/* A bound device's queue and binding, freed after an RCU grace period */
struct fuse_bound {
	struct fuse_iqueue iq;
	struct list_head entry;		/* on fch->bound while bound */
	int cpu;			/* the bound CPU, or -1 */
	int node;			/* its node, or the bound node */
	unsigned int reads;		/* by its readers, from any queue */
	wait_queue_head_t pollers;	/* its pollers; its readers: iq.waitq */
	struct rcu_head rcu;
};

/*
 * The idle readers of a node's devices wait here too.  @queued: a request
 * on one of them may be left to another device's readers (fuse_bind_next())
 */
struct fuse_bind_node {
	wait_queue_head_t waitq;
	bool queued ____cacheline_aligned_in_smp;
} ____cacheline_aligned_in_smp;

/* Where each CPU's requests go, and the nodes nearest each; RCU */
struct fuse_bind_map {
	struct rcu_head rcu;
	unsigned int nr_devs;
	unsigned int nr_near;
	struct fuse_bound **devs;	/* by node: n's from devs[first[n]] */
	unsigned int *first;		/* nr_node_ids + 1 */
	int *near;			/* per node: those with devices, nearest */
					/* first, -1 after the last (nr_near) */
	unsigned int *turn;		/* per node: its CPUs' turns, in filling */
	struct fuse_bound *dev[];	/* per possible CPU */
};

/* Device queue locks: a lockdep class of their own (see the lock order) */
static struct lock_class_key fuse_bound_lock_key;

static struct fuse_bound *fuse_bound_of(struct fuse_iqueue *fiq)
{
	return fiq ? container_of(fiq, struct fuse_bound, iq) : NULL;
}

/* A CPU of no node (NUMA_NO_NODE) counts as node 0's */
static int fuse_cpu_node(unsigned int cpu)
{
	return max(cpu_to_node(cpu), 0);
}

static struct fuse_bind_map *fuse_bind_map_alloc(unsigned int nr_devs,
						 gfp_t gfp)
{
	unsigned int nr_near = min(nr_devs, nr_node_ids);
	struct fuse_bind_map *map;
	size_t size = struct_size(map, dev, nr_cpu_ids) +
		      nr_devs * sizeof(*map->devs) +
		      (nr_node_ids + 1) * sizeof(*map->first) +
		      nr_node_ids * nr_near * sizeof(*map->near) +
		      nr_node_ids * sizeof(*map->turn);

	map = kvzalloc(size, gfp);
	if (map) {
		map->nr_devs = nr_devs;
		map->nr_near = nr_near;
		map->devs = (struct fuse_bound **)&map->dev[nr_cpu_ids];
		map->first = (unsigned int *)&map->devs[nr_devs];
		map->near = (int *)&map->first[nr_node_ids + 1];
		map->turn = (unsigned int *)&map->near[nr_node_ids * nr_near];
	}
	return map;
}

/* Fill @map from fch->bound: O((CPUs + nodes^2) * nr_near + devices * nodes) */
static void fuse_bind_fill(struct fuse_chan *fch, struct fuse_bind_map *map)
{
	unsigned int cpu, i = 0;
	struct fuse_bound *b;
	int node, m, k, n;

	for (node = 0; node < nr_node_ids; node++) {
		map->first[node] = i;
		list_for_each_entry(b, &fch->bound, entry)
			if (b->node == node)
				map->devs[i++] = b;
	}
	map->first[nr_node_ids] = i;
	for (node = 0; node < nr_node_ids; node++) {
		int *near = map->near + node * map->nr_near;

		for (m = 0, n = 0; m < nr_node_ids; m++) {
			if (map->first[m] == map->first[m + 1])
				continue;
			for (k = n++; k && node_distance(node, near[k - 1]) >
					   node_distance(node, m); k--)
				near[k] = near[k - 1];
			near[k] = m;
		}
		if (n < map->nr_near)
			near[n] = -1;
	}
	list_for_each_entry(b, &fch->bound, entry)
		if (b->cpu >= 0)
			map->dev[b->cpu] = b;
	/* The devices of every nearest node, each node's CPUs taking turns */
	for_each_possible_cpu(cpu) {
		const int *near;

		if (map->dev[cpu])
			continue;
		node = fuse_cpu_node(cpu);
		near = map->near + node * map->nr_near;
		for (k = 0, n = 0; k < map->nr_near && near[k] >= 0 &&
		     node_distance(node, near[k]) == node_distance(node, near[0]);
		     k++)
			n += map->first[near[k] + 1] - map->first[near[k]];
		i = map->turn[node]++ % n;
		for (k = 0; i >= map->first[near[k] + 1] - map->first[near[k]]; k++)
			i -= map->first[near[k] + 1] - map->first[near[k]];
		map->dev[cpu] = map->devs[map->first[near[k]] + i];
	}
}

/*
 * Publish @map, filled from fch->bound, or none if nothing is bound.  With
 * no memory for a map, @gone is taken off the old one in place: its CPUs'
 * requests go to the shared queue until the next binding.
 */
static void fuse_bind_publish(struct fuse_chan *fch, struct fuse_bind_map *map,
			      struct fuse_bound *gone)
{
	struct fuse_bind_map *old;
	unsigned int i;

	old = rcu_dereference_protected(fch->bind_map,
					lockdep_is_held(&fch->bind_mutex));
	if (map) {
		fuse_bind_fill(fch, map);
	} else if (!list_empty(&fch->bound)) {
		for_each_possible_cpu(i)
			if (old->dev[i] == gone)
				WRITE_ONCE(old->dev[i], NULL);
		for (i = 0; i < old->nr_devs; i++)
			if (old->devs[i] == gone)
				WRITE_ONCE(old->devs[i], NULL);
		return;
	}
	rcu_assign_pointer(fch->bind_map, map);
	if (old)
		kvfree_rcu(old, rcu);
}

/*
 * Disconnect @b's queue and move what waits there to the shared queue,
 * waking a reader for each; if that is disconnected, the abort ends them.
 */
static void fuse_bind_requeue(struct fuse_chan *fch, struct fuse_bound *b)
{
	struct fuse_req *req;
	int n = 0;

	spin_lock(&b->iq.lock);
	b->iq.connected = 0;
	spin_lock(&fch->iq.lock);
	if (fch->iq.connected) {
		list_for_each_entry(req, &b->iq.pending, list) {
			WRITE_ONCE(req->fiq, NULL);
			n++;
		}
		list_splice_tail_init(&b->iq.pending, &fch->iq.pending);
	}
	spin_unlock(&fch->iq.lock);
	spin_unlock(&b->iq.lock);
	while (n--)
		fuse_bind_wake_shared(fch, false);
}

/* Take @b off the map and empty its queue; its readers wait as unbound */
static void fuse_bind_unmap(struct fuse_chan *fch, struct fuse_bound *b)
{
	struct fuse_bind_map *map = NULL;

	if (list_empty(&b->entry))
		return;
	list_del_init(&b->entry);
	/* No reclaim: a daemon's close may not wait for its own writeback */
	if (!list_empty(&fch->bound))
		map = fuse_bind_map_alloc(list_count_nodes(&fch->bound),
					  GFP_NOWAIT | __GFP_NOWARN);
	fuse_bind_publish(fch, map, b);
	fuse_bind_requeue(fch, b);
	wake_up_all(&b->iq.waitq);
	wake_up_all(&b->pollers);
}

static int fuse_bind_check(struct fuse_chan *fch, struct fuse_bound *b,
			   const struct fuse_dev_bind *arg)
{
	struct fuse_bound *other;

	if (arg->padding)
		return -EINVAL;
	switch (arg->flags) {
	case 0:
		if (arg->cpu != -1 || arg->node != -1)
			return -EINVAL;
		break;
	case FUSE_DEV_BIND_CPU:
		if (arg->node != -1 || arg->cpu < 0 ||
		    arg->cpu >= nr_cpu_ids || !cpu_possible(arg->cpu))
			return -EINVAL;
		list_for_each_entry(other, &fch->bound, entry)
			if (other != b && other->cpu == arg->cpu)
				return -EBUSY;
		break;
	case FUSE_DEV_BIND_NODE:
		if (arg->cpu != -1 || arg->node < 0 ||
		    arg->node >= nr_node_ids || !node_possible(arg->node))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	/* Unbinding an aborted connection's device is fine */
	return !arg->flags || READ_ONCE(fch->connected) ? 0 : -ENOTCONN;
}

/**
 * fuse_bind_ioctl - FUSE_DEV_IOC_BIND: bind a device to a CPU or a node
 * @fud: the device, which has a connection
 * @uarg: the binding, struct fuse_dev_bind
 *
 * A device keeps the queue of its first binding until it is released.
 * Unbound or bound again, what waited there moves to the shared queue.
 *
 * Return: 0, or a negative errno as uapi/linux/fuse.h documents; a failed
 * binding changes nothing.
 */
long fuse_bind_ioctl(struct fuse_dev *fud,
		     const struct fuse_dev_bind __user *uarg)
{
	struct fuse_bind_node *nodes = NULL;
	struct fuse_bind_map *map = NULL;
	struct fuse_dev_bind arg;
	struct fuse_bound *b;
	struct fuse_chan *fch;
	int err, node;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	fch = fud->chan;
	mutex_lock(&fch->bind_mutex);
	b = fuse_bound_of(fud->iq);
	err = fuse_bind_check(fch, b, &arg);
	if (err || (!arg.flags && !b))
		goto out;
	if (!arg.flags) {
		fuse_bind_unmap(fch, b);
		goto out;
	}
	err = -ENOMEM;
	map = fuse_bind_map_alloc(list_count_nodes(&fch->bound) +
				  (!b || list_empty(&b->entry)), GFP_KERNEL_ACCOUNT);
	if (!map)
		goto out;
	if (!fch->bind_nodes) {
		nodes = kvcalloc(nr_node_ids, sizeof(*nodes), GFP_KERNEL_ACCOUNT);
		if (!nodes)
			goto out;
		for (node = 0; node < nr_node_ids; node++)
			init_waitqueue_head(&nodes[node].waitq);
	}
	if (!b) {
		b = kzalloc_obj(*b, GFP_KERNEL_ACCOUNT);
		if (!b)
			goto out;
		fuse_iqueue_init(&b->iq, fch->iq.ops, NULL);
		b->iq.connected = 0;	/* until below */
		init_waitqueue_head(&b->pollers);
		lockdep_set_class(&b->iq.lock, &fuse_bound_lock_key);
		INIT_LIST_HEAD(&b->entry);
	}
	if (nodes) {
		fch->bind_nodes = nodes;
		nodes = NULL;
		static_branch_enable(&fuse_bind_used);
	}
	/* A device holds requests only under the node it is mapped to */
	if (!list_empty(&b->entry))
		fuse_bind_requeue(fch, b);
	/* Read locklessly by wakeups */
	WRITE_ONCE(b->cpu, arg.cpu);
	WRITE_ONCE(b->node, arg.cpu >= 0 ? fuse_cpu_node(arg.cpu) : arg.node);
	list_move_tail(&b->entry, &fch->bound);
	fuse_bind_publish(fch, map, b);
	/* Under fch->lock: an abort finds it, or it stays disconnected */
	spin_lock(&fch->lock);
	spin_lock(&b->iq.lock);
	b->iq.connected = fch->connected;
	spin_unlock(&b->iq.lock);
	/* Pairs with smp_load_acquire() in fuse_bind_next() and _wait() */
	smp_store_release(&fud->iq, &b->iq);
	spin_unlock(&fch->lock);
	/* Its sleeping readers move to their node's waitqueue */
	wake_up_all(&b->iq.waitq);
	map = NULL;
	err = 0;
out:
	mutex_unlock(&fch->bind_mutex);
	kvfree(nodes);
	kvfree(map);
	return err;
}

/**
 * fuse_bind_release - unbind a device that is going away, free its queue
 * @fud: the device
 *
 * What waits on its queue goes to the shared queue.
 */
void fuse_bind_release(struct fuse_dev *fud)
{
	struct fuse_bound *b = fuse_bound_of(fud->iq);
	struct fuse_chan *fch = fud->chan;

	if (!b)
		return;
	mutex_lock(&fch->bind_mutex);
	fuse_bind_unmap(fch, b);
	mutex_unlock(&fch->bind_mutex);
	/* Under fch->lock, so that an abort no longer finds it */
	spin_lock(&fch->lock);
	fud->iq = NULL;
	spin_unlock(&fch->lock);
	kfree_rcu(b, rcu);
}

/* A request on @node's devices is left to whichever reader comes first */
static void fuse_bind_hint(struct fuse_chan *fch, int node)
{
	if (!READ_ONCE(fch->bind_nodes[node].queued))
		WRITE_ONCE(fch->bind_nodes[node].queued, true);
}

/* A wakeup's key for bound readers: @busy as fuse_bind_wake()'s, and a result */
struct fuse_bind_key {
	int busy;
	bool woken;
};

/* Wake one exclusive waiter of @wq, or every other one: was one woken? */
static bool fuse_bind_wake_one(wait_queue_head_t *wq)
{
	/* Ordered by an smp_mb() in fuse_bind_wake() */
	return waitqueue_active(wq) &&
	       __wake_up(wq, TASK_NORMAL, 1, poll_to_key(EPOLLIN | EPOLLRDNORM));
}

/* Wake one bound reader waiting on @wq, as wake_up_sync() if @sync: woken? */
static bool fuse_bind_wake_reader(wait_queue_head_t *wq,
				  struct fuse_bind_key *key, bool sync)
{
	key->woken = false;
	/* Ordered by an smp_mb() in fuse_bind_wake() */
	if (!waitqueue_active(wq))
		return false;
	if (sync)
		__wake_up_sync_key(wq, TASK_NORMAL, key);
	else
		__wake_up(wq, TASK_NORMAL, 1, key);
	return key->woken;
}

/*
 * Wake the nearest idle reader for work on @b's queue (NULL: the shared
 * queue's) from @node: one of @b, else of each node nearest @node first,
 * else an unbound one.  The readers of the device bound to @busy, the CPU
 * of a background request's issuer, which may keep that CPU (readahead,
 * writeback), come last.  @sync: as wake_up_sync(), the issuer waits.
 */
static void fuse_bind_wake(struct fuse_chan *fch, struct fuse_bind_map *map,
			   struct fuse_bound *b, int node, int busy, bool sync)
{
	const int *near = map->near + node * map->nr_near;
	struct fuse_bind_key key = { .busy = busy };
	unsigned int i;
	bool mine;
	int woken;

	/*
	 * Queued before the waitqueues are looked at; a reader is on them
	 * before it looks for work (set_current_state() in fuse_bind_wait(),
	 * smp_mb() in fuse_dev_poll()): waitqueue_active() misses no sleeper.
	 */
	smp_mb();
	mine = b && (busy < 0 || READ_ONCE(b->cpu) != busy);
	/* The device's own readers first, unless they wait for @busy */
	if (mine && fuse_bind_wake_reader(&b->iq.waitq, &key, sync))
		return;
	if (b) {
		fuse_bind_hint(fch, node);
		/* Left to the other readers: hinted before they are looked at */
		smp_mb();
	}
	/* Then its pollers, which may not read it: the hint stays */
	if (mine && fuse_bind_wake_one(&b->pollers))
		return;
	for (i = 0; i < map->nr_near && near[i] >= 0; i++)
		if (fuse_bind_wake_reader(&fch->bind_nodes[near[i]].waitq,
					  &key, sync))
			return;
	/* Ordered by an smp_mb() above; a sync request is not background */
	woken = waitqueue_active(&fch->iq.waitq);
	if (woken && sync)
		wake_up_sync(&fch->iq.waitq);
	else if (woken)
		woken = wake_up(&fch->iq.waitq);
	kill_fasync(&fch->iq.fasync, SIGIO, POLL_IN);
	/* No other reader idle: @busy's own after all */
	if (!woken && b && busy >= 0 &&
	    !fuse_bind_wake_reader(&b->iq.waitq, &key, false))
		fuse_bind_wake_one(&b->pollers);
}

/**
 * fuse_bind_queue - queue a request on the device its CPU maps to
 * @req: the request, with its id and req->cpu set
 * @sync: wake its reader as wake_up_sync() does: its issuer waits for it
 *
 * Return: true if queued there, false if it goes to the shared queue.
 */
bool fuse_bind_queue(struct fuse_req *req, bool sync)
{
	struct fuse_chan *fch = req->chan;
	/* Read before it is queued: a reader may end a background one at once */
	int busy = test_bit(FR_BACKGROUND, &req->flags) &&
		   !req->args->awaited ? req->cpu : -1;
	struct fuse_bind_map *map;
	struct fuse_bound *b;
	bool queued = false;

	rcu_read_lock();
	map = rcu_dereference(fch->bind_map);
	b = map ? READ_ONCE(map->dev[req->cpu]) : NULL;
	if (b) {
		spin_lock(&b->iq.lock);
		if (b->iq.connected) {
			list_add_tail(&req->list, &b->iq.pending);
			WRITE_ONCE(req->fiq, &b->iq);
			queued = true;
		}
		spin_unlock(&b->iq.lock);
	}
	if (queued)
		fuse_bind_wake(fch, map, b, READ_ONCE(b->node), busy, sync);
	rcu_read_unlock();
	return queued;
}

/**
 * fuse_bind_wake_shared - wake a reader for work on the shared queue
 * @fch: the connection
 * @sync: as for fuse_bind_queue()
 *
 * The nearest idle bound reader, else an unbound one; as stock without a map.
 */
void fuse_bind_wake_shared(struct fuse_chan *fch, bool sync)
{
	struct fuse_bind_map *map;

	rcu_read_lock();
	map = rcu_dereference(fch->bind_map);
	if (map) {
		fuse_bind_wake(fch, map, NULL,
			       fuse_cpu_node(raw_smp_processor_id()), -1, sync);
	} else {
		if (sync)
			wake_up_sync(&fch->iq.waitq);
		else
			wake_up(&fch->iq.waitq);
		kill_fasync(&fch->iq.fasync, SIGIO, POLL_IN);
	}
	rcu_read_unlock();
}

/* How often a reader looks at the other devices first, as forget_batch */
#define FUSE_BIND_BATCH	16

static bool fuse_bind_busy(struct fuse_bound *b)
{
	return READ_ONCE(b->iq.connected) && !list_empty(&b->iq.pending);
}

/* A device of @node's other than @own that holds a request */
static struct fuse_bound *fuse_bind_scan(struct fuse_bind_map *map, int node,
					 struct fuse_bound *own,
					 unsigned int start)
{
	unsigned int j, n = map->first[node + 1] - map->first[node];
	struct fuse_bound *b;

	for (j = 0; j < n; j++) {
		b = READ_ONCE(map->devs[map->first[node] + (start + j) % n]);
		if (b && b != own && fuse_bind_busy(b))
			return b;
	}
	return NULL;
}

/**
 * fuse_bind_next - the queue a reader of @fud takes from next
 * @fud: the reading device
 *
 * The shared queue if it has work or nothing is bound, else @fud's own
 * queue if it holds a request, else another device's that does, in the
 * nodes whose hint is set, nearest first: a request whose reader was woken
 * for it is that reader's.  Finding nothing there, a reader clears the
 * hint and looks once more, on the map of the moment: what was queued
 * meanwhile keeps it set.  Leaving its own device's work, a reader sets
 * its node's hint; every FUSE_BIND_BATCH-th read looks at the others
 * first.  Lockless: the caller locks the queue under rcu_read_lock() and
 * looks again if it is empty by then.
 *
 * Return: that queue, or the shared one if every queue looks empty.
 */
struct fuse_iqueue *fuse_bind_next(struct fuse_dev *fud)
{
	struct fuse_chan *fch = fud->chan;
	/* Pairs with smp_store_release() in fuse_bind_ioctl() */
	struct fuse_bound *own = fuse_bound_of(smp_load_acquire(&fud->iq)), *b;
	unsigned int i, start = raw_smp_processor_id();
	struct fuse_bind_map *map = rcu_dereference(fch->bind_map);
	const int *near;
	bool *queued, mine;

	if (!map)
		return &fch->iq;
	b = NULL;
	mine = own && fuse_bind_busy(own);
	if (fuse_iq_ready(&fch->iq))
		goto leave;
	if (mine) {
		/* Readers of a device share the count; a lost step is fine */
		i = READ_ONCE(own->reads) + 1;
		WRITE_ONCE(own->reads, i);
		if (i % FUSE_BIND_BATCH)
			return &own->iq;
	}
	near = map->near + map->nr_near *
	       (own ? READ_ONCE(own->node) : fuse_cpu_node(start));
	for (i = 0; i < map->nr_near && near[i] >= 0; i++) {
		queued = &fch->bind_nodes[near[i]].queued;
		if (!READ_ONCE(*queued))
			continue;
		b = fuse_bind_scan(map, near[i], own, start);
		if (b)
			goto leave;
		/* Nothing there for this reader: unhint, then look again */
		WRITE_ONCE(*queued, false);
		/* Pairs with the smp_mb() after fuse_bind_hint() */
		smp_mb();
		b = fuse_bind_scan(map, near[i], NULL, start);
		/* Its own device's work, or a new map's, keeps the hint */
		if (b || map != rcu_dereference(fch->bind_map))
			fuse_bind_hint(fch, near[i]);
		if (b && b != own)
			goto leave;
		b = NULL;
	}
	if (mine)
		return &own->iq;
leave:
	if (mine)
		fuse_bind_hint(fch, READ_ONCE(own->node));
	return b ? &b->iq : &fch->iq;
}

/**
 * fuse_bind_pending - is there work for a reader of @fud?
 * @fud: the reading device
 *
 * Return: true if fuse_bind_next() finds work, or the shared queue is
 * disconnected.  Lockless: a reader that sleeps after false is woken.
 */
bool fuse_bind_pending(struct fuse_dev *fud)
{
	/* Pairs with smp_store_release() in fuse_bind_ioctl() */
	struct fuse_bound *own = fuse_bound_of(smp_load_acquire(&fud->iq));
	bool found;

	/* Not a read: its own work, without a step of the read count */
	if (own && fuse_bind_busy(own))
		return true;
	rcu_read_lock();
	found = fuse_iq_ready(fuse_bind_next(fud));
	rcu_read_unlock();
	return found;
}

/**
 * fuse_bind_pollq - the waitqueue of a bound device's pollers
 * @fiq: the device's queue, a bound device's
 *
 * Apart from its readers' (@fiq->waitq): a poller may not read what it
 * was woken for.
 *
 * Return: the waitqueue.
 */
wait_queue_head_t *fuse_bind_pollq(struct fuse_iqueue *fiq)
{
	return &fuse_bound_of(fiq)->pollers;
}

/* A bound reader waits on its device's waitqueue and its node's */
struct fuse_bind_waiter {
	struct wait_queue_entry own;
	struct wait_queue_entry node;
	struct fuse_bound *b;
	atomic_t woken;
};

/* The first wakeup, from either waitqueue, is the reader's to act on */
static int fuse_bind_woken(struct fuse_bind_waiter *w,
			   struct wait_queue_entry *wq, unsigned int mode,
			   int sync, struct fuse_bind_key *key)
{
	if (atomic_xchg(&w->woken, 1))
		return 0;
	default_wake_function(wq, mode, sync, NULL);
	if (key)
		key->woken = true;
	return 1;
}

static int fuse_bind_wake_own(struct wait_queue_entry *wq, unsigned int mode,
			      int sync, void *key)
{
	return fuse_bind_woken(container_of(wq, struct fuse_bind_waiter, own),
			       wq, mode, sync, key);
}

static int fuse_bind_wake_node(struct wait_queue_entry *wq, unsigned int mode,
			       int sync, void *key)
{
	struct fuse_bind_waiter *w = container_of(wq, struct fuse_bind_waiter,
						  node);
	struct fuse_bind_key *k = key;

	if (k->busy >= 0 && READ_ONCE(w->b->cpu) == k->busy)
		return 0;
	return fuse_bind_woken(w, wq, mode, sync, k);
}

/**
 * fuse_bind_wait - wait until a reader of @fud has something to take
 * @fud: the reading device
 *
 * A reader of a bound device waits on its device's waitqueue and its
 * node's, any other on the shared queue's.  A reader that a wakeup chose
 * returns even on a signal, as an exclusive waiter must.
 *
 * Return: 0, or -ERESTARTSYS.
 */
int fuse_bind_wait(struct fuse_dev *fud)
{
	/* Pairs with smp_store_release() in fuse_bind_ioctl() */
	struct fuse_bound *b = fuse_bound_of(smp_load_acquire(&fud->iq));
	struct fuse_bind_waiter w = { .b = b, .woken = ATOMIC_INIT(0) };
	struct fuse_chan *fch = fud->chan;
	wait_queue_head_t *node;
	int err = 0;

	if (!b || !READ_ONCE(b->iq.connected))
		return wait_event_interruptible_exclusive(fch->iq.waitq,
							  fuse_bind_pending(fud));
	node = &fch->bind_nodes[READ_ONCE(b->node)].waitq;
	init_waitqueue_func_entry(&w.own, fuse_bind_wake_own);
	init_waitqueue_func_entry(&w.node, fuse_bind_wake_node);
	w.own.private = current;
	w.node.private = current;
	add_wait_queue_exclusive(&b->iq.waitq, &w.own);
	add_wait_queue_exclusive(node, &w.node);
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (atomic_read(&w.woken) || !READ_ONCE(b->iq.connected) ||
		    fuse_bind_pending(fud))
			break;
		if (signal_pending(current)) {
			err = -ERESTARTSYS;
			break;
		}
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	remove_wait_queue(node, &w.node);
	remove_wait_queue(&b->iq.waitq, &w.own);
	return atomic_read(&w.woken) ? 0 : err;
}
