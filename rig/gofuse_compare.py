#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the go-fuse suite's runs of one guest (rig/gofuse-check.sh).

usage: gofuse_compare.py RESULTS_LOG

RESULTS_LOG holds the "gofuse-test" and "gofuse-pkg" lines of
rig/tests/gofuse_suite.sh, run after "### MODULE stock" or "### MODULE
ours".  The baseline is the unpatched go-fuse on stock fuse.ko
(stock/unpatched); every other run must give every test of every package
the result the baseline gives it (a test that failed and then passed on
its own counts as passed, and is named).  Per package, TAP on stdout:
  - the same results as the baseline, in each run;
  - the option did what it says: on ours with GOFUSE_CLONE_BIND=node
    mounts served through clones and none fell back; on stock every
    mount with it logged the fallback; off, neither.
Tests that only the patched go-fuse has (its own) are held to their
result in stock/off.  A test that failed in the baseline, even if it
then passed on its own, depends on this guest's timing: it is held to
nothing and named in a comment (gofuse/README.md says why it fails
here).
"""
import re
import sys

BASE = "stock/unpatched"
RUNS = [BASE, "stock/off", "stock/node", "ours/off", "ours/node"]


def main():
    tests = {}   # run -> pkg -> test -> result
    pkgs = {}    # run -> pkg -> {field: value}
    module = "?"
    with open(sys.argv[1], errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            m = re.match(r"### MODULE (\S+) rc=", line)
            if m:
                module = m.group(1)
                continue
            m = re.match(r"gofuse-test (\S+) (\S+) (\S+) (\S+)$", line)
            if m:
                mode, pkg, test, res = m.groups()
                tests.setdefault(f"{module}/{mode}", {}) \
                     .setdefault(pkg, {})[test] = res
                continue
            m = re.match(r"gofuse-pkg (\S+) (\S+) (.*)$", line)
            if m:
                mode, pkg, rest = m.groups()
                pkgs.setdefault(f"{module}/{mode}", {})[pkg] = \
                    dict(kv.split("=", 1) for kv in rest.split())
    names = sorted(set(p for r in pkgs.values() for p in r))
    out = []
    count = [0]

    def tap(ok, what, notes=()):
        count[0] += 1
        out.append(f"{'ok' if ok else 'not ok'} {count[0]} {what}")
        out.extend(f"#   {n}" for n in notes)

    if not names:
        tap(False, "go-fuse's suite ran")
    for pkg in names:
        missing = [r for r in RUNS if pkg not in pkgs.get(r, {})]
        tap(not missing, f"{pkg}: ran in all {len(RUNS)} runs",
            [f"no result from {r}" for r in missing])
        base = tests.get(BASE, {}).get(pkg, {})

        def norm(res):
            return "pass" if res == "flaky" else res
        # The series' own tests are not in the baseline: stock/off is
        # theirs
        ref = dict(tests.get("stock/off", {}).get(pkg, {}))
        ref.update(base)
        diffs, flaky = [], []
        unstable = sorted(t for t, res in base.items() if res in ("fail", "flaky"))
        for r in RUNS[1:]:
            got = tests.get(r, {}).get(pkg, {})
            for t in sorted(set(ref) | set(got)):
                if got.get(t) == "flaky":
                    flaky.append(f"{t} ({r})")
                if t in unstable and t in got:
                    continue
                if norm(ref.get(t, "missing")) != norm(got.get(t, "missing")):
                    diffs.append(f"{t}: {ref.get(t, 'missing')} in "
                                 f"{BASE if t in base else 'stock/off'}, "
                                 f"{got.get(t, 'missing')} in {r}")
        if len(diffs) > 20:
            diffs[20:] = [f"and {len(diffs) - 20} more"]
        n = {k: sum(1 for v in ref.values() if norm(v) == k)
             for k in ("pass", "skip", "fail")}
        notes = diffs[:]
        for t in unstable:
            notes.append(f"{t}: {base[t]} in {BASE}, timing-dependent here: "
                         + ", ".join(f"{tests.get(r, {}).get(pkg, {}).get(t, 'missing')} "
                                     f"in {r}" for r in RUNS[1:]))
        if flaky:
            notes.append(f"passed when run again: {', '.join(flaky)}")
        tap(not diffs and not missing,
            f"{pkg}: the same results in every run as {BASE} "
            f"({n['pass']} pass, {n['skip']} skip, {n['fail']} fail)", notes)

        def field(r, k):
            return int(pkgs.get(r, {}).get(pkg, {}).get(k, -1))
        why = []
        # every mount with the option: through clones on ours, the
        # fallback on stock (a package that mounts nothing has neither)
        if not (field("ours/node", "clones") > 0 and
                field("ours/node", "fallbacks") == 0):
            why.append(f"ours/node: {field('ours/node', 'clones')} mounts "
                       f"through clones, {field('ours/node', 'fallbacks')} fallbacks")
        if not (field("stock/node", "fallbacks") > 0 and
                field("stock/node", "clones") == 0):
            why.append(f"stock/node: {field('stock/node', 'clones')} mounts "
                       f"through clones, {field('stock/node', 'fallbacks')} fallbacks")
        for r in (BASE, "stock/off", "ours/off"):
            if field(r, "clones") != 0 or field(r, "fallbacks") != 0:
                why.append(f"{r}: clones or fallbacks logged with the option off")
        tap(not why,
            f"{pkg}: {field('ours/node', 'clones')} mounts through bound "
            f"clones on ours, {field('stock/node', 'fallbacks')} logged "
            f"fallbacks on stock, nothing with the option off", why)
    print(f"1..{count[0]}")
    print("\n".join(out))
    return 1 if any(l.startswith("not ok") for l in out) else 0


if __name__ == "__main__":
    sys.exit(main())
