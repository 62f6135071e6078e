// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE: /dev/fuse devices bound to CPUs and NUMA nodes.
 *
 * A bound device has an input queue of its own.  A request goes to the
 * device its CPU maps to, and waits there only if a reader of the device
 * was woken for it, or the device is strict, or for at most
 * FUSE_DEVQ_SPILL_TICKS while its reader is on its way back.  Everything
 * else waits on the shared queue, which every reader reads.
 *
 * Locking: the devqs mutex serializes binding and release; a device
 * queue's lock nests outside the shared queue's.  Queues are freed after
 * an RCU grace period.  See Documentation/filesystems/fuse-clone-queues.rst.
 */

#include "fuse_i.h"

#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

#define FUSE_DEVQ_BIND_FLAGS	(FUSE_DEV_BIND_CPU | FUSE_DEV_BIND_NODE | \
				 FUSE_DEV_BIND_STRICT)

/* How long a request may wait for a reader on its way back */
#define FUSE_DEVQ_SPILL_TICKS	2

bool fuse_wake_nearest = true;
module_param_named(wake_nearest, fuse_wake_nearest, bool, 0644);
MODULE_PARM_DESC(wake_nearest, "New connections wake the reader nearest a request's CPU");

/**
 * struct fuse_devq - the input queue of a bound /dev/fuse device
 * @iq: the queue
 * @fc: the connection
 * @entry: on fuse_devqs.bound while the device is bound
 * @flags: FUSE_DEV_BIND_* flags, 0 when unbound
 * @cpu: the bound CPU, or -1
 * @node: the bound node, or the bound CPU's node, or NUMA_NO_NODE
 * @spill: moves what waits for a reader on its way back to the shared queue
 * @rcu: for freeing
 * @replied: jiffies when a reader of the device last replied
 * @polling: the device's last nonblocking read found nothing
 * @level: requests read from its CPU, its node, elsewhere (pq.lock)
 *
 * @entry, @flags, @cpu and @node change under the devqs mutex.
 */
struct fuse_devq {
	struct fuse_iqueue iq;
	struct fuse_conn *fc;
	struct list_head entry;
	u32 flags;
	int cpu, node;
	struct delayed_work spill;
	struct rcu_head rcu;
	/* Written by the device's readers */
	unsigned long replied ____cacheline_aligned_in_smp;
	bool polling;
	u64 level[3];
};

/* Per possible CPU, the device its requests go to (NULL: the shared queue) */
struct fuse_devq_map {
	struct rcu_head rcu;
	struct fuse_devq *q[];
};

/* A reader asleep in read() */
struct fuse_devq_waiter {
	wait_queue_entry_t shared;
	wait_queue_entry_t own;
	struct list_head node;	/* on its node's idle list */
	struct task_struct *task;
	atomic_t woken;
};

static struct fuse_devq *fuse_devq_of(struct fuse_dev *fud)
{
	/* Pairs with smp_store_release() in fuse_devq_bind() */
	struct fuse_iqueue *iq = smp_load_acquire(&fud->iq);

	return iq ? container_of(iq, struct fuse_devq, iq) : NULL;
}

static bool fuse_devq_ready(struct fuse_iqueue *fiq)
{
	return !READ_ONCE(fiq->connected) || fuse_request_pending(fiq);
}

/* The first wakeup reserves the reader; keyed ones are for pollers */
static int fuse_devq_wake_fn(wait_queue_entry_t *wq, unsigned int mode,
			     int sync, void *key)
{
	struct fuse_devq_waiter *w = wq->private;

	if (key || atomic_xchg(&w->woken, 1))
		return 0;
	/* Off its node's list, so that wakeups look no further than the first */
	if (wq == &w->shared)
		list_del_init(&w->node);
	wake_up_process(w->task);
	return 1;
}

/*
 * Wake the pollers as wake_up() wakes them, and reserve the idle reader
 * nearest @cpu: the last to sleep on it, else on its node, else anywhere.
 */
static void fuse_devq_wake_nearest(struct fuse_conn *fc, int cpu)
{
	struct wait_queue_head *wqh = &fc->iq.waitq;
	struct fuse_devq_waiter *w;
	wait_queue_entry_t *wq, *next;
	unsigned long flags;

	spin_lock_irqsave(&wqh->lock, flags);
	list_for_each_entry_safe(wq, next, &wqh->head, entry) {
		if (wq->func == fuse_devq_wake_fn)
			break;
		if (wq->func(wq, TASK_NORMAL, 0, poll_to_key(EPOLLIN | EPOLLRDNORM)) &&
		    (wq->flags & WQ_FLAG_EXCLUSIVE))
			goto out;
	}
	w = *per_cpu_ptr(fc->devqs.idle, cpu);
	if (w && fuse_devq_wake_fn(&w->shared, TASK_NORMAL, 0, NULL))
		goto out;
	list_for_each_entry(w, &fc->devqs.idle_node[cpu_to_node(cpu)].readers, node)
		if (fuse_devq_wake_fn(&w->shared, TASK_NORMAL, 0, NULL))
			goto out;
	list_for_each_entry_reverse(wq, &wqh->head, entry)
		if (wq->func == fuse_devq_wake_fn && fuse_devq_wake_fn(wq, TASK_NORMAL, 0, NULL))
			break;
out:
	spin_unlock_irqrestore(&wqh->lock, flags);
}

/**
 * fuse_devq_wake - wake a reader for work just queued on the shared queue
 * @fiq: the connection's shared queue, locked
 * @cpu: the CPU the work came from
 */
void fuse_devq_wake(struct fuse_iqueue *fiq, int cpu)
{
	struct fuse_conn *fc = container_of(fiq, struct fuse_conn, iq);

	if (READ_ONCE(fc->devqs.wake_nearest) && fc->devqs.idle && fc->devqs.idle_node)
		fuse_devq_wake_nearest(fc, cpu);
	else
		wake_up(&fiq->waitq);
	kill_fasync(&fiq->fasync, SIGIO, POLL_IN);
}

/*
 * Move what waits on @q to the shared queue, waking a reader for each; if
 * that is disconnected, an abort under way ends them on @q.
 */
static void fuse_devq_move(struct fuse_devq *q)
{
	struct fuse_iqueue *shared = &q->fc->iq;
	struct fuse_req *req, *next;

	spin_lock(&q->iq.lock);
	spin_lock(&shared->lock);
	list_for_each_entry_safe(req, next, &q->iq.pending, list) {
		if (!shared->connected)
			break;
		fuse_req_set_fiq(req, shared);
		list_move_tail(&req->list, &shared->pending);
		fuse_devq_wake(shared, req->cpu);
	}
	spin_unlock(&shared->lock);
	spin_unlock(&q->iq.lock);
}

/* Move what waited for a reader on its way back, unless the device is strict */
static void fuse_devq_spill(struct work_struct *work)
{
	struct fuse_devq *q = container_of(work, struct fuse_devq, spill.work);

	if (!(READ_ONCE(q->flags) & FUSE_DEV_BIND_STRICT))
		fuse_devq_move(q);
}

/**
 * fuse_devq_queue_req - queue a request on the device its CPU maps to
 * @fc: the connection
 * @req: the request, with its unique id
 *
 * Return: true if it was queued there; false if the caller queues it on
 * the shared queue (no device is bound, or no reader of it is there for it).
 */
bool fuse_devq_queue_req(struct fuse_conn *fc, struct fuse_req *req)
{
	struct fuse_devq_map *map;
	struct fuse_devq *q;
	bool queued, strict, back;

	rcu_read_lock();
	map = rcu_dereference(fc->devqs.map);
	q = map ? READ_ONCE(map->q[req->cpu]) : NULL;
	if (!q) {
		rcu_read_unlock();
		return false;
	}
	spin_lock(&q->iq.lock);
	list_add_tail(&req->list, &q->iq.pending);
	fuse_req_set_fiq(req, &q->iq);
	strict = READ_ONCE(q->flags) & FUSE_DEV_BIND_STRICT;
	back = READ_ONCE(q->polling) || time_before_eq(jiffies, READ_ONCE(q->replied) + 1);
	queued = q->iq.connected;
	if (queued && wq_has_sleeper(&q->iq.waitq) && wake_up(&q->iq.waitq)) {
		/* A reader asleep in read() is reserved for it */
	} else if (queued && (strict || (back && list_is_singular(&q->iq.pending)))) {
		/* Its pollers (on the shared waitqueue), or a reader on its way back */
		if (strict || READ_ONCE(q->polling)) {
			WRITE_ONCE(q->polling, false);
			wake_up_poll(&fc->iq.waitq, EPOLLIN | EPOLLRDNORM);
			kill_fasync(&fc->iq.fasync, SIGIO, POLL_IN);
		}
		if (!strict && !delayed_work_pending(&q->spill))
			schedule_delayed_work(&q->spill, FUSE_DEVQ_SPILL_TICKS);
	} else {
		queued = false;
	}
	if (!queued) {
		list_del(&req->list);
		fuse_req_set_fiq(req, &fc->iq);
	}
	spin_unlock(&q->iq.lock);
	rcu_read_unlock();
	return queued;
}

/**
 * fuse_devq_lock_readable - lock the queue a reader of @fud reads next
 * @fud: the device, which has a queue of its own
 * @nonblock: the reader does not wait
 *
 * Its own queue if it has work or is disconnected, else the shared queue.
 * A nonblocking read that finds nothing marks the device as polling: the
 * next request routed to it may wait for its poller.
 *
 * Return: the queue, locked.
 */
struct fuse_iqueue *fuse_devq_lock_readable(struct fuse_dev *fud,
					    bool nonblock)
	__acquires(fiq->lock)
{
	struct fuse_devq *q = fuse_devq_of(fud);
	struct fuse_iqueue *shared = &fud->fc->iq;

	spin_lock(&q->iq.lock);
	if (!q->iq.connected || fuse_request_pending(&q->iq))
		return &q->iq;
	spin_unlock(&q->iq.lock);
	spin_lock(&shared->lock);
	if (nonblock && !fuse_devq_ready(shared) && !READ_ONCE(q->polling))
		WRITE_ONCE(q->polling, true);
	return shared;
}

/**
 * fuse_devq_wait - a reader of @fud sleeps until there is work for it
 * @fud: the device
 *
 * It waits on the shared queue and its device's, and the first wakeup
 * reserves it.  Reserved, and leaving on a signal, it hands the work on.
 *
 * Return: 0, or -ERESTARTSYS on a signal.
 */
int fuse_devq_wait(struct fuse_dev *fud)
{
	struct fuse_devq *q = fuse_devq_of(fud);
	struct fuse_iqueue *shared = &fud->fc->iq;
	struct fuse_devqs *devqs = &fud->fc->devqs;
	struct fuse_devq_waiter w = {
		.shared = { .flags = WQ_FLAG_EXCLUSIVE,
			    .func = fuse_devq_wake_fn, .private = &w },
		.own = { .func = fuse_devq_wake_fn, .private = &w },
		.node = LIST_HEAD_INIT(w.node), .task = current,
	};
	struct fuse_devq_waiter **idle = NULL;
	int cpu = raw_smp_processor_id(), err = 0;

	/* Its CPU's idle reader and first on its node's, while it waits */
	spin_lock_irq(&shared->waitq.lock);
	__add_wait_queue_entry_tail(&shared->waitq, &w.shared);
	if (devqs->idle && devqs->idle_node) {
		idle = per_cpu_ptr(devqs->idle, cpu);
		*idle = &w;
		list_add(&w.node, &devqs->idle_node[cpu_to_node(cpu)].readers);
	}
	spin_unlock_irq(&shared->waitq.lock);
	if (q)
		add_wait_queue_exclusive(&q->iq.waitq, &w.own);
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		/* A device bound since has a queue to wait on */
		if (atomic_read(&w.woken) || fuse_devq_ready(shared) ||
		    (q ? fuse_devq_ready(&q->iq) : !!READ_ONCE(fud->iq)))
			break;
		if (signal_pending(current)) {
			err = -ERESTARTSYS;
			break;
		}
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	spin_lock_irq(&shared->waitq.lock);
	__remove_wait_queue(&shared->waitq, &w.shared);
	list_del(&w.node);
	if (idle && *idle == &w)
		*idle = NULL;
	spin_unlock_irq(&shared->waitq.lock);
	if (q)
		remove_wait_queue(&q->iq.waitq, &w.own);
	if (err && atomic_read(&w.woken)) {
		if (q)
			fuse_devq_spill(&q->spill.work);
		spin_lock(&shared->lock);
		if (fuse_request_pending(shared))
			fuse_devq_wake(shared, cpu);
		spin_unlock(&shared->lock);
	}
	return err;
}

/**
 * fuse_devq_read_done - count a request a bound device read
 * @fud: the device, its processing queue locked
 * @req: the request
 */
void fuse_devq_read_done(struct fuse_dev *fud, struct fuse_req *req)
{
	struct fuse_devq *q = fuse_devq_of(fud);

	/* A device bound to a node has CPU -1 */
	if (q && READ_ONCE(q->flags))
		q->level[req->cpu == READ_ONCE(q->cpu) ? 0 :
			 cpu_to_node(req->cpu) == READ_ONCE(q->node) ? 1 : 2]++;
}

/**
 * fuse_devq_replied - a reader of @fud answered a request
 * @fud: the device
 */
void fuse_devq_replied(struct fuse_dev *fud)
{
	struct fuse_devq *q = fuse_devq_of(fud);

	if (q && time_after(jiffies, READ_ONCE(q->replied)))
		WRITE_ONCE(q->replied, jiffies);
}

/*
 * The blk-mq way: a CPU's own device (the newest if several), else the
 * devices on the nearest node with any, the CPUs of a node taking turns.
 */
static struct fuse_devq_map *fuse_devq_build(struct fuse_conn *fc)
{
	struct fuse_devq_map *map;
	struct fuse_devq *q;
	unsigned int cpu;
	int *rank;

	map = kzalloc(struct_size(map, q, nr_cpu_ids), GFP_KERNEL_ACCOUNT);
	rank = kcalloc(nr_node_ids, sizeof(*rank), GFP_KERNEL);
	if (!map || !rank) {
		kfree(rank);
		kfree(map);
		return NULL;
	}
	for_each_possible_cpu(cpu) {
		int node = cpu_to_node(cpu), best = INT_MAX, n = 0, turn;

		list_for_each_entry(q, &fc->devqs.bound, entry) {
			int d = node_distance(node, q->node);

			if ((q->flags & FUSE_DEV_BIND_CPU) && q->cpu == cpu)
				map->q[cpu] = q;
			if (d < best)
				n = 0;
			best = min(best, d);
			n += d == best;
		}
		if (map->q[cpu])
			continue;
		turn = rank[max(node, 0)]++ % n;
		list_for_each_entry(q, &fc->devqs.bound, entry) {
			if (node_distance(node, q->node) == best && !turn--) {
				map->q[cpu] = q;
				break;
			}
		}
	}
	kfree(rank);
	return map;
}

/*
 * Map the CPUs by the bindings on fuse_devqs.bound, devqs mutex held.  For
 * a device going away (@gone), this cannot fail: without memory, its CPUs
 * go to the shared queue until the next binding.
 */
static int fuse_devq_remap(struct fuse_conn *fc, struct fuse_devq *gone)
{
	struct fuse_devq_map *map = NULL, *old;
	unsigned int cpu;

	old = rcu_dereference_protected(fc->devqs.map,
					lockdep_is_held(&fc->devqs.mutex));
	if (!list_empty(&fc->devqs.bound)) {
		map = fuse_devq_build(fc);
		if (!map && !gone)
			return -ENOMEM;
		if (!map) {
			for_each_possible_cpu(cpu)
				if (old->q[cpu] == gone)
					WRITE_ONCE(old->q[cpu], NULL);
			return 0;
		}
	}
	rcu_assign_pointer(fc->devqs.map, map);
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

static int fuse_devq_check_bind(const struct fuse_dev_bind *b)
{
	u32 how = b->flags & ~FUSE_DEV_BIND_STRICT;

	if (b->padding || (b->flags & ~FUSE_DEVQ_BIND_FLAGS))
		return -EINVAL;
	if (!b->flags)
		return b->cpu == -1 && b->node == NUMA_NO_NODE ? 0 : -EINVAL;
	if (how == FUSE_DEV_BIND_CPU) {
		/* The node FUSE_DEV_IOC_GET_BIND reports is accepted too */
		if (b->cpu < 0 || b->cpu >= nr_cpu_ids || !cpu_possible(b->cpu) ||
		    (b->node != NUMA_NO_NODE && b->node != cpu_to_node(b->cpu)))
			return -EINVAL;
		return cpu_online(b->cpu) ? 0 : -ENXIO;
	}
	if (how != FUSE_DEV_BIND_NODE || b->cpu != -1 || b->node < 0 ||
	    b->node >= nr_node_ids || !node_possible(b->node))
		return -EINVAL;
	return cpumask_intersects(cpumask_of_node(b->node), cpu_online_mask) ?
	       0 : -ENXIO;
}

/* Set @q's binding to @b, devqs mutex held */
static void fuse_devq_set(struct fuse_conn *fc, struct fuse_devq *q,
			  const struct fuse_dev_bind *b)
{
	WRITE_ONCE(q->flags, b->flags);
	WRITE_ONCE(q->cpu, b->cpu);
	WRITE_ONCE(q->node, b->flags & FUSE_DEV_BIND_CPU ?
		   cpu_to_node(b->cpu) : b->node);
	list_del_init(&q->entry);
	if (b->flags)
		list_add_tail(&q->entry, &fc->devqs.bound);
}

static struct fuse_devq *fuse_devq_alloc(struct fuse_conn *fc)
{
	struct fuse_devq *q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);

	if (!q)
		return NULL;
	/* A lock class of its own: taken before the shared queue's lock */
	spin_lock_init(&q->iq.lock);
	init_waitqueue_head(&q->iq.waitq);
	INIT_LIST_HEAD(&q->iq.pending);
	INIT_LIST_HEAD(&q->iq.interrupts);
	q->iq.forget_list_tail = &q->iq.forget_list_head;
	q->fc = fc;
	INIT_LIST_HEAD(&q->entry);
	INIT_DELAYED_WORK(&q->spill, fuse_devq_spill);
	return q;
}

/*
 * FUSE_DEV_IOC_BIND: the device gets its queue at its first binding.  What
 * waits on it when the binding changes goes to the shared queue.
 */
static long fuse_devq_bind(struct fuse_dev *fud,
			   const struct fuse_dev_bind __user *argp)
{
	struct fuse_conn *fc = fud->fc;
	struct fuse_dev_bind b, old = { .cpu = -1, .node = NUMA_NO_NODE };
	struct fuse_devq *q, *new = NULL;
	bool rebound = false;
	int err;

	if (copy_from_user(&b, argp, sizeof(b)))
		return -EFAULT;
	err = fuse_devq_check_bind(&b);
	if (err)
		return err;

	mutex_lock(&fc->devqs.mutex);
	q = fuse_devq_of(fud);
	err = -ENOTCONN;
	if (!READ_ONCE(fc->connected))
		goto out;
	/* Nothing changes: nothing to do (and an unbound fd gets no queue) */
	err = 0;
	if (!q ? !b.flags : q->flags == b.flags && q->cpu == b.cpu &&
	    (b.node == NUMA_NO_NODE || q->node == b.node))
		goto out;
	err = -ENOMEM;
	if (!q) {
		new = fuse_devq_alloc(fc);
		if (!new)
			goto out;
		q = new;
	} else {
		old = (struct fuse_dev_bind){ q->flags, q->cpu, q->node };
	}
	fuse_devq_set(fc, q, &b);
	err = fuse_devq_remap(fc, NULL);
	if (err) {
		fuse_devq_set(fc, q, &old);
		kfree(new);
		goto out;
	}
	rebound = !new;
	if (new) {
		/* Under fc->lock, so that an abort disconnects it */
		spin_lock(&fc->lock);
		new->iq.connected = fc->connected;
		/* Pairs with smp_load_acquire() in fuse_devq_of() */
		smp_store_release(&fud->iq, &new->iq);
		spin_unlock(&fc->lock);
		/* Its readers asleep now wait on the shared queue alone */
		wake_up_all(&fc->iq.waitq);
	}
out:
	mutex_unlock(&fc->devqs.mutex);
	if (rebound) {
		cancel_delayed_work_sync(&q->spill);
		fuse_devq_move(q);
	}
	return err;
}

/**
 * fuse_devq_ioctl - FUSE_DEV_IOC_BIND, _GET_BIND and _BIND_FEATURES
 * @fud: the device, or NULL if the file has none
 * @cmd: the ioctl
 * @argp: its argument
 *
 * Return: 0, or a negative errno as documented in uapi/linux/fuse.h; a
 * failed FUSE_DEV_IOC_BIND changes nothing.
 */
long fuse_devq_ioctl(struct fuse_dev *fud, unsigned int cmd,
		     void __user *argp)
{
	struct fuse_dev_bind b = { .cpu = -1, .node = NUMA_NO_NODE };
	struct fuse_devq *q;

	if (cmd == FUSE_DEV_IOC_BIND_FEATURES)
		return put_user(FUSE_DEVQ_BIND_FLAGS, (u32 __user *)argp);
	if (!fud)
		return -EPERM;
	if (cmd == FUSE_DEV_IOC_BIND)
		return fuse_devq_bind(fud, argp);
	mutex_lock(&fud->fc->devqs.mutex);
	q = fuse_devq_of(fud);
	if (q && q->flags)
		b = (struct fuse_dev_bind){ q->flags, q->cpu, q->node };
	mutex_unlock(&fud->fc->devqs.mutex);
	return copy_to_user(argp, &b, sizeof(b)) ? -EFAULT : 0;
}

/**
 * fuse_devq_release - a device is going away: unbind it, free its queue
 * @fud: the device
 *
 * The requests waiting on its queue go to the shared queue.  Cannot fail.
 */
void fuse_devq_release(struct fuse_dev *fud)
{
	struct fuse_conn *fc = fud->fc;
	struct fuse_devq *q = fuse_devq_of(fud);

	if (!q)
		return;
	spin_lock(&q->iq.lock);
	WRITE_ONCE(q->iq.connected, 0);
	spin_unlock(&q->iq.lock);
	mutex_lock(&fc->devqs.mutex);
	if (q->flags) {
		list_del_init(&q->entry);
		fuse_devq_remap(fc, q);
	}
	mutex_unlock(&fc->devqs.mutex);
	cancel_delayed_work_sync(&q->spill);
	fuse_devq_move(q);
	spin_lock(&fc->lock);
	fud->iq = NULL;
	spin_unlock(&fc->lock);
	kfree_rcu(q, rcu);
}

/**
 * fuse_devq_show - the fusectl "dev_queues" file of a connection
 * @m: the seq_file
 * @fc: the connection
 *
 * A line for the shared queue, then one per device: its number, binding,
 * requests queued now, requests read while bound, and of those how many
 * came from its CPU, from its node, from elsewhere.
 *
 * Return: 0.
 */
int fuse_devq_show(struct seq_file *m, struct fuse_conn *fc)
{
	static const char *const names[] = {
		"none", "cpu", "node", "", "", "cpu!", "node!" };
	struct fuse_dev *fud;

	seq_puts(m, "dev    bind cpu node queued read local_cpu local_node remote\n");
	mutex_lock(&fc->devqs.mutex);
	spin_lock(&fc->iq.lock);
	seq_printf(m, "shared -    -   -    %zu\n",
		   list_count_nodes(&fc->iq.pending));
	spin_unlock(&fc->iq.lock);
	spin_lock(&fc->lock);
	list_for_each_entry(fud, &fc->devices, entry) {
		struct fuse_devq *q = fuse_devq_of(fud);
		u32 flags = q ? q->flags : 0;
		u64 lv[3] = {};
		size_t queued = 0;

		if (q) {
			spin_lock(&fud->pq.lock);
			memcpy(lv, q->level, sizeof(lv));
			spin_unlock(&fud->pq.lock);
			spin_lock(&q->iq.lock);
			queued = list_count_nodes(&q->iq.pending);
			spin_unlock(&q->iq.lock);
		}
		seq_printf(m, "%-6u %-4s %-3d %-4d %zu %llu %llu %llu %llu\n",
			   fud->id, names[flags], flags ? q->cpu : -1,
			   flags ? q->node : NUMA_NO_NODE, queued,
			   lv[0] + lv[1] + lv[2], lv[0], lv[1], lv[2]);
	}
	spin_unlock(&fc->lock);
	mutex_unlock(&fc->devqs.mutex);
	return 0;
}
