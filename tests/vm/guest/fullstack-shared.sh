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
# upper bound).  Then a third host re-formats the device under both
# daemons: both report it within a poll or two, refuse CreateFile, unmount
# the old file system and mount the new one, which stays empty.  Afterwards
# fsck.famfs on the shared device is clean.
# Scenarios devdax-shared and devdax-client: the same on /dev/dax0.0, a
# devdax namespace on the NVDIMM (test kernel with dev_dax_iomap).
export PATH=/bin:/sbin
ROLE=${1#devdax-}
case $1 in
devdax-*) DEV=/dev/dax0.0 MODE=devdax ;;
*) DEV=/dev/pmem0 MODE=fsdax ;;
esac
MNT=/run/famfs/${DEV#/dev/}
# is_dev: the device node is there (a block device, or devdax's character one)
is_dev() { test -b $DEV -o -c $DEV; }
READY=0x5245414459       # client mounted and saw the first files
SEEN=0x5345454e          # client saw the second file
CREATED=0x435245415445   # master's CreateFile of the second file returned
WRITTEN=0x5752495445    # master wrote the second file's bytes
DONE=0x444f4e45          # client finished
REFORMAT=0x5245464d54    # master: the third host's re-format is written

TAP_PREFIX="$ROLE: "
. /bin/stack-common.sh
owned() {
	busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s \
		org.famfs.Manager 2>/dev/null | grep -q true
}
create() {
	busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 CreateFile 'stua{sv}' "$1" "$2" 420 0
}
status_field() { famfsctl status 2>/dev/null | sed -n "s/^  $1: *//p" | head -n 1; }
uptime_cs() { cut -d' ' -f1 /proc/uptime | tr -d .; }
# wait_health WANT MS: prints the milliseconds it took (10 ms resolution)
wait_health() {
	t0=$(uptime_cs)
	while [ "$(status_field health)" != "$1" ]; do
		[ $(( ($(uptime_cs) - t0) * 10 )) -gt $2 ] && { echo "timeout"; return 1; }
		sleep 0.01
	done
	echo $(( ($(uptime_cs) - t0) * 10 ))
}
# How long one health query (famfsctl status) takes here: under TCG it is
# most of what wait_health measures, and the guest's one vCPU runs the
# query, the bus and the daemon's poll in turn.  The bus suite holds the
# daemon to one poll interval; here it gets two seconds.
query_ms() {
	t0=$(uptime_cs)
	status_field health >/dev/null
	echo $(( ($(uptime_cs) - t0) * 10 ))
}
# What both hosts check once the third host re-formatted the device.
after_reformat() {
	ms=$1
	echo "# re-format -> health failed: $ms ms ($2; one health query takes $QUERY_MS ms)"
	check "the daemon reports the re-format as failed within 2 s ($ms ms; query $QUERY_MS ms, poll 100 ms)" \
		test "$ms" != timeout -a "${ms:-9999}" -le 2000
	famfsctl status >/tmp/st.out 2>&1
	sed 's/^/#   /' /tmp/st.out
	check "the reason says what changed" grep -q "superblock UUID changed from $OLD_UUID to .*re-formatted" /tmp/st.out
	if create $MNT/after 4096 >/tmp/c.out 2>&1; then
		nok "CreateFile after the re-format is refused"
	else
		check "CreateFile after the re-format is refused, naming the change" grep -q "re-formatted" /tmp/c.out
	fi
	# After the grace period: the old file system is detached (unmounted),
	# the new one attached and mounted by the same policy.
	i=0
	while { [ "$(status_field uuid)" = "$OLD_UUID" ] || [ "$(status_field health)" != ok ]; } && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	new=$(status_field uuid)
	check "the new file system is attached in its place ($new, health $(status_field health))" \
		test -n "$new" -a "$new" != "$OLD_UUID" -a "$(status_field health)" = ok
	check "this host is a client of it: the third host is its master" sh -c "famfsctl status | grep -q 'role: *client'"
	check "mounted again at $MNT" fullstack-tool wait-mount $MNT 10000
	check "the new file system is empty: no file of the old one, nothing appended" \
		sh -c "famfsctl status | grep -q 'log: *0 of' && [ -z \"\$(ls $MNT)\" ]"
}

if [ "$ROLE" = client ]; then
	guest_identity 0d6f1c9e-2222-4b33-8c44-55aa66bb77cc
else
	guest_identity 5f0c2c1e-7a43-4d0b-9f6e-2b1d0c9a8e71
fi

if [ "$ROLE" != client ]; then
	ndctl create-namespace -f -e namespace0.0 -m $MODE -a 2M --map=mem >/tmp/ndctl.out 2>&1 ||
		ndctl create-namespace -r region0 -m $MODE -a 2M --map=mem >/tmp/ndctl.out 2>&1
	check "ndctl create-namespace -m $MODE on the shared NVDIMM" sh -c "test -b $DEV -o -c $DEV -o -e /sys/bus/nd/devices/namespace0.0"
fi
i=0
while ! is_dev && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "$DEV is there" is_dev
[ "$ROLE" != client ] && check "mkfs.famfs on the shared $DEV" mkfs.famfs -q -f -u /opt/famfs/system_uuid $DEV

start_system_bus
# torn-tail-grace is also how long a re-formatted file system stays failed
# before the new one is attached: long enough for the checks below on a
# busy TCG host
manager_conf kernel 100 "udev-source = kernel" "torn-tail-grace = 15000"
famfs-manager -c /etc/famfs/manager.conf >/tmp/manager.log 2>&1 &
MGR_PID=$!
i=0
while ! owned && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
check "famfs-manager is on the system bus" owned
check "$DEV mounted at $MNT by the daemon" fullstack-tool wait-mount $MNT 10000
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

	# ---- a third host re-formats the device under both daemons ----
	# What another host's mkfs.famfs -f writes, byte for byte: a fresh file
	# system made in an image of the device's size by a third host uuid,
	# its log and then its superblock copied onto the shared memory
	# through this host's .meta files (mkfs.famfs itself refuses a device
	# that is mounted on the host it runs on).
	OLD_UUID=$(status_field uuid)
	QUERY_MS=$(query_ms)
	echo 7e1f0c2a-3333-4d44-8e55-66ff77aa88bb >/tmp/third.uuid
	rm -f /tmp/third.img
	if [ $MODE = devdax ]; then
		truncate -s $(cat /sys/bus/dax/devices/dax0.0/size) /tmp/third.img
	else
		truncate -s $(( $(cat /sys/block/pmem0/size) * 512 )) /tmp/third.img
	fi
	check "mkfs.famfs by the third host (into an image of the device's size)" \
		mkfs.famfs -q -f -u /tmp/third.uuid /tmp/third.img
	check "the third host's log onto the shared memory" \
		dd if=/tmp/third.img of=$MNT/.meta/.log bs=1M skip=2 count=8 conv=notrunc
	check "the third host's superblock onto the shared memory" \
		dd if=/tmp/third.img of=$MNT/.meta/.superblock bs=1M count=2 conv=notrunc
	# The sync file's memory is not the log's: the old mount still reaches it.
	fullstack-tool poke $MNT/sync $REFORMAT >/dev/null
	ms=$(wait_health failed 5000)
	after_reformat "$ms" "from the end of the re-format"
	rm -f /tmp/third.img
	kill -TERM $MGR_PID
	i=0
	while kill -0 $MGR_PID 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check "SIGTERM: the daemon exits and unmounts" sh -c "! grep -q ' $MNT ' /proc/mounts"
	echo 3 >/proc/sys/vm/drop_caches
	check "fsck.famfs on the shared device afterwards is clean" fsck.famfs -n $DEV
	fsck.famfs -n $DEV >/tmp/fsck.out 2>&1
	sed 's/^/#   /' /tmp/fsck.out
	check "... and it is the third host's empty file system" \
		sh -c "grep -q 'Log: 0 of' /tmp/fsck.out && grep -q 'Namespace: 0 files, 0 directories' /tmp/fsck.out"
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
	OLD_UUID=$(status_field uuid)
	QUERY_MS=$(query_ms)
	fullstack-tool poke $MNT/sync $DONE >/dev/null
	out=$(fullstack-tool wait-word $MNT/sync $REFORMAT 60000)
	check "the master announced the third host's re-format ($out)" test $? = 0
	ms=$(wait_health failed 5000)
	after_reformat "$ms" "from the master's word that the re-format is written"
	kill -TERM $MGR_PID
	sleep 1
fi
finish "$ROLE"
