#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# build-kmod.sh KDIR SRCDIR UAPI_HEADER OUTPUT_KO
#
# Builds famfs.ko out of tree without touching the source tree: the sources
# are copied (only when changed, so Kbuild's own dependency tracking works)
# into a work directory next to OUTPUT_KO, together with the uapi header.
set -eu

kdir=$1
src=$2
hdr=$3
out=$4
outdir=$(cd "$(dirname "$out")" && pwd)
work=$outdir/famfs-kbuild

mkdir -p "$work/include/linux"
sync_file() {
	cmp -s "$1" "$2" 2>/dev/null || cp "$1" "$2"
}
for f in "$src"/Kbuild "$src"/*.[ch]; do
	sync_file "$f" "$work/$(basename "$f")"
done
sync_file "$hdr" "$work/include/linux/famfs_ioctl.h"

make -s -C "$kdir" M="$work" modules
cp "$work/famfs.ko" "$outdir/$(basename "$out")"
