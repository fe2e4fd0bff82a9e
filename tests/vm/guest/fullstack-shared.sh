#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fullstack-shared.sh - two hosts on one shared NVDIMM (run-vm.sh
# --scenario shared --second-guest): guest 1 ("shared") is the master,
# guest 2 ("client") a client; each runs a system bus, famfs-manager with
# the kernel backend on kernel uevents, and famfsctl.  The master creates
# files through busctl; the client's daemon mounts and follows the log by
# itself.  A 2 MiB famfs file, "sync", carries the handshake words both
# guests write through their mounts.  Timed: create on the master →
# visible on the client (measured on the master as a round trip, so it is an
# upper bound).  Afterwards fsck.famfs on the shared device is clean.
export PATH=/bin:/sbin
ROLE=$1
MNT=/run/famfs/pmem0
READY=0x5245414459       # client mounted and saw the first files
SEEN=0x5345454e          # client saw the second file
CREATED=0x435245415445   # master's CreateFile of the second file returned
WRITTEN=0x5752495445    # master wrote the second file's bytes
DONE=0x444f4e45          # client finished

TAP_PREFIX="$ROLE: "
. /bin/stack-common.sh
owned() {
	busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s \
		org.famfs.Manager 2>/dev/null | grep -q true
}
create() {
	busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 CreateFile 'stua{sv}' "$1" "$2" 420 0
}

if [ "$ROLE" = client ]; then
	guest_identity 0d6f1c9e-2222-4b33-8c44-55aa66bb77cc
else
	guest_identity 5f0c2c1e-7a43-4d0b-9f6e-2b1d0c9a8e71
fi

if [ "$ROLE" != client ]; then
	ndctl create-namespace -f -e namespace0.0 -m fsdax -a 2M --map=mem >/tmp/ndctl.out 2>&1 ||
		ndctl create-namespace -r region0 -m fsdax -a 2M --map=mem >/tmp/ndctl.out 2>&1
	check "ndctl create-namespace -m fsdax on the shared NVDIMM" test -b /dev/pmem0 -o -e /sys/bus/nd/devices/namespace0.0
fi
i=0
while [ ! -b /dev/pmem0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "/dev/pmem0 is there" test -b /dev/pmem0
[ "$ROLE" != client ] && check "mkfs.famfs on the shared /dev/pmem0" mkfs.famfs -q -f -u /opt/famfs/system_uuid /dev/pmem0

start_system_bus
cat >/etc/famfs/manager.conf <<EOF
[manager]
backend = kernel
kernel-module = /modules/famfs.ko
udev-source = kernel
poll-interval = 100
EOF
famfs-manager -c /etc/famfs/manager.conf >/tmp/manager.log 2>&1 &
MGR_PID=$!
i=0
while ! owned && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
check "famfs-manager is on the system bus" owned
check "/dev/pmem0 mounted at $MNT by the daemon" fullstack-tool wait-mount $MNT 10000
role=$(famfsctl status 2>&1 | grep role:)
echo "# $role"
if [ "$ROLE" = client ]; then
	check "this guest is a client" sh -c "echo '$role' | grep -q client"
else
	check "this guest is the master" sh -c "echo '$role' | grep -q master"
fi

SIZE=$((4 * 1024 * 1024))
if [ "$ROLE" != client ]; then
	# ---- master ----
	check "CreateFile sync (the handshake file)" create $MNT/sync 2097152
	check "CreateFile first" create $MNT/first $SIZE
	check "write first through the mount" fullstack-tool mmap-write $MNT/first 0xf1
	fullstack-tool poke $MNT/sync 0 >/dev/null
	echo "# guest wrote its half; waiting for the client"
	out=$(fullstack-tool wait-word $MNT/sync $READY 600000)
	check "the client mounted the shared file system and saw 'first' ($out)" test $? = 0
	# Timed: create → the client notices and answers through shared memory.
	fullstack-tool wait-word $MNT/sync $SEEN 10000 >/tmp/rt.out 2>&1 &
	rt=$!
	check "CreateFile second" create $MNT/second $SIZE
	fullstack-tool poke $MNT/sync $CREATED >/dev/null
	wait $rt
	rc=$?
	out=$(cat /tmp/rt.out)
	echo "# create on the master -> visible on the client (round trip through shared memory, an upper bound): $out"
	check "the client saw 'second' ($out)" test $rc = 0
	check "write second through the mount" fullstack-tool mmap-write $MNT/second 0x52
	fullstack-tool poke $MNT/sync $WRITTEN >/dev/null
	out=$(fullstack-tool wait-word $MNT/sync $DONE 60000)
	check "the client finished ($out)" test $? = 0
	kill -TERM $MGR_PID
	i=0
	while kill -0 $MGR_PID 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check "SIGTERM: the daemon exits and unmounts" sh -c "! grep -q ' $MNT ' /proc/mounts"
	check "fsck.famfs on the shared device afterwards is clean" fsck.famfs -n /dev/pmem0
else
	# ---- client ----
	check "'first' is in the client's mount" test -f $MNT/first
	fullstack-tool pattern $SIZE 0xf1 >/tmp/expect1
	famfsctl cat $MNT/first >/tmp/got1 2>&1
	check "'first' has the master's bytes (famfsctl cat)" cmp /tmp/expect1 /tmp/got1
	m=$(stat -c %a $MNT/first)
	check "write bits stripped on the client (644 -> $m)" test "$m" = 444
	check "famfsctl check on the client is clean" famfsctl check $MNT
	fullstack-tool poke $MNT/sync $READY >/dev/null
	fullstack-tool wait-word $MNT/sync $CREATED 60000 >/dev/null
	out=$(fullstack-tool wait-file $MNT/second 10000)
	rc=$?
	echo "# create on the master -> visible on the client: $out after the master's CreateFile returned"
	check "'second' appeared by itself ($out)" test $rc = 0
	ms=${out%%.*}
	check "... within two poll intervals (200 ms: $out)" test "${ms:-9999}" -le 200
	fullstack-tool poke $MNT/sync $SEEN >/dev/null
	fullstack-tool pattern $SIZE 0x52 >/tmp/expect2
	fullstack-tool wait-word $MNT/sync $WRITTEN 10000 >/dev/null
	famfsctl cat $MNT/second >/tmp/got2 2>&1
	check "'second' has the master's bytes" cmp /tmp/expect2 /tmp/got2
	check "the client cannot create files (not the master)" sh -c "! busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 CreateFile 'stua{sv}' $MNT/nope 4096 420 0"
	fullstack-tool poke $MNT/sync $DONE >/dev/null
	kill -TERM $MGR_PID
	sleep 1
fi
finish "$ROLE"
