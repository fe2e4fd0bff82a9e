# SPDX-License-Identifier: GPL-2.0
#
# What the full-stack guest scripts share (fullstack.sh, fullstack-shared.sh,
# reattach.sh, hot-remove.sh, bench/vm-replay/bench-replay.sh): TAP output,
# the users and ids a system bus needs, a system bus (dbus-daemon) with our
# policy, and famfs-manager's configuration and start.
# run-vm.sh puts this file in the guest's /bin; the scripts source it.
# Set TAP_PREFIX before sourcing to prefix every TAP description.

n=0
fails=0

ok() { n=$((n + 1)); echo "ok $n - ${TAP_PREFIX:-}$*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - ${TAP_PREFIX:-}$*"; }
check() {
	desc=$1
	shift
	if "$@" >/tmp/check.out 2>&1; then ok "$desc"; else nok "$desc"; sed 's/^/#   /' /tmp/check.out; fi
}

# finish [LABEL [LINES]]: the end of a script.  famfs-manager's log (only
# its last LINES lines when given) as TAP comments, then the plan; the exit
# status is 0 when every check passed.
finish() {
	echo "# famfs-manager log${1:+ ($1)}:"
	if [ -n "${2:-}" ]; then tail -n "$2" /tmp/manager.log; else cat /tmp/manager.log; fi 2>/dev/null |
		sed 's/^/#   /'
	echo "1..$n"
	[ $fails = 0 ]
	exit $?
}

# use_devdax: the memmap pmem region (namespace0.0) becomes a devdax
# namespace, /dev/dax0.0 (2 MiB alignment), checked as a TAP line
use_devdax() {
	ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M >/tmp/ndctl.out 2>&1
	i=0
	while [ ! -c /dev/dax0.0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check "ndctl create-namespace -m devdax: /dev/dax0.0 is there" test -c /dev/dax0.0
	[ -c /dev/dax0.0 ] || sed 's/^/# ndctl: /' /tmp/ndctl.out | head -20
}

# mmap_roundtrip FILE SIZE SEED MNT: SEED's pattern written through a
# mapping of FILE (SIZE bytes) reads back the same through read(2), and
# famfsctl check of MNT is clean afterwards: three TAP lines
mmap_roundtrip() {
	check "bytes written through a mapping of ${1##*/}" fullstack-tool mmap-write $1 $3
	fullstack-tool pattern $2 $3 >/tmp/pattern
	check "... read back the same through read(2)" cmp /tmp/pattern $1
	check "famfsctl check $4 is clean" famfsctl check $4
}

# A process that exited but was not reaped yet (its parent is gone) is a
# zombie.  One read of /proc/PID/stat decides: testing for the file and
# then reading it raced with the reaper (the zombie seen, then reaped
# before the read), which made a process that was gone look alive.
gone() {
	stat_line=$(cat /proc/$1/stat 2>/dev/null) || return 0
	case $stat_line in '' | *') Z '*) return 0 ;; esac
	return 1
}
# show_stuck PID: where each thread of PID is in the kernel (state, wchan,
# kernel stack), then the kernel's list of blocked (D state) tasks (sysrq w),
# all as TAP comments
show_stuck() {
	echo "# process $1 is still there: $(cat /proc/$1/stat 2>/dev/null)"
	for t in /proc/$1/task/*; do
		[ -e "$t/stat" ] || continue
		echo "# thread ${t##*/} ($(cat $t/comm 2>/dev/null)): state $(sed 's/.*) \(.\).*/\1/' $t/stat 2>/dev/null), wchan $(cat $t/wchan 2>/dev/null)"
		sed 's/^/#     /' $t/stack 2>/dev/null
	done
	lines=$(dmesg | wc -l)
	echo w 2>/dev/null >/proc/sysrq-trigger
	dmesg | tail -n +$((lines + 1)) | sed 's/^/# sysrq-w: /'
}
# wait_gone PID [TENTHS]: up to TENTHS tenths of a second (default 100);
# when PID is still there then, show_stuck says where it hangs.  An empty
# PID fails at once (/proc//stat would be /proc/stat).
wait_gone() {
	case $1 in '' | *[!0-9]*) echo "# wait_gone: \"$1\" is not a process id"; return 1 ;; esac
	i=0
	while ! gone $1; do
		if [ $i -ge ${2:-100} ]; then
			show_stuck $1
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
}
# The number after NAME in "... NAME 123 ..." on standard input
field() { sed -n "s/.* $1 \([0-9-]*\).*/\1/p; s/^$1 \([0-9-]*\).*/\1/p" | head -1; }

# guest_identity UUID: this host's system UUID, and the users and machine id
# dbus-daemon wants
guest_identity() {
	mkdir -p /opt/famfs /etc/famfs /run/dbus /var/lib/dbus
	echo "$1" >/opt/famfs/system_uuid
	echo "root:x:0:0:root:/:/bin/sh" >/etc/passwd
	echo "messagebus:x:100:100::/:/bin/false" >>/etc/passwd
	echo "root:x:0:" >/etc/group
	echo "messagebus:x:100:" >>/etc/group
	echo 0123456789abcdef0123456789abcdef >/etc/machine-id
	cp /etc/machine-id /var/lib/dbus/machine-id
}

# start_system_bus: dbus-daemon of type system on the standard socket, with
# dbus/org.famfs.Manager.conf included, and a TAP check that it is up
start_system_bus() {
	cat >/etc/famfs/system-bus.conf <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus"/>
  </policy>
  <include>/bin/org.famfs.Manager.conf</include>
</busconfig>
EOF
	dbus-daemon --config-file=/etc/famfs/system-bus.conf --nofork --nopidfile >/tmp/dbus.log 2>&1 &
	i=0
	while [ ! -S /run/dbus/system_bus_socket ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check "system bus (dbus-daemon with dbus/org.famfs.Manager.conf) is up" test -S /run/dbus/system_bus_socket
}

# manager_conf BACKEND POLL_MS [LINE...]: /etc/famfs/manager.conf for
# famfs-manager with the module run-vm.sh put in /modules, and any further
# [manager] lines ("udev = no", ...)
manager_conf() {
	{
		echo "[manager]"
		echo "backend = $1"
		echo "kernel-module = /modules/famfs.ko"
		echo "poll-interval = $2"
		shift 2
		for line in "$@"; do echo "$line"; done
	} >/etc/famfs/manager.conf
}

# start_manager TIMEOUT_MS: famfs-manager on $DEVICE (default /dev/pmem0) with that file,
# through replay-tool daemon, which returns once the daemon is ready (or
# fails after TIMEOUT_MS); its pid in PID, replay-tool's report in
# /tmp/daemon.out and as a TAP comment
# restart_and_ask_at_once DEVICE: famfs-manager started on DEVICE (log in
# /tmp/early.log, pid in PID) and famfsctl status --json asked as soon as
# it owns its bus name; the files the answer counts go to /tmp/early.files,
# and a comment says whether the name came before the daemon was ready.
restart_and_ask_at_once() {
	famfs-manager -c /etc/famfs/manager.conf --device "$1" >/tmp/early.log 2>&1 &
	PID=$!
	i=0
	# dbus-daemon answers NameHasOwner itself (busctl status also asks the peer and failed here)
	while ! busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner \
		s org.famfs.Manager 2>/dev/null | grep -q true && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
	grep -q 'ready on the bus' /tmp/early.log && when=after || when=before
	famfsctl status --json >/tmp/early.json 2>&1
	echo "# the name was owned after $i polls, and the status asked, $when the daemon said it was ready"
	sed -n 's/.*"files": *\([0-9]*\).*/\1/p' /tmp/early.json | head -1 >/tmp/early.files
}

start_manager() {
	replay-tool daemon /tmp/manager.log "$1" famfs-manager -c /etc/famfs/manager.conf \
		--device "${DEVICE:-/dev/pmem0}" >/tmp/daemon.out 2>&1
	rc=$?
	PID=$(field pid </tmp/daemon.out)
	echo "# daemon: $(cat /tmp/daemon.out)"
	return $rc
}

# device_leaves_under_mount NAME DRIVER FILES FILE SEED: with famfs-manager
# automounting $DEVICE at $MNT (FILES files in its log), a reader keeps
# $MNT/FILE mapped while NAME is unbound from the sysfs DRIVER directory and
# bound again (replay-tool hotplug).  The kernel marks the file system
# failed, the reader's mapping fails instead of reaching memory that went
# away, the daemon survives and mounts it again with every file and the
# bytes SEED wrote through a mapping, and it unmounts on SIGTERM with
# fsck.famfs clean and no BUG, Oops or WARNING from the kernel.
device_leaves_under_mount() {
	manager_conf kernel 100 "automount = yes" "udev-source = kernel"
	famfs-manager -c /etc/famfs/manager.conf >/tmp/manager.log 2>&1 &
	PID=$!
	check "famfs-manager (automount) mounted $DEVICE at $MNT" fullstack-tool wait-mount $MNT 60000
	i=0
	while ! grep -q ': famfs mounted ' /tmp/manager.log && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	c=$(replay-tool count $MNT)
	check "the mount holds the $3 files ($c)" test "$c" = "files $3 dirs 0"
	check "bytes written through a mapping of $4" fullstack-tool mmap-write $MNT/$4 $5
	# a reader that keeps it mapped, waiting for a word that never comes
	fullstack-tool wait-word $MNT/$4 0x0123456789 60000 >/tmp/reader.out 2>&1 &
	READER=$!
	sleep 1
	check "a reader holds $4 mapped" test -e /proc/$READER/stat
	out=$(replay-tool hotplug "$1" $MNT /tmp/manager.log 60000 "$2" 2>&1)
	rc=$?
	echo "# hotplug: $out"
	check "$1 left $2 (the daemon unmounted) and came back (mounted again)" test $rc = 0
	check "the kernel marked the file system failed when the device went" \
		sh -c "dmesg | grep -q 'famfs: $DEVICE: media failure at offset 0x0 length 0xffffffffffffffff'"
	wait_gone $READER 100
	check "the reader is gone: its mapping failed instead of reaching memory that went away" gone $READER
	check "famfs-manager is still running" test -e /proc/$PID/stat
	c=$(replay-tool count $MNT)
	check "the new mount holds the $3 files again ($c)" test "$c" = "files $3 dirs 0"
	check "$4 still holds the bytes written before" sh -c "fullstack-tool pattern 2097152 $5 | cmp - $MNT/$4"
	check "famfsctl check is clean" famfsctl check $MNT
	kill -TERM $PID
	check "famfs-manager exits on SIGTERM" wait_gone $PID
	check "and unmounts" sh -c "! grep -q ' $MNT famfs ' /proc/mounts"
	check "fsck.famfs is clean" fsck.famfs -n $DEVICE
	dmesg >/tmp/dmesg.all
	check "the kernel logged no BUG, Oops or WARNING" sh -c "! grep -E 'WARNING|BUG|Oops|Call Trace' /tmp/dmesg.all"
	grep -E 'WARNING|BUG|Oops|Call Trace' -A12 /tmp/dmesg.all | head -40 | sed 's/^/# dmesg: /'
}
