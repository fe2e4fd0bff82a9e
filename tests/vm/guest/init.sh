#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the famfs test guest: mount the pseudo file systems, load the
# nvdimm/dax modules, wait for the pmem device, run the test program named
# in /etc/famfs-test with the scenario from the kernel command line, dump
# dmesg when something failed, power off.
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mount -t tmpfs tmpfs /tmp
/bin/busybox mount -t tmpfs tmpfs /run
export PATH=/bin:/sbin
# A task blocked (D state) for 20 s gets its stack on the console: a
# process stuck in the kernel shows where even when no script asks
echo 20 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null

scenario=main
for arg in $(cat /proc/cmdline); do
	case $arg in
	famfs_scenario=*) scenario=${arg#famfs_scenario=} ;;
	esac
done

for m in $(cat /modules/order); do
	insmod /modules/$m || echo "# insmod $m failed"
done

i=0
while [ ! -b /dev/pmem0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -b /dev/pmem0 ] || echo "# /dev/pmem0 did not appear within 10 s"

test=$(cat /etc/famfs-test)
echo "# guest: running $test $scenario"
/bin/$test "$scenario"
rc=$?
echo "# guest: $test exit $rc"
if [ $rc != 0 ]; then
	echo "----- guest dmesg begin"
	dmesg | sed 's/^/# dmesg: /'
	echo "----- guest dmesg end"
fi
sync
poweroff -f
