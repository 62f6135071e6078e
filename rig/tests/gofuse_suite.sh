#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest: go-fuse's own test suite (the go test -c binaries of every
# package under fuse/ and fs/ of the patched go-fuse, in /gofuse/bin, or
# in GOFUSE_BIN), every mount it makes with GOFUSE_CLONE_BIND=MODE and
# GOFUSE_CLONE_STATS=1, so that each mount logs its clones or the
# fallback; MODE "off" (or "unpatched", with GOFUSE_BIN=/gofuse/stock,
# the unpatched go-fuse's binaries) leaves both unset.  A test that
# fails is run again on its own, up to twice: one that passes then is
# flaky, not failed.
# Prints one line per top-level test and one per package:
#   gofuse-test MODE PKG TEST pass|fail|skip|flaky
#   gofuse-pkg MODE PKG rc=N pass=N fail=N skip=N flaky=N clones=N fallbacks=N secs=N
# (clones: mounts that served through clones; fallbacks: mounts that
# logged the fallback), and the last lines of each failure's log as
# comments.  rig/gofuse-check.sh compares the runs.  Exits 0 once every
# package ran: the comparison is the verdict.
# usage: gofuse_suite.sh MODE [TIMEOUT_PER_PACKAGE]
mode=$1 tmo=${2:-900}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/tests
bin=${GOFUSE_BIN:-/gofuse/bin}
unset GOFUSE_CLONE_BIND GOFUSE_CLONE_STATS GOFUSE_BIN
case "$mode" in
off|unpatched) ;;
*) export GOFUSE_CLONE_BIND=$mode GOFUSE_CLONE_STATS=1 ;;
esac
echo "# $(uname -r), $(nproc) CPUs, $bin, GOFUSE_CLONE_BIND=${GOFUSE_CLONE_BIND:-unset}"
for t in "$bin"/*.test; do
	pkg=$(basename "$t" .test)
	d=$(mktemp -d /tmp/gf.XXXXXX)
	t0=$(date +%s)
	# (go test's own timeout panics with the goroutines; the KILL is
	# for a test stuck in the kernel)
	(cd "$d" && timeout -s KILL "$tmo" "$t" -test.v -test.timeout "$((tmo - 30))s" \
		> "$d/log" 2>&1)
	rc=$?
	# top-level results only: subtests are indented
	sed -n 's/^--- \(PASS\|FAIL\|SKIP\): \([^ ]*\).*/\2 \1/p' "$d/log" > "$d/res"
	np=0 nf=0 ns=0 nk=0
	while read -r name st; do
		case $st in
		PASS) r=pass np=$((np + 1)) ;;
		SKIP) r=skip ns=$((ns + 1)) ;;
		FAIL)
			r=fail
			for _ in 1 2; do
				if (cd "$d" && timeout -s KILL 300 "$t" -test.run "^$name\$" \
					-test.timeout 270s > "$d/retry-$name.log" 2>&1); then
					r=flaky
					break
				fi
			done
			if [ $r = flaky ]; then
				nk=$((nk + 1))
			else
				nf=$((nf + 1))
				grep -v '^[0-9/]* [0-9:.]* \(rx\|tx\) ' "$d/retry-$name.log" |
					tail -n 12 | sed "s/^/#   $pkg $name: /"
			fi ;;
		esac
		echo "gofuse-test $mode $pkg $name $r"
	done < "$d/res"
	# a binary that died (the timeout, a panic) fails as a whole
	if [ $rc != 0 ] && [ $nf = 0 ] && [ $nk = 0 ]; then
		echo "gofuse-test $mode $pkg (exit-$rc) fail"
		nf=$((nf + 1))
		tail -n 20 "$d/log" | sed "s/^/#   $pkg: /"
	fi
	clones=$(grep -c 'go-fuse: CloneBind "[a-z]*": [0-9]* clones' "$d/log")
	fallbacks=$(grep -c 'serving the mount fd alone' "$d/log")
	echo "gofuse-pkg $mode $pkg rc=$rc pass=$np fail=$nf skip=$ns flaky=$nk" \
		"clones=$clones fallbacks=$fallbacks secs=$(($(date +%s) - t0))"
	# how the option went, once per package (the clones or the fallback)
	grep -m1 -h 'go-fuse: CloneBind "[a-z]*": \([0-9]* clones\|.*serving the mount fd alone\)' \
		"$d/log" | sed 's/^/#   /'
	rm -rf "$d"
done
exit 0
