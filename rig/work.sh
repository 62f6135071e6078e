#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The git work tree of the series: build/work holds the files the series
# touches, taken from the untouched base (commit "base"), with patches/
# applied on top by git am.  Our own files are symlinked in, so that an edit
# there is an edit of the repo.  Edit and commit in build/work, then run
# "make patches" to write the series back to patches/.
. "$(dirname "$0")/lib.sh"

base=$(base_dir)
work=$B/work
series=$TOP/patches/series
stamp=$(cd "$TOP/patches" && hash_files series $(cat series))

link_own_files() {
	local f
	(cd "$TOP" && git ls-files -co --exclude-standard fs Documentation) 2>/dev/null |
	while IFS= read -r f; do
		[ -e "$work/$f" ] && [ ! -L "$work/$f" ] && continue
		mkdir -p "$work/$(dirname "$f")"
		ln -sfn "$TOP/$f" "$work/$f"
		grep -qxF "/$f" "$work/.git/info/exclude" || echo "/$f" >> "$work/.git/info/exclude"
	done
}

if [ -d "$work/.git" ] && [ "$(cat "$work/.rig-stamp" 2>/dev/null)" = "$stamp" ]; then
	link_own_files
	exit 0
fi
if [ -d "$work/.git" ]; then
	applied=$(cat "$work/.rig-applied" 2>/dev/null || true)
	if [ "$(git -C "$work" rev-parse HEAD)" != "$applied" ]; then
		if [ "${FORCE_WORK:-0}" != 1 ]; then
			die "build/work has commits not in patches/: run 'make patches' first (or FORCE_WORK=1 to drop them)"
		fi
	fi
fi
log "creating build/work from the base and patches/"
rm -rf "$work"
mkdir -p "$work"
(cd "$base" && tar -cf - $WORK_PATHS) | tar -xf - -C "$work"
cd "$work"
git init -q
git config user.name "fuse-clone-queues rig"
git config user.email "rig@localhost"
git config core.autocrlf false
echo "/.rig-*" >> .git/info/exclude
git add -A
git commit -q -m "base: $(make -s -C "$base" kernelversion 2>/dev/null || echo 6.12)"
git tag -f base >/dev/null
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	git am -q --keep-cr "$TOP/patches/$p" || die "patch $p does not apply"
done < "$series"
git rev-parse HEAD > .rig-applied
echo "$stamp" > .rig-stamp
link_own_files
