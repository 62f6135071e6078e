#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of depth1.sh's results logs: per fio case and transport,
every phase's IOPS in boot order (the warm-up phase left out), their
median, its ratio to stock's, the spread of stock's own phases, a
two-sided permutation test of the difference from stock, the daemon's
context switches per read and the share read on the issuing CPU; and for
its raw runs' fuse_bench lines (the 3000-operation warm-up left out)
the same per workload and mode, with the round trip's median."""
import collections
import random
import statistics as st
import sys

iops = collections.defaultdict(list)
sched = collections.defaultdict(list)
reads = collections.defaultdict(lambda: collections.Counter())
cases = []
raw = collections.defaultdict(list)
for path in sys.argv[1:]:
    warm = True
    for line in open(path):
        t = line.rstrip('\n').split('\t')
        if len(t) == 13 and t[0] in ('unbound', 'bound', 'node', 'nodecpus') \
                and t[3] == '6000':
            raw[(t[1], t[0])].append((float(t[5]), float(t[6]),
                                      float(t[8]), float(t[10])))
            continue
        f = line.split()
        if not f or f[0] not in ('@iops', '@sched', '@reads'):
            continue
        key = (' '.join(f[2:4]), f[1])
        if f[0] == '@iops':
            if warm:
                warm = False
                continue
            if key[0] not in cases:
                cases.append(key[0])
            iops[key].append(float(f[4]))
        elif f[0] == '@sched' and not warm:
            sched[key].append(float(f[7]))
        elif f[0] == '@reads':
            # @reads MODE ENGINE DEPTH cpu FROM -> TO QUEUE N
            reads[key]['on' if f[5] == f[7] else 'off'] += int(f[9])


def perm(a, b, n=20000):
    """P(|mean(b) - mean(a)| >= observed) under relabelling."""
    rng = random.Random(1)
    obs = abs(st.mean(b) - st.mean(a))
    pool, hits = a + b, 0
    for _ in range(n):
        rng.shuffle(pool)
        if abs(st.mean(pool[len(a):]) - st.mean(pool[:len(a)])) >= obs - 1e-9:
            hits += 1
    return hits / n


if cases:
    print('| fio case, one job on CPU 1 | transport | IOPS, each phase | median | / stock | p | switches per read | read on CPU 1 |')
    print('| --- | --- | --- | --- | --- | --- | --- | --- |')
for case in cases:
    s = iops[(case, 'stock')]
    for mode in ('stock', 'ours', 'node'):
        v = iops[(case, mode)]
        if not v:
            continue
        r = reads[(case, mode)]
        on = '%.0f %%' % (100 * r['on'] / (r['on'] + r['off'])) if r else ''
        if mode == 'stock':
            rel = 'spread %.2f' % (min(v) / max(v))
            p = ''
        else:
            rel = '%.2f' % (st.median(v) / st.median(s))
            p = '%.3f' % perm(s, v)
        sw = '%.2f' % st.median(sched[(case, mode)]) if sched[(case, mode)] else ''
        print('| %s | %s | %s | %.0f | %s | %s | %s | %s |' % (
            case, mode, ' '.join('%.0f' % x for x in v), st.median(v),
            rel, p, sw, on))

if raw:
    if cases:
        print()
    print('| fuse_bench, one caller on CPU 0 | mode | requests/s, each phase | median | / unbound | p | p50 round trip (us) | context switches per request | read on CPU 0 |')
    print('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    for w in ('read', 'dread'):
        u = [x[0] for x in raw[(w, 'unbound')]]
        for mode in ('unbound', 'bound', 'node', 'nodecpus'):
            v = raw[(w, mode)]
            if not v:
                continue
            r = [x[0] for x in v]
            rel = 'spread %.2f' % (min(r) / max(r)) if mode == 'unbound' \
                else '%.2f' % (st.median(r) / st.median(u))
            p = '' if mode == 'unbound' else '%.3f' % perm(u, r)
            print('| %s | %s | %s | %.0f | %s | %s | %.0f | %.2f | %.1f %% |' % (
                w, mode, ' '.join('%.0f' % x for x in r), st.median(r), rel, p,
                st.median(x[1] for x in v), st.median(x[3] for x in v),
                st.median(x[2] for x in v)))
