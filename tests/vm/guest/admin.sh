#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# admin.sh - administering a famfs device through famfs-manager with the
# kernel backend, on /dev/pmem0: the daemon starts with no device; famfsctl
# attach mounts it (famfs.ko); a file mapped by another process makes
# famfsctl detach refuse (InUse, naming the process) and leaves the mount;
# famfsctl format of the attached device is refused (Attached) even with
# --force, the medium unchanged; once the mapping is gone, famfsctl detach
# unmounts it and the object goes (fsck.famfs then finds the repair of a
# torn tail appended through .meta/.log on the medium); format then works, and the device
# attaches again, empty; check runs as a job; detach --force takes a mapped
# mount away; SIGTERM unmounts.  Prints TAP.
export PATH=/bin:/sbin
UUID=5f0c2c1e-7a43-4d0b-9f6e-2b1d0c9a8e71
DEV=/dev/pmem0
MNT=/run/famfs/pmem0
. /bin/stack-common.sh
mounted() { grep -q " $MNT famfs " /proc/mounts; }
nfs() { busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 ListFileSystems 2>/dev/null | cut -d' ' -f2; }

guest_identity "$UUID"
check "mkfs.famfs on $DEV" mkfs.famfs -q -f -u /opt/famfs/system_uuid $DEV
start_system_bus
manager_conf kernel 100 "udev = no"
famfs-manager -c /etc/famfs/manager.conf >/tmp/manager.log 2>&1 &
MGR_PID=$!
owned() {
	busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s \
		org.famfs.Manager 2>/dev/null | grep -q true
}
i=0
while ! owned && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
check "famfs-manager owns org.famfs.Manager, no device attached" owned
check "... and serves no file system ($(nfs))" test "$(nfs)" = 0

# ---- attach -> kernel mount ----------------------------------------------------------
famfsctl attach $DEV >/tmp/attach.out 2>&1
rc=$?
sed 's/^/# attach: /' /tmp/attach.out
check "famfsctl attach $DEV (exit $rc)" test $rc = 0
check "it is a famfs mount at $MNT" mounted
check "... served by the kernel backend as master" grep -q "at $MNT (master, kernel backend" /tmp/attach.out
check "famfsctl attach again is refused: Attached" \
	sh -c "famfsctl attach $DEV >/tmp/attach2.out 2>&1; test \$? = 8 && grep -q org.famfs.Error.Attached /tmp/attach2.out"
check "CreateFile $MNT/data" busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 CreateFile \
	'stua{sv}' $MNT/data 8388608 420 0
check "famfsctl check runs as a job and is clean" famfsctl check $MNT

# ---- repair of a torn tail, through the mount's .meta/.log --------------------------------
check "a torn entry appended through $MNT/.meta/.log" fullstack-tool torn-tail $MNT/.meta/.log
famfsctl check $MNT >/tmp/check-torn.out 2>&1
rc=$?
sed 's/^/# check: /' /tmp/check-torn.out | head -3
check "famfsctl check finds the torn tail (exit $rc)" sh -c "test $rc = 4 && grep -q torn-tail /tmp/check-torn.out"
famfsctl repair $MNT >/tmp/repair.out 2>&1
rc=$?
sed 's/^/# repair: /' /tmp/repair.out
check "famfsctl repair cuts it back (exit $rc)" sh -c "test $rc = 0 && grep -q 'changed: next_index 2 -> 1' /tmp/repair.out"
check "famfsctl check is clean after the repair" famfsctl check $MNT
check "CreateFile after the repair" busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 CreateFile \
	'stua{sv}' $MNT/after-repair 4096 420 0

# ---- detach refused while a file is mapped -------------------------------------------------
rm -f /tmp/ready
fullstack-tool mmap-hold $MNT/data /tmp/ready >/tmp/hold.out 2>&1 &
HOLD=$!
check "another process maps $MNT/data" fullstack-tool wait-file /tmp/ready 10000
famfsctl detach $MNT >/tmp/detach1.out 2>&1
rc=$?
sed 's/^/# detach: /' /tmp/detach1.out
check "famfsctl detach is refused while it is mapped (exit $rc)" test $rc = 8
check "... with org.famfs.Error.InUse naming the process" \
	sh -c "grep -q org.famfs.Error.InUse /tmp/detach1.out && grep -q 'pid $HOLD (fullstack-tool)' /tmp/detach1.out"
check "... and the mount stays" mounted
check "... and the object too ($(nfs))" test "$(nfs)" = 1

# ---- format of an attached device refused ------------------------------------------------
dd if=$DEV bs=1M count=10 2>/dev/null | md5sum >/tmp/before.md5
famfsctl format --force $DEV >/tmp/format1.out 2>&1
rc=$?
sed 's/^/# format: /' /tmp/format1.out
check "famfsctl format --force of the attached device is refused (exit $rc)" test $rc = 8
check "... with org.famfs.Error.Attached" grep -q org.famfs.Error.Attached /tmp/format1.out
dd if=$DEV bs=1M count=10 2>/dev/null | md5sum >/tmp/after.md5
check "... and the superblock and log are unchanged" cmp /tmp/before.md5 /tmp/after.md5
check "... the file is still in the mount" test -f $MNT/data

# ---- detach once the mapping is gone ---------------------------------------------------------
kill $HOLD
wait $HOLD 2>/dev/null
famfsctl detach $MNT >/tmp/detach2.out 2>&1
rc=$?
sed 's/^/# detach: /' /tmp/detach2.out
check "famfsctl detach once nothing maps it (exit $rc)" test $rc = 0
check "$MNT is unmounted" sh -c "! mounted"
check "the object is gone ($(nfs))" test "$(nfs)" = 0
check "fsck.famfs -n $DEV is clean" fsck.famfs -n $DEV

# ---- format, attach again -------------------------------------------------------------------
famfsctl format --force $DEV >/tmp/format2.out 2>&1
rc=$?
sed 's/^/# format: /' /tmp/format2.out
check "famfsctl format --force of the detached device (exit $rc)" test $rc = 0
check "fsck.famfs -n $DEV is clean after it" fsck.famfs -n $DEV
check "famfsctl mount $DEV (alias of attach)" famfsctl mount $DEV
check "mounted again at $MNT" mounted
check "... empty: the old file is gone" test ! -e $MNT/data
check "famfsctl check is clean" famfsctl check $MNT

# ---- detach --force while mapped ----------------------------------------------------------
check "CreateFile $MNT/held" busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 CreateFile \
	'stua{sv}' $MNT/held 2097152 420 0
rm -f /tmp/ready
fullstack-tool mmap-hold $MNT/held /tmp/ready >/tmp/hold.out 2>&1 &
HOLD=$!
check "another process maps $MNT/held" fullstack-tool wait-file /tmp/ready 10000
check "famfsctl detach without --force is refused" sh -c "! famfsctl detach $MNT 2>/dev/null"
famfsctl --json detach --force $MNT >/tmp/detach3.out 2>&1
rc=$?
sed 's/^/# detach --force: /' /tmp/detach3.out
check "famfsctl detach --force while it is mapped (exit $rc)" test $rc = 0
check "$MNT is no longer in the mount table (a lazy unmount)" sh -c "! mounted"
check "the object is gone ($(nfs))" test "$(nfs)" = 0
kill $HOLD
wait $HOLD 2>/dev/null
check "famfsctl attach brings it back with the file" sh -c "famfsctl attach $DEV && test -f $MNT/held"

# ---- shutdown ---------------------------------------------------------------------------------
kill -TERM $MGR_PID
i=0
while kill -0 $MGR_PID 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "famfs-manager exits on SIGTERM" sh -c "! kill -0 $MGR_PID 2>/dev/null"
check "and unmounts $MNT" sh -c "! mounted"
finish
