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
DEVICE=/dev/pmem0
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
device_leaves_under_mount "$ndpmem" /sys/bus/nd/drivers/nd_pmem 200 f00007 0x77
finish "" 30
