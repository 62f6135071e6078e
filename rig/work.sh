#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The git work tree of the series: build/work (build/6.1/work for
# BASE=6.1) holds the files of the base the series touches (WORK_PATHS),
# as commit "base", with patches/BASE applied on top by git am.  Edit and
# commit there (git commit --fixup and rebase --autosquash for a fix to an
# earlier patch), then "make patches" writes the series back to
# patches/BASE and our own files (the ones the series adds) to the repo,
# where they live whole, one copy for every base.  Our files in the repo
# must be what the series makes (a backport's kernel files derived from
# them, rig/backport.sed): an edit made to the repo's copy instead (or to
# one base's series only) is refused here, before anything builds from a
# tree that differs.
. "$(dirname "$0")/lib.sh"

base=$(base_dir)
work=$B/work
series=$PATCHES/series
stamp=$(cd "$PATCHES" && hash_files series $(cat series))

# Our files in the repo are those the series adds, byte for byte
check_own_files() {
	local f bad=0 listed
	listed=$(own_files "$work")
	for f in $listed; do
		if ! own_expected "$f" 2>/dev/null | cmp -s "$work/$f" -; then
			log "$f: the repo's copy is not what patches/$BASE make"
			bad=1
		fi
	done
	for f in $(cd "$TOP" && git ls-files -co --exclude-standard $OWN_PATHS | grep -vxF "$OWN_GLUE"); do
		case " $(echo $listed) " in *" $f "*) ;; *)
			log "$f: in the repo, but no patch of the series adds it"
			bad=1 ;;
		esac
	done
	[ $bad = 0 ] || die "edit our files in ${work#$TOP/} and run 'make patches BASE=$BASE', and bring the other bases' series along (see README, Working on the series)"
}

if [ -d "$work/.git" ] && [ "$(cat "$work/.rig-stamp" 2>/dev/null)" = "$stamp" ]; then
	check_own_files
	exit 0
fi
if [ -d "$work/.git" ]; then
	applied=$(cat "$work/.rig-applied" 2>/dev/null || true)
	if [ "$(git -C "$work" rev-parse HEAD)" != "$applied" ]; then
		if [ "${FORCE_WORK:-0}" != 1 ]; then
			die "$work has commits not in patches/$BASE: run 'make patches' first (or FORCE_WORK=1 to drop them)"
		fi
	fi
fi
log "creating ${work#$TOP/} from the base and patches/$BASE"
rm -rf "$work"
mkdir -p "$work"
(cd "$base" && tar -cf - $(work_paths "$base")) | tar -xf - -C "$work"
cd "$work"
git init -q
git config user.name "fuse-clone-queues rig"
git config user.email "rig@localhost"
git config core.autocrlf false
echo "/.rig-*" >> .git/info/exclude
git add -A
git commit -q -m "base: $(make -s -C "$base" kernelversion 2>/dev/null || echo "$BASE")"
git tag -f base >/dev/null
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	git am -q --keep-cr "$PATCHES/$p" || die "patch $BASE/$p does not apply"
done < "$series"
git rev-parse HEAD > .rig-applied
echo "$stamp" > .rig-stamp
check_own_files
