#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# devdax.sh - famfs on a device-dax character device, on the test kernel
# with dev_dax_iomap (run-vm.sh --kernel, scripts/build-test-kernel.sh).
# The legacy pmem region becomes /dev/dax0.0 (ndctl, devdax mode); then
# famfs.ko mounts it, a second mount is refused, famfs-manager's kernel
# backend mounts it and instantiates the files in the log, their bytes go
# through a mapping and come back, and fsck.famfs is clean afterwards.
# Prints TAP.
export PATH=/bin:/sbin
DEVICE=/dev/dax0.0
MNT=/run/famfs/dax0.0
UUIDF=/opt/famfs/system_uuid
. /bin/stack-common.sh

guest_identity 0b4e3c9a-52f1-4b7e-8d1a-6c2f9e0d4a31
use_devdax
check "mkfs.famfs on $DEVICE" mkfs.famfs -q -f -u $UUIDF $DEVICE
check "replay-tool fill: 20 files of 2 MiB in the log" \
	sh -c "replay-tool fill $DEVICE $UUIDF f 2097152 20 | grep -q '^files 20 '"

check "insmod famfs.ko" insmod /modules/famfs.ko
mkdir -p /mnt/a /mnt/b
check "mount -t famfs $DEVICE /mnt/a" mount -t famfs $DEVICE /mnt/a
check "a second mount of $DEVICE is refused" sh -c "! mount -t famfs $DEVICE /mnt/b"
dmesg | grep -i famfs | tail -3 | sed 's/^/# dmesg: /'
check "umount /mnt/a" umount /mnt/a
check "mount again after the umount" mount -t famfs $DEVICE /mnt/a
check "umount /mnt/a again" umount /mnt/a

start_system_bus
manager_conf kernel 100 "udev = no"
check "famfs-manager (kernel backend) attaches $DEVICE" start_manager 120000
c=$(replay-tool count $MNT)
check "the mount holds the 20 files ($c)" test "$c" = "files 20 dirs 0"
mmap_roundtrip $MNT/f00003 2097152 0x5a $MNT
kill -TERM $PID
wait_gone $PID 300

# The view backend: famfsctl maps the device itself, and flushes with cache
# line writeback (device-dax refuses msync)
manager_conf view 100 "udev = no"
check "famfs-manager (view backend) attaches $DEVICE" start_manager 120000
check "famfsctl cp a 2 MiB file onto $DEVICE" famfsctl cp /tmp/pattern $MNT/copied
famfsctl cat $MNT/copied >/tmp/copied 2>/tmp/cat.err
check "famfsctl cat reads back the same bytes" cmp /tmp/pattern /tmp/copied
famfsctl cat $MNT/f00003 >/tmp/f3 2>>/tmp/cat.err
check "... and the bytes written through the kernel mount" cmp /tmp/pattern /tmp/f3
sed 's/^/# famfsctl: /' /tmp/cat.err
kill -TERM $PID
wait_gone $PID 300
check "fsck.famfs -n $DEVICE afterwards is clean" fsck.famfs -n $DEVICE
dmesg >/tmp/dmesg.all
check "no WARNING, BUG or Oops in dmesg" sh -c "! grep -E 'WARNING|BUG|Oops|Call Trace' /tmp/dmesg.all"
grep -E 'WARNING|BUG|Oops|Call Trace' -A12 /tmp/dmesg.all | head -40 | sed 's/^/# dmesg: /'
finish
