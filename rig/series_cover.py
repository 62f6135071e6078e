#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fill in the cover letter that git format-patch --cover-letter wrote.

usage: series_cover.py COVER.patch COVER-LETTER.txt BASE-RELEASE [NOTE.txt]

COVER-LETTER.txt (patches/cover-letter.txt) holds the subject on its first
line, a blank line, then the body; @BASE@ in it is the base release.
NOTE.txt (patches/BASE/cover-note.txt), where a base has one, follows the
body: what the series for that base does differently.  git's shortlog and
diffstat stay below.
"""
import sys


def main():
    cover, text, base = sys.argv[1:4]
    with open(text) as f:
        subject, _, body = f.read().replace("@BASE@", base).partition("\n\n")
    if len(sys.argv) > 4:
        with open(sys.argv[4]) as f:
            body = body.rstrip() + "\n\n" + f.read().replace("@BASE@", base)
    with open(cover) as f:
        mail = f.read()
    if "*** SUBJECT HERE ***" not in mail or "*** BLURB HERE ***" not in mail:
        sys.exit("%s: no placeholders to fill in" % cover)
    mail = mail.replace("*** SUBJECT HERE ***", subject.strip())
    mail = mail.replace("*** BLURB HERE ***", body.strip())
    with open(cover, "w") as f:
        f.write(mail)


if __name__ == "__main__":
    main()
