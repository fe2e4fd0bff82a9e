#!/bin/bash
# run-vm-systemd.sh - boot the systemd guest (build-rootfs.sh) under qemu
# (TCG), install the project's Debian packages in it and run a test script
# there as root; report its TAP.
#
# usage: run-vm-systemd.sh --guest-test FILE --workdir DIR [options]
#   --guest-test FILE   shell script the guest runs (TAP on stdout)
#   --extra FILE        a program for the guest's /mnt/payload/bin (repeatable)
#   --debs DIR          the .debs to install (default: built here into
#                       DIR/debs by scripts/build-debs.sh, from this tree)
#   --timeout SECS      hard limit for the VM (default 1200)
#   --skip-exit N       exit status for "cannot run here" (default 77)
#
# The guest boots a qcow2 overlay of the cached rootfs.img, so the cache is
# never written; /dev/vdb is the payload disk (the .debs, the script, the
# extras), mounted read-only by famfs-vm-payload.service, which writes the
# script's output to the second serial port and powers off.  Legacy pmem
# (memmap=512M!1G) gives /dev/pmem0.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../..
guest_test=
extras=()
debs=
workdir=
vm_timeout=1200
skip_exit=77
while [ $# -gt 0 ]; do
	case $1 in
	--guest-test) guest_test=$2; shift 2 ;;
	--extra) extras+=("$2"); shift 2 ;;
	--debs) debs=$2; shift 2 ;;
	--workdir) workdir=$2; shift 2 ;;
	--timeout) vm_timeout=$2; shift 2 ;;
	--skip-exit) skip_exit=$2; shift 2 ;;
	*) echo "run-vm-systemd.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$guest_test" ] && [ -n "$workdir" ] || {
	echo "run-vm-systemd.sh: --guest-test and --workdir are required" >&2
	exit 2
}
skip() { echo "1..0 # SKIP $*"; exit "$skip_exit"; }
bail() { echo "Bail out! $*"; exit 1; }
mkdir -p "$workdir"
workdir=$(cd "$workdir" && pwd)

[ "$(id -u)" = 0 ] || skip "building the guest's root file system needs root (mmdebstrap)"
rootfs=$("$here/build-rootfs.sh" 2>"$workdir/rootfs.log") ||
	{ sed 's/^/# /' "$workdir/rootfs.log" | tail -20; bail "the guest's root file system did not build"; }
echo "# rootfs $rootfs (kernel $(cat "$rootfs/kernel-release"))"

if [ -z "$debs" ]; then
	start=$(date +%s)
	debs=$(FAMFS_DEBS_DIR=$workdir/debs "$src/scripts/build-debs.sh" 2>"$workdir/debs.log" | tail -1) ||
		{ sed 's/^/# /' "$workdir/debs.log" | tail -20; bail "the packages did not build"; }
	echo "# packages built in $(( $(date +%s) - start )) s: $debs"
fi

payload=$workdir/payload
rm -rf "$payload"
mkdir -p "$payload/debs" "$payload/bin"
for p in famfs-tools famfs-manager famfs-dkms; do
	ls "$debs"/${p}_*.deb >/dev/null 2>&1 || bail "no $p package in $debs"
	cp "$debs"/${p}_*.deb "$payload/debs/"
done
cp "$guest_test" "$payload/guest-test.sh"
# The unit's SuccessAction=poweroff-force never powered the guest off (the
# runs sat idle until the timeout, "reboot: Power down" never printed), so
# the payload powers off itself, saying first what systemd still had queued.
cat >"$payload/run.sh" <<'RUN'
#!/bin/sh
sh /mnt/payload/guest-test.sh
echo "# guest-test.sh exit $?; systemd jobs left: $(systemctl list-jobs --no-legend 2>&1 | wc -l)"
systemctl list-jobs --no-legend --no-pager 2>&1 | head -10 | sed 's/^/#   /'
sync
echo o >/proc/sysrq-trigger
RUN
for e in "${extras[@]}"; do cp "$e" "$payload/bin/" || bail "cannot copy $e"; done
rm -f "$workdir/payload.img" "$workdir/overlay.qcow2"
mkfs.ext4 -q -F -L payload -d "$payload" "$workdir/payload.img" 64M >&2 ||
	bail "cannot make the payload image"
qemu-img create -q -f qcow2 -F raw -b "$rootfs/rootfs.img" "$workdir/overlay.qcow2" ||
	bail "cannot make the overlay"

console=$workdir/console.log
tap=$workdir/tap.log
: >"$tap"
# Two vCPUs, each a host thread under MTTCG: systemd starts units in parallel.
qemu=(qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 2G -display none -monitor none -no-reboot
      -kernel "$rootfs/vmlinuz" -initrd "$rootfs/initrd.img"
      -drive "file=$workdir/overlay.qcow2,if=virtio,format=qcow2"
      -drive "file=$workdir/payload.img,if=virtio,format=raw,readonly=on"
      -serial "file:$console" -serial "file:$tap")
append="root=/dev/vda rw console=ttyS0 memmap=512M!1G panic=-1 loglevel=4 systemd.show_status=0"
echo "# booting: ${qemu[*]} -append \"$append\""
start=$(date +%s)
timeout --foreground -k 10 "$vm_timeout" "${qemu[@]}" -append "$append" </dev/null >"$workdir/qemu.log" 2>&1
qrc=$?
echo "# qemu exit $qrc after $(( $(date +%s) - start )) s; console: $console"

tr -d '\r' <"$tap" >"$tap.txt"
grep -E '^(ok |not ok |1\.\.|# |Bail out!)' "$tap.txt" | grep -vE '^1\.\.'
plan=$(grep -E '^1\.\.[0-9]+' "$tap.txt" | tail -1)
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	tr -d '\r' <"$console" | tail -30 | sed 's/^/# console: /'
	bail "VM timed out after $vm_timeout s"
fi
if [ -z "$plan" ]; then
	tr -d '\r' <"$console" | tail -40 | sed 's/^/# console: /'
	bail "the guest printed no TAP plan"
fi
echo "$plan"
! grep -q '^not ok ' "$tap.txt"
