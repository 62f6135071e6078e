/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FUSE: per-clone input queues and CPU-aware request routing.
 *
 * Included by fuse_i.h after struct fuse_iqueue; see
 * Documentation/filesystems/fuse-clone-queues.rst for the model.
 */
#ifndef _FS_FUSE_CLONE_QUEUE_H
#define _FS_FUSE_CLONE_QUEUE_H

#include <linux/init.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

/* Version of the clone-queue series, shown by modinfo and at load */
#define FUSE_CQ_VERSION "1.0"

struct fuse_conn;
struct fuse_dev;
struct fuse_req;
struct fuse_dev_bind;
struct seq_file;
struct file;

/**
 * enum fuse_cq_level - how well a request's queue matches where it came from
 * @FUSE_CQ_LOCAL_CPU: the queue is bound to the request's CPU
 * @FUSE_CQ_LOCAL_NODE: the queue is bound to the request's node, or to a
 *	CPU on it
 * @FUSE_CQ_REMOTE: nothing is bound near the CPU; round-robin over all
 * @FUSE_CQ_NR_LEVELS: number of levels
 */
enum fuse_cq_level {
	FUSE_CQ_LOCAL_CPU,
	FUSE_CQ_LOCAL_NODE,
	FUSE_CQ_REMOTE,
	FUSE_CQ_NR_LEVELS,
};

/**
 * struct fuse_cq_queue - the input queue of a bound /dev/fuse clone
 * @iq: the queue; @iq.lock also protects @routable, @fud and the counters
 * @fud: the device it serves; NULL once that device is released, when the
 *	queue waits on the connection's list to be reused
 * @entry: on fuse_cq_conn.queues
 * @routable: the routing map may send requests here
 * @bind_flags: FUSE_DEV_BIND_CPU, FUSE_DEV_BIND_NODE or 0 (under the
 *	connection's cq mutex)
 * @cpu: bound CPU, or -1
 * @node: bound node, or the node of the bound CPU, or -1
 * @dispatched: requests and forgets routed here
 * @level: @dispatched split by enum fuse_cq_level
 *
 * A queue is allocated when its device is first bound and freed only with
 * the connection, so a stale pointer to it (in fuse_req.fiq or in an old
 * routing map) is always safe to lock.
 */
struct fuse_cq_queue {
	struct fuse_iqueue iq;
	struct fuse_dev *fud;
	struct list_head entry;
	bool routable;
	u32 bind_flags;
	int cpu;
	int node;
	u64 dispatched;
	u64 level[FUSE_CQ_NR_LEVELS];
};

/**
 * struct fuse_cq_span - where one CPU's requests go
 * @start: first candidate in fuse_cq_map.slots
 * @count: number of candidates, taken in turn
 * @level: how the candidates match the CPU
 */
struct fuse_cq_span {
	u32 start;
	u16 count;
	u8 level;
};

/**
 * struct fuse_cq_map - the routing table of a connection
 * @rcu: for freeing after readers are done
 * @cursor: per-CPU turn-taking counter
 * @nr_cpus: entries in @span
 * @nr_queues: bound queues; they are the first entries of @slots
 * @span: per CPU, its candidates in @slots
 * @slots: all bound queues, then the per-node lists, then the per-CPU lists
 *
 * Built under the connection's cq mutex whenever a binding changes and
 * published with RCU; a sender looks up its CPU in O(1).
 */
struct fuse_cq_map {
	struct rcu_head rcu;
	unsigned int __percpu *cursor;
	unsigned int nr_cpus;
	unsigned int nr_queues;
	struct fuse_cq_span *span;
	struct fuse_cq_queue *slots[];
};

/**
 * struct fuse_cq_conn - clone-queue state of a connection
 * @mutex: serializes binding, unbinding, device release and map rebuilds
 * @map: the routing table, NULL while no device is bound
 * @cursor: per-CPU turn-taking counters, shared by successive maps
 * @queues: every clone queue of the connection, live or waiting for reuse
 * @next_dev_id: id for the next device installed (under fuse_conn.lock)
 */
struct fuse_cq_conn {
	struct mutex mutex;	/* bindings and map rebuilds */
	struct fuse_cq_map __rcu *map;
	unsigned int __percpu *cursor;
	struct list_head queues;
	unsigned int next_dev_id;
};

/**
 * struct fuse_cq_topo - CPU topology the routing table is built for
 * @nr_cpus: CPUs numbered 0 .. @nr_cpus - 1
 * @cpu_node: node of each CPU, or NULL for the machine's own cpu_to_node()
 *
 * The KUnit tests pass synthetic topologies.
 */
struct fuse_cq_topo {
	unsigned int nr_cpus;
	const int *cpu_node;
};

void __init fuse_cq_announce(void);
void fuse_cq_conn_init(struct fuse_cq_conn *cq);
void fuse_cq_conn_free(struct fuse_conn *fc);
void fuse_cq_dev_release(struct fuse_dev *fud);
struct fuse_iqueue *fuse_cq_lock_target(struct fuse_conn *fc, int cpu,
					bool *kick)
	__acquires(fiq->lock);
void fuse_cq_requeue(struct fuse_conn *fc, struct fuse_req *req,
		     struct list_head *to_end);
void fuse_cq_kick(struct fuse_conn *fc);
u64 fuse_cq_unique(void);
long fuse_cq_ioctl_bind(struct file *file, struct fuse_dev *fud,
			const struct fuse_dev_bind __user *argp);
long fuse_cq_ioctl_get_bind(struct fuse_dev *fud,
			    struct fuse_dev_bind __user *argp);
int fuse_cq_show(struct seq_file *m, struct fuse_conn *fc);

struct fuse_cq_map *fuse_cq_map_build(const struct fuse_cq_topo *topo,
				      struct fuse_cq_queue *const *bound,
				      unsigned int nr_bound,
				      unsigned int __percpu *cursor);
void fuse_cq_map_free(struct fuse_cq_map *map);
struct fuse_cq_queue *fuse_cq_map_pick(struct fuse_cq_map *map,
				       unsigned int cpu,
				       enum fuse_cq_level *level);

#endif /* _FS_FUSE_CLONE_QUEUE_H */
