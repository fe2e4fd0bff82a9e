#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# hot-remove.sh - the device of a mounted famfs goes away and comes back
# while famfs-manager runs, on an fsdax namespace made with --map=dev (its
# struct pages live on the device, so they vanish with it).  A process keeps
# a file mapped meanwhile.  The daemon must unmount, the mapping must fail
# (SIGBUS) rather than reach memory that is gone, the kernel must log no
# BUG or Oops, and when the device is back the daemon mounts it again with
# every file.  Runs on the big scenario's NVDIMM (run-vm.sh --scenario big).
# Prints TAP.
export PATH=/bin:/sbin
MNT=/run/famfs/pmem0
UUIDF=/opt/famfs/system_uuid
. /bin/stack-common.sh

guest_identity 5f0c2c1e-7a43-4d0b-9f6e-2b1d0c9a8e71
ndctl create-namespace -f -e namespace0.0 -m fsdax -a 2M --map=dev >/tmp/ndctl.out 2>&1 ||
	ndctl create-namespace -r region0 -m fsdax -a 2M --map=dev >/tmp/ndctl.out 2>&1
i=0
while [ ! -b /dev/pmem0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "ndctl create-namespace -m fsdax --map=dev on the NVDIMM" test -b /dev/pmem0
ndpmem=$(basename "$(readlink -f /sys/block/pmem0/device)")
echo "# /dev/pmem0 is nd_pmem's $ndpmem"
check "mkfs.famfs on /dev/pmem0" mkfs.famfs -q -f -u $UUIDF /dev/pmem0
check "replay-tool fill: 200 files of 2 MiB" \
	sh -c "replay-tool fill /dev/pmem0 $UUIDF f 2097152 200 | grep -q '^files 200 '"

start_system_bus
manager_conf kernel 100 "automount = yes" "udev-source = kernel"
famfs-manager -c /etc/famfs/manager.conf >/tmp/manager.log 2>&1 &
PID=$!
check "famfs-manager mounted /dev/pmem0 at $MNT" fullstack-tool wait-mount $MNT 60000
i=0
while ! grep -q ': famfs mounted ' /tmp/manager.log && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
c=$(replay-tool count $MNT)
check "the mount holds the 200 files ($c)" test "$c" = "files 200 dirs 0"
check "bytes written through a mapping of f00007" fullstack-tool mmap-write $MNT/f00007 0x77

# A reader that keeps f00007 mapped (waiting for a word that never comes)
fullstack-tool wait-word $MNT/f00007 0x0123456789 60000 >/tmp/reader.out 2>&1 &
READER=$!
sleep 1
check "the reader holds its mapping" test -e /proc/$READER/stat

out=$(replay-tool hotplug "$ndpmem" $MNT /tmp/manager.log 60000 2>&1)
rc=$?
echo "# hotplug: $out"
check "the device went (the daemon unmounted) and came back (mounted again)" test $rc = 0
check "the kernel marked the file system failed when the device went" \
	sh -c "dmesg | grep -q 'media failure at offset 0x0 length 0xffffffffffffffff'"
wait_gone $READER 100
check "the reader is gone: its mapping failed instead of reaching memory that went away" gone $READER
check "the kernel logged no BUG, Oops or WARNING" \
	sh -c "! dmesg | grep -q -e 'BUG:' -e 'Oops' -e 'WARNING:'"
check "famfs-manager is still running" test -e /proc/$PID/stat
c=$(replay-tool count $MNT)
check "the new mount holds the 200 files again ($c)" test "$c" = "files 200 dirs 0"
check "f00007 still holds the bytes written before" sh -c "fullstack-tool pattern 2097152 0x77 | cmp - $MNT/f00007"
check "famfsctl check is clean" famfsctl check $MNT
kill -TERM $PID
check "famfs-manager exits on SIGTERM" wait_gone $PID
check "and unmounts" sh -c "! grep -q ' $MNT famfs ' /proc/mounts"
check "fsck.famfs is clean" fsck.famfs -n /dev/pmem0
finish "" 30
