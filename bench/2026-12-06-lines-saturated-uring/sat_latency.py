#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The saturated model's latencies: per module and fuse_bench mode of
results logs, the medians over runs of fuse_bench mixed's requests/s, fast
requests' p50, p99, p999 and held requests' p50 (guest time on the
instruction clock)."""
import collections
import statistics as st
import sys

for path in sys.argv[1:]:
    d = collections.defaultdict(list)
    m = None
    for l in open(path):
        if l.startswith('### MODULE'):
            m = l.split()[2]
        elif l.startswith('mixed\t'):
            f = l.rstrip('\n').split('\t')
            d[(m, f[1])].append([float(x) for x in (f[5], f[6], f[7], f[8], f[9])])
    print('#', path)
    print('| module, mode | runs | requests/s | fast p50 us | fast p99 us | fast p999 us | held p50 us |')
    print('| --- | --- | --- | --- | --- | --- | --- |')
    for k, v in d.items():
        med = [st.median(x[i] for x in v) for i in range(5)]
        print('| %s %s | %d | %.0f | %.1f | %.0f | %.0f | %.0f |' % (k[0], k[1], len(v), *med))
