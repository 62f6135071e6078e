#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the test guest.  Runs /plan, writing results to ttyS1 (the
# kernel console is ttyS0), then powers off.  Plan lines:
#   module NAME        load /lib/fuse/NAME.ko (unloading the previous one)
#   builtin            FUSE is built into the kernel: check that, then set
#                      up as "module" does (nothing to load or unload)
#   run TIMEOUT [VAR=VALUE..] BIN..
#                      run /tests/BIN with a hard timeout in seconds
#   sh TIMEOUT CMD..   run a shell command with a hard timeout
/bin/busybox --install -s /bin
export PATH=/bin:/tests
chmod 755 /	# the initramfs root is 0700; unprivileged tests need to walk it
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
# Host files packed at their own paths may lie under /tmp (a checkout
# there): carry them over onto the tmpfs that replaces it
if [ -n "$(ls -A /tmp 2>/dev/null)" ]; then
	mkdir /.tmp-host && cp -a /tmp/. /.tmp-host/
	mount -t tmpfs tmp /tmp
	cp -a /.tmp-host/. /tmp/ && rm -rf /.tmp-host
else
	mount -t tmpfs tmp /tmp
fi
mount -t debugfs none /sys/kernel/debug 2>/dev/null
# Events without the tracer's command-line recorder: its first event
# patches the scheduler's wakeup tracepoints while other vCPUs run them,
# which has stopped TCG guests with an int3 oops in ttwu_do_activate()
t=/sys/kernel/tracing
[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null
for o in record-cmd record-tgid; do
	echo 0 2>/dev/null > $t/options/$o
done
# Leaks from before the tests are not theirs (see fuse_kmemleak.sh)
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	echo clear > /sys/kernel/debug/kmemleak
fi
R=/dev/ttyS1
stty -F $R raw -echo 2>/dev/null
say() { echo "$*" > $R; }
# Whole seconds since boot: how long each plan line ran (### EXIT RC (N s))
uptime_s() { read -r up _ < /proc/uptime; echo "${up%%.*}"; }

say "### BOOT $(uname -r) cpus=$(nproc) nodes=$(ls -d /sys/devices/system/node/node* | wc -l)"
loaded=
unload() {
	case "$loaded" in ''|builtin) return 0 ;; esac
	# What a failed test left behind must not keep the module busy
	for f in /sys/fs/fuse/connections/*/abort; do
		[ -e "$f" ] && echo 1 > "$f"
	done
	grep ' fuse' /proc/mounts | while read -r _ m _; do
		umount -l "$m"
	done
	umount /sys/fs/fuse/connections 2>/dev/null
	rmmod fuse
	say "### RMMOD $loaded rc=$?"
	loaded=
}
while read -r verb a b; do
	case "$verb" in
	module)
		unload
		dmesg -c > /dev/null
		insmod /lib/fuse/$a.ko
		rc=$?
		say "### MODULE $a rc=$rc"
		[ $rc = 0 ] && loaded=$a
		chmod 666 /dev/fuse	# as udev's rule does on distributions
		mount -t fusectl none /sys/fs/fuse/connections
		;;
	builtin)
		# /sys/module/fuse without a /proc/modules line: built in
		rc=0
		[ -d /sys/module/fuse ] && [ -c /dev/fuse ] || rc=1
		! grep -q '^fuse ' /proc/modules || rc=1
		say "### MODULE builtin rc=$rc"
		loaded=builtin
		chmod 666 /dev/fuse
		mount -t fusectl none /sys/fs/fuse/connections
		;;
	run)
		# NAME=VALUE words before BIN go into its environment alone
		set -- $b
		prog=
		for w; do
			case "$w" in *=*) ;; *) prog=${b#*"$w"}; prog=$w$prog; break ;; esac
		done
		say "### RUN $loaded $prog"
		t0=$(uptime_s)
		timeout -s KILL "$a" env "$@" > $R 2>&1
		rc=$?
		say "### EXIT $rc ($(($(uptime_s) - t0)) s)"
		;;
	sh)
		say "### RUN $loaded sh"
		t0=$(uptime_s)
		timeout -s KILL "$a" sh -c "$b" > $R 2>&1
		rc=$?
		say "### EXIT $rc ($(($(uptime_s) - t0)) s)"
		;;
	esac
done < /plan
unload
say "### DONE"
echo o > /proc/sysrq-trigger 2>/dev/null
poweroff -f
