#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's checkpatch.pl on famfs.ko's sources, the uapi header and
# the dev_dax_iomap patch series (kmod/kernel-patches):
# kernel coding style, no errors and no warnings.  famfs_compat.h is left
# out: comparing LINUX_VERSION_CODE and typedefs for changed kernel types
# are what it is for.  checkpatch.pl comes from Debian's linux-source
# package (scripts/packages-vm.txt); without it the test is skipped.
#
#   checkpatch.sh SOURCE_ROOT
set -eu
top=${1:?usage: checkpatch.sh SOURCE_ROOT}
tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
if [ -z "$tarball" ]; then
	echo "linux-source is not installed: no checkpatch.pl" >&2
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xf "$tarball" -C "$work" --wildcards --strip-components=1 \
	'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
out=$(perl "$work/scripts/checkpatch.pl" --no-tree --terse --file \
	"$top"/kmod/*.c "$top/kmod/famfs_internal.h" \
	"$top/include/uapi/linux/famfs_ioctl.h" 2>&1) || true
# the kernel patch series, as patches (commit message and Signed-off-by too)
for p in $(cat "$top/kmod/kernel-patches/series"); do
	out="$out$(perl "$work/scripts/checkpatch.pl" --no-tree --terse "$top/kmod/kernel-patches/$p" 2>&1)" || true
done
if [ -n "$out" ]; then
	echo "$out"
	exit 1
fi
echo "checkpatch.pl: clean (famfs.ko sources and kmod/kernel-patches)"
