// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE: per-clone input queues and CPU-aware request routing.
 *
 * A /dev/fuse fd bound with FUSE_DEV_IOC_BIND gets an input queue of its
 * own.  While any fd of a connection is bound, requests are routed by the
 * CPU they were issued on: to an fd bound to that CPU, else to one bound to
 * its node (or to a CPU on it), else to any bound fd, taking turns wherever
 * several qualify.  With nothing bound the connection uses its shared
 * queue, fuse_conn.iq, exactly as before.
 *
 * Locking: fuse_cq_conn.mutex serializes everything that changes bindings
 * or the routing map.  Each queue's iq.lock protects what is queued on it.
 * When requests move from one queue to another the source is locked first;
 * only the map-changing paths (under the mutex) do that, so there is no
 * ABBA between queues.  The map is published under the shared queue's lock,
 * so a sender that found no map and queues on the shared queue is seen by
 * whoever publishes the first map (see fuse_cq_set_binding()).
 */

#include "fuse_i.h"

#include <linux/bits.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/percpu.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

/*
 * Out-of-tree builds pass the kernel release their fs/fuse sources came
 * from; in a kernel tree the sources are the kernel's own.
 */
#ifndef FUSE_CQ_BASE
#define FUSE_CQ_BASE "in-tree"
#endif

MODULE_VERSION(FUSE_CQ_VERSION);
MODULE_INFO(base, FUSE_CQ_BASE);

/**
 * fuse_cq_announce - say at load that clone queues are available
 *
 * Lets an administrator see in the kernel log which fuse module is loaded.
 */
void __init fuse_cq_announce(void)
{
	pr_info("per-clone input queues available (version %s, base %s)\n",
		FUSE_CQ_VERSION, FUSE_CQ_BASE);
}

/*
 * Unique ids handed out by clone queues: bit 62 set, so that they never
 * meet the ids of the shared queue's counter; the issuing CPU in the bits
 * above the interrupt bit; a per-CPU counter above that.  No lock and no
 * shared cacheline is needed.
 */
#define FUSE_CQ_UNIQUE_BIT	BIT_ULL(62)

static DEFINE_PER_CPU(u64, fuse_cq_reqctr);

/**
 * fuse_cq_unique - a unique id for a request queued on a clone queue
 *
 * Must be called with preemption disabled (under a queue lock).
 *
 * Return: the id, even, with bit 62 set and bit 63 (FUSE_UNIQUE_RESEND)
 * clear.
 */
u64 fuse_cq_unique(void)
{
	unsigned int cpu_bits = order_base_2(nr_cpu_ids);
	u64 n = __this_cpu_inc_return(fuse_cq_reqctr);

	n &= (1ULL << (61 - cpu_bits)) - 1;
	return FUSE_CQ_UNIQUE_BIT |
	       (((n << cpu_bits) | smp_processor_id()) << 1);
}

/**
 * fuse_cq_conn_init - initialize the clone-queue state of a connection
 * @cq: the state, zeroed
 */
void fuse_cq_conn_init(struct fuse_cq_conn *cq)
{
	mutex_init(&cq->mutex);
	INIT_LIST_HEAD(&cq->queues);
}

/**
 * fuse_cq_conn_free - free the clone queues and routing map of a connection
 * @fc: the connection, whose last reference is gone
 */
void fuse_cq_conn_free(struct fuse_conn *fc)
{
	struct fuse_cq_queue *q, *next;

	fuse_cq_map_free(rcu_dereference_protected(fc->cq.map, 1));
	RCU_INIT_POINTER(fc->cq.map, NULL);
	list_for_each_entry_safe(q, next, &fc->cq.queues, entry) {
		WARN_ON(!list_empty(&q->iq.pending));
		list_del(&q->entry);
		kfree(q);
	}
	free_percpu(fc->cq.cursor);
	fc->cq.cursor = NULL;
}

static int fuse_cq_topo_node(const struct fuse_cq_topo *topo, unsigned int cpu)
{
	if (cpu >= topo->nr_cpus)
		return NUMA_NO_NODE;
	return topo->cpu_node ? topo->cpu_node[cpu] : cpu_to_node(cpu);
}

static int fuse_cq_queue_node(const struct fuse_cq_topo *topo,
			      const struct fuse_cq_queue *q)
{
	if (q->bind_flags & FUSE_DEV_BIND_CPU)
		return fuse_cq_topo_node(topo, q->cpu);
	return q->node;
}

/**
 * fuse_cq_map_build - build the routing map for a set of bound queues
 * @topo: the CPUs and their nodes
 * @bound: the bound queues, in the order turns are taken
 * @nr_bound: number of entries in @bound
 * @cursor: per-CPU turn-taking counters for the map to use
 *
 * For each CPU the map lists the queues bound to it; if there are none, the
 * queues bound to its node or to a CPU on its node; if there are none, all
 * bound queues.  Each list is a slice of one array, so the map takes at
 * most three pointers per bound queue plus one span per CPU.
 *
 * Return: the map, NULL if @nr_bound is 0, or ERR_PTR(-ENOMEM).
 */
struct fuse_cq_map *fuse_cq_map_build(const struct fuse_cq_topo *topo,
				      struct fuse_cq_queue *const *bound,
				      unsigned int nr_bound,
				      unsigned int __percpu *cursor)
{
	unsigned int nr_cpus = topo->nr_cpus, nr_nodes = 0;
	unsigned int i, n, cpu, node;
	struct fuse_cq_map *map;
	u32 *node_end, *cpu_end;
	int nd;

	if (!nr_bound)
		return NULL;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		nd = fuse_cq_topo_node(topo, cpu);
		if (nd >= 0)
			nr_nodes = max_t(unsigned int, nr_nodes, nd + 1);
	}
	for (i = 0; i < nr_bound; i++) {
		nd = fuse_cq_queue_node(topo, bound[i]);
		if (nd >= 0)
			nr_nodes = max_t(unsigned int, nr_nodes, nd + 1);
	}

	map = kzalloc(struct_size(map, slots, 3 * nr_bound), GFP_KERNEL);
	node_end = kcalloc(nr_nodes + 1, sizeof(*node_end), GFP_KERNEL);
	cpu_end = kcalloc(nr_cpus + 1, sizeof(*cpu_end), GFP_KERNEL);
	if (map)
		map->span = kcalloc(nr_cpus, sizeof(*map->span), GFP_KERNEL);
	if (!map || !map->span || !node_end || !cpu_end) {
		fuse_cq_map_free(map);
		kfree(node_end);
		kfree(cpu_end);
		return ERR_PTR(-ENOMEM);
	}
	map->cursor = cursor;
	map->nr_cpus = nr_cpus;
	map->nr_queues = nr_bound;

	/* All bound queues first: the round-robin fallback */
	for (n = 0; n < nr_bound; n++)
		map->slots[n] = bound[n];

	/* Then per node, the queues bound to it or to a CPU on it */
	for (node = 0; node < nr_nodes; node++) {
		for (i = 0; i < nr_bound; i++)
			if (fuse_cq_queue_node(topo, bound[i]) == node)
				map->slots[n++] = bound[i];
		node_end[node + 1] = n;
	}
	node_end[0] = nr_bound;

	/* Then per CPU, the queues bound to it: a counting sort by CPU */
	for (i = 0; i < nr_bound; i++)
		if ((bound[i]->bind_flags & FUSE_DEV_BIND_CPU) &&
		    bound[i]->cpu >= 0 && bound[i]->cpu < nr_cpus)
			cpu_end[bound[i]->cpu + 1]++;
	cpu_end[0] = n;
	for (cpu = 0; cpu < nr_cpus; cpu++)
		cpu_end[cpu + 1] += cpu_end[cpu];
	/* cpu_end[cpu] is now where CPU @cpu's list starts */
	for (i = 0; i < nr_bound; i++)
		if ((bound[i]->bind_flags & FUSE_DEV_BIND_CPU) &&
		    bound[i]->cpu >= 0 && bound[i]->cpu < nr_cpus)
			map->slots[cpu_end[bound[i]->cpu]++] = bound[i];
	/* ... and, after the fill, where it ends */

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct fuse_cq_span *s = &map->span[cpu];
		u32 start = cpu ? cpu_end[cpu - 1] : n;

		nd = fuse_cq_topo_node(topo, cpu);
		if (cpu_end[cpu] > start) {
			s->start = start;
			s->count = cpu_end[cpu] - start;
			s->level = FUSE_CQ_LOCAL_CPU;
		} else if (nd >= 0 && node_end[nd + 1] > node_end[nd]) {
			s->start = node_end[nd];
			s->count = node_end[nd + 1] - node_end[nd];
			s->level = FUSE_CQ_LOCAL_NODE;
		} else {
			s->start = 0;
			s->count = nr_bound;
			s->level = FUSE_CQ_REMOTE;
		}
	}
	kfree(node_end);
	kfree(cpu_end);
	return map;
}

/**
 * fuse_cq_map_free - free a routing map now
 * @map: the map, or NULL; its cursor belongs to the caller
 */
void fuse_cq_map_free(struct fuse_cq_map *map)
{
	if (!map)
		return;
	kfree(map->span);
	kfree(map);
}

static void fuse_cq_map_free_rcu(struct rcu_head *rcu)
{
	fuse_cq_map_free(container_of(rcu, struct fuse_cq_map, rcu));
}

/**
 * fuse_cq_map_pick - the queue a request from @cpu goes to
 * @map: the routing map
 * @cpu: the CPU the request was issued on
 * @level: set to how the queue matches @cpu
 *
 * Where several queues qualify, the CPU running this takes them in turn.
 *
 * Return: the queue.
 */
struct fuse_cq_queue *fuse_cq_map_pick(struct fuse_cq_map *map,
				       unsigned int cpu,
				       enum fuse_cq_level *level)
{
	const struct fuse_cq_span *s;
	unsigned int i = 0;

	if (unlikely(cpu >= map->nr_cpus))
		cpu = 0;
	s = &map->span[cpu];
	if (s->count > 1)
		i = this_cpu_inc_return(*map->cursor) % s->count;
	*level = s->level;
	return map->slots[s->start + i];
}

static struct fuse_cq_queue *fuse_cq_of(struct fuse_iqueue *fiq)
{
	return container_of(fiq, struct fuse_cq_queue, iq);
}

/* The bound queue a request from @cpu goes to now; NULL while none is bound */
static struct fuse_cq_queue *fuse_cq_pick(struct fuse_conn *fc, int cpu,
					  enum fuse_cq_level *level)
{
	struct fuse_cq_queue *q = NULL;
	struct fuse_cq_map *map;

	if (!rcu_access_pointer(fc->cq.map))
		return NULL;
	rcu_read_lock();
	map = rcu_dereference(fc->cq.map);
	if (map)
		q = fuse_cq_map_pick(map, cpu, level);
	rcu_read_unlock();
	/* Queues live as long as the connection: no RCU needed from here */
	return q;
}

/*
 * Lock @q if it still takes requests, else the shared queue: the fallback
 * while nothing is bound (@q NULL), and in the short window where a picked
 * queue is being unbound.
 */
static struct fuse_iqueue *fuse_cq_lock_picked(struct fuse_conn *fc,
					       struct fuse_cq_queue *q,
					       enum fuse_cq_level level,
					       bool *kick, int subclass)
	__acquires(fiq->lock)
{
	if (q) {
		spin_lock_nested(&q->iq.lock, subclass);
		if (likely(q->routable && q->iq.connected)) {
			q->dispatched++;
			q->level[level]++;
			*kick = false;
			return &q->iq;
		}
		spin_unlock(&q->iq.lock);
	}
	spin_lock_nested(&fc->iq.lock, subclass);
	*kick = !!rcu_access_pointer(fc->cq.map);
	return &fc->iq;
}

/**
 * fuse_cq_lock_target - lock the input queue a new request goes to
 * @fc: the connection
 * @cpu: the CPU the request was issued on
 * @kick: set if the caller must call fuse_cq_kick() after queueing, because
 *	the request lands on the shared queue while bound readers may sleep
 *
 * While nothing is bound this is the shared queue, and the only cost over
 * taking its lock is one load of the map pointer.
 *
 * Return: the queue, locked; it may be disconnected.
 */
struct fuse_iqueue *fuse_cq_lock_target(struct fuse_conn *fc, int cpu,
					bool *kick)
	__acquires(fiq->lock)
{
	enum fuse_cq_level level = FUSE_CQ_REMOTE;
	struct fuse_cq_queue *q = fuse_cq_pick(fc, cpu, &level);

	return fuse_cq_lock_picked(fc, q, level, kick, 0);
}

/**
 * fuse_cq_kick - wake every bound queue's readers
 * @fc: the connection
 *
 * Bound readers do not sleep on the shared queue, but serve it when their
 * own is empty; wake them when something lands there while clones are
 * bound.  Rare: new requests do not go to the shared queue then.
 */
void fuse_cq_kick(struct fuse_conn *fc)
{
	struct fuse_cq_map *map;
	unsigned int i;

	rcu_read_lock();
	map = rcu_dereference(fc->cq.map);
	for (i = 0; map && i < map->nr_queues; i++)
		wake_up(&map->slots[i]->iq.waitq);
	rcu_read_unlock();
}

/**
 * fuse_cq_requeue - put a resent request back on the queue that owns it
 * @fc: the connection
 * @req: the request, on no list
 * @to_end: gets @req if its queue is disconnected
 *
 * The request goes to the head of the queue it was read from, so that
 * resent requests are read before new ones; if that clone is gone it is
 * routed anew.  Callers pass requests newest first to keep their order.
 */
void fuse_cq_requeue(struct fuse_conn *fc, struct fuse_req *req,
		     struct list_head *to_end)
{
	struct fuse_iqueue *fiq = fuse_req_lock_fiq(req);
	bool kick = rcu_access_pointer(fc->cq.map) && fiq == &fc->iq;

	/* Prevent a stale intr_entry once the request is queued again */
	if (test_bit(FR_INTERRUPTED, &req->flags))
		list_del_init(&req->intr_entry);
	req->in.h.unique |= FUSE_UNIQUE_RESEND;
	if (fiq->clone && !fuse_cq_of(fiq)->fud) {
		spin_unlock(&fiq->lock);
		fiq = fuse_cq_lock_target(fc, req->cpu, &kick);
	}
	if (!fiq->connected) {
		spin_unlock(&fiq->lock);
		list_add_tail(&req->list, to_end);
		return;
	}
	set_bit(FR_PENDING, &req->flags);
	list_add(&req->list, &fiq->pending);
	fuse_req_set_fiq(req, fiq);
	fuse_dev_wake_and_unlock(fiq);
	if (kick)
		fuse_cq_kick(fc);
}

/*
 * Where a request from @cpu pending on @q goes now: NULL if it stays on @q,
 * which is still routable; else the queue to lock (NULL: the shared one).
 */
static bool fuse_cq_stays(struct fuse_conn *fc, struct fuse_cq_queue *q,
			  int cpu, struct fuse_cq_queue **to,
			  enum fuse_cq_level *level)
{
	*level = FUSE_CQ_REMOTE;
	*to = fuse_cq_pick(fc, cpu, level);
	if (*to != q)
		return false;
	if (q->routable)
		return true;
	*to = NULL;	/* @q is going away: the shared queue */
	return false;
}

/*
 * Move what is pending on @q to where the current map sends it.  Called
 * with the cq mutex and @q's lock held, after @q left the map or changed
 * place in it.  Interrupts stay: they belong to requests @q's device read.
 */
static void fuse_cq_drain_locked(struct fuse_conn *fc, struct fuse_cq_queue *q,
				 struct list_head *to_end)
{
	struct fuse_forget_link *forgets = q->iq.forget_list_head.next;
	struct fuse_req *req, *next;
	enum fuse_cq_level level;
	struct fuse_cq_queue *t;
	struct fuse_iqueue *to;
	LIST_HEAD(moving);
	bool kick = false, k;

	list_splice_init(&q->iq.pending, &moving);
	list_for_each_entry_safe(req, next, &moving, list) {
		if (fuse_cq_stays(fc, q, req->cpu, &t, &level)) {
			list_move_tail(&req->list, &q->iq.pending);
			continue;
		}
		to = fuse_cq_lock_picked(fc, t, level, &k,
					 SINGLE_DEPTH_NESTING);
		if (to->connected) {
			list_move_tail(&req->list, &to->pending);
			fuse_req_set_fiq(req, to);
			fuse_dev_wake_and_unlock(to);
			kick |= k;
		} else {
			clear_bit(FR_PENDING, &req->flags);
			list_move_tail(&req->list, to_end);
			spin_unlock(&to->lock);
		}
	}

	if (forgets) {
		if (!fuse_cq_stays(fc, q, raw_smp_processor_id(), &t, &level)) {
			to = fuse_cq_lock_picked(fc, t, level, &k,
						 SINGLE_DEPTH_NESTING);
			q->iq.forget_list_head.next = NULL;
			if (to->connected) {
				to->forget_list_tail->next = forgets;
				to->forget_list_tail = q->iq.forget_list_tail;
				fuse_dev_wake_and_unlock(to);
				kick |= k;
			} else {
				spin_unlock(&to->lock);
				while (forgets) {
					struct fuse_forget_link *f = forgets;

					forgets = f->next;
					kfree(f);
				}
			}
			q->iq.forget_list_tail = &q->iq.forget_list_head;
		}
	}
	if (kick)
		fuse_cq_kick(fc);
}

/* Rebuild the routing map from the bindings and publish it. */
static int fuse_cq_rebuild(struct fuse_conn *fc)
{
	struct fuse_cq_topo topo = { .nr_cpus = nr_cpu_ids };
	struct fuse_cq_map *map, *old;
	struct fuse_cq_queue **bound, *q;
	unsigned int n = 0, max = 1;

	lockdep_assert_held(&fc->cq.mutex);
	list_for_each_entry(q, &fc->cq.queues, entry)
		max++;
	bound = kmalloc_array(max, sizeof(*bound), GFP_KERNEL);
	if (!bound)
		return -ENOMEM;
	list_for_each_entry(q, &fc->cq.queues, entry)
		if (q->fud && q->bind_flags)
			bound[n++] = q;
	map = fuse_cq_map_build(&topo, bound, n, fc->cq.cursor);
	kfree(bound);
	if (IS_ERR(map))
		return PTR_ERR(map);

	spin_lock(&fc->iq.lock);
	old = rcu_replace_pointer(fc->cq.map, map,
				  lockdep_is_held(&fc->cq.mutex));
	spin_unlock(&fc->iq.lock);
	if (old)
		call_rcu(&old->rcu, fuse_cq_map_free_rcu);
	return 0;
}

/* End requests that found their queue disconnected, as an abort would. */
static void fuse_cq_end(struct list_head *to_end)
{
	struct fuse_req *req, *next;

	list_for_each_entry_safe(req, next, to_end, list) {
		list_del_init(&req->list);
		req->out.h.error = -ECONNABORTED;
		fuse_request_end(req);
	}
}

/*
 * Change the binding of @q and move what is pending on it to where the new
 * map sends it.  Nothing changes if the new map cannot be built.
 */
static int fuse_cq_set_binding(struct fuse_conn *fc, struct fuse_cq_queue *q,
			       u32 flags, int cpu, int node)
{
	u32 old_flags = q->bind_flags;
	int old_cpu = q->cpu, old_node = q->node;
	LIST_HEAD(to_end);
	int err;

	lockdep_assert_held(&fc->cq.mutex);
	q->bind_flags = flags;
	q->cpu = cpu;
	q->node = (flags & FUSE_DEV_BIND_CPU) ? cpu_to_node(cpu) : node;
	/* Routable before senders can find it in the map */
	if (flags) {
		spin_lock(&q->iq.lock);
		q->routable = true;
		spin_unlock(&q->iq.lock);
	}
	err = fuse_cq_rebuild(fc);
	if (err) {
		q->bind_flags = old_flags;
		q->cpu = old_cpu;
		q->node = old_node;
		if (!old_flags) {
			spin_lock(&q->iq.lock);
			q->routable = false;
			spin_unlock(&q->iq.lock);
		}
		return err;
	}

	spin_lock(&q->iq.lock);
	q->routable = flags != 0;
	if (old_flags)
		fuse_cq_drain_locked(fc, q, &to_end);
	spin_unlock(&q->iq.lock);

	/*
	 * Let the readers of @q look again: a newly bound one serves what the
	 * shared queue still holds, an unbound one starts waiting there too.
	 */
	wake_up_all(&q->iq.waitq);
	wake_up_all(&fc->iq.waitq);
	fuse_cq_end(&to_end);
	return 0;
}

/* A bound fd that already had O_ASYNC set gets SIGIO for its queue too. */
static void fuse_cq_fasync_inherit(struct fuse_conn *fc,
				   struct fuse_cq_queue *q, struct file *file)
{
	struct fasync_struct *fa;
	int fd = -1;

	if (!(file->f_flags & FASYNC))
		return;
	rcu_read_lock();
	for (fa = READ_ONCE(fc->iq.fasync); fa;
	     fa = READ_ONCE(fa->fa_next)) {
		if (fa->fa_file == file) {
			fd = READ_ONCE(fa->fa_fd);
			break;
		}
	}
	rcu_read_unlock();
	if (fd >= 0)
		fasync_helper(fd, file, 1, &q->iq.fasync);
}

/* Give @fud a queue: reuse one its connection no longer needs, or a new one */
static struct fuse_cq_queue *fuse_cq_get_queue(struct fuse_conn *fc,
					       struct fuse_dev *fud,
					       struct file *file)
{
	struct fuse_cq_queue *q;
	bool reuse;

	lockdep_assert_held(&fc->cq.mutex);
	if (!fc->cq.cursor) {
		fc->cq.cursor = alloc_percpu(unsigned int);
		if (!fc->cq.cursor)
			return NULL;
	}
	list_for_each_entry(q, &fc->cq.queues, entry) {
		if (q->fud)
			continue;
		spin_lock(&q->iq.lock);
		reuse = list_empty(&q->iq.interrupts) && !q->iq.fasync;
		if (reuse) {
			q->fud = fud;
			q->dispatched = 0;
			memset(q->level, 0, sizeof(q->level));
		}
		spin_unlock(&q->iq.lock);
		if (reuse)
			goto found;
	}

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return NULL;
	fuse_iqueue_init(&q->iq, &fuse_dev_fiq_ops, NULL);
	q->iq.clone = true;
	q->fud = fud;
	q->cpu = -1;
	q->node = -1;
	list_add_tail(&q->entry, &fc->cq.queues);
found:
	fuse_cq_fasync_inherit(fc, q, file);
	/* Pairs with smp_load_acquire() in fuse_dev_cq() */
	smp_store_release(&fud->cq, q);

	/*
	 * An abort that ran before @fud->cq was set did not see this queue:
	 * take the shared queue's state.  One that runs after sees it.
	 */
	spin_lock(&fc->iq.lock);
	spin_lock_nested(&q->iq.lock, SINGLE_DEPTH_NESTING);
	q->iq.connected = fc->iq.connected;
	spin_unlock(&q->iq.lock);
	spin_unlock(&fc->iq.lock);
	return q;
}

static int fuse_cq_check_bind(const struct fuse_dev_bind *b)
{
	if (b->padding)
		return -EINVAL;

	switch (b->flags) {
	case 0:
		if (b->cpu != -1 || b->node != -1)
			return -EINVAL;
		return 0;
	case FUSE_DEV_BIND_CPU:
		if (b->node != -1 || b->cpu < 0 || b->cpu >= nr_cpu_ids ||
		    !cpu_possible(b->cpu))
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
 * fuse_cq_ioctl_bind - FUSE_DEV_IOC_BIND: bind or unbind a device
 * @file: the /dev/fuse file
 * @fud: its device
 * @argp: the struct fuse_dev_bind
 *
 * Return: 0, or a negative errno as documented in uapi/linux/fuse.h; on
 * error nothing has changed.
 */
long fuse_cq_ioctl_bind(struct file *file, struct fuse_dev *fud,
			const struct fuse_dev_bind __user *argp)
{
	struct fuse_conn *fc = fud->fc;
	struct fuse_cq_queue *q;
	struct fuse_dev_bind b;
	int err;

	if (copy_from_user(&b, argp, sizeof(b)))
		return -EFAULT;
	err = fuse_cq_check_bind(&b);
	if (err)
		return err;

	mutex_lock(&fc->cq.mutex);
	err = -ENOTCONN;
	if (!READ_ONCE(fc->connected))
		goto out;
	q = fud->cq;
	err = 0;
	if (!b.flags) {
		if (q && q->bind_flags)
			err = fuse_cq_set_binding(fc, q, 0, -1, -1);
		goto out;
	}
	if (!q) {
		err = -ENOMEM;
		q = fuse_cq_get_queue(fc, fud, file);
		if (!q)
			goto out;
	}
	err = fuse_cq_set_binding(fc, q, b.flags, b.cpu, b.node);
out:
	mutex_unlock(&fc->cq.mutex);
	return err;
}

/**
 * fuse_cq_ioctl_get_bind - FUSE_DEV_IOC_GET_BIND: report a device's binding
 * @fud: the device
 * @argp: gets the struct fuse_dev_bind
 *
 * Return: 0 or -EFAULT.
 */
long fuse_cq_ioctl_get_bind(struct fuse_dev *fud,
			    struct fuse_dev_bind __user *argp)
{
	struct fuse_conn *fc = fud->fc;
	struct fuse_dev_bind b = { .cpu = -1, .node = -1 };
	struct fuse_cq_queue *q;

	mutex_lock(&fc->cq.mutex);
	q = fud->cq;
	if (q && q->bind_flags) {
		b.flags = q->bind_flags;
		b.cpu = q->cpu;
		b.node = q->node;
	}
	mutex_unlock(&fc->cq.mutex);

	return copy_to_user(argp, &b, sizeof(b)) ? -EFAULT : 0;
}

/**
 * fuse_cq_dev_release - a device is going away: unbind it, reroute its queue
 * @fud: the device
 *
 * Called before its processing queue is ended.  What is pending on its
 * queue is routed again (to the shared queue if nothing else is bound);
 * interrupts stay, for the requests it read, which the caller ends.  The
 * queue is then kept for reuse by the next device bound.
 */
void fuse_cq_dev_release(struct fuse_dev *fud)
{
	struct fuse_cq_queue *q = fud->cq;
	struct fuse_conn *fc = fud->fc;
	LIST_HEAD(to_end);

	if (!q)
		return;

	mutex_lock(&fc->cq.mutex);
	if (q->bind_flags) {
		q->bind_flags = 0;
		q->cpu = -1;
		q->node = -1;
		/*
		 * Out of memory: leave the old map; senders that pick this
		 * queue find it unroutable and fall back to the shared queue.
		 */
		if (fuse_cq_rebuild(fc))
			pr_warn_ratelimited("fuse: no memory to reroute a closed clone; using the shared queue\n");
	}
	spin_lock(&q->iq.lock);
	q->routable = false;
	q->fud = NULL;
	fuse_cq_drain_locked(fc, q, &to_end);
	spin_unlock(&q->iq.lock);
	mutex_unlock(&fc->cq.mutex);
	fuse_cq_end(&to_end);
}

static unsigned int fuse_cq_count_queued(struct fuse_iqueue *fiq)
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

/**
 * fuse_cq_show - the fusectl "clone_queues" file of a connection
 * @m: the seq_file
 * @fc: the connection
 *
 * One line for the shared queue, then one per device: its id, binding,
 * requests queued now, requests routed to it in total, and of those how
 * many came from its CPU, from its node, from elsewhere.
 *
 * Return: 0.
 */
int fuse_cq_show(struct seq_file *m, struct fuse_conn *fc)
{
	struct fuse_dev *fud;

	seq_puts(m, "dev    bind cpu node queued dispatched local_cpu local_node remote\n");
	seq_printf(m, "shared -    -   -    %u -\n", fuse_cq_count_queued(&fc->iq));

	mutex_lock(&fc->cq.mutex);
	spin_lock(&fc->lock);
	list_for_each_entry(fud, &fc->devices, entry) {
		struct fuse_cq_queue *q = fud->cq;
		u64 lv[FUSE_CQ_NR_LEVELS] = {}, disp = 0;
		unsigned int queued = 0;
		const char *bind = "none";

		if (q) {
			spin_lock(&q->iq.lock);
			disp = q->dispatched;
			memcpy(lv, q->level, sizeof(lv));
			spin_unlock(&q->iq.lock);
			queued = fuse_cq_count_queued(&q->iq);
			if (q->bind_flags & FUSE_DEV_BIND_CPU)
				bind = "cpu";
			else if (q->bind_flags & FUSE_DEV_BIND_NODE)
				bind = "node";
		}
		seq_printf(m, "%-6u %-4s %-3d %-4d %u %llu %llu %llu %llu\n",
			   fud->id, bind, q && q->bind_flags ? q->cpu : -1,
			   q && q->bind_flags ? q->node : -1, queued, disp,
			   lv[FUSE_CQ_LOCAL_CPU], lv[FUSE_CQ_LOCAL_NODE],
			   lv[FUSE_CQ_REMOTE]);
	}
	spin_unlock(&fc->lock);
	mutex_unlock(&fc->cq.mutex);
	return 0;
}
