#!/bin/sh
# Builds the root file system of the systemd guest (suite vm-systemd): a
# Debian 12 system made by mmdebstrap from the archive, with systemd as PID
# 1, systemd-udevd, the system bus, polkitd and journald, a kernel with its
# headers (so that famfs-dkms builds on install), and the libraries the
# project's packages depend on (the guest has no network, so `apt install
# ./famfs-*.deb` must find every dependency installed already).  The
# project's packages are NOT in it: the test installs them.
#
# Cached outside the clone, keyed by a hash of this script and the payload
# unit, in $FAMFS_ROOTFS_CACHE/<hash>/ (default /var/cache/famfs-systemd-rootfs):
#   rootfs.img      ext4 image of the tree (the guest boots a qcow2 overlay of it)
#   vmlinuz, initrd.img, kernel-release   the guest kernel, from the tree's /boot
# The .debs mmdebstrap downloads are kept in $FAMFS_ROOTFS_CACHE/debs and
# fed back on the next build, so a rebuild downloads only what changed.
#   build-rootfs.sh            build when missing; print the directory
#   build-rootfs.sh --cached   print the directory if built, else exit 1
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${FAMFS_ROOTFS_CACHE:-/var/cache/famfs-systemd-rootfs}
payload_unit=$here/famfs-vm-payload.service
hash=$(cat "$0" "$payload_unit" | sha256sum | cut -c1-16)
dir=$cache/$hash

if [ -f "$dir/done" ]; then
	echo "$dir"
	exit 0
fi
[ "${1:-}" = --cached ] && exit 1

"$here/../../../scripts/install-deps.sh" "$here/../../../scripts/packages-vm.txt" >&2

# The guest's packages.  polkitd is the real authority the test asks;
# pkexec brings polkit's agent helper; gcc, make and the headers are what
# DKMS needs; util-linux holds fsck(8).  The rest are the runtime libraries
# of famfs-tools and famfs-manager (their ${shlibs:Depends}).
pkgs="systemd,systemd-sysv,udev,dbus,polkitd,pkexec,libpam-systemd,
kmod,util-linux,procps,e2fsprogs,ndctl,daxctl,passwd,login,
linux-image-amd64,linux-headers-amd64,initramfs-tools,dkms,gcc,make,libc6-dev,
libjson-c5,libsystemd0,libudev1,libuuid1,zlib1g,libisal2"
pkgs=$(echo "$pkgs" | tr -d '\n')

tmp=$cache/build.$$
rm -rf "$tmp"
mkdir -p "$tmp/tree" "$cache/debs"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# mmdebstrap runs the hooks on the host with the tree as "$1"; sync-in and
# sync-out copy the download cache in before and out after.
mmdebstrap --variant=apt --include="$pkgs" \
	--skip=essential/unlink \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
	--setup-hook="sync-in $cache/debs /var/cache/apt/archives" \
	--customize-hook="sync-out /var/cache/apt/archives $cache/debs" \
	--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
	--customize-hook='echo famfs-guest >"$1"/etc/hostname' \
	--customize-hook='printf "/dev/vda / ext4 rw,errors=remount-ro 0 1\n" >"$1"/etc/fstab' \
	--customize-hook='chroot "$1" passwd -d root' \
	--customize-hook="cp $payload_unit \"\$1\"/etc/systemd/system/" \
	--customize-hook='chroot "$1" systemctl enable famfs-vm-payload.service' \
	--customize-hook='mkdir -p "$1"/mnt/payload' \
	--customize-hook='chroot "$1" systemctl mask serial-getty@ttyS0.service serial-getty@ttyS1.service getty@tty1.service' \
	bookworm "$tmp/tree" "deb http://deb.debian.org/debian bookworm main" \
	"deb http://deb.debian.org/debian bookworm-updates main" \
	"deb http://deb.debian.org/debian-security bookworm-security main" >"$tmp/mmdebstrap.log" 2>&1 || {
	tail -30 "$tmp/mmdebstrap.log" >&2
	echo "build-rootfs: mmdebstrap failed (log above)" >&2
	exit 1
}

kv=$(ls "$tmp/tree/boot" | sed -n 's/^vmlinuz-//p' | sort -V | tail -1)
[ -f "$tmp/tree/boot/vmlinuz-$kv" ] && [ -f "$tmp/tree/boot/initrd.img-$kv" ] &&
[ -L "$tmp/tree/lib/modules/$kv/build" ] || {
	ls -l "$tmp/tree/boot" "$tmp/tree/lib/modules" >&2
	echo "build-rootfs: the tree has no kernel, initrd or headers for '$kv'" >&2
	exit 1
}
mkdir -p "$tmp/out"
cp "$tmp/tree/boot/vmlinuz-$kv" "$tmp/out/vmlinuz"
cp "$tmp/tree/boot/initrd.img-$kv" "$tmp/out/initrd.img"
echo "$kv" >"$tmp/out/kernel-release"
# mkfs.ext4 -d fills the image from the tree without a loop mount.
mkfs.ext4 -q -F -L famfs-guest -d "$tmp/tree" "$tmp/out/rootfs.img" 3G >&2
echo $(( $(date +%s) - start )) >"$tmp/out/build-seconds"
touch "$tmp/out/done"
rm -rf "$dir"
mv "$tmp/out" "$dir"
echo "build-rootfs: built $dir in $(cat "$dir/build-seconds") s (kernel $kv)" >&2
echo "$dir"
