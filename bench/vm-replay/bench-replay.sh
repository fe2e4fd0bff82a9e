#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench-replay.sh - guest side of the vm-replay benchmark (run-vm.sh
# --scenario big): a 32 GiB file-backed NVDIMM in fsdax mode (ndctl,
# --map=dev), formatted with mkfs.famfs, its 8 MiB log filled with 2 MiB
# files (replay-tool fill, batches of 5000, log entries only), then timed,
# RUNS times each, medians printed:
#   view       the view backend's replay: open the device, replay the log
#              into the in-memory namespace (no kernel objects)
#   bare       the kernel floor: a fresh mount -t famfs and the bare
#              mkdirat / openat(O_CREAT) + MAP_CREATE_V2 + close loop, and
#              the same with MKFILES batches (what the daemon uses), alone
#              and with a spinning shell on the other vCPU (the floor of a
#              replay that overlaps its two halves, on a host that may
#              slow one vCPU while the other runs: 1.0-1.6 x so far)
#   full       famfs-manager --device /dev/pmem0 with the kernel backend,
#              from exec to its "famfs mounted" line (the mount is fully
#              populated then) and to "ready on the bus"; SIGTERM unmounts
#   reattach   famfs-manager killed with SIGKILL (the mount stays) and
#              started again: it adopts the mount before it replays the
#              log; exec → "mount adopted" (target: process start + 20 ms)
#   hotplug    famfs-manager running with automount and kernel uevents; the
#              pmem device is unbound (the daemon unmounts) and bound
#              again: bind returned (the kernel's probe done, the uevent
#              sent) → its "famfs mounted" line (replay-tool hotplug)
# Every run's mount is checked to hold all the files; famfsctl check and
# fsck.famfs at the end.  Prints TAP, and "# bench:" lines with the numbers.
# Scenario devdax-big (test kernel with dev_dax_iomap): the same on the
# NVDIMM in devdax mode, /dev/dax0.0, the device leaving and coming back
# by an unbind/bind of device_dax.
export PATH=/bin:/sbin
RUNS=${RUNS:-5}
if [ "${1:-big}" = devdax-big ]; then
	DEV=/dev/dax0.0 MODE=devdax
else
	DEV=/dev/pmem0 MODE=fsdax
fi
MNT=/run/famfs/${DEV#/dev/}
DEVICE=$DEV	# start_manager's device
UUIDF=/opt/famfs/system_uuid
. /bin/stack-common.sh
mounted() { grep -q " $1 famfs " /proc/mounts; }
ms() { awk "BEGIN { printf \"%.1f\", $1 / 1000 }"; }

mkdir -p /mnt/bare
guest_identity 5f0c2c1e-7a43-4d0b-9f6e-2b1d0c9a8e71

# ---- the device --------------------------------------------------------------
ndctl create-namespace -f -e namespace0.0 -m $MODE -a 2M --map=dev >/tmp/ndctl.out 2>&1 ||
	ndctl create-namespace -r region0 -m $MODE -a 2M --map=dev >/tmp/ndctl.out 2>&1
is_dev() { test -b $DEV -o -c $DEV; }
i=0
while ! is_dev && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if ! is_dev; then
	nok "ndctl create-namespace -m $MODE --map=dev on the 32 GiB NVDIMM"
	sed 's/^/#   /' /tmp/ndctl.out
	finish
fi
ok "ndctl create-namespace -m $MODE --map=dev on the 32 GiB NVDIMM"
if [ $MODE = devdax ]; then
	sz=$(( $(cat /sys/bus/dax/devices/dax0.0/size) / 512 ))
else
	sz=$(cat /sys/block/pmem0/size)
fi
dmesg | grep -i -e "mitigation" -e "page table isolation" | head -5 | sed "s/^/# guest kernel: /"
echo "# $DEV: $((sz / 2048)) MiB; guest CPUs: $(grep -c ^processor /proc/cpuinfo)"
check "mkfs.famfs on $DEV" mkfs.famfs -q -f -u $UUIDF $DEV
insmod /modules/famfs.ko
check "famfs.ko loaded" test -d /sys/module/famfs

replay-tool fill $DEV $UUIDF f 2097152 >/tmp/fill.out 2>&1
files=$(field files </tmp/fill.out)
echo "# fill: $(cat /tmp/fill.out)"
check "the 8 MiB log is full: $files files of 2 MiB (log entries only)" test "${files:-0}" -ge 15000

# ---- baselines ---------------------------------------------------------------
vals=
for r in $(seq $RUNS); do
	vals="$vals $(replay-tool exec famfs-manager --version | field exec_us)"
done
exec_med=$(replay-tool median $vals)
echo "# bench: famfs-manager --version, fork to exit (process start), us:$vals"
vals=
opens=
replays=
checks=
for r in $(seq $RUNS); do
	replay-tool view $DEV >/tmp/view.out
	vals="$vals $(field view_us </tmp/view.out)"
	opens="$opens $(field open_us </tmp/view.out)"
	replays="$replays $(field replay_us </tmp/view.out)"
	checks="$checks $(field check_us </tmp/view.out)"
done
view_med=$(replay-tool median $vals)
echo "# bench: view replay (open + replay into the namespace), us:$vals"
echo "# bench:   of which open, us:$opens; replay, us:$replays"
echo "# bench: attach-time check (famfs_check_medium) alone, us:$checks"

bare_ok=1
# $2 = busy: a shell spinning meanwhile, which the scheduler puts on the other vCPU.
bare_loop() {
	vals=
	for r in $(seq $RUNS); do
		[ "${2:-}" = busy ] && { (while :; do :; done) & spin=$!; }
		out=$(replay-tool bare $DEV /mnt/bare $1) || { bare_ok=0; echo "# bare $1: $out"; }
		[ "${2:-}" = busy ] && { kill $spin; wait $spin 2>/dev/null || :; }
		v=$(echo "$out" | field bare_us)
		vals="$vals ${v:-0}"
		c=$(replay-tool count /mnt/bare | field files)
		[ "$c" = "$files" ] || { bare_ok=0; echo "# bare $1: $c files in the mount"; }
		umount /mnt/bare || { bare_ok=0; echo "# bare $1: cannot unmount /mnt/bare"; }
	done
}
bare_loop open
bare_med=$(replay-tool median $vals)
echo "# bench: bare kernel loop (openat O_CREAT + MAP_CREATE_V2 + close per file), us:$vals"
bare_loop mkfiles
mkf_med=$(replay-tool median $vals)
echo "# bench: bare kernel loop (MKFILES, up to 256 siblings per call), us:$vals"
bare_loop mkfiles busy
busy_med=$(replay-tool median $vals)
echo "# bench: bare kernel loop (MKFILES) with the other vCPU busy, us:$vals"
check "bare loop runs (open and MKFILES) made all $files files" test $bare_ok = 1

# ---- the daemon ----------------------------------------------------------------
start_system_bus
manager_conf kernel 1000 "udev = no"
# measured_start LABEL ADOPTED: famfs-manager started, its figures added to
# /tmp/LABEL.e2e, .ready and .be, and the mount checked: adopted (1) or
# fresh (0), with all $files files.  What is wrong goes out as a comment.
measured_start() {
	start_manager 120000 || { echo "# $1 run $r: famfs-manager did not get ready"; return 1; }
	field attach_us </tmp/daemon.out >>/tmp/$1.e2e
	field ready_us </tmp/daemon.out >>/tmp/$1.ready
	field inst_us </tmp/daemon.out >>/tmp/$1.be
	for k in cpu_replay_us cpu_inst_us cpu_process_us; do field $k </tmp/daemon.out >>/tmp/$1.$k; done
	[ "$(field adopted </tmp/daemon.out)" = "$2" ] || { echo "# $1 run $r: adopted is not $2"; return 1; }
	c=$(replay-tool count $MNT | field files)
	[ "$c" = "$files" ] || { echo "# $1 run $r: $c files in the mount"; return 1; }
}
# start_figures LABEL WHAT E2E BE: measured_start's figures as bench lines
start_figures() {
	echo "# bench: daemon $2, $3, us: $(echo $(cat /tmp/$1.e2e))"
	echo "# bench: daemon $2, exec -> ready on the bus, us: $(echo $(cat /tmp/$1.ready))"
	echo "# bench: daemon $2, $4, us: $(echo $(cat /tmp/$1.be))"
}

full_ok=1
for r in $(seq $RUNS); do
	measured_start full 0 || full_ok=0
	[ $r = $RUNS ] && break
	kill -TERM $PID
	wait_gone $PID 300 || { full_ok=0; echo "# run $r: famfs-manager still runs 30 s after SIGTERM"; }
	mounted $MNT && { full_ok=0; echo "# run $r: still mounted after SIGTERM"; umount $MNT; }
done
check "famfs-manager replayed all $files files into a fresh mount, $RUNS times" test $full_ok = 1
start_figures full "full replay" "exec -> populated mount" "kernel backend replay + instantiation (overlapped)"

re_ok=1
re_kill=
for r in $(seq $RUNS); do
	t_kill=$(cut -d' ' -f1 /proc/uptime)
	kill -KILL $PID
	wait_gone $PID 300 || { re_ok=0; echo "# run $r: famfs-manager still runs 30 s after SIGKILL"; }
	re_kill="$re_kill $(awk -v t=$t_kill '{ printf "%.2f", $1 - t }' /proc/uptime)"
	mounted $MNT || { re_ok=0; echo "# run $r: the mount went away with the daemon"; }
	measured_start re 1 || re_ok=0
done
check "a restarted famfs-manager adopted the mount with all $files files, $RUNS times" test $re_ok = 1
echo "# bench: SIGKILL -> famfs-manager gone (exited, or a zombie), s:$re_kill"
start_figures re re-attach "exec -> mount adopted" "kernel backend instantiating (or trusting) the namespace"

check "famfsctl check on the adopted mount is clean" famfsctl check $MNT
# Once more, asked as soon as the bus name is owned: the answer counts the whole log.
kill -KILL $PID
wait_gone $PID 300
restart_and_ask_at_once $DEV
counted=$(cat /tmp/early.files)
check "a status asked as soon as the restarted daemon owns its name counts all $files files ($counted)" \
	test "$counted" = "$files"
kill -TERM $PID
wait_gone $PID 300
mounted $MNT && umount $MNT

# ---- hotplug: the device comes back while the daemon runs ------------------------
manager_conf kernel 1000 "automount = yes" "udev-source = kernel"
famfs-manager -c /etc/famfs/manager.conf >/tmp/hotplug.log 2>&1 &
HPID=$!
i=0
while ! grep -q ': famfs mounted ' /tmp/hotplug.log && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
if [ $MODE = devdax ]; then
	ndpmem=dax0.0 driver=/sys/bus/dax/drivers/device_dax
else
	# fsdax: nd_pmem drives the pfn device that claims the namespace
	ndpmem=$(basename "$(readlink -f /sys/block/pmem0/device)") driver=/sys/bus/nd/drivers/nd_pmem
fi
echo "# hotplug: $DEV is $(basename $driver)'s $ndpmem"
hp_e2e=
hp_be=
hp_bind=
hp_ok=1
grep -q ': famfs mounted ' /tmp/hotplug.log || { hp_ok=0; echo "# hotplug: the daemon did not mount $DEV at start"; }
for r in $(seq $RUNS); do
	[ $hp_ok = 1 ] || break
	out=$(replay-tool hotplug "$ndpmem" $MNT /tmp/hotplug.log 60000 $driver 2>&1) ||
		{ hp_ok=0; echo "# hotplug run $r: $out"; sed 's/^/#   /' /tmp/hotplug.log | tail -15; break; }
	hp_e2e="$hp_e2e $(echo "$out" | field hotplug_us)"
	hp_bind="$hp_bind $(echo "$out" | field bind_us)"
	hp_be="$hp_be $(echo "$out" | field inst_us)"
	c=$(replay-tool count $MNT | field files)
	[ "$c" = "$files" ] || { hp_ok=0; echo "# hotplug run $r: $c files in the mount"; }
done
check "the running famfs-manager replayed all $files files into a fresh mount each time the device came back, $RUNS times" \
	test $hp_ok = 1
echo "# bench: hotplug, the bind itself (the kernel probing the device), us:$hp_bind"
echo "# bench: hotplug, bind returned -> populated mount, us:$hp_e2e"
echo "# bench: hotplug, kernel backend replay + instantiation (overlapped), us:$hp_be"
check "the kernel logged no BUG or Oops while the device went and came back" \
	sh -c "! dmesg | grep -q -e 'BUG:' -e 'Oops'"
check "famfsctl check after the hotplug runs is clean" famfsctl check $MNT
kill -TERM $HPID
wait_gone $HPID 300
mounted $MNT && umount $MNT
check "fsck.famfs on $DEV afterwards is clean" fsck.famfs -n $DEV

# ---- results -------------------------------------------------------------------
full_med=$(replay-tool median $(cat /tmp/full.e2e))
full_ready_med=$(replay-tool median $(cat /tmp/full.ready))
full_be_med=$(replay-tool median $(cat /tmp/full.be))
re_med=$(replay-tool median $(cat /tmp/re.e2e))
re_ready_med=$(replay-tool median $(cat /tmp/re.ready))
re_be_med=$(replay-tool median $(cat /tmp/re.be))
hp_med=$(replay-tool median ${hp_e2e:-0})
hp_be_med=$(replay-tool median ${hp_be:-0})
ratio() { awk "BEGIN { if ($2 > 0) printf \"%.2f\", $1 / $2; else print \"-\" }"; }
echo "# bench: ---- medians of $RUNS runs, $files files, full 8 MiB log, $((sz / 2048)) MiB $MODE NVDIMM (TCG) ----"
echo "# bench: famfs-manager --version (baseline, process start) $(ms $exec_med) ms"
echo "# bench: view replay (baseline, no kernel objects)        $(ms $view_med) ms (open $(ms $(replay-tool median $opens)), replay $(ms $(replay-tool median $replays)))"
echo "# bench: attach-time check alone (runs beside the replay)  $(ms $(replay-tool median $checks)) ms"
echo "# bench: bare MAP_CREATE loop (baseline, per-file floor)  $(ms $bare_med) ms"
echo "# bench: bare MKFILES loop (baseline, kernel floor)       $(ms $mkf_med) ms ($(ratio $mkf_med $bare_med) x per-file)"
echo "# bench: bare MKFILES loop, the other vCPU spinning      $(ms $busy_med) ms ($(ratio $busy_med $mkf_med) x alone: how much this boot's host slows one vCPU while the other runs)"
echo "# bench: full replay, daemon exec -> populated mount       $(ms $full_med) ms ($(ratio $full_med $mkf_med) x MKFILES floor, target <= 1.3; $(ratio $full_med $view_med) x view)"
echo "# bench: full replay, daemon exec -> ready on the bus      $(ms $full_ready_med) ms"
echo "# bench: full replay, backend replay + instantiate, overlapped $(ms $full_be_med) ms ($(ratio $full_be_med $mkf_med) x MKFILES floor, target <= 1.3; $(ratio $full_be_med $busy_med) x the floor with the other vCPU busy; process start excluded)"
cpu_med() { replay-tool median $(cat /tmp/full.$1); }
echo "# bench: full replay, CPU time in that window: replaying thread $(ms $(cpu_med cpu_replay_us)) ms, instantiating worker $(ms $(cpu_med cpu_inst_us)) ms, whole process $(ms $(cpu_med cpu_process_us)) ms (the check's threads included; 2 vCPUs)"
echo "# bench: hotplug, device back -> populated mount (daemon running) $(ms $hp_med) ms (target <= 500; $(ratio $hp_med $mkf_med) x MKFILES floor; after a bind of $(ms $(replay-tool median ${hp_bind:-0})) ms)"
echo "# bench: hotplug, backend replay + instantiate, overlapped $(ms $hp_be_med) ms"
echo "# bench: re-attach, daemon exec -> mount adopted          $(ms $re_med) ms ($(ms $((re_med - exec_med))) ms over process start, target <= 20; $(ratio $re_med $view_med) x view)"
echo "# bench: re-attach, daemon exec -> ready on the bus       $(ms $re_ready_med) ms"
echo "# bench: re-attach, kernel backend adopt alone             $(ms $re_be_med) ms (target <= 20)"
finish "last lines" 20
