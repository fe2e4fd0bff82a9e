#!/bin/sh
# Builds the test kernel with dev_dax_iomap (kmod/kernel-patches) from
# Debian's linux-source-6.1, for the VM tests on /dev/dax.  The result is
# cached outside the clone, keyed by a hash of the source version, the
# patches, the config fragment and this script:
#   $FAMFS_KERNEL_CACHE/<hash>/bzImage   the kernel
#   $FAMFS_KERNEL_CACHE/<hash>/build     its build tree (make -C ... M=kmod)
# A second run with the same inputs only prints the directory.
#   scripts/build-test-kernel.sh          build when missing; print the directory
#   scripts/build-test-kernel.sh --cached print the directory if it is built,
#                                         else exit 1 (installs nothing)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${FAMFS_KERNEL_CACHE:-/var/cache/famfs-test-kernel}
patches=$here/kmod/kernel-patches
cached_only=0
[ "${1:-}" = --cached ] && cached_only=1

if [ $cached_only = 0 ]; then
	"$here/scripts/install-deps.sh" "$here/scripts/packages-kernel.txt" >&2
fi
version=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || {
	echo "build-test-kernel: linux-source-6.1 is not installed" >&2
	exit 1
}
tarball=/usr/src/linux-source-6.1.tar.xz

# What the kernel needs beyond x86_64_defconfig + kvm_guest.config: legacy
# pmem (memmap=), qemu's NVDIMMs (ACPI NFIT) with namespaces in devdax mode,
# CXL type-3 memory regions as devdax, fs-dax on devdax, and memory failure
# injection; everything built in, no debug info.
fragment='CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_ZONE_DEVICE=y
CONFIG_MEMORY_HOTPLUG=y
CONFIG_MEMORY_HOTREMOVE=y
CONFIG_TRANSPARENT_HUGEPAGE=y
CONFIG_MEMORY_FAILURE=y
CONFIG_LIBNVDIMM=y
CONFIG_BLK_DEV_PMEM=y
CONFIG_ND_PFN=y
CONFIG_NVDIMM_PFN=y
CONFIG_NVDIMM_DAX=y
CONFIG_X86_PMEM_LEGACY=y
CONFIG_ACPI_NFIT=y
CONFIG_CXL_BUS=y
CONFIG_CXL_PCI=y
CONFIG_CXL_ACPI=y
CONFIG_CXL_PMEM=y
CONFIG_CXL_MEM=y
CONFIG_CXL_PORT=y
CONFIG_CXL_REGION=y
CONFIG_DAX=y
CONFIG_DEV_DAX=y
CONFIG_DEV_DAX_PMEM=y
CONFIG_DEV_DAX_KMEM=y
CONFIG_DEV_DAX_IOMAP=y
CONFIG_FS_DAX=y
CONFIG_DEVTMPFS=y
CONFIG_DEVTMPFS_MOUNT=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_DEBUG_INFO_NONE=y
CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=n
CONFIG_DEBUG_INFO_BTF=n
CONFIG_MODULE_SIG=n'

# The key: what goes into the kernel (the source version, the config, the
# patches) and the build steps below the marker, not this script's comments
# and options above it.
key=$( { echo "$version"; echo "$fragment"; cat "$patches/series";
	 while read -r p; do cat "$patches/$p"; done <"$patches/series";
	 sed -n '/^# ---- build steps/,$p' "$0"; } | sha256sum | cut -c1-16)
out=$cache/$key
if [ -f "$out/bzImage" ] && [ -f "$out/build/Module.symvers" ]; then
	echo "$out"
	exit 0
fi
[ $cached_only = 0 ] || { echo "build-test-kernel: no test kernel built for these inputs in $out" >&2; exit 1; }

# ---- build steps (hashed into the key) -------------------------------------
# Built where it stays (the build tree names its source by absolute path);
# bzImage, copied last, marks a finished build.
start=$(date +%s)
rm -rf "$out"
mkdir -p "$out"
tar -xf "$tarball" -C "$out"
src=$out/linux-source-6.1
while read -r p; do
	patch -s -p1 -d "$src" <"$patches/$p"
done <"$patches/series"
echo "$fragment" >"$out/famfs.config"
build=$out/build
make -s -C "$src" O="$build" x86_64_defconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" \
	"$src/kernel/configs/kvm_guest.config" "$out/famfs.config" >/dev/null
make -s -C "$src" O="$build" olddefconfig >&2
# merge_config warns about what olddefconfig then drops; what must be there is checked here
for opt in DEV_DAX_IOMAP FS_DAX DEV_DAX DEV_DAX_PMEM BLK_DEV_PMEM X86_PMEM_LEGACY ACPI_NFIT MEMORY_FAILURE; do
	grep -q "^CONFIG_$opt=y" "$build/.config" || { echo "build-test-kernel: CONFIG_$opt is not set" >&2; exit 1; }
done
make -s -C "$src" O="$build" -j"$(nproc)" bzImage modules >&2
make -s -C "$src" O="$build" modules_prepare >&2
cp "$build/arch/x86/boot/bzImage" "$out/bzImage"
echo "build-test-kernel: built $(cat "$out/build/include/config/kernel.release") in $(( $(date +%s) - start )) s" >&2
echo "$out"
