#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# go-fuse from Debian's own source package (golang-github-hanwen-go-fuse,
# 2.1.0+git20220822.58a7e14 in Debian 12) with gofuse/patches applied, and
# what the rig builds on it, all with Debian's Go (golang-go 1.19) in
# GOPATH mode against Debian's packaged Go libraries (/usr/share/gocode),
# as dh-golang builds Debian's Go packages:
#
#   build/gofuse/work      git tree of the source: tag "base" is Debian's
#                          source, the commits on top are gofuse/patches/
#                          (git am); edit and commit there, then "make
#                          gofuse-patches" writes them back
#   build/gofuse/stock-src the base, untouched
#   build/gofuse/bin/      static binaries (CGO_ENABLED=0), for the guests:
#     ours/*.test          go-fuse's own test suite (go test -c of every
#                          package under fuse/ and fs/ that has tests)
#     stock/*.test         the same from the base
#     ours/gocryptfs       Debian's gocryptfs source built on the patched
#                          go-fuse, unchanged (gofuse.sh gocryptfs)
#     ours/gofuse_bench    the benchmark daemon (gofuse/bench)
#     ours/gofuse_loopback go-fuse's loopback filesystem as a daemon that
#                          sets no option (gofuse/loopback)
#     ours/clone.test      the patched package fuse's tests (its own unit
#                          tests of the option: -test.run 'Clone|Bind|Cpu')
#
# usage: gofuse.sh [work|tests|gocryptfs|bench|check|all]
#   check: what make check runs: clone.test, gofuse_loopback, gofuse_bench
#   (default: all where the base has go-fuse's tests, else check)
#
# Source packages come from apt (rig/debsrc.sh).  Where the archive serves
# a package's .dsc but not its files (a partial mirror), GOFUSE_UPSTREAM_GIT
# and GOCRYPTFS_UPSTREAM_GIT may name git repositories of upstream go-fuse
# and gocryptfs: the base is then made from the upstream commit or tag that
# Debian's version names (go-fuse 58a7e14, gocryptfs v2.3), and for go-fuse
# every file of Debian's binary package golang-github-hanwen-go-fuse-dev
# (apt) must be the same in it, or the script stops.  With neither, the
# base is the library as that binary package ships it (every .go file of
# go-fuse but its tests and examples): enough for "check" and "bench",
# not for "tests" (go-fuse's suite) or "gocryptfs".
. "$(dirname "$0")/lib.sh"

GF=$BROOT/gofuse
work=$GF/work
pdir=$TOP/gofuse/patches
what=${1:-auto}
GOFUSE_PKG=golang-github-hanwen-go-fuse
IMPORT=github.com/hanwen/go-fuse

# Debian's Go and the packaged Go libraries that go-fuse (its tests:
# godebug) and gocryptfs build with, as their source packages'
# Build-Depends name them; installed if missing (as rig/deps.sh does)
GO_PKGS="golang-go dpkg-dev golang-golang-x-sys-dev golang-golang-x-sync-dev
	 golang-github-kylelemons-godebug-dev golang-golang-x-crypto-dev
	 golang-golang-x-term-dev golang-github-jacobsa-crypto-dev
	 golang-github-pkg-xattr-dev golang-github-rfjakob-eme-dev
	 golang-github-sabhiram-go-gitignore-dev golang-github-spf13-pflag-dev"
missing=
for p in $GO_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || die "missing packages:$missing; run as root: apt-get install$missing"
	log "installing:$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$missing > /dev/null || die "apt-get install$missing failed"
fi

# Go in GOPATH mode, as dh-golang builds: no module downloads
export GO111MODULE=off GOFLAGS='' GOPROXY=off GOTOOLCHAIN=local
export GOCACHE=$GF/gocache CGO_ENABLED=0

# A Debian source package, unpacked into DIR (.rig-dsc names it); with a
# partial mirror, the upstream git tree at REV instead.  usage:
# unpack PKG PKGDIR DIR UPSTREAM_GIT REV
unpack() {
	local pkg=$1 pkgdir=$2 dir=$3 git=$4 rev=$5 dsc tmp
	dsc=$("$TOP/rig/debsrc.sh" "$pkg" "$pkgdir" 2>"$GF/debsrc-$pkg.log" || true)
	[ -n "$dsc" ] || dsc=$(ls "$pkgdir"/"${pkg}"_*.dsc 2>/dev/null | head -n1 || true)
	tmp=$(mktemp -d "$GF/src.XXXXXX")
	if [ -n "$dsc" ] && dpkg-source -q -x "$dsc" "$tmp/src" > "$tmp/log" 2>&1; then
		rm -rf "$tmp/src/.pc"
		echo "${dsc##*/}" > "$tmp/src/.rig-dsc"
	else
		if [ -z "$git" ] && [ "$pkg" = "$GOFUSE_PKG" ]; then
			log "${dsc##*/}: the archive serves no files of it: the library from ${GOFUSE_PKG}-dev, without go-fuse's tests"
			rm -rf "$tmp"
			dev_tree "$dir"
			return 0
		fi
		[ -n "$git" ] || { rm -rf "$tmp"; die "the archive does not serve the files of ${dsc:-$pkg}${dsc:+ }(see $GF/debsrc-$pkg.log); with a partial mirror, give ${6}=<a git repository of upstream> (see the top of rig/gofuse.sh)"; }
		log "${dsc##*/}: the archive lists it but serves no files: upstream $rev from $git"
		mkdir -p "$tmp/src"
		git --git-dir="$git" archive "$rev" | tar -xf - -C "$tmp/src" ||
			{ rm -rf "$tmp"; die "no $rev in $git"; }
		echo "${dsc##*/} (upstream $rev: $(git --git-dir="$git" rev-parse "$rev^{commit}"))" > "$tmp/src/.rig-dsc"
	fi
	rm -rf "$dir"
	mv "$tmp/src" "$dir"
	rm -rf "$tmp"
}

# Debian's binary package of go-fuse, unpacked in a temporary directory
# (printed)
dev_deb() {
	local d
	d=$(mktemp -d "$GF/dev.XXXXXX")
	(cd "$d" && apt-get download -qq "${GOFUSE_PKG}-dev" 2>/dev/null) ||
		{ rm -rf "$d"; die "apt-get download ${GOFUSE_PKG}-dev failed"; }
	dpkg-deb -x "$d"/*.deb "$d/x"
	echo "$d"
}

# The library as that package ships it, as DIR
dev_tree() {	# DIR
	local d
	d=$(dev_deb)
	rm -rf "$1"
	cp -a "$d/x/usr/share/gocode/src/$IMPORT" "$1"
	echo "$(cd "$d" && ls *.deb) (the binary package: no tests)" > "$1/.rig-dsc"
	rm -rf "$d"
}

# Debian's binary package of go-fuse ships the library's files; upstream
# source used in place of the source package must have them all the same
check_against_dev() {	# DIR
	local deb d f bad=0
	d=$(dev_deb)
	deb=$(ls "$d"/*.deb)
	while IFS= read -r f; do
		cmp -s "$d/x/usr/share/gocode/src/$IMPORT/$f" "$1/$f" ||
			{ log "differs from ${deb##*/}: $f"; bad=1; }
	done < <(cd "$d/x/usr/share/gocode/src/$IMPORT" && find . -type f)
	echo "${deb##*/}" > "$1/.rig-dev-checked"
	rm -rf "$d"
	[ $bad = 0 ] || die "the upstream tree is not Debian's go-fuse"
}

stamp=$(series_stamp "$pdir")
make_work() {
	if [ -d "$work/.git" ] && [ "$(cat "$work/.rig-stamp" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	if [ -d "$work/.git" ] &&
	   [ "$(git -C "$work" rev-parse HEAD)" != "$(cat "$work/.rig-applied" 2>/dev/null)" ] &&
	   [ "${FORCE_WORK:-0}" != 1 ]; then
		die "build/gofuse/work has commits not in gofuse/patches/: run 'make gofuse-patches' first (or FORCE_WORK=1 to drop them)"
	fi
	mkdir -p "$GF"
	log "creating build/gofuse/work from Debian's $GOFUSE_PKG and gofuse/patches/"
	unpack "$GOFUSE_PKG" "$GF/pkg" "$work" "${GOFUSE_UPSTREAM_GIT:-}" 58a7e14 GOFUSE_UPSTREAM_GIT
	case "$(cat "$work/.rig-dsc")" in *upstream*) check_against_dev "$work" ;; esac
	git_series "$work" "$pdir" go-fuse "base: Debian's $(cat "$work/.rig-dsc")" "$stamp"
}

# GOPATH trees: GF/gopath-{stock,ours}/src/github.com/hanwen/go-fuse, a
# copy of the base and of the work tree as it is (uncommitted edits too),
# before Debian's packaged libraries
gopath() {	# stock|ours
	local gp=$GF/gopath-$1 src
	src=$work
	if [ "$1" = stock ]; then
		src=$GF/stock-src
		if [ "$(cat "$src/.rig-base" 2>/dev/null)" != "$(git -C "$work" rev-parse base)" ]; then
			rm -rf "$src"
			mkdir -p "$src"
			git -C "$work" archive base | tar -xf - -C "$src"
			git -C "$work" rev-parse base > "$src/.rig-base"
		fi
	fi
	mkdir -p "$gp/src/${IMPORT%/*}"
	rm -rf "$gp/src/$IMPORT"
	mkdir "$gp/src/$IMPORT"
	(cd "$src" && tar -cf - --exclude=./.git --exclude='./.rig-*' .) | tar -xf - -C "$gp/src/$IMPORT"
	echo "$gp:/usr/share/gocode"
}

# The packages of go-fuse's test suite: every one under fuse/ and fs/ with tests
suite_pkgs() {	# SRC
	(cd "$1" && find fuse fs -name '*_test.go' -printf '%h\n' | sort -u)
}

build_tests() {
	local v gp p name
	[ -n "$(suite_pkgs "$work")" ] ||
		die "build/gofuse/work has no tests of go-fuse: $(cat "$work/.rig-dsc"); go-fuse's suite needs its source package or GOFUSE_UPSTREAM_GIT (see the top of rig/gofuse.sh)"
	for v in ours stock; do
		gp=$(gopath "$v")
		mkdir -p "$GF/bin/$v"
		rm -f "$GF/bin/$v"/*.test
		for p in $(suite_pkgs "$GF/gopath-$v/src/$IMPORT"); do
			name=${p//\//-}
			GOPATH=$gp go test -c -o "$GF/bin/$v/$name.test" "$IMPORT/$p" \
				> "$GF/test-build-$v-$name.log" 2>&1 ||
				{ cat "$GF/test-build-$v-$name.log" >&2; die "go test -c $p ($v) failed"; }
		done
		# (go test -c runs go vet's checks that go test runs)
	done
	log "go-fuse's test suite: $(ls "$GF/bin/ours"/*.test | wc -l) packages built, stock and ours (build/gofuse/bin)"
}

# The benchmark daemon (gofuse/bench), on the patched go-fuse
build_bench() {
	local gp d=$GF/gopath-ours/src/fuseclonequeues/gofuse_bench
	gp=$(gopath ours)
	mkdir -p "$d" "$GF/bin/ours"
	cp "$TOP"/gofuse/bench/*.go "$TOP"/gofuse/bench/*.s "$TOP"/gofuse/bench/go.mod "$d/"
	GOPATH=$gp go build -o "$GF/bin/ours/gofuse_bench" fuseclonequeues/gofuse_bench \
		> "$GF/bench-build.log" 2>&1 ||
		{ cat "$GF/bench-build.log" >&2; die "building gofuse_bench failed"; }
	log "gofuse_bench built (build/gofuse/bin/ours/gofuse_bench)"
}

# What the series changes is gofmt'd: gofmt (Go 1.19's doc comment
# rules) finds no more to change in a file than in the base's; and so
# are the rig's own Go programs
check_gofmt() {
	local f ours base
	gofmt_dirt() { gofmt -d 2>/dev/null | grep -c '^-[^-]' || true; }
	for f in $(git -C "$work" diff --name-only --diff-filter=AM base HEAD -- '*.go'); do
		ours=$(git -C "$work" show "HEAD:$f" | gofmt_dirt)
		base=0
		! git -C "$work" cat-file -e "base:$f" 2>/dev/null ||
			base=$(git -C "$work" show "base:$f" | gofmt_dirt)
		[ "$ours" -le "$base" ] || die "not gofmt'd: $f (gofmt -d in build/gofuse/work)"
	done
	f=$(gofmt -l "$TOP"/gofuse/bench/*.go "$TOP"/gofuse/loopback/*.go)
	[ -z "$f" ] || die "not gofmt'd: $f"
}

# What make check runs: the patched package's own tests of the option,
# and go-fuse's loopback filesystem as a daemon
build_check() {
	local gp d=$GF/gopath-ours/src/fuseclonequeues/gofuse_loopback
	check_gofmt
	gp=$(gopath ours)
	mkdir -p "$d" "$GF/bin/ours"
	cp "$TOP"/gofuse/loopback/*.go "$TOP"/gofuse/loopback/go.mod "$d/"
	GOPATH=$gp go build -o "$GF/bin/ours/gofuse_loopback" fuseclonequeues/gofuse_loopback \
		> "$GF/loopback-build.log" 2>&1 ||
		{ cat "$GF/loopback-build.log" >&2; die "building gofuse_loopback failed"; }
	GOPATH=$gp go test -c -o "$GF/bin/ours/clone.test" "$IMPORT/fuse" \
		> "$GF/clone-test-build.log" 2>&1 ||
		{ cat "$GF/clone-test-build.log" >&2; die "go test -c fuse (ours) failed"; }
	log "gofuse_loopback and the option's tests built (build/gofuse/bin/ours)"
}

# Debian's gocryptfs source, unchanged, on the patched go-fuse
build_gocryptfs() {
	local src=$GF/gocryptfs-src gp dst ver
	if [ ! -f "$src/.rig-dsc" ]; then
		unpack gocryptfs "$GF/gocryptfs-pkg" "$src" "${GOCRYPTFS_UPSTREAM_GIT:-}" v2.3 GOCRYPTFS_UPSTREAM_GIT
	fi
	gp=$(gopath ours)
	dst=$GF/gopath-ours/src/github.com/rfjakob/gocryptfs
	rm -rf "$dst"
	mkdir -p "$dst"
	(cd "$src" && tar -cf - --exclude=./.git --exclude='./.rig-*' --exclude=./debian .) | tar -xf - -C "$dst"
	ver=$(sed -n 's/^gocryptfs_\([^ ]*\)\.dsc.*/\1/p' "$src/.rig-dsc")
	# Debian links OpenSSL's AES-GCM (cgo); this is upstream's
	# without_openssl build (build-without-openssl.bash): static, Go's
	# own AES-GCM, so that it needs no libssl in the guest.  What it
	# asks of go-fuse and the kernel is the same.
	GOPATH=$gp go build -tags without_openssl \
		-ldflags "-X main.GitVersion=${ver:-2.3} -X main.GitVersionFuse=go-fuse-clone-bind -X main.BuildDate=$(date -u +%F)" \
		-o "$GF/bin/ours/gocryptfs" github.com/rfjakob/gocryptfs \
		> "$GF/gocryptfs-build.log" 2>&1 ||
		{ cat "$GF/gocryptfs-build.log" >&2; die "building gocryptfs failed"; }
	log "gocryptfs $(cat "$src/.rig-dsc") built on the patched go-fuse (build/gofuse/bin/ours/gocryptfs)"
}

make_work
case "$what" in
work) ;;
tests) build_tests ;;
gocryptfs) build_gocryptfs ;;
bench) build_bench ;;
check) build_check; build_bench ;;
auto)	# all that the base allows
	if [ -n "$(suite_pkgs "$work")" ]; then
		build_tests; build_check; build_bench; build_gocryptfs
	else
		log "$(cat "$work/.rig-dsc"): go-fuse's suite and gocryptfs need the sources (see the top of rig/gofuse.sh)"
		build_check; build_bench
	fi ;;
all) build_tests; build_check; build_bench; build_gocryptfs ;;
*) die "usage: gofuse.sh [work|tests|gocryptfs|bench|check|all]" ;;
esac
