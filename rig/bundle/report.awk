# SPDX-License-Identifier: GPL-2.0
# The many-core bundle's tables (busybox awk): the medians of fuse_bench's
# result lines in each guest's results.log, stock against ours side by side.
# usage: awk -f report.awk HOST.TXT DIR/results.log...
# A results.log has "### MODULE stock|ours rc=0" sections and fuse_bench's
# tab-separated lines (rig/tests/fuse_bench.c); rig/bench_report.py reads
# the same files for the full report.

function med(key,    n, i, j, t, v) {
	n = cnt[key]
	if (!n)
		return ""
	for (i = 1; i <= n; i++)
		v[i] = val[key, i]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	return v[int((n + 1) / 2)]
}

function put(key, x) {
	val[key, ++cnt[key]] = x
}

function cell(key, fmt,    m) {
	m = med(key)
	return m == "" ? "-" : sprintf(fmt, m)
}

FNR == 1 {
	topo = FILENAME
	sub(/\/results\.log$/, "", topo)
	sub(/.*\//, "", topo)
	if (FILENAME !~ /results\.log$/)
		topo = ""
	else if (!(topo in seen)) {
		seen[topo] = 1
		topos[++ntopos] = topo
	}
}

topo == "" {
	host = host "| " $1 " | " substr($0, length($1) + 2) " |\n"
	next
}

/^### MODULE / {
	module = $4 == "rc=0" ? $3 : ""
	next
}

{
	n = split($0, f, "\t")
}

n == 13 && module != "" && f[5] > 0 {
	k = topo SUBSEP f[2] SUBSEP f[3] SUBSEP f[1]
	if (!(k in rowseen)) {
		rowseen[k] = 1
		rows[topo, ++nrows[topo]] = f[2] SUBSEP f[3] SUBSEP f[1]
	}
	put(k SUBSEP module SUBSEP "ops", f[6])
	put(k SUBSEP module SUBSEP "p99", f[8])
	put(k SUBSEP module SUBSEP "local", f[9])
}

n == 14 && f[1] == "mixed" && module != "" {
	k = topo SUBSEP module SUBSEP f[2]
	if (!(k in mixseen)) {
		mixseen[k] = 1
		mixrows[topo, ++nmix[topo]] = module SUBSEP f[2]
	}
	put(k SUBSEP "ops", f[6])
	put(k SUBSEP "p50", f[7])
	put(k SUBSEP "p99", f[8])
	put(k SUBSEP "p999", f[9])
	put(k SUBSEP "local", f[11])
	put(k SUBSEP "moved", f[13])
}

END {
	print "# FUSE per-device input queues: the many-core bundle\n"
	print "| host | |\n| --- | --- |"
	printf "%s", host
	print "\nWall-clock figures: medians of the repeats in one guest boot per topology. " \
	      "ours/stock compares ops/s with the stock row of the same workload and " \
	      "callers: unbound (one clone per CPU, as libfuse -o clone_fd) for the clone " \
	      "modes, one fd for single; go-MODE rows are go-fuse's daemon " \
	      "(gofuse_bench), compared with stock go-single (go-fuse as it is)."
	for (t = 1; t <= ntopos; t++) {
		topo = topos[t]
		print "\n## " topo "\n"
		print "| workload | callers | mode | stock ops/s | ours ops/s | ours/stock | stock p99 µs | ours p99 µs | own CPU % ours |"
		print "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
		for (r = 1; r <= nrows[topo]; r++) {
			split(rows[topo, r], p, SUBSEP)
			k = topo SUBSEP rows[topo, r]
			base = topo SUBSEP p[1] SUBSEP p[2] SUBSEP \
			       (p[3] ~ /^go-/ ? "go-single" : p[3] == "single" ? "single" : "unbound")
			so = med(base SUBSEP "stock" SUBSEP "ops")
			oo = med(k SUBSEP "ours" SUBSEP "ops")
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], p[3],
			       cell(k SUBSEP "stock" SUBSEP "ops", "%.0f"), cell(k SUBSEP "ours" SUBSEP "ops", "%.0f"),
			       (so > 0 && oo != "") ? sprintf("%.2fx", oo / so) : "-",
			       cell(k SUBSEP "stock" SUBSEP "p99", "%.1f"), cell(k SUBSEP "ours" SUBSEP "p99", "%.1f"),
			       cell(k SUBSEP "ours" SUBSEP "local", "%.1f")
		}
		if (!nmix[topo])
			continue
		print "\nSlow requests among fast ones (four callers per CPU, 1 in 100 held 20 ms):\n"
		print "| fuse.ko | mode | ops/s | fast p50 µs | fast p99 µs | fast p99.9 µs | own CPU % | moved |"
		print "| --- | --- | --- | --- | --- | --- | --- | --- |"
		for (r = 1; r <= nmix[topo]; r++) {
			split(mixrows[topo, r], p, SUBSEP)
			k = topo SUBSEP mixrows[topo, r]
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2],
			       cell(k SUBSEP "ops", "%.0f"), cell(k SUBSEP "p50", "%.1f"),
			       cell(k SUBSEP "p99", "%.1f"), cell(k SUBSEP "p999", "%.1f"),
			       cell(k SUBSEP "local", "%.1f"), cell(k SUBSEP "moved", "%s")
		}
	}
}
