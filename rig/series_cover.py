#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fill in the cover letter that git format-patch --cover-letter wrote.

usage: series_cover.py COVER.patch DOC.rst BASE-RELEASE RESULTS.md...

The subject is the series' name; the blurb is the design in brief (the
"Why", "The model" and "Cost on the request path" sections of the
documentation, as plain text) and the benchmark tables of RESULTS.md,
narrowed to the columns a reviewer reads first.  git's shortlog and
diffstat stay below it.
"""
import re
import sys

SUBJECT = "fuse: per-clone input queues"
SECTIONS = ("Why", "The model", "Cost on the request path")


def rst_sections(path):
    """{title: [lines]} of the top-level sections of an rst file."""
    with open(path) as f:
        lines = f.read().splitlines()
    out, title = {}, None
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line and re.fullmatch(r"=+", nxt) and len(nxt) >= len(line):
            title = line
            out[title] = []
            continue
        if title is None or re.fullmatch(r"=+", line):
            continue
        out[title].append(line)
    return out


def plain(text):
    """rst inline markup to what reads well in a mail."""
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"\*([^*\s][^*]*)\*", r"\1", text)
    return text


def md_tables(path):
    """[(title, header, rows)] of the tables under ### headings."""
    with open(path) as f:
        lines = f.read().splitlines()
    tables, title = [], None
    for line in lines:
        if line.startswith("### "):
            title = line[4:].strip()
            continue
        if not line.startswith("|") or title is None:
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(re.fullmatch(r"-+", c) for c in cells):
            continue
        if not tables or tables[-1][0] != title:
            tables.append((title, cells, []))
        else:
            tables[-1][2].append(cells)
    return tables


def narrow(header, rows):
    """Keep the stock clone_fd vs bound columns of a throughput table."""
    want = ["workload", "threads", "stock clone_fd", "ours bound",
            "bound / stock clone_fd", "own CPU % stock clone_fd → bound",
            "p99 µs stock clone_fd → bound"]
    if not all(w in header for w in want):
        return header, rows
    idx = [header.index(w) for w in want]
    names = ["workload", "threads", "clone_fd ops/s", "bound ops/s",
             "ratio", "own CPU %", "p99 us"]
    return names, [[r[i] for i in idx] for r in rows]


def ascii_table(header, rows):
    rows = [[c.replace("→", "->").replace("µ", "u") for c in r]
            for r in rows]
    width = [max(len(x) for x in col) for col in zip(header, *rows)]
    fmt = "  ".join("%%-%ds" % w for w in width)
    out = [fmt % tuple(header), fmt % tuple("-" * w for w in width)]
    out += [fmt % tuple(r) for r in rows]
    return [l.rstrip() for l in out]


def topology(title):
    """Say what the guest of a table was."""
    title = title.replace("→", "->").replace("µ", "u")
    m = re.match(r"smp-(\d+)-nodes-(\d+)(:.*)", title)
    if m:
        return "%s vCPUs in %s node(s)%s" % m.groups()
    m = re.match(r"2node(:.*)", title)
    if m:
        return "4 vCPUs in 2 nodes" + m.group(1)
    return title


def blurb(doc, results, base):
    sec = rst_sections(doc)
    out = []
    for name in SECTIONS:
        if name != "Why":
            out += [name, "-" * len(name), ""]
        body = "\n".join(sec.get(name, [])).strip("\n")
        body = re.sub(r"\n\n+", "\n\n", body)
        out += plain(body).splitlines() + [""]
    out += ["The full description (ioctls and errors, poll, CPU hotplug,",
            "statistics, a daemon's loop) is in patch 6,",
            "Documentation/filesystems/fuse-clone-queues.rst.", ""]
    out += ["Results", "-------", "",
            "Medians of 3 runs, 2000 operations per load thread, in QEMU/TCG",
            "guests on a 2-core host.  clone_fd is stock fuse with one unbound",
            "clone per CPU, each read by a thread pinned there (what libfuse's",
            "-o clone_fd gets); bound is this series with each clone bound to",
            "its CPU.  own CPU % is the share of requests served on the CPU",
            "that issued them (where create and open stay below 100, RELEASE,",
            "which carries no pid, was counted as remote).  Under TCG every",
            "vCPU is a host thread and cross-CPU wakeups are dear, so real",
            "hardware will show a smaller gap; a many-core run has not been",
            "made yet.", ""]
    for path in results:
        for title, header, rows in md_tables(path):
            header, rows = narrow(header, rows)
            out += [topology(title), ""]
            out += ["  " + l for l in ascii_table(header, rows)] + [""]
    out += ["Based on Linux %s." % base, ""]
    return "\n".join(out)


def main():
    cover, doc, base = sys.argv[1:4]
    results = sys.argv[4:]
    with open(cover) as f:
        text = f.read()
    if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
        sys.exit("%s: no placeholders to fill in" % cover)
    text = text.replace("*** SUBJECT HERE ***", SUBJECT)
    text = text.replace("*** BLURB HERE ***", blurb(doc, results, base).rstrip())
    with open(cover, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
