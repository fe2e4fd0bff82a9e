#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kmod-build.sh KMOD_SRC WORKDIR KERNEL - build famfs.ko (kmod/build-kmod.sh)
# against one kernel and check that the build printed no warning, TAP.
# KERNEL is one of
#   host            the newest /lib/modules/*/build here (Debian's 6.1)
#   test-kernel     the dev_dax_iomap test kernel (scripts/build-test-kernel.sh)
#   debian:SERIES   Debian's SERIES kernel (scripts/fetch-debian-kernel.sh)
# A kernel that is not there is a TAP skip naming what makes it.
set -u
src=$(cd "$1" && pwd)
work=$2
kernel=$3
top=$src/..

skip() {
	echo "1..0 # SKIP $*"
	exit 0
}

case $kernel in
host)
	kdir=$("$src/find-kdir.sh")
	[ -n "$kdir" ] || skip "no /lib/modules/*/build (linux-headers-amd64)"
	;;
test-kernel)
	tk=$("$top/scripts/build-test-kernel.sh" --cached 2>/dev/null) ||
		skip "the dev_dax_iomap test kernel is not built (scripts/build-test-kernel.sh)"
	kdir=$tk/build
	;;
debian:*)
	tree=$("$top/scripts/fetch-debian-kernel.sh" --cached "${kernel#debian:}" 2>/dev/null) ||
		skip "Debian's ${kernel#debian:} kernel is not unpacked (scripts/fetch-debian-kernel.sh ${kernel#debian:})"
	kdir=$tree/build
	;;
*)
	echo "kmod-build.sh: unknown kernel $kernel" >&2
	exit 2
	;;
esac
# the release the module's vermagic carries
kv=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null)

echo "1..3"
rm -rf "$work"
mkdir -p "$work"
log=$work/build.log
start=$(date +%s)
if "$src/build-kmod.sh" "$kdir" "$src" "$top/include/uapi/linux/famfs_ioctl.h" \
	"$work/famfs.ko" >"$log" 2>&1; then
	echo "ok 1 - famfs.ko builds against $kv ($kdir) in $(( $(date +%s) - start )) s"
else
	echo "not ok 1 - famfs.ko does not build against $kv ($kdir)"
fi
if [ -f "$work/famfs.ko" ] && ! grep -qi 'warning' "$log"; then
	echo "ok 2 - the build printed no warning"
else
	echo "not ok 2 - the build printed warnings or failed"
	sed 's/^/# /' "$log"
fi
vm=$(modinfo -F vermagic "$work/famfs.ko" 2>/dev/null | awk '{ print $1 }')
if [ -n "$vm" ] && [ "$vm" = "$kv" ]; then
	echo "ok 3 - its vermagic is $kv"
else
	echo "not ok 3 - its vermagic is '$vm', the kernel is '$kv'"
fi
