#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-vm.sh - boot a famfs guest test under qemu (TCG) and report TAP
#
# usage: run-vm.sh --scenario NAME --guest-test FILE [options]
#   --scenario main|shared|media|bench|big|devdax|devdax-media|devdax-shared|devdax-big|bench-devdax
#                       devdax*: as main, media and shared, on /dev/dax0.0
#                       (with --test-kernel)
#                       what the guest runs (the test program's argument);
#                       big: a 32 GiB sparse file-backed NVDIMM instead of memmap
#   --guest-test FILE   the guest test program (static), becomes /bin/<name>
#   --extra FILE        another program for the guest /bin (repeatable)
#   --mkfs FILE         mkfs.famfs for the guest
#   --fsck FILE         fsck.famfs for the guest
#   --ko FILE           famfs.ko; without it the module is built here from
#                       --kmod-src against the guest kernel's headers
#   --kmod-src DIR      kmod/ source directory (default: ../../kmod from here)
#   --kernel DIR        boot the kernel scripts/build-test-kernel.sh made in
#                       DIR (DIR/bzImage, DIR/build; drivers built in)
#                       instead of the newest Debian kernel
#   --test-kernel       the same, with the directory that script has cached
#                       for the tree's patches; skips when it is not built
#   --kernel-tree DIR   boot a Debian kernel scripts/fetch-debian-kernel.sh
#                       unpacked in DIR (DIR/vmlinuz, its nvdimm/dax modules
#                       from DIR/root/lib/modules, famfs.ko built against
#                       DIR/build) instead of the newest one in /boot
#   --debian-kernel SERIES  the same, with the tree that script has unpacked
#                       for SERIES (e.g. 6.12); skips when there is none
#   --peer FILE         host program sharing memory with the guest (shared)
#   --second-guest      shared: the other host is a second guest (scenario
#                       "client") booted on the same NVDIMM file as soon as
#                       guest 1 prints a line starting "# guest wrote its half"
#   --workdir DIR       where the initramfs, console log and dmesg go
#   --timeout SECS      hard limit for the VM (default 900)
#   --smp N             virtual CPUs (default 1; 2 for the big scenario)
#   --skip-exit N       exit status for "cannot run here" (default 77; meson
#                       passes 0 with protocol tap, where the plan says SKIP)
#
# It installs what it needs with apt-get when missing (qemu-system-x86,
# linux-image-amd64, linux-headers-amd64, busybox-static, cpio, kmod, ndctl,
# daxctl), and skips only when they cannot be had.  The guest prints TAP on
# the serial console; this script passes those lines through, adds its own,
# and exits 0 only when the guest's plan was complete and nothing failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
scenario=
guest_test=
extras=()
mkfs_bin=
fsck_bin=
ko=
kmod_src=$here/../../kmod
test_kernel=
kernel_tree=
peer=
second_guest=0
workdir=
vm_timeout=900
skip_exit=77

while [ $# -gt 0 ]; do
	case $1 in
	--scenario) scenario=$2; shift 2 ;;
	--guest-test) guest_test=$2; shift 2 ;;
	--extra) extras+=("$2"); shift 2 ;;
	--mkfs) mkfs_bin=$2; shift 2 ;;
	--fsck) fsck_bin=$2; shift 2 ;;
	--ko) ko=$2; shift 2 ;;
	--kmod-src) kmod_src=$2; shift 2 ;;
	--kernel) test_kernel=$2; shift 2 ;;
	--test-kernel) test_kernel=cached; shift ;;
	--kernel-tree) kernel_tree=$2; shift 2 ;;
	--debian-kernel) kernel_tree=series:$2; shift 2 ;;
	--peer) peer=$2; shift 2 ;;
	--second-guest) second_guest=1; shift ;;
	--workdir) workdir=$2; shift 2 ;;
	--timeout) vm_timeout=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--skip-exit) skip_exit=$2; shift 2 ;;
	*) echo "run-vm.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

[ -n "$scenario" ] && [ -n "$guest_test" ] || {
	echo "run-vm.sh: --scenario and --guest-test are required" >&2
	exit 2
}
[ -z "$test_kernel" ] || [ -z "$kernel_tree" ] || {
	echo "run-vm.sh: --kernel/--test-kernel and --kernel-tree/--debian-kernel exclude each other" >&2
	exit 2
}
[ -n "$workdir" ] || workdir=$(mktemp -d /tmp/famfs-vm.XXXXXX)
mkdir -p "$workdir"
workdir=$(cd "$workdir" && pwd)

skip() {
	echo "1..0 # SKIP $*"
	exit "$skip_exit"
}

bail() {
	echo "Bail out! $*"
	exit 1
}

# ---- packages -------------------------------------------------------------

find_kernel() {
	local v kv
	for v in $(ls /boot/vmlinuz-* 2>/dev/null | sort -V -r); do
		kv=${v#/boot/vmlinuz-}
		if [ -d "/lib/modules/$kv/kernel" ] &&
		   [ -f "/lib/modules/$kv/build/Makefile" ]; then
			echo "$kv"
			return 0
		fi
	done
	return 1
}

have_all() {
	command -v qemu-system-x86_64 >/dev/null &&
	command -v cpio >/dev/null &&
	command -v modprobe >/dev/null &&
	command -v ndctl >/dev/null &&
	command -v daxctl >/dev/null &&
	[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 &&
	find_kernel >/dev/null
}

if ! have_all; then
	pkgs="qemu-system-x86 linux-image-amd64 linux-headers-amd64 busybox-static cpio kmod ndctl daxctl"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "# installing: $pkgs (log: $workdir/apt.log)"
		{
			apt-get update &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y \
				--no-install-recommends $pkgs
		} >"$workdir/apt.log" 2>&1 ||
			echo "# apt-get failed; see $workdir/apt.log"
	fi
	have_all || skip "qemu, busybox-static, ndctl or a Debian kernel with headers cannot be installed"
fi

# where the guest kernel's /lib/modules/$KV is (/ for one installed here)
modroot=/
if [ "$test_kernel" = cached ]; then
	test_kernel=$("$here/../../scripts/build-test-kernel.sh" --cached) ||
		skip "the dev_dax_iomap test kernel is not built (scripts/build-test-kernel.sh; run-tests.sh builds it)"
fi
if [ -n "$test_kernel" ]; then
	# the test kernel: nvdimm, pmem and dax are built in, nothing to load
	[ -f "$test_kernel/bzImage" ] && [ -f "$test_kernel/build/Module.symvers" ] ||
		bail "$test_kernel holds no built test kernel (scripts/build-test-kernel.sh)"
	KV=$(cat "$test_kernel/build/include/config/kernel.release")
	vmlinuz=$test_kernel/bzImage
	kdir=$test_kernel/build
	ko=	# a --ko is built for the Debian kernel: build one for this kernel
elif [ -n "$kernel_tree" ]; then
	case $kernel_tree in
	series:*)
		series=${kernel_tree#series:}
		kernel_tree=$("$here/../../scripts/fetch-debian-kernel.sh" --cached "$series") ||
			skip "Debian's $series kernel is not unpacked (scripts/fetch-debian-kernel.sh $series; run-tests.sh fetches it)"
		;;
	esac
	[ -f "$kernel_tree/release" ] && [ -f "$kernel_tree/vmlinuz" ] &&
	[ -f "$kernel_tree/build/Makefile" ] ||
		bail "$kernel_tree holds no unpacked Debian kernel (scripts/fetch-debian-kernel.sh)"
	KV=$(cat "$kernel_tree/release")
	vmlinuz=$kernel_tree/vmlinuz
	kdir=$kernel_tree/build
	modroot=$kernel_tree/root
	ko=	# a --ko is built for the host's Debian kernel: build one for this one
else
	KV=$(find_kernel)
	vmlinuz=/boot/vmlinuz-$KV
	kdir=/lib/modules/$KV/build
fi
echo "# guest kernel $KV ($vmlinuz)"
[ -r "$vmlinuz" ] || skip "$vmlinuz is not readable"

# ---- the module -------------------------------------------------------------

if [ -z "$ko" ]; then
	echo "# building famfs.ko against $KV"
	kb=$workdir/kbuild
	mkdir -p "$kb/include/linux"
	cp "$kmod_src"/Kbuild "$kmod_src"/*.[ch] "$kb/" || bail "no kmod sources in $kmod_src"
	cp "$kmod_src/../include/uapi/linux/famfs_ioctl.h" "$kb/include/linux/" ||
		bail "no uapi header next to $kmod_src"
	make -s -C "$kdir" M="$kb" modules >"$workdir/kbuild.log" 2>&1 ||
		{ sed 's/^/# /' "$workdir/kbuild.log"; bail "famfs.ko does not build against $KV"; }
	grep 'warning:' "$workdir/kbuild.log" | sed 's/^/# famfs.ko build: /'
	ko=$kb/famfs.ko
fi
ko_ver=$(modinfo -F vermagic "$ko" 2>/dev/null | awk '{print $1}')
[ "$ko_ver" = "$KV" ] || bail "famfs.ko is built for '$ko_ver', the guest kernel is $KV"

# ---- initramfs --------------------------------------------------------------

root=$workdir/root
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,mnt,modules,etc,lib64,opt/famfs,run,var}

cp /bin/busybox "$root/bin/busybox"
for app in $(/bin/busybox --list); do
	[ -e "$root/bin/$app" ] || ln -s busybox "$root/bin/$app"
done

# Kernel modules, in load order (none for the test kernel)
mods=
[ -z "$test_kernel" ] && mods="libnvdimm $(modprobe -d "$modroot" -S "$KV" --show-depends -a nd_btt nd_pmem nd_e820 device_dax dax_pmem nfit 2>/dev/null |
	awk '$1 == "insmod" { print $2 }')"
: >"$root/modules/order"
for m in $mods; do
	case $m in
	/*) path=$m ;;
	*) path=$(modinfo -b "$modroot" -k "$KV" -n "$m" 2>/dev/null) ;;
	esac
	[ -n "$path" ] && [ -f "$path" ] || bail "kernel module $m missing for $KV"
	name=$(basename "$path")
	case $name in
	*.ko.xz) xz -dc "$path" >"$root/modules/${name%.xz}"; name=${name%.xz} ;;
	*.ko.zst) zstd -qdc "$path" >"$root/modules/${name%.zst}"; name=${name%.zst} ;;
	*) cp "$path" "$root/modules/$name" ;;
	esac
	grep -qx "$name" "$root/modules/order" || echo "$name" >>"$root/modules/order"
done
cp "$ko" "$root/modules/famfs.ko"

# Programs, with the shared libraries they need
add_prog() {
	local src=$1 dst=$root/bin/$(basename "$1") lib
	cp -L "$src" "$dst" || bail "cannot copy $src"
	for lib in $(ldd "$src" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }'); do
		mkdir -p "$root$(dirname "$lib")"
		[ -e "$root$lib" ] || cp -L "$lib" "$root$lib"
	done
}
add_prog "$guest_test"
for e in "${extras[@]}"; do add_prog "$e"; done
[ -n "$mkfs_bin" ] && add_prog "$mkfs_bin"
[ -n "$fsck_bin" ] && add_prog "$fsck_bin"
add_prog "$(command -v ndctl)"
add_prog "$(command -v daxctl)"
command -v cxl >/dev/null && add_prog "$(command -v cxl)"
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"

cp "$here/guest/init.sh" "$root/init"
# sourced by the full-stack guest scripts
cp "$here/guest/stack-common.sh" "$root/bin/stack-common.sh"
chmod 755 "$root/init"
echo "$(basename "$guest_test")" >"$root/etc/famfs-test"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$workdir/initrd.gz" ||
	bail "cannot build the initramfs"

# ---- boot -------------------------------------------------------------------

console=$workdir/console.log
# The big scenario (the vm-replay benchmark) gets two vCPUs, each its own
# host thread under MTTCG, so the daemon's threaded work runs in parallel.
case $scenario in big | devdax-big) smp=${smp:-2} ;; esac
smp=${smp:-1}
case $smp in
[1-8]) ;;
*) echo "run-vm.sh: --smp takes 1 to 8, not \"$smp\"" >&2; exit 2 ;;
esac
qemu=(qemu-system-x86_64 -accel tcg -cpu max -smp $smp -nographic -no-reboot
      -kernel "$vmlinuz" -initrd "$workdir/initrd.gz")
append="console=ttyS0 panic=-1 quiet loglevel=4"

peer_pid=
vm1_pid=
shm=
cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
	[ -n "$vm1_pid" ] && kill "$vm1_pid" 2>/dev/null
	[ -n "$shm" ] && rm -f "$shm" "$shm.lsa"
}
trap cleanup EXIT

case $scenario in
shared | devdax-shared)
	# A file-backed NVDIMM: the same memory is mapped by the guest and by
	# the other host, which is either a process here (--peer) or a second
	# guest (--second-guest).  The label area lets ndctl make an fsdax
	# namespace on it, and tells the second guest about it.
	[ -n "$peer" ] || [ "$second_guest" = 1 ] ||
		bail "the shared scenario needs --peer or --second-guest"
	shm=/dev/shm/famfs-vm-shared.$$
	# 1026 MiB: the label area takes 2 MiB, which leaves a region of
	# 1 GiB, a multiple of the region's 16 MiB alignment.
	truncate -s 1026M "$shm" || bail "cannot create $shm"
	qemu+=(-machine pc,nvdimm=on -m 1G,slots=2,maxmem=3G
	       -object memory-backend-file,id=nvmem,share=on,mem-path=$shm,size=1026M,align=2M
	       -device nvdimm,id=nv1,memdev=nvmem,label-size=128K)
	if [ -n "$peer" ]; then
		"$peer" "$shm" "$vm_timeout" >"$workdir/peer.log" 2>&1 &
		peer_pid=$!
	fi
	;;
big | devdax-big)
	# A 32 GiB NVDIMM backed by a sparse host file, with a label area so
	# ndctl can make an fsdax namespace (--map=dev keeps the struct pages
	# on the device, not in the 2 GiB of guest RAM).  Only the pages the
	# guest touches take host memory.
	shm=/dev/shm/famfs-vm-big.$$
	truncate -s 32770M "$shm" || bail "cannot create $shm"
	qemu+=(-machine pc,nvdimm=on -m 2G,slots=2,maxmem=40G
	       -object memory-backend-file,id=nvmem,share=on,mem-path=$shm,size=32770M,align=2M
	       -device nvdimm,id=nv1,memdev=nvmem,label-size=128K)
	;;
cxl)
	# qemu's CXL type-3 memory device (persistent, file-backed) behind a
	# CXL host bridge and root port, with a 4 GiB fixed memory window
	shm=/dev/shm/famfs-vm-cxl.$$
	truncate -s 512M "$shm" "$shm.lsa" || bail "cannot create $shm"
	qemu+=(-machine q35,cxl=on -m 2G,maxmem=4G,slots=4
	       -object memory-backend-file,id=cxl-mem0,share=on,mem-path=$shm,size=512M
	       -object memory-backend-file,id=cxl-lsa0,share=on,mem-path=$shm.lsa,size=512M
	       -device pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1
	       -device cxl-rp,port=0,bus=cxl.1,id=cxl_rp0,chassis=0,slot=2
	       -device cxl-type3,bus=cxl_rp0,memdev=cxl-mem0,lsa=cxl-lsa0,id=cxl-pmem0
	       -M cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=4G)
	;;
bench-devdax)
	# two legacy pmem regions: /dev/pmem0, and the second made devdax
	qemu+=(-m 3G)
	append="$append memmap=512M!1G memmap=512M!2G"
	;;
*)
	qemu+=(-m 2G)
	append="$append memmap=512M!1G"
	;;
esac

echo "# booting: ${qemu[*]} -append \"$append famfs_scenario=$scenario\""
start=$(date +%s)
if [ "$second_guest" = 1 ]; then
	# Guest 1 (the master) makes the file system and writes its half, then
	# waits; guest 2 (the client) boots on the same memory once guest 1
	# says so, checks that half through its own famfs mount and answers.
	timeout --foreground -k 10 "$vm_timeout" "${qemu[@]}" \
		-append "$append famfs_scenario=$scenario" </dev/null >"$console" 2>&1 &
	vm1_pid=$!
	while kill -0 "$vm1_pid" 2>/dev/null &&
	      ! tr -d '\r' <"$console" | grep -q "^# guest wrote its half"; do
		sleep 0.5
	done
	echo "# guest 1 wrote its half after $(( $(date +%s) - start )) s; booting guest 2"
	timeout --foreground -k 10 "$vm_timeout" "${qemu[@]}" \
		-append "$append famfs_scenario=${scenario%shared}client" </dev/null >"$workdir/console2.log" 2>&1
	q2rc=$?
	echo "# guest 2 (qemu) exit $q2rc"
	wait "$vm1_pid"
	qrc=$?
	vm1_pid=
else
	timeout --foreground -k 10 "$vm_timeout" "${qemu[@]}" \
		-append "$append famfs_scenario=$scenario" </dev/null >"$console" 2>&1
	qrc=$?
fi
echo "# qemu exit $qrc after $(( $(date +%s) - start )) s; console: $console"

# ---- report -----------------------------------------------------------------

tr -d '\r' <"$console" >"$console.txt"
# Guest TAP lines, and the dmesg the guest dumps on failure (as "# " lines)
grep -E '^(ok |not ok |1\.\.|# |Bail out!)' "$console.txt" | grep -v '^# dmesg: ' >"$workdir/tap.txt"
sed -n '/^----- guest dmesg begin/,/^----- guest dmesg end/p' "$console.txt" >"$workdir/dmesg.txt"

extra_fail=0
extra_n=0
extra_tap=$workdir/extra-tap.txt
: >"$extra_tap"
if [ -n "$peer_pid" ]; then
	# The peer is done once the guest is; give it a moment, no more
	for _ in $(seq 50); do
		kill -0 "$peer_pid" 2>/dev/null || break
		sleep 0.2
	done
	kill "$peer_pid" 2>/dev/null
	wait "$peer_pid"
	prc=$?
	peer_pid=
	sed 's/^/# peer: /' "$workdir/peer.log"
	if [ "$prc" = 0 ]; then
		echo "ok - host process read the guest's famfs data and wrote the reply the guest read" >>"$extra_tap"
	else
		echo "not ok - host peer exited $prc" >>"$extra_tap"
	fi
fi
if [ "$second_guest" = 1 ]; then
	# Guest 2's results, renumbered as unnumbered lines of this stream
	tr -d '\r' <"$workdir/console2.log" >"$workdir/console2.txt"
	sed -n '/^----- guest dmesg begin/,/^----- guest dmesg end/p' "$workdir/console2.txt" \
		>"$workdir/dmesg2.txt"
	sed -nE 's/^(ok|not ok) [0-9]+ - /\1 - guest 2: /p' "$workdir/console2.txt" >>"$extra_tap"
	grep -E '^# ' "$workdir/console2.txt" | grep -v '^# dmesg: ' | sed 's/^# /# guest 2: /'
	if ! grep -qE '^1\.\.[0-9]+' "$workdir/console2.txt"; then
		grep -v '^# dmesg: ' "$workdir/console2.txt" | tail -40 |
			sed 's/^/# guest 2 console: /'
		echo "not ok - guest 2 printed no TAP plan (qemu exit $q2rc)" >>"$extra_tap"
	fi
fi
grep -q '^not ok' "$extra_tap" && extra_fail=1
extra_n=$(grep -c '' "$extra_tap")

plan=$(grep -E '^1\.\.[0-9]+' "$workdir/tap.txt" | tail -1)
grep -vE '^1\.\.' "$workdir/tap.txt"
cat "$extra_tap"

# The end of the guest's dmesg, when it dumped one (all of it is in the file)
show_dmesg() {
	local f
	for f in "$workdir/dmesg.txt" "$workdir/dmesg2.txt"; do
		[ -s "$f" ] || continue
		echo "# last lines of $f:"
		grep '^# dmesg: ' "$f" | tail -40
	done
}
console_tail() {
	grep -v '^# dmesg: ' "$console.txt" | tail -"$1" | sed 's/^/# console: /'
}

if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	console_tail 40
	bail "VM timed out after $vm_timeout s"
fi
if [ -z "$plan" ]; then
	console_tail 40
	show_dmesg
	bail "guest printed no TAP plan (crashed or never ran the tests)"
fi

n=$(( ${plan#1..} + extra_n ))
echo "1..$n"

if grep -q '^not ok ' "$workdir/tap.txt" || [ "$extra_fail" != 0 ]; then
	show_dmesg
	exit 1
fi
exit 0
