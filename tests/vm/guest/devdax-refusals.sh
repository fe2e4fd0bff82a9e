#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# devdax-refusals.sh - device-dax instances famfs must not use, and one that
# goes away under a mount, on the test kernel with dev_dax_iomap and the big
# scenario's labelled NVDIMM (run-vm.sh --scenario devdax-big), where ndctl
# can make devdax namespaces of any size and alignment:
#   too small    a file system made for 256 MiB on a 62 MiB devdax (another
#                host's longer region), and mkfs of a log that cannot fit
#   unaligned    devdax namespaces with 1 GiB and 4 KiB alignment
#   held         a devdax famfs is mounted on already
# Each time mkfs.famfs, fsck.famfs and famfs-manager name the device and
# what is wrong, and the device's first bytes are what they were.  Then
# the device-dax driver lets go of a mounted devdax while a process has a
# file mapped: the daemon marks it failed and detaches, the mapping fails
# (SIGBUS) instead of reaching memory that is gone, the kernel logs no
# BUG, Oops or WARNING, and when the driver is bound again the daemon
# mounts it again with every file and byte.  Prints TAP.
export PATH=/bin:/sbin
DEVICE=/dev/dax0.0
MNT=/run/famfs/dax0.0
UUIDF=/opt/famfs/system_uuid
. /bin/stack-common.sh

guest_identity 3d1f7b2a-9c64-4e85-a0d3-5b8e6f2c1a97
ndctl disable-region all >/tmp/ndctl.out 2>&1
ndctl init-labels -f all >>/tmp/ndctl.out 2>&1
check "the NVDIMM's label area is initialised (namespaces of any size)" ndctl enable-region all
start_system_bus
check "insmod famfs.ko" insmod /modules/famfs.ko

# new_devdax SIZE ALIGN: the region's one namespace, made again as a devdax
# of SIZE with ALIGN, checked as a TAP line
new_devdax() {
	ndctl destroy-namespace -f all >/tmp/ndctl.out 2>&1
	ndctl create-namespace -r region0 -m devdax -s $1 -a $2 >>/tmp/ndctl.out 2>&1
	i=0
	while [ ! -c $DEVICE ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check "a $1 devdax namespace with align $2: $DEVICE" test -c $DEVICE
	[ -c $DEVICE ] || sed 's/^/# ndctl: /' /tmp/ndctl.out | head -20
}

# refused WHAT PATTERN COMMAND...: COMMAND fails, saying PATTERN (grep -E)
# and naming the device; its output as TAP comments
refused() {
	what=$1 pattern=$2
	shift 2
	"$@" >/tmp/refused.out 2>&1
	rc=$?
	sed 's/^/#   /' /tmp/refused.out | head -6
	check "$what" sh -c "test $rc != 0 && grep -q '$DEVICE' /tmp/refused.out && grep -Eq '$pattern' /tmp/refused.out"
}

# daemon_refuses PATTERN: famfs-manager (kernel backend) started on
# $DEVICE serves it as failed, its log naming the device and PATTERN, and
# mounts nothing
daemon_refuses() {
	manager_conf kernel 100 "udev = no"
	: >/tmp/manager.log
	start_manager 60000 >/dev/null
	kill -TERM $PID 2>/dev/null
	wait_gone $PID 300
	sed 's/^/#   /' /tmp/manager.log | head -4
	check "famfs-manager names $DEVICE and says: $1" \
		sh -c "grep '$DEVICE' /tmp/manager.log | grep -q 'health failed' && grep -Eq '$1' /tmp/manager.log"
	check "... and mounted nothing" sh -c "! grep -q ' famfs ' /proc/mounts"
}

# first_bytes [LEN]: a hash of the device's first LEN bytes (default 16 MiB:
# superblock, log, first files); unchanged WHAT BEFORE [LEN]: a TAP line,
# that hash is BEFORE (and both could be read)
first_bytes() { fullstack-tool sum $DEVICE ${1:-16777216}; }
unchanged() {
	after=$(first_bytes ${3:-})
	echo "#   before $2, after $after"
	check "$1" sh -c "echo '$2' | grep -Eqx '[0-9a-f]{16}' && test '$after' = '$2'"
}

# ---- too small ----------------------------------------------------------------
new_devdax 64M 2M
truncate -s 256M /tmp/big.img
mkfs.famfs -q -f -u $UUIDF /tmp/big.img
replay-tool fill /tmp/big.img $UUIDF f 2097152 4 >/dev/null
check "a 256 MiB file system's first 16 MiB stored on the 62 MiB $DEVICE" \
	fullstack-tool copy-in /tmp/big.img $DEVICE 16777216
before=$(first_bytes)
refused "fsck.famfs: the file system is larger than $DEVICE" "larger than the medium" fsck.famfs -n $DEVICE
daemon_refuses "larger than the medium"
refused "mkfs.famfs without -f keeps the file system that is there" "famfs|file system" mkfs.famfs $DEVICE
unchanged "$DEVICE's first bytes are unchanged" "$before"
refused "mkfs.famfs of a 64 MiB log on $DEVICE: too small" "too small" mkfs.famfs -f -l 64M $DEVICE
unchanged "... and the device's first bytes are still unchanged" "$before"

# ---- unaligned ----------------------------------------------------------------
# A 1 GiB-aligned devdax maps only whole GiBs: the hash reads one.  Its
# namespace is 2 GiB: the info block before the data takes the first GiB.
for align in 1G 4K; do
	case $align in
	1G) size=2G units=1048576 hashlen=1073741824 ;;
	4K) size=256M units=4 hashlen=33554432 ;;
	esac
	new_devdax $size $align
	before=$(first_bytes $hashlen)
	refused "mkfs.famfs on a devdax with align $align: maps in units of $units KiB" \
		"maps in units of $units KiB" mkfs.famfs -f $DEVICE
	refused "fsck.famfs says the same" "maps in units of $units KiB" fsck.famfs -n $DEVICE
	daemon_refuses "maps in units of $units KiB"
	unchanged "$DEVICE's first bytes are unchanged" "$before" $hashlen
done

# ---- held -----------------------------------------------------------------------
new_devdax 256M 2M
check "mkfs.famfs on $DEVICE" mkfs.famfs -q -f -u $UUIDF $DEVICE
check "replay-tool fill: 8 files of 2 MiB" \
	sh -c "replay-tool fill $DEVICE $UUIDF f 2097152 8 | grep -q '^files 8 '"
mkdir -p /mnt/held /mnt/second
check "mount -t famfs $DEVICE /mnt/held (by hand)" mount -t famfs $DEVICE /mnt/held
before=$(first_bytes)
check "a second mount -t famfs of $DEVICE fails" sh -c "! mount -t famfs $DEVICE /mnt/second"
dmesg | grep famfs: | tail -1 | sed 's/^/#   dmesg: /'
check "... and the kernel says $DEVICE is in use" 	sh -c "dmesg | grep 'famfs: $DEVICE is in use by another dax holder'"
manager_conf kernel 100 "udev = no"
: >/tmp/manager.log
start_manager 60000 >/dev/null
sed 's/^/#   /' /tmp/manager.log | head -6
check "famfs-manager says $DEVICE is in use, naming it" \
	sh -c "grep '$DEVICE' /tmp/manager.log | grep -Eq 'in use|busy|mounted'"
check "... leaves the hand-made mount where it was" grep -q "^$DEVICE /mnt/held famfs " /proc/mounts
check "... and mounted it nowhere else" sh -c "test \$(grep -c '^$DEVICE ' /proc/mounts) = 1"
kill -TERM $PID 2>/dev/null
wait_gone $PID 300
check "umount /mnt/held" umount /mnt/held
unchanged "$DEVICE's first bytes are unchanged" "$before"

# ---- goes away under a mount -----------------------------------------------------
device_leaves_under_mount dax0.0 /sys/bus/dax/drivers/device_dax 8 f00005 0x55
# The daemon hears of it twice, from famfs.ko and from udev, in either order
check "the daemon detached it on the removal event" grep -q "$DEVICE: device removed; detaching $MNT" /tmp/manager.log
finish "" 30
