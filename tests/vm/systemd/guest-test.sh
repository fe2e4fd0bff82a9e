#!/bin/bash
# guest-test.sh - the used-by list on a Debian 12 guest with systemd as PID 1
# (suite vm-systemd; run by famfs-vm-payload.service from /mnt/payload):
# install the packages with apt, let systemd-udevd, systemd and the real
# polkitd do their parts, and check each as TAP.
P=/mnt/payload
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$P/bin
export SYSTEMD_PAGER= SYSTEMD_COLORS=0
# ok, nok and check, as the busybox guests have them (run-vm-systemd.sh
# puts tests/vm/guest/stack-common.sh on the payload)
. $P/bin/stack-common.sh
# wait_for SECONDS COMMAND...: until it succeeds, polling every 0.2 s
wait_for() {
	local t=$(( $1 * 5 ))
	shift
	while [ $t -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
		t=$((t - 1))
	done
	return 1
}
prop() { systemctl show -P "$1" famfs-manager.service; }
active() { [ "$(prop ActiveState)" = active ] && [ "$(prop SubState)" = running ]; }
mounted() { grep -q " $MNT famfs " /proc/mounts; }
unmounted() { ! grep -q " famfs " /proc/mounts; }
famfs_mounts() { grep -c ' famfs ' /proc/mounts; }
adoptions() { journalctl -u famfs-manager -o cat --no-pager | grep -c 'adopted'; }
# adopted_since N: more than N adoptions in the journal, and one famfs mount
adopted_since() { [ "$(adoptions)" -gt "$1" ] && [ "$(famfs_mounts)" = 1 ]; }
call() { busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 "$@"; }
as() { local u=$1; shift; runuser -u "$u" -- "$@"; }
MNT=/run/famfs/pmem0
BOOT=$(date +%s)

echo "# guest kernel $(uname -r); systemd $(systemctl --version | head -1)"
check "system is up: systemd-udevd, dbus and polkit run" \
	sh -c 'systemctl is-active systemd-udevd.service dbus.service &&
	       busctl call org.freedesktop.PolicyKit1 /org/freedesktop/PolicyKit1/Authority \
	               org.freedesktop.DBus.Peer Ping && systemctl is-active polkit.service'
check "/dev/pmem0 is there (memmap pmem, nd_e820 loaded by udev)" test -b /dev/pmem0

# ---- install ----------------------------------------------------------------
t0=$(date +%s)
mkdir -p /tmp/debs && cp $P/debs/*.deb /tmp/debs/
check "apt install ./famfs-tools ./famfs-manager ./famfs-dkms (no network: every dependency is there)" \
	sh -c 'cd /tmp/debs && DEBIAN_FRONTEND=noninteractive apt-get install -y \
	       ./famfs-tools_*.deb ./famfs-manager_*.deb ./famfs-dkms_*.deb'
echo "# install took $(( $(date +%s) - t0 )) s (DKMS build under TCG included)"
check "dkms built and installed famfs for the running kernel" \
	sh -c "dkms status famfs >/tmp/dkms; cat /tmp/dkms; grep -q \"$(uname -r).*installed\" /tmp/dkms &&
	       modinfo -F vermagic famfs | grep -q \"^$(uname -r) \""
check "the postinst enabled famfs-manager.service" systemctl is-enabled famfs-manager.service
check "and systemd started it: active (running), so READY=1 came (Type=notify)" wait_for 60 active
check "the manager answers on the system bus" busctl get-property org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 Version

# ---- udev: the device appears ------------------------------------------------
systemctl stop famfs-manager.service
check "mkfs.famfs /dev/pmem0" mkfs.famfs -f /dev/pmem0
uuid=$(/lib/udev/famfs_id /dev/pmem0 | sed -n 's/^ID_FS_UUID=//p')
echo "# file system uuid $uuid"
# The namespace goes and comes back: a real remove and add uevent
check "the pmem namespace is disabled and enabled again (remove/add uevents)" \
	sh -c 'ndctl disable-namespace all && ndctl enable-namespace all'
check "systemd-udevd ran 60-famfs.rules: /dev/famfs/by-uuid/$uuid -> pmem0" \
	wait_for 30 sh -c "[ \"\$(readlink -f /dev/famfs/by-uuid/$uuid)\" = /dev/pmem0 ]"
check "60-famfs.rules asks for famfs-manager.service on add (SYSTEMD_WANTS)" \
	sh -c 'udevadm test --action=add /sys/class/block/pmem0 2>&1 | grep -qx "SYSTEMD_WANTS=famfs-manager.service"'
check "and not on change (a writer closing the device sends one)" \
	sh -c '! udevadm test --action=change /sys/class/block/pmem0 2>&1 | grep -q "^SYSTEMD_WANTS="'
check "SYSTEMD_WANTS started famfs-manager.service, which reached READY=1" wait_for 60 active
check "it automounted the file system at $MNT (famfs.ko, no config touched)" wait_for 60 mounted
systemctl status --no-pager famfs-manager.service 2>&1 | head -12 | sed 's/^/# /'

# ---- the bus, as root, a user and a granted group ------------------------------
check "CreateFile as root succeeds" call CreateFile stua{sv} $MNT/root-file 4194304 420 0
check "the file is mmap-able in the mount (write and read back through a shared mapping)" \
	fullstack-tool mmap-write $MNT/root-file 7
useradd -m alice
groupadd famfs-users
useradd -m -G famfs-users bob
as alice busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 CreateFile stua{sv} \
	$MNT/alice-file 2097152 420 0 >/tmp/out 2>&1
if grep -q 'not authorized for org.famfs.manager.create-file' /tmp/out && [ ! -e $MNT/alice-file ]; then
	ok "CreateFile as an unprivileged user: polkitd denies it ($(head -1 /tmp/out))"
else
	nok "CreateFile as an unprivileged user is not denied"; sed 's/^/# /' /tmp/out
fi
# famfsctl prints the error's name
as alice famfsctl create -s 2M $MNT/alice-file2 >/tmp/out 2>&1
if grep -q 'org.famfs.Error.AccessDenied' /tmp/out && [ ! -e $MNT/alice-file2 ]; then
	ok "famfsctl create as that user: the named error org.famfs.Error.AccessDenied"
else
	nok "famfsctl create as an unprivileged user: no AccessDenied"; sed 's/^/# /' /tmp/out
fi
cat >/etc/polkit-1/rules.d/50-famfs-users.rules <<'EOF'
polkit.addRule(function(action, subject) {
	if (action.id == "org.famfs.manager.create-file" && subject.isInGroup("famfs-users"))
		return polkit.Result.YES;
});
EOF
# polkitd reads rules.d again when it changes
check "with a rules file granting famfs-users, bob's CreateFile succeeds" \
	wait_for 20 runuser -u bob -- busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 \
	CreateFile stua{sv} $MNT/bob-file 2097152 420 0
check "famfsctl status as an unprivileged user" as alice famfsctl status
check "famfsctl --json status as an unprivileged user names the mount" \
	sh -c "runuser -u alice -- famfsctl --json status | grep -q '$MNT'"
check "the denial is in the journal at notice or above" \
	sh -c 'journalctl -u famfs-manager -p notice --no-pager -o cat | grep -qi "denied\|not authorized"'

# ---- fsck ----------------------------------------------------------------------
check "fsck.famfs /dev/pmem0" fsck.famfs /dev/pmem0
check "fsck -t famfs /dev/pmem0 (fsck(8) finds fsck.famfs)" fsck -t famfs /dev/pmem0

# ---- watchdog, stop, restart -----------------------------------------------------
# The unit's WatchdogSec is minutes; a drop-in shortens it (and the abort
# timeout) so the test waits seconds, the mechanism is the same.
mkdir -p /run/systemd/system/famfs-manager.service.d
printf '[Service]\nWatchdogSec=4s\nTimeoutAbortSec=3s\n' >/run/systemd/system/famfs-manager.service.d/50-test.conf
systemctl daemon-reload
systemctl restart famfs-manager.service
wait_for 60 active
wait_for 60 mounted
pid=$(prop MainPID)
restarts=$(prop NRestarts)
sleep 10
check "the daemon pings the watchdog: still pid $pid after 10 s at WatchdogSec=4s" \
	test "$(prop MainPID)" = "$pid"
kill -STOP "$pid"
restarted_since() { [ "$(prop NRestarts)" -gt "$1" ] && [ "$(prop ActiveState)" = active ]; }
check "SIGSTOPped, it is killed by the watchdog and restarted by systemd" \
	wait_for 60 restarted_since "$restarts"
check "the journal says the watchdog fired" \
	sh -c 'journalctl -u famfs-manager --no-pager | grep -qi "watchdog timeout"'
adopted_with_root_file() { adopted_since 0 && [ -f $MNT/root-file ]; }
check "the new daemon adopted the mount (one famfs mount, files still there)" \
	wait_for 30 adopted_with_root_file
check "the adopted file keeps its bytes" fullstack-tool mmap-write $MNT/root-file 7
rm -rf /run/systemd/system/famfs-manager.service.d
systemctl daemon-reload
restart_adopts() { local before=$(adoptions); systemctl restart famfs-manager.service && wait_for 30 adopted_since "$before"; }
check "systemctl restart: the mount is adopted by the new daemon, not made again" restart_adopts
# A stop after a restart: the restarted daemon knows the adopted mount for its own.
systemd-analyze log-level debug
stop_unmounts() { systemctl stop famfs-manager.service && unmounted; }
check "systemctl stop unmounts cleanly" stop_unmounts
stays_stopped() { sleep 5; ! systemctl is-active --quiet famfs-manager.service; }
check "and it stays stopped (nothing starts it again)" stays_stopped
if [ "$(systemctl is-active famfs-manager.service)" != inactive ]; then
	echo "# what systemd did after the stop:"
	journalctl -b -o short-monotonic --no-pager --since "-15s" |
		grep -E "famfs-manager.service|pmem0" | grep -v "^--" | tail -40 | sed 's/^/#   /'
fi
systemd-analyze log-level info
start_with_every_file() { systemctl start famfs-manager.service && wait_for 60 test -f $MNT/bob-file; }
check "systemctl start mounts it again with every file" start_with_every_file

# ---- the journal, priorities ---------------------------------------------------------
check "journalctl -u famfs-manager holds the daemon's info messages (ready on the bus)" \
	sh -c 'journalctl -u famfs-manager -p info --no-pager -o cat | grep -q "ready on the bus"'
check "messages carry priorities (journal PRIORITY field is not all 6)" \
	sh -c 'journalctl -u famfs-manager -o export --no-pager | grep -a "^PRIORITY=" | sort -u | grep -qv "PRIORITY=6"'

# ---- hardening ---------------------------------------------------------------------
score=$(systemd-analyze security famfs-manager.service 2>/dev/null | sed -n 's/.*Overall exposure level for famfs-manager.service: \([0-9.]*\).*/\1/p')
echo "# systemd-analyze security: exposure $score"
check "systemd-analyze security famfs-manager.service: exposure $score <= 5.0" \
	awk -v s="$score" 'BEGIN { exit !(s != "" && s + 0 <= 5.0) }'

# ---- a broken config --------------------------------------------------------------
cp /etc/famfs/manager.conf /tmp/manager.conf.good
echo "poll-interval = banana" >>/etc/famfs/manager.conf
systemctl restart famfs-manager.service >/dev/null 2>&1
sleep 1
check "a broken config: the unit fails at once, no restart loop (EX_CONFIG)" \
	sh -c '[ "$(systemctl show -P ActiveState famfs-manager.service)" = failed ] &&
	       [ "$(systemctl show -P ExecMainStatus famfs-manager.service)" = 78 ]'
check "and its status names the file, the line and the key" \
	sh -c 'systemctl status --no-pager -l famfs-manager.service 2>&1 | tee /dev/stderr | grep -q "manager.conf:[0-9]*: invalid value.*poll-interval"'
cp /tmp/manager.conf.good /etc/famfs/manager.conf
systemctl reset-failed famfs-manager.service
check "with the config repaired it starts again" sh -c 'systemctl start famfs-manager.service && sleep 1 && systemctl is-active famfs-manager.service'

# ---- purge -----------------------------------------------------------------------
check "apt purge famfs-manager famfs-tools famfs-dkms" \
	env DEBIAN_FRONTEND=noninteractive apt-get purge -y famfs-manager famfs-tools famfs-dkms
check "nothing left: no unit, bus policy, polkit policy, rule, config, module, mount" \
	sh -c "! systemctl cat famfs-manager.service >/dev/null 2>&1 &&
	       [ ! -e /usr/share/dbus-1/system.d/org.famfs.Manager.conf ] &&
	       [ ! -e /usr/share/polkit-1/actions/org.famfs.manager.policy ] &&
	       [ ! -e /lib/udev/rules.d/60-famfs.rules ] && [ ! -e /etc/famfs/manager.conf ] &&
	       ! find /lib/modules -name 'famfs.ko*' | grep -q . && [ ! -d /var/lib/dkms/famfs ] &&
	       ! grep -q ' famfs ' /proc/mounts"

if [ $fails -gt 0 ]; then
	echo "# journal of famfs-manager:"
	journalctl -u famfs-manager --no-pager -o short-monotonic | tail -60 | sed 's/^/# journal: /'
fi
echo "# guest test took $(( $(date +%s) - BOOT )) s"
echo "1..$n"
