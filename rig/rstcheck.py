#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check that kernel documentation files are valid reStructuredText.

usage: rstcheck.py FILE.rst...

Parses each file with docutils (Debian's python3-docutils), with the
Sphinx directives the kernel's documentation uses (code-block, toctree)
known, and prints every warning or error; exits 1 if there was one.
"""
import sys

from docutils import core, nodes
from docutils.parsers.rst import Directive, directives
from docutils.parsers.rst.directives.body import CodeBlock


class Toctree(Directive):
    has_content = True
    option_spec = {"maxdepth": directives.unchanged,
                   "numbered": directives.flag, "hidden": directives.flag}

    def run(self):
        return []


directives.register_directive("code-block", CodeBlock)
directives.register_directive("toctree", Toctree)


def main():
    bad = 0
    for path in sys.argv[1:]:
        with open(path) as f:
            text = f.read()
        out = []
        core.publish_doctree(
            text, source_path=path,
            settings_overrides={"report_level": 2, "halt_level": 5,
                                "warning_stream": _Sink(out)})
        for line in out:
            print(line.rstrip())
        bad |= bool(out)
    sys.exit(1 if bad else 0)


class _Sink:
    def __init__(self, out):
        self.out = out

    def write(self, s):
        if s.strip():
            self.out.append(s)


if __name__ == "__main__":
    main()
