#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Per fuse_bench run and module of results logs (sync-wakeup.sh): every
run's requests/s and share read on the issuing CPU, their medians, the
context switches per request, and a one-sided permutation test of
"hint above without" on the medians' two quantities."""
import collections
import random
import statistics as st
import sys

runs = collections.defaultdict(list)
order = []
for path in sys.argv[1:]:
    mod = run = None
    for line in open(path):
        if line.startswith('### MODULE'):
            mod = line.split()[2]
        elif line.startswith('### RUN'):
            run = ' '.join(line.split()[4:7])
            if run not in order:
                order.append(run)
        elif not line.startswith('#') and mod:
            f = line.split('\t')
            if len(f) >= 13:
                runs[(run, mod)].append((float(f[5]), float(f[8]), float(f[10])))


def perm(a, b, n=20000):
    """P(mean(b) - mean(a) >= observed) under relabelling."""
    rng = random.Random(1)
    obs = st.mean(b) - st.mean(a)
    pool, hits = a + b, 0
    for _ in range(n):
        rng.shuffle(pool)
        if st.mean(pool[len(a):]) - st.mean(pool[:len(a)]) >= obs:
            hits += 1
    return hits / n


print('| fuse_bench run | module | requests/s, each run | median | on the issuing CPU, each run (%) | median | context switches per request | p (rate) | p (CPU) |')
print('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
for run in order:
    for mod in ('without', 'hint'):
        v = runs[(run, mod)]
        if not v:
            continue
        p = ['', '']
        if mod == 'hint' and runs[(run, 'without')]:
            w = runs[(run, 'without')]
            p = ['%.3f' % perm([x[0] for x in w], [x[0] for x in v]),
                 '%.3f' % perm([x[1] for x in w], [x[1] for x in v])]
        print('| %s | %s | %s | %.0f | %s | %.1f | %.2f | %s | %s |' % (
            run, mod, ' '.join('%.0f' % x[0] for x in v),
            st.median(x[0] for x in v), ' '.join('%.0f' % x[1] for x in v),
            st.median(x[1] for x in v), st.median(x[2] for x in v), p[0], p[1]))
