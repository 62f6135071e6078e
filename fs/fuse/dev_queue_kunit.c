// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the routing map of FUSE device input queues and of the
 * choice among candidates, on synthetic topologies.
 */

#include "dev_queue_i.h"

#include <kunit/test.h>
#include <linux/module.h>
#include <linux/percpu.h>

#define NR_Q 6

struct devq_test {
	struct fuse_devq q[NR_Q];
	unsigned int nr;
	spinlock_t lock;	/* the shared queue's, for the map's seqcount */
	unsigned int __percpu *cursor;
	struct fuse_devq_map *map;
};

static int devq_test_init(struct kunit *test)
{
	struct devq_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->cursor = alloc_percpu(unsigned int);
	if (!t->cursor)
		return -ENOMEM;
	spin_lock_init(&t->lock);
	for (i = 0; i < NR_Q; i++)
		fuse_devq_queue_init(&t->q[i], NULL, i);
	test->priv = t;
	return 0;
}

static void devq_test_exit(struct kunit *test)
{
	struct devq_test *t = test->priv;

	fuse_devq_map_free(t->map);
	free_percpu(t->cursor);
}

static struct fuse_devq *bind_cpu(struct devq_test *t, int cpu)
{
	struct fuse_devq *q = &t->q[t->nr++];

	q->bind_flags = FUSE_DEV_BIND_CPU;
	q->cpu = cpu;
	q->node = NUMA_NO_NODE;
	return q;
}

static struct fuse_devq *bind_node(struct devq_test *t, int node)
{
	struct fuse_devq *q = &t->q[t->nr++];

	q->bind_flags = FUSE_DEV_BIND_NODE;
	q->cpu = -1;
	q->node = node;
	return q;
}

/* Fill @t->map (allocated on first use) with the queues bound so far */
static void fill(struct kunit *test, const struct fuse_devq_topo *topo)
{
	struct devq_test *t = test->priv;
	unsigned int i;

	if (!t->map)
		t->map = fuse_devq_map_alloc(topo, NR_Q, &t->lock, t->cursor);
	KUNIT_ASSERT_NOT_NULL(test, t->map);
	for (i = 0; i < t->nr; i++)
		t->map->slots[i] = &t->q[i];
	t->map->nr_queues = t->nr;
	fuse_devq_map_fill(t->map, topo);
	KUNIT_EXPECT_EQ(test, t->map->nr_cpus, topo->nr_cpus);
}

static void build(struct kunit *test, const int *cpu_node, unsigned int nr_cpus,
		  unsigned int nr_nodes)
{
	struct fuse_devq_topo topo = {
		.nr_cpus = nr_cpus, .nr_nodes = nr_nodes, .cpu_node = cpu_node,
	};

	fill(test, &topo);
}

/* CPU @cpu's candidates are exactly queues @want (indexes into t->q) */
static void expect_span(struct kunit *test, unsigned int cpu, u8 level,
			unsigned int count, const unsigned int *want)
{
	struct devq_test *t = test->priv;
	const struct fuse_devq_span *s = &t->map->span[cpu];
	unsigned int i;

	unsigned int got_level = s->level, got_count = s->count;
	unsigned int start = s->start;

	KUNIT_EXPECT_EQ_MSG(test, got_level, level, "cpu %u", cpu);
	KUNIT_ASSERT_EQ_MSG(test, got_count, count, "cpu %u", cpu);
	for (i = 0; i < count; i++)
		KUNIT_EXPECT_PTR_EQ_MSG(test, t->map->slots[start + i],
					&t->q[want[i]], "cpu %u slot %u", cpu, i);
}

static struct fuse_devq *choose(struct kunit *test, unsigned int cpu,
				struct fuse_devq_choice *ch)
{
	struct devq_test *t = test->priv;
	struct fuse_devq *q;

	/* The cursor is per CPU: stay on one */
	migrate_disable();
	q = fuse_devq_map_choose(t->map, cpu, ch);
	migrate_enable();
	return q;
}

/* Reader states, as the read and write paths set them */
static void set_idle(struct fuse_devq *q)
{
	atomic_set(&q->waiters, 1);
	q->in_handler = false;
}

static void set_busy(struct fuse_devq *q)
{
	atomic_set(&q->waiters, 0);
	q->poll_idle = false;
	q->in_handler = true;
}

static void set_on_its_way_back(struct fuse_devq *q)
{
	atomic_set(&q->waiters, 0);
	q->poll_idle = false;
	q->in_handler = false;
}

static const int two_nodes[4] = { 0, 0, 1, 1 };
static const int one_node[4] = { 0, 0, 0, 0 };

static void devq_all_cpus_bound(struct kunit *test)
{
	struct devq_test *t = test->priv;
	unsigned int cpu;

	for (cpu = 0; cpu < 4; cpu++)
		bind_cpu(t, cpu);
	build(test, two_nodes, 4, 2);
	for (cpu = 0; cpu < 4; cpu++)
		expect_span(test, cpu, FUSE_DEVQ_LOCAL_CPU, 1,
			    (unsigned int[]){ cpu });
}

static void devq_one_per_node(struct kunit *test)
{
	struct devq_test *t = test->priv;

	bind_node(t, 1);
	bind_node(t, 0);
	build(test, two_nodes, 4, 2);
	expect_span(test, 0, FUSE_DEVQ_LOCAL_NODE, 1, (unsigned int[]){ 1 });
	expect_span(test, 1, FUSE_DEVQ_LOCAL_NODE, 1, (unsigned int[]){ 1 });
	expect_span(test, 2, FUSE_DEVQ_LOCAL_NODE, 1, (unsigned int[]){ 0 });
	expect_span(test, 3, FUSE_DEVQ_LOCAL_NODE, 1, (unsigned int[]){ 0 });
}

static void devq_one_node_only(struct kunit *test)
{
	struct devq_test *t = test->priv;

	bind_cpu(t, 0);
	bind_cpu(t, 1);
	build(test, two_nodes, 4, 2);
	expect_span(test, 0, FUSE_DEVQ_LOCAL_CPU, 1, (unsigned int[]){ 0 });
	expect_span(test, 1, FUSE_DEVQ_LOCAL_CPU, 1, (unsigned int[]){ 1 });
	/* Node 1 has nothing bound: the nearest node's queues */
	expect_span(test, 2, FUSE_DEVQ_REMOTE, 2, (unsigned int[]){ 0, 1 });
	expect_span(test, 3, FUSE_DEVQ_REMOTE, 2, (unsigned int[]){ 0, 1 });
}

static void devq_cpu_and_node_bindings(struct kunit *test)
{
	struct devq_test *t = test->priv;

	bind_node(t, 1);
	bind_cpu(t, 0);
	bind_cpu(t, 3);
	build(test, two_nodes, 4, 2);
	expect_span(test, 0, FUSE_DEVQ_LOCAL_CPU, 1, (unsigned int[]){ 1 });
	/* A CPU binding counts for its node */
	expect_span(test, 1, FUSE_DEVQ_LOCAL_NODE, 1, (unsigned int[]){ 1 });
	expect_span(test, 2, FUSE_DEVQ_LOCAL_NODE, 2, (unsigned int[]){ 0, 2 });
	expect_span(test, 3, FUSE_DEVQ_LOCAL_CPU, 1, (unsigned int[]){ 2 });
}

static void devq_two_strict_on_one_cpu(struct kunit *test)
{
	struct devq_test *t = test->priv;
	struct fuse_devq_choice ch;
	unsigned int hits[2] = {}, i;

	bind_cpu(t, 2)->strict = true;
	bind_cpu(t, 2)->strict = true;
	build(test, two_nodes, 4, 2);
	expect_span(test, 2, FUSE_DEVQ_LOCAL_CPU, 2, (unsigned int[]){ 0, 1 });
	expect_span(test, 3, FUSE_DEVQ_LOCAL_NODE, 2, (unsigned int[]){ 0, 1 });
	expect_span(test, 0, FUSE_DEVQ_REMOTE, 2, (unsigned int[]){ 0, 1 });

	/* Strict queues take turns, busy or not */
	set_busy(&t->q[0]);
	set_idle(&t->q[1]);
	for (i = 0; i < 100; i++)
		hits[choose(test, 2, &ch) - t->q]++;
	KUNIT_EXPECT_EQ(test, hits[0], 50);
	KUNIT_EXPECT_EQ(test, hits[1], 50);
	KUNIT_EXPECT_FALSE(test, ch.spilled);
}

static void devq_two_on_one_cpu_reuse_last(struct kunit *test)
{
	struct devq_test *t = test->priv;
	struct fuse_devq_choice ch;
	struct fuse_devq *first;
	unsigned int i, same = 0;

	bind_cpu(t, 2);
	bind_cpu(t, 2);
	build(test, two_nodes, 4, 2);
	set_idle(&t->q[0]);
	set_idle(&t->q[1]);

	/* The queue used last is used again while it is not busy */
	first = choose(test, 2, &ch);
	for (i = 0; i < 100; i++) {
		same += choose(test, 2, &ch) == first;
		set_on_its_way_back(first);
	}
	KUNIT_EXPECT_EQ(test, same, 100);

	/* Busy: the other candidate, which is then the one kept */
	set_busy(first);
	KUNIT_EXPECT_PTR_NE(test, choose(test, 2, &ch), first);
	KUNIT_EXPECT_FALSE(test, ch.spilled);
	set_on_its_way_back(first);
	KUNIT_EXPECT_PTR_NE(test, choose(test, 2, &ch), first);
}

static void devq_node_without_cpus(struct kunit *test)
{
	struct devq_test *t = test->priv;
	unsigned int cpu;

	/* Node 1 exists for the binding but has no CPU */
	bind_node(t, 1);
	build(test, one_node, 4, 2);
	for (cpu = 0; cpu < 4; cpu++)
		expect_span(test, cpu, FUSE_DEVQ_REMOTE, 1,
			    (unsigned int[]){ 0 });
}

static void devq_nothing_bound(struct kunit *test)
{
	struct fuse_devq_choice ch;
	unsigned int cpu;

	build(test, two_nodes, 4, 2);
	for (cpu = 0; cpu < 4; cpu++)
		KUNIT_EXPECT_NULL(test, choose(test, cpu, &ch));
}

static void devq_out_of_range(struct kunit *test)
{
	struct devq_test *t = test->priv;
	struct fuse_devq_choice ch;

	bind_cpu(t, 0);
	build(test, two_nodes, 4, 2);
	/* A CPU past the table is treated as CPU 0, never read past it */
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 1000, &ch), &t->q[0]);
	KUNIT_EXPECT_TRUE(test, fuse_devq_map_has(t->map, 1000, &t->q[0]));
}

/*
 * Four nodes of one CPU each: 0-1 and 2-3 close (two dies of a socket),
 * the sockets far apart.
 */
static const int four_nodes[4] = { 0, 1, 2, 3 };
static const u8 four_dist[16] = {
	10, 12, 32, 32,
	12, 10, 32, 32,
	32, 32, 10, 12,
	32, 32, 12, 10,
};

static void devq_nearest_node(struct kunit *test)
{
	struct devq_test *t = test->priv;
	struct fuse_devq_topo topo = {
		.nr_cpus = 4, .nr_nodes = 4, .cpu_node = four_nodes,
		.distance = four_dist,
	};

	bind_node(t, 1);
	bind_node(t, 3);
	fill(test, &topo);
	expect_span(test, 0, FUSE_DEVQ_REMOTE, 1, (unsigned int[]){ 0 });
	expect_span(test, 1, FUSE_DEVQ_LOCAL_NODE, 1, (unsigned int[]){ 0 });
	expect_span(test, 2, FUSE_DEVQ_REMOTE, 1, (unsigned int[]){ 1 });
	expect_span(test, 3, FUSE_DEVQ_LOCAL_NODE, 1, (unsigned int[]){ 1 });

	/* Equally far: the first node after the CPU's own, in numbering */
	t->nr = 0;
	bind_node(t, 2);
	bind_node(t, 3);
	fill(test, &topo);
	expect_span(test, 0, FUSE_DEVQ_REMOTE, 1, (unsigned int[]){ 0 });
	expect_span(test, 1, FUSE_DEVQ_REMOTE, 1, (unsigned int[]){ 0 });
}

static void devq_refill_in_place(struct kunit *test)
{
	struct devq_test *t = test->priv;
	struct fuse_devq_map *map;
	unsigned int cpu;

	for (cpu = 0; cpu < 4; cpu++)
		bind_cpu(t, cpu);
	build(test, two_nodes, 4, 2);
	map = t->map;
	/* Unbind CPUs 2 and 3: the same map, rebuilt */
	t->nr = 2;
	build(test, two_nodes, 4, 2);
	KUNIT_EXPECT_PTR_EQ(test, t->map, map);
	KUNIT_EXPECT_EQ(test, t->map->nr_queues, 2);
	expect_span(test, 0, FUSE_DEVQ_LOCAL_CPU, 1, (unsigned int[]){ 0 });
	expect_span(test, 3, FUSE_DEVQ_REMOTE, 2, (unsigned int[]){ 0, 1 });
	KUNIT_EXPECT_FALSE(test, fuse_devq_map_has(t->map, 3, &t->q[3]));
	KUNIT_EXPECT_TRUE(test, fuse_devq_map_has(t->map, 3, &t->q[1]));
}

/* The queue pointers after the 12-byte spans stay aligned for any CPU count */
static void devq_slots_aligned(struct kunit *test)
{
	struct devq_test *t = test->priv;
	struct fuse_devq_topo topo = { .nr_nodes = 1, .cpu_node = one_node };
	struct fuse_devq_map *map;

	for (topo.nr_cpus = 1; topo.nr_cpus <= 4; topo.nr_cpus++) {
		map = fuse_devq_map_alloc(&topo, NR_Q, &t->lock, t->cursor);
		KUNIT_ASSERT_NOT_NULL(test, map);
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED((unsigned long)map->slots,
						   sizeof(void *)));
		fuse_devq_map_free(map);
	}
}

/*
 * A span read while the map is refilled may mix the start and the count
 * of different fills: the furthest such span (the largest start and the
 * largest count) stays within the slots, and no slot is NULL, so the
 * sender picks some bound queue, which its sequence-count retry replaces.
 */
static void devq_torn_span(struct kunit *test)
{
	struct devq_test *t = test->priv;
	struct fuse_devq_choice ch;
	struct fuse_devq *q;
	unsigned int i;

	for (i = 0; i < 4; i++)
		bind_cpu(t, i);
	build(test, two_nodes, 4, 2);
	for (i = 0; i < 4 * NR_Q; i++)
		KUNIT_EXPECT_NOT_NULL(test, t->map->slots[i]);
	t->map->span[0].start = 3 * NR_Q;
	t->map->span[0].count = NR_Q;
	q = choose(test, 0, &ch);
	KUNIT_EXPECT_TRUE(test, q >= &t->q[0] && q < &t->q[4]);
}

/* CPUs 0-1 on node 0 with one queue each, 2-3 on node 1 likewise */
static void bind_per_cpu(struct kunit *test)
{
	struct devq_test *t = test->priv;
	unsigned int cpu;

	for (cpu = 0; cpu < 4; cpu++)
		set_idle(bind_cpu(t, cpu));
	build(test, two_nodes, 4, 2);
}

static void devq_choose_idle_back_busy(struct kunit *test)
{
	struct devq_test *t = test->priv;
	struct fuse_devq_choice ch;

	bind_per_cpu(test);
	/* Idle, or on its way back to read(): stays local */
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[0]);
	KUNIT_EXPECT_FALSE(test, ch.spilled || ch.busy);
	set_on_its_way_back(&t->q[0]);
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[0]);
	/* A poll loop about to wait counts as idle */
	set_busy(&t->q[0]);
	t->q[0].poll_idle = true;
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[0]);

	/* Busy: an idle reader on the same node first */
	set_busy(&t->q[0]);
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[1]);
	KUNIT_EXPECT_TRUE(test, ch.spilled);
	KUNIT_EXPECT_PTR_EQ(test, ch.routed, &t->q[0]);
	/* ... then the other node */
	set_busy(&t->q[1]);
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[2]);
	KUNIT_EXPECT_TRUE(test, ch.spilled);
	/* Free but on its way back: after idle ones, same node first */
	set_on_its_way_back(&t->q[2]);
	set_busy(&t->q[3]);
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[2]);
	KUNIT_EXPECT_TRUE(test, ch.spilled);
	set_on_its_way_back(&t->q[1]);
	set_idle(&t->q[3]);
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[1]);
	set_busy(&t->q[1]);
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[3]);
	set_busy(&t->q[3]);
	/* Every reader busy: where the rules send it, marked busy */
	set_busy(&t->q[2]);
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[0]);
	KUNIT_EXPECT_TRUE(test, ch.busy);
	KUNIT_EXPECT_FALSE(test, ch.spilled);
}

static void devq_strict_neither_gives_nor_takes(struct kunit *test)
{
	struct devq_test *t = test->priv;
	struct fuse_devq_choice ch;

	bind_per_cpu(test);
	/* A busy strict queue keeps its requests */
	t->q[0].strict = true;
	set_busy(&t->q[0]);
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[0]);
	KUNIT_EXPECT_FALSE(test, ch.spilled);
	/* An idle strict queue takes nothing routed elsewhere */
	t->q[0].strict = false;
	t->q[1].strict = true;
	KUNIT_EXPECT_PTR_EQ(test, choose(test, 0, &ch), &t->q[2]);
}

static void devq_unique_ids(struct kunit *test)
{
	struct devq_test *t = test->priv;
	u64 a, b, c;

	spin_lock(&t->q[0].iq.lock);
	a = fuse_devq_unique(&t->q[0], 2);
	c = fuse_devq_unique(&t->q[0], 4);
	spin_unlock(&t->q[0].iq.lock);
	spin_lock(&t->q[5].iq.lock);
	b = fuse_devq_unique(&t->q[5], 2);
	spin_unlock(&t->q[5].iq.lock);

	/* Disjoint from the shared counter, interrupt and resend bits clear */
	KUNIT_EXPECT_TRUE(test, a & BIT_ULL(62));
	KUNIT_EXPECT_FALSE(test, a & (BIT_ULL(63) | BIT_ULL(0)));
	/* Same counter on two queues: two ids; two counts on one: two ids */
	KUNIT_EXPECT_NE(test, a, b);
	KUNIT_EXPECT_NE(test, a, c);
	KUNIT_EXPECT_EQ(test, b >> 46 & 0xffff, 5);
	/* The counter wraps inside its own bits */
	spin_lock(&t->q[5].iq.lock);
	KUNIT_EXPECT_EQ(test, fuse_devq_unique(&t->q[5], BIT_ULL(46) + 2), b);
	spin_unlock(&t->q[5].iq.lock);
}

/*
 * A connection at the queue limit: a new device gets -ENOSPC and changes
 * nothing; one that reuses a pooled queue still gets it; the last index
 * still makes ids of its own.
 */
static void devq_queue_limit(struct kunit *test)
{
	struct fuse_dev *a, *b, *c;
	struct fuse_conn *fc;
	u64 id;

	fc = kunit_kzalloc(test, sizeof(*fc), GFP_KERNEL);
	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, fc && a && b && c);
	/* What attaching a device looks at of the connection's own queue */
	spin_lock_init(&fc->iq.lock);
	fc->iq.connected = 1;
	fuse_devqs_init(&fc->devqs);
	/* As if the connection had made all queues but the last */
	fc->devqs.nr_queues = FUSE_DEVQ_MAX_QUEUES - 1;

	KUNIT_ASSERT_EQ(test, fuse_devq_attach(fc, a), 0);
	KUNIT_EXPECT_EQ(test, a->devq->index, FUSE_DEVQ_MAX_QUEUES - 1);
	KUNIT_EXPECT_EQ(test, fc->devqs.nr_queues, FUSE_DEVQ_MAX_QUEUES);
	KUNIT_EXPECT_EQ(test, fuse_devq_attach(fc, b), -ENOSPC);
	KUNIT_EXPECT_NULL(test, b->devq);
	KUNIT_EXPECT_EQ(test, fc->devqs.nr_queues, FUSE_DEVQ_MAX_QUEUES);

	spin_lock(&a->devq->iq.lock);
	id = fuse_devq_unique(a->devq, 2);
	spin_unlock(&a->devq->iq.lock);
	KUNIT_EXPECT_EQ(test, id >> FUSE_DEVQ_INDEX_SHIFT & 0xffff, 0xffff);
	KUNIT_EXPECT_TRUE(test, id & BIT_ULL(62));
	KUNIT_EXPECT_FALSE(test, id & (BIT_ULL(63) | BIT_ULL(0)));

	/* A closed device's queue is reused at the limit */
	fuse_devq_detach(a);
	KUNIT_ASSERT_EQ(test, fuse_devq_attach(fc, c), 0);
	KUNIT_EXPECT_EQ(test, c->devq->index, FUSE_DEVQ_MAX_QUEUES - 1);
	KUNIT_EXPECT_EQ(test, fc->devqs.nr_queues, FUSE_DEVQ_MAX_QUEUES);
	fuse_devq_detach(c);
	fuse_devqs_free(fc);
}

static struct kunit_case fuse_devq_cases[] = {
	KUNIT_CASE(devq_all_cpus_bound),
	KUNIT_CASE(devq_one_per_node),
	KUNIT_CASE(devq_one_node_only),
	KUNIT_CASE(devq_cpu_and_node_bindings),
	KUNIT_CASE(devq_two_strict_on_one_cpu),
	KUNIT_CASE(devq_two_on_one_cpu_reuse_last),
	KUNIT_CASE(devq_node_without_cpus),
	KUNIT_CASE(devq_nothing_bound),
	KUNIT_CASE(devq_out_of_range),
	KUNIT_CASE(devq_nearest_node),
	KUNIT_CASE(devq_refill_in_place),
	KUNIT_CASE(devq_slots_aligned),
	KUNIT_CASE(devq_torn_span),
	KUNIT_CASE(devq_choose_idle_back_busy),
	KUNIT_CASE(devq_strict_neither_gives_nor_takes),
	KUNIT_CASE(devq_unique_ids),
	KUNIT_CASE(devq_queue_limit),
	{}
};

static struct kunit_suite fuse_devq_suite = {
	.name = "fuse_dev_queue",
	.init = devq_test_init,
	.exit = devq_test_exit,
	.test_cases = fuse_devq_cases,
};

kunit_test_suite(fuse_devq_suite);

MODULE_DESCRIPTION("KUnit tests of FUSE device input queue routing");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
