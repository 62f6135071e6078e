// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the FUSE clone-queue routing map, on synthetic topologies.
 */

#include "fuse_i.h"

#include <kunit/test.h>
#include <linux/percpu.h>

#define NR_Q 4

struct cq_test {
	struct fuse_cq_queue q[NR_Q];
	struct fuse_cq_queue *bound[NR_Q];
	unsigned int nr;
	unsigned int __percpu *cursor;
	struct fuse_cq_map *map;
};

static int cq_test_init(struct kunit *test)
{
	struct cq_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->cursor = alloc_percpu(unsigned int);
	if (!t->cursor)
		return -ENOMEM;
	test->priv = t;
	return 0;
}

static void cq_test_exit(struct kunit *test)
{
	struct cq_test *t = test->priv;

	fuse_cq_map_free(t->map);
	free_percpu(t->cursor);
}

static void bind_cpu(struct cq_test *t, int cpu)
{
	struct fuse_cq_queue *q = &t->q[t->nr];

	q->bind_flags = FUSE_DEV_BIND_CPU;
	q->cpu = cpu;
	q->node = -1;
	t->bound[t->nr++] = q;
}

static void bind_node(struct cq_test *t, int node)
{
	struct fuse_cq_queue *q = &t->q[t->nr];

	q->bind_flags = FUSE_DEV_BIND_NODE;
	q->cpu = -1;
	q->node = node;
	t->bound[t->nr++] = q;
}

static void build(struct kunit *test, const int *cpu_node, unsigned int nr_cpus)
{
	struct cq_test *t = test->priv;
	struct fuse_cq_topo topo = { .nr_cpus = nr_cpus, .cpu_node = cpu_node };

	t->map = fuse_cq_map_build(&topo, t->bound, t->nr, t->cursor);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(t->map));
	KUNIT_EXPECT_EQ(test, t->map->nr_cpus, nr_cpus);
	KUNIT_EXPECT_EQ(test, t->map->nr_queues, t->nr);
}

/* CPU @cpu's candidates are exactly queues @want (indexes into t->q) */
static void expect_span(struct kunit *test, unsigned int cpu, u8 level,
			unsigned int count, const unsigned int *want)
{
	struct cq_test *t = test->priv;
	const struct fuse_cq_span *s = &t->map->span[cpu];
	unsigned int i;

	KUNIT_EXPECT_EQ_MSG(test, s->level, level, "cpu %u", cpu);
	KUNIT_ASSERT_EQ_MSG(test, s->count, count, "cpu %u", cpu);
	for (i = 0; i < count; i++)
		KUNIT_EXPECT_PTR_EQ_MSG(test, t->map->slots[s->start + i],
					&t->q[want[i]], "cpu %u slot %u", cpu, i);
}

static const int two_nodes[4] = { 0, 0, 1, 1 };
static const int one_node[4] = { 0, 0, 0, 0 };

static void cq_all_cpus_bound(struct kunit *test)
{
	struct cq_test *t = test->priv;
	unsigned int cpu;

	for (cpu = 0; cpu < 4; cpu++)
		bind_cpu(t, cpu);
	build(test, two_nodes, 4);
	for (cpu = 0; cpu < 4; cpu++)
		expect_span(test, cpu, FUSE_CQ_LOCAL_CPU, 1,
			    (unsigned int[]){ cpu });
}

static void cq_one_per_node(struct kunit *test)
{
	struct cq_test *t = test->priv;

	bind_node(t, 1);
	bind_node(t, 0);
	build(test, two_nodes, 4);
	expect_span(test, 0, FUSE_CQ_LOCAL_NODE, 1, (unsigned int[]){ 1 });
	expect_span(test, 1, FUSE_CQ_LOCAL_NODE, 1, (unsigned int[]){ 1 });
	expect_span(test, 2, FUSE_CQ_LOCAL_NODE, 1, (unsigned int[]){ 0 });
	expect_span(test, 3, FUSE_CQ_LOCAL_NODE, 1, (unsigned int[]){ 0 });
}

static void cq_one_node_only(struct kunit *test)
{
	struct cq_test *t = test->priv;

	bind_cpu(t, 0);
	bind_cpu(t, 1);
	build(test, two_nodes, 4);
	expect_span(test, 0, FUSE_CQ_LOCAL_CPU, 1, (unsigned int[]){ 0 });
	expect_span(test, 1, FUSE_CQ_LOCAL_CPU, 1, (unsigned int[]){ 1 });
	/* Node 1 has nothing bound: every bound queue, in turn */
	expect_span(test, 2, FUSE_CQ_REMOTE, 2, (unsigned int[]){ 0, 1 });
	expect_span(test, 3, FUSE_CQ_REMOTE, 2, (unsigned int[]){ 0, 1 });
}

static void cq_cpu_and_node_bindings(struct kunit *test)
{
	struct cq_test *t = test->priv;

	bind_node(t, 1);
	bind_cpu(t, 0);
	bind_cpu(t, 3);
	build(test, two_nodes, 4);
	expect_span(test, 0, FUSE_CQ_LOCAL_CPU, 1, (unsigned int[]){ 1 });
	/* A CPU binding counts for its node */
	expect_span(test, 1, FUSE_CQ_LOCAL_NODE, 1, (unsigned int[]){ 1 });
	expect_span(test, 2, FUSE_CQ_LOCAL_NODE, 2, (unsigned int[]){ 0, 2 });
	expect_span(test, 3, FUSE_CQ_LOCAL_CPU, 1, (unsigned int[]){ 2 });
}

static void cq_two_on_one_cpu(struct kunit *test)
{
	struct cq_test *t = test->priv;
	unsigned int hits[2] = {}, other = 0, i;
	enum fuse_cq_level level;

	bind_cpu(t, 2);
	bind_cpu(t, 2);
	build(test, two_nodes, 4);
	expect_span(test, 2, FUSE_CQ_LOCAL_CPU, 2, (unsigned int[]){ 0, 1 });
	expect_span(test, 3, FUSE_CQ_LOCAL_NODE, 2, (unsigned int[]){ 0, 1 });
	expect_span(test, 0, FUSE_CQ_REMOTE, 2, (unsigned int[]){ 0, 1 });

	/* They take turns: the cursor is per CPU, so stay on one */
	migrate_disable();
	for (i = 0; i < 100; i++) {
		struct fuse_cq_queue *q = fuse_cq_map_pick(t->map, 2, &level);

		hits[q - t->q]++;
		other += level != FUSE_CQ_LOCAL_CPU;
	}
	migrate_enable();
	KUNIT_EXPECT_EQ(test, other, 0);
	KUNIT_EXPECT_EQ(test, hits[0], 50);
	KUNIT_EXPECT_EQ(test, hits[1], 50);
}

static void cq_node_without_cpus(struct kunit *test)
{
	struct cq_test *t = test->priv;
	unsigned int cpu;

	/* Node 1 exists for the binding but has no CPU */
	bind_node(t, 1);
	build(test, one_node, 4);
	for (cpu = 0; cpu < 4; cpu++)
		expect_span(test, cpu, FUSE_CQ_REMOTE, 1,
			    (unsigned int[]){ 0 });
}

static void cq_nothing_bound(struct kunit *test)
{
	struct cq_test *t = test->priv;
	struct fuse_cq_topo topo = { .nr_cpus = 4, .cpu_node = two_nodes };

	KUNIT_EXPECT_NULL(test, fuse_cq_map_build(&topo, t->bound, 0,
						  t->cursor));
}

static void cq_pick_out_of_range(struct kunit *test)
{
	struct cq_test *t = test->priv;
	enum fuse_cq_level level;

	bind_cpu(t, 0);
	build(test, two_nodes, 4);
	/* A CPU past the table is treated as CPU 0, never read past it */
	KUNIT_EXPECT_PTR_EQ(test, fuse_cq_map_pick(t->map, 1000, &level),
			    &t->q[0]);
}

static struct kunit_case fuse_cq_cases[] = {
	KUNIT_CASE(cq_all_cpus_bound),
	KUNIT_CASE(cq_one_per_node),
	KUNIT_CASE(cq_one_node_only),
	KUNIT_CASE(cq_cpu_and_node_bindings),
	KUNIT_CASE(cq_two_on_one_cpu),
	KUNIT_CASE(cq_node_without_cpus),
	KUNIT_CASE(cq_nothing_bound),
	KUNIT_CASE(cq_pick_out_of_range),
	{}
};

static struct kunit_suite fuse_cq_suite = {
	.name = "fuse_clone_queue",
	.init = cq_test_init,
	.exit = cq_test_exit,
	.test_cases = fuse_cq_cases,
};

kunit_test_suite(fuse_cq_suite);
