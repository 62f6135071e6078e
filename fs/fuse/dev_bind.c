// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE: /dev/fuse devices bound to CPUs and NUMA nodes
 *
 * FUSE_DEV_IOC_BIND gives a device an input queue of its own and maps each
 * possible CPU to a bound device: the one bound to it, else those on the
 * nearest node with any, the CPUs of a node taking turns.  dev.c queues a
 * request there only while a reader of the device is woken for it.
 *
 * Lock order: bind_mutex, fc->lock, a device's queue lock, fc->iq.lock.
 * See Documentation/filesystems/fuse-clone-queues.rst.
 */

#include "fuse_i.h"

#include <linux/nodemask.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

#define CREATE_TRACE_POINTS
#include "dev_bind_trace.h"

/* A bound device's queue and binding, freed after an RCU grace period */
struct fuse_bound {
	struct fuse_iqueue iq;
	struct list_head entry;		/* on fc->bound while bound */
	int cpu;			/* the bound CPU, or -1 */
	int node;			/* its node, or the bound node */
	struct rcu_head rcu;
};

static struct fuse_bound *fuse_bound_of(struct fuse_dev *fud)
{
	return fud->iq ? container_of(fud->iq, struct fuse_bound, iq) : NULL;
}

static int fuse_cpu_node(unsigned int cpu)
{
	return max(cpu_to_node(cpu), 0);
}

/* Map every possible CPU to a bound device, the blk-mq way */
static void fuse_bind_fill(struct fuse_conn *fc, struct fuse_bind_map *map)
{
	struct fuse_bound *b;
	unsigned int cpu;
	int node;

	list_for_each_entry(b, &fc->bound, entry)
		if (b->cpu >= 0)
			map->fiq[b->cpu] = &b->iq;
	for_each_node(node) {
		int near = INT_MAX;

		list_for_each_entry(b, &fc->bound, entry)
			near = min(near, node_distance(node, b->node));
		b = list_last_entry(&fc->bound, struct fuse_bound, entry);
		for_each_possible_cpu(cpu) {
			if (map->fiq[cpu] || fuse_cpu_node(cpu) != node)
				continue;
			/* The devices of the nearest node take turns */
			do {
				b = list_next_entry_circular(b, &fc->bound,
							     entry);
			} while (node_distance(node, b->node) != near);
			map->fiq[cpu] = &b->iq;
		}
	}
}

static struct fuse_bind_map *fuse_bind_map_alloc(void)
{
	struct fuse_bind_map *map;

	return kvzalloc(struct_size(map, fiq, nr_cpu_ids), GFP_KERNEL_ACCOUNT);
}

/*
 * Publish @map, filled from fc->bound, or none if no device is bound.
 * Without a map for a device that is going away (@gone), its CPUs go to
 * the shared queue until the next binding: releasing must not fail.
 */
static void fuse_bind_publish(struct fuse_conn *fc, struct fuse_bind_map *map,
			      struct fuse_bound *gone)
{
	struct fuse_bind_map *old;
	unsigned int cpu;

	old = rcu_dereference_protected(fc->bind_map,
					lockdep_is_held(&fc->bind_mutex));
	if (map) {
		fuse_bind_fill(fc, map);
	} else if (!list_empty(&fc->bound)) {
		for_each_possible_cpu(cpu)
			if (old->fiq[cpu] == &gone->iq)
				WRITE_ONCE(old->fiq[cpu], NULL);
		return;
	}
	rcu_assign_pointer(fc->bind_map, map);
	if (old)
		kvfree_rcu(old, rcu);
}

/* Take @b off the map (bind_mutex held); this cannot fail */
static void fuse_bind_unmap(struct fuse_conn *fc, struct fuse_bound *b)
{
	if (list_empty(&b->entry))
		return;
	list_del_init(&b->entry);
	fuse_bind_publish(fc, list_empty(&fc->bound) ? NULL :
			  fuse_bind_map_alloc(), b);
}

static int fuse_bind_check(struct fuse_conn *fc, struct fuse_bound *b,
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
		list_for_each_entry(other, &fc->bound, entry)
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
	return !arg->flags || READ_ONCE(fc->connected) ? 0 : -ENOTCONN;
}

/**
 * fuse_bind_ioctl - FUSE_DEV_IOC_BIND: bind a device to a CPU or a node
 * @fud: the device, or NULL if the fd has no connection
 * @uarg: the binding, struct fuse_dev_bind
 *
 * A device gets its queue at its first binding and keeps it until it is
 * released; unbound again, it is off the map, and requests already queued
 * there are read by the readers woken for them.
 *
 * Return: 0, or a negative errno as uapi/linux/fuse.h documents; a failed
 * binding changes nothing.
 */
long fuse_bind_ioctl(struct fuse_dev *fud,
		     const struct fuse_dev_bind __user *uarg)
{
	struct fuse_bind_map *map = NULL;
	struct fuse_dev_bind arg;
	struct fuse_bound *b;
	struct fuse_conn *fc;
	int err;

	if (!fud)
		return -EPERM;
	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	fc = fud->fc;
	mutex_lock(&fc->bind_mutex);
	b = fuse_bound_of(fud);
	err = fuse_bind_check(fc, b, &arg);
	if (err || (!arg.flags && !b))
		goto out;
	if (!arg.flags) {
		fuse_bind_unmap(fc, b);
		goto out;
	}
	err = -ENOMEM;
	map = fuse_bind_map_alloc();
	if (!map)
		goto out;
	if (!b) {
		b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
		if (!b)
			goto out;
		fuse_iqueue_init(&b->iq, fc->iq.ops, NULL);
		INIT_LIST_HEAD(&b->entry);
		/* Under fc->lock, so that an abort finds it or it is born so */
		spin_lock(&fc->lock);
		b->iq.connected = fc->connected;
		/* Pairs with smp_load_acquire() in fuse_dev_do_read() */
		smp_store_release(&fud->iq, &b->iq);
		spin_unlock(&fc->lock);
	}
	b->cpu = arg.cpu;
	b->node = arg.cpu >= 0 ? fuse_cpu_node(arg.cpu) : arg.node;
	list_move_tail(&b->entry, &fc->bound);
	fuse_bind_publish(fc, map, b);
	map = NULL;
	err = 0;
out:
	mutex_unlock(&fc->bind_mutex);
	kvfree(map);
	return err;
}

/**
 * fuse_bind_release - unbind a device that is going away, free its queue
 * @fud: the device
 *
 * What waits on its queue goes to the shared queue.  Cannot fail.
 */
void fuse_bind_release(struct fuse_dev *fud)
{
	struct fuse_bound *b = fuse_bound_of(fud);
	struct fuse_conn *fc = fud->fc;

	if (!b)
		return;
	mutex_lock(&fc->bind_mutex);
	fuse_bind_unmap(fc, b);
	mutex_unlock(&fc->bind_mutex);
	fuse_dev_requeue(&b->iq, &fc->iq);
	/* Under fc->lock, so that an abort no longer finds it */
	spin_lock(&fc->lock);
	fud->iq = NULL;
	spin_unlock(&fc->lock);
	kfree_rcu(b, rcu);
}
