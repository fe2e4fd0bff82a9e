#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Fetches a Debian kernel series (default 6.12: linux-image-6.12-amd64) for
# the VM tests without installing it on this host: the host keeps booting its
# own kernel, and run-vm.sh boots the newest kernel in /boot.  The image
# (vmlinuz and /lib/modules), the headers and linux-kbuild are downloaded with
# apt-get download and unpacked into a cache outside the clone, keyed by the
# kernel release:
#   $FAMFS_DEBIAN_KERNEL_CACHE/<release>/   (default /var/cache/famfs-debian-kernel)
#     vmlinuz    the kernel
#     build      its headers: make -C <dir>/build M=kmod
#     root/      the unpacked packages; root/lib/modules/<release> with depmod run,
#                for modprobe -d <dir>/root -S <release>
#     release    the release name; packages: what was unpacked, name=version
# The version is the one the series' metapackage depends on, so a newer
# archive brings a newer kernel; one already unpacked is only printed.
#   scripts/fetch-debian-kernel.sh [SERIES]           fetch when missing; print the directory
#   scripts/fetch-debian-kernel.sh --cached [SERIES]  print it if unpacked (the metapackage's
#                                  release, else the newest one of the series), else exit 1
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${FAMFS_DEBIAN_KERNEL_CACHE:-/var/cache/famfs-debian-kernel}
cached_only=0
[ "${1:-}" = --cached ] && { cached_only=1; shift; }
series=${1:-6.12}
meta=linux-image-$series-amd64

say() { echo "fetch-debian-kernel: $*" >&2; }

# The linux-image-<release> package the metapackage depends on
resolve() {
	apt-cache depends "$meta" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }'
}

is_unpacked() {
	[ -f "$1/release" ] && [ -f "$1/vmlinuz" ] && [ -f "$1/build/Makefile" ]
}

# What the packages of that release are at now: name=version lines
wanted() {
	w_rel=${1#linux-image-}
	for p in "$1" "linux-headers-$w_rel" $(apt-cache depends "linux-headers-$w_rel" 2>/dev/null |
		awk '$1 == "Depends:" && ($2 ~ /^linux-headers-.*-common$/ || $2 ~ /^linux-kbuild-/) { print $2 }'); do
		echo "$p=$(apt-cache policy "$p" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')"
	done
}

img=$(resolve || true)
if [ $cached_only = 1 ]; then
	if [ -n "$img" ] && is_unpacked "$cache/${img#linux-image-}"; then
		echo "$cache/${img#linux-image-}"
		exit 0
	fi
	for d in $(ls -d "$cache/$series".* 2>/dev/null | sort -V -r); do
		is_unpacked "$d" && { echo "$d"; exit 0; }
	done
	say "no $series kernel unpacked in $cache (scripts/fetch-debian-kernel.sh $series)"
	exit 1
fi

"$here/scripts/install-deps.sh" "$here/scripts/packages-kernel.txt" >&2
if [ -z "$img" ]; then
	apt-get update -q >&2 || true
	img=$(resolve) || true
fi
[ -n "$img" ] || { say "the archive has no $meta"; exit 1; }
rel=${img#linux-image-}
out=$cache/$rel

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
want=$(wanted "$img")
if is_unpacked "$out" && [ "$(cat "$out/packages")" = "$want" ]; then
	echo "$out"
	exit 0
fi
for p in $want; do
	case $p in
	*=) say "no candidate version for ${p%=}"; exit 1 ;;
	esac
done

start=$(date +%s)
tmp=$cache/.$rel.partial
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debs" "$tmp/root"
# apt's _apt user downloads into a directory it may write
chown _apt "$tmp/debs" 2>/dev/null || true
say "downloading $(echo "$want" | tr '\n' ' ')"
(cd "$tmp/debs" && apt-get download -q $want) >&2 || { say "apt-get download failed"; exit 1; }
for deb in "$tmp"/debs/*.deb; do
	dpkg-deb -x "$deb" "$tmp/root"
done
rm -rf "$tmp/debs"

root=$tmp/root
mods=$root/lib/modules/$rel
hdr=linux-headers-$rel
[ -f "$root/boot/vmlinuz-$rel" ] || { say "$img holds no /boot/vmlinuz-$rel"; exit 1; }
[ -d "$mods/kernel" ] || { say "$img holds no /lib/modules/$rel/kernel"; exit 1; }
[ -f "$root/usr/src/$hdr/Makefile" ] || { say "$hdr holds no Makefile"; exit 1; }
# The packages point at their installed places (/usr/src/...): make those
# links relative to the unpacked tree, the headers' Makefile included
ln -sfn "../../../usr/src/$hdr" "$mods/build"
common=$(sed -n 's|^include /usr/src/\([^/]*\)/Makefile$|\1|p' "$root/usr/src/$hdr/Makefile")
if [ -n "$common" ]; then
	echo "include \$(dir \$(lastword \$(MAKEFILE_LIST)))../$common/Makefile" >"$root/usr/src/$hdr/Makefile"
	ln -sfn "../../../usr/src/$common" "$mods/source"
fi
depmod -b "$root" "$rel"
ln -s "root/boot/vmlinuz-$rel" "$tmp/vmlinuz"
ln -s "root/usr/src/$hdr" "$tmp/build"
echo "$want" >"$tmp/packages"
echo "$rel" >"$tmp/release"

rm -rf "$out"
mv "$tmp" "$out"
say "unpacked $rel in $(( $(date +%s) - start )) s"
echo "$out"
