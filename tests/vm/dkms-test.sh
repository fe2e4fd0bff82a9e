#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-test.sh KMOD_SRC_DIR [--debian-kernel SERIES]
# dkms add, build, install and remove famfs.ko against the installed Debian
# kernel headers, under a throw-away version so a real installation is never
# touched; everything is removed at the end.
# --debian-kernel SERIES: dkms add and build (--kernelsourcedir) against the
# headers scripts/fetch-debian-kernel.sh unpacked for SERIES (e.g. 6.12)
# instead; that kernel is not installed here, so nothing is installed for it.
# Exit 0 pass, 1 fail, 77 skip (not root, dkms/headers cannot be had, or the
# SERIES kernel is not unpacked).
set -u

src=$(cd "${1:-$(dirname "$0")/../../kmod}" && pwd)
series=
if [ "${2:-}" = --debian-kernel ]; then
	series=${3:?--debian-kernel needs a series}
fi
ver=0.0.$$-citest
srctree=/usr/src/famfs-$ver
log=$(mktemp /tmp/famfs-dkms.XXXXXX)

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }

find_kernel() {
	local v kv
	for v in $(ls /boot/vmlinuz-* 2>/dev/null | sort -V -r); do
		kv=${v#/boot/vmlinuz-}
		[ -f "/lib/modules/$kv/build/Makefile" ] && { echo "$kv"; return 0; }
	done
	for v in $(ls -d /lib/modules/*/build 2>/dev/null | sort -V -r); do
		[ -f "$v/Makefile" ] && { kv=${v%/build}; echo "${kv##*/}"; return 0; }
	done
	return 1
}

if ! command -v dkms >/dev/null || ! find_kernel >/dev/null; then
	if command -v apt-get >/dev/null; then
		echo "installing dkms linux-headers-amd64"
		{ apt-get update && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y --no-install-recommends dkms linux-headers-amd64; } >>"$log" 2>&1
	fi
fi
command -v dkms >/dev/null || { echo "SKIP: dkms cannot be installed"; exit 77; }
ksrc=
if [ -n "$series" ]; then
	tree=$(cd "$(dirname "$0")/../.." && scripts/fetch-debian-kernel.sh --cached "$series") || {
		echo "SKIP: Debian's $series kernel is not unpacked (scripts/fetch-debian-kernel.sh $series; run-tests.sh fetches it)"
		exit 77
	}
	KV=$(cat "$tree/release")
	ksrc=$(cd "$tree/build" && pwd -P)
else
	KV=$(find_kernel) || { echo "SKIP: no kernel headers"; exit 77; }
fi

# dkms makes a module signing key on first use; keep it only if it was
# there before us
had_mok=0
[ -e /var/lib/dkms/mok.key ] && had_mok=1

fail=0
step() {
	local what=$1
	shift
	if "$@" >>"$log" 2>&1; then
		echo "ok - $what"
	else
		echo "not ok - $what"
		fail=1
	fi
}

cleanup() {
	# the build logs first: dkms remove takes them away
	if [ "$fail" != 0 ]; then
		sed 's/^/# /' "$log"
		find "/var/lib/dkms/famfs/$ver" -name make.log 2>/dev/null | while read -r f; do
			sed 's/^/# make.log: /' "$f"
		done
	fi
	dkms remove -m famfs -v "$ver" --all >>"$log" 2>&1
	rm -rf "$srctree" "/var/lib/dkms/famfs/$ver"
	rmdir /var/lib/dkms/famfs 2>/dev/null
	[ "$had_mok" = 0 ] && rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	rm -f "$log"
}
trap cleanup EXIT

echo "# kernel $KV${ksrc:+ (headers $ksrc)}, dkms $(dkms --version 2>/dev/null), test version $ver"
step "lay out the DKMS source tree" make -s -C "$src" dkms-src DESTDIR="$srctree"
sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$ver\"/" "$srctree/dkms.conf"
step "dkms add" dkms add -m famfs -v "$ver"
step "dkms build against $KV" dkms build -m famfs -v "$ver" -k "$KV" ${ksrc:+--kernelsourcedir "$ksrc"}

# The module dkms built, and its build log free of compiler warnings
built=$(find "/var/lib/dkms/famfs/$ver/$KV" -path '*/module/famfs.ko*' 2>/dev/null | head -1)
if [ -n "$built" ] && [ "$(modinfo -F vermagic "$built" | awk '{print $1}')" = "$KV" ]; then
	echo "ok - dkms built $built for $KV"
else
	echo "not ok - dkms built no famfs module for $KV"
	fail=1
fi
mlog=$(find "/var/lib/dkms/famfs/$ver/$KV" -name make.log 2>/dev/null | head -1)
if [ -n "$mlog" ] && ! grep -q 'warning:' "$mlog"; then
	echo "ok - the DKMS build for $KV has no compiler warnings"
else
	echo "not ok - the DKMS build log for $KV shows warnings (or is missing)"
	[ -n "$mlog" ] && grep 'warning:' "$mlog" | sed 's/^/# /'
	fail=1
fi

if [ -n "$series" ]; then
	step "dkms remove" dkms remove -m famfs -v "$ver" --all
	[ -d "/var/lib/dkms/famfs/$ver" ] && { echo "not ok - /var/lib/dkms/famfs/$ver is still there"; fail=1; }
	exit $fail
fi
step "dkms install" dkms install -m famfs -v "$ver" -k "$KV"

ko=$(find "/lib/modules/$KV/updates/dkms" -name 'famfs.ko*' 2>/dev/null | head -1)
if [ -n "$ko" ] && [ "$(modinfo -F vermagic "$ko" | awk '{print $1}')" = "$KV" ] &&
   modinfo -F parm "$ko" | grep -q famfs_kabi_version; then
	echo "ok - installed $ko is famfs for $KV"
else
	echo "not ok - no famfs module for $KV under /lib/modules/$KV/updates/dkms"
	fail=1
fi
if modprobe -n -S "$KV" --show-depends famfs 2>>"$log" | grep -q "updates/dkms/famfs"; then
	echo "ok - modprobe finds the DKMS module (depmod ran)"
else
	echo "not ok - modprobe does not resolve famfs to the DKMS module"
	fail=1
fi

step "dkms remove" dkms remove -m famfs -v "$ver" --all
if [ -z "$(find "/lib/modules/$KV/updates/dkms" -name 'famfs.ko*' 2>/dev/null)" ]; then
	echo "ok - dkms remove took the module away"
else
	echo "not ok - famfs.ko still installed after dkms remove"
	fail=1
fi
exit $fail
