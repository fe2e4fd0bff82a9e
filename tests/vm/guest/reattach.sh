#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# reattach.sh - famfs-manager restarted while its famfs mount stays: the
# daemon (kernel backend, --device /dev/pmem0) mounts and replays a log of
# files and directories; it is killed with SIGKILL, which leaves the mount;
# while it is down another writer appends files to the log (replay-tool
# fill) and a rogue file appears in the mount.  The restarted daemon must
# adopt the mount (no second mount), keep every file it had (same inodes,
# same bytes), instantiate exactly the files appended meanwhile, duplicate
# nothing, and famfsctl check must name the rogue file, then pass once it is
# gone.  A second restart finds nothing to do.  Last, famfs.ko is loaded
# with mkfiles=0 (no MKFILES ioctl, like upstream's module) and the daemon
# must replay and create files one at a time.  The guest has two CPUs, so
# both fresh mounts are populated by the backend's worker while the replay
# runs.  Prints TAP.
export PATH=/bin:/sbin
MNT=/run/famfs/pmem0
UUIDF=/opt/famfs/system_uuid
. /bin/stack-common.sh
nmounts() { grep -c " $MNT famfs " /proc/mounts; }
call() { busctl call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 "$@"; }
# Every path in the mount with its inode number, type and size, sorted
listing() { (cd $MNT && find . | grep -v '^\./\.meta' | sort | while read -r p; do
	stat -c '%i %F %s %a %n' "$p"; done); }
start_daemon() { start_manager 60000; }
# The daemon's last "mount adopted" line, in /tmp/line and as a TAP comment
last_adopt_line() {
	grep 'mount adopted' /tmp/manager.log | tail -1 >/tmp/line
	echo "# $(cat /tmp/line)"
}

guest_identity 5f0c2c1e-7a43-4d0b-9f6e-2b1d0c9a8e71

check "mkfs.famfs on /dev/pmem0" mkfs.famfs -q -f -u $UUIDF /dev/pmem0
check "replay-tool fill: 100 files in the log before the daemon starts" \
	sh -c "replay-tool fill /dev/pmem0 $UUIDF pre 4096 100 | grep -q '^files 100 '"

start_system_bus
manager_conf kernel 100 "udev = no"

# ---- first start: a fresh mount ---------------------------------------------------
check "famfs-manager --device /dev/pmem0 starts and mounts" start_daemon
check "it made a fresh mount (not adopted)" test "$(field adopted </tmp/daemon.out)" = 0
check "the guest has two CPUs" test "$(grep -c ^processor /proc/cpuinfo)" -ge 2
check "the worker made the files while the log was replayed" grep -q 'ran alongside the replay' /tmp/manager.log
check "one famfs mount at $MNT" test "$(nmounts)" = 1
mk_tree() {
	call Mkdir 'sua{sv}' $MNT/d 488 0 && call Mkdir 'sua{sv}' $MNT/d/e 493 0 &&
	call CreateFile 'stua{sv}' $MNT/d/e/f 2097152 384 0 && call CreateFile 'stua{sv}' $MNT/top 4096 420 0
}
check "Mkdir d, d/e and CreateFile d/e/f, top" mk_tree
check "bytes written through the mount into d/e/f" sh -c "
	yes famfs-reattach | head -c 2097152 >/tmp/pattern && dd if=/tmp/pattern of=$MNT/d/e/f bs=64k conv=notrunc 2>/dev/null"
check "famfsctl check before the restart is clean" famfsctl check $MNT
listing >/tmp/before
c=$(replay-tool count $MNT)
check "the mount holds 102 files and 2 directories ($c)" test "$c" = "files 102 dirs 2"

# ---- SIGKILL, changes while the daemon is down ----------------------------------------
kill -KILL $PID
check "famfs-manager is gone after SIGKILL" wait_gone $PID
check "the famfs mount stays" test "$(nmounts)" = 1
check "another writer appends 20 files while the daemon is down" \
	sh -c "replay-tool fill /dev/pmem0 $UUIDF down 4096 20 | grep -q '^files 20 '"
check "the mount does not have them yet" test ! -e $MNT/down00000
touch $MNT/rogue

# ---- restart: the mount is adopted ------------------------------------------------------
check "famfs-manager starts again" start_daemon
check "it adopted the existing mount" test "$(field adopted </tmp/daemon.out)" = 1
check "still exactly one famfs mount at $MNT (nothing mounted on top)" test "$(nmounts)" = 1
last_adopt_line
check "the adopt made the 20 new files, found the 104 others, no conflicts or errors" \
	grep -q ': 20 made, 104 already there, 0 conflicts, 0 errors' /tmp/line
c=$(replay-tool count $MNT)
check "the mount holds 123 files (102 + 20 + rogue) and 2 directories ($c)" test "$c" = "files 123 dirs 2"
listing | grep -v -e ' \./down0' -e ' \./rogue$' >/tmp/after
check "every file from before is there with the same inode, type, size and mode" cmp /tmp/before /tmp/after
check "the bytes of d/e/f survived the restart" cmp /tmp/pattern $MNT/d/e/f
check "down00000..down00019 are in the mount with their size" \
	sh -c "for i in \$(seq 0 19); do test \"\$(stat -c %s $MNT/down\$(printf %05d \$i))\" = 4096 || exit 1; done"
famfsctl check $MNT >/tmp/check.rogue 2>&1
rc=$?
check "famfsctl check fails (exit $rc) on the rogue file" test $rc -ne 0
check "... and names it" grep -q rogue /tmp/check.rogue
rm -f $MNT/rogue
check "famfsctl check after the restart is clean" famfsctl check $MNT
create_after() { call CreateFile 'stua{sv}' $MNT/d/after 4096 420 0 && test -f $MNT/d/after; }
check "CreateFile after the restart goes into the adopted mount" create_after

# ---- a file deleted while the daemon is down comes back ----------------------------
# (the adopt record must not be trusted once a directory changed)
kill -KILL $PID
wait_gone $PID
rm -f $MNT/pre00005 $MNT/d/e/f
check "famfs-manager starts a third time" start_daemon
last_adopt_line
check "the adopt made the 2 files deleted meanwhile again: 2 made, 123 already there" \
	grep -q ': 2 made, 123 already there, 0 conflicts, 0 errors' /tmp/line
check "pre00005 and d/e/f are back with their sizes" \
	sh -c "test \"\$(stat -c %s $MNT/pre00005)\" = 4096 -a \"\$(stat -c %s $MNT/d/e/f)\" = 2097152"
check "d/e/f maps the same bytes as before" cmp /tmp/pattern $MNT/d/e/f
check "famfsctl check is clean" famfsctl check $MNT

# ---- a restart with nothing to do: the record is trusted -------------------------------
kill -KILL $PID
wait_gone $PID
check "famfs-manager starts a fourth time" start_daemon
last_adopt_line
check "it adopted the mount and made nothing: 0 made, 125 already there, 125 trusted" \
	grep -q ': 0 made, 125 already there, 0 conflicts, 0 errors.*; 125 trusted' /tmp/line
c=$(replay-tool count $MNT)
check "still 123 files and 2 directories ($c)" test "$c" = "files 123 dirs 2"
check "famfsctl check is clean" famfsctl check $MNT
check "d/e/f still maps the same bytes" cmp /tmp/pattern $MNT/d/e/f

# ---- asked at once: a restart takes the mount over first, and answers from the whole log --
kill -KILL $PID
wait_gone $PID
restart_and_ask_at_once /dev/pmem0
counted=$(cat /tmp/early.files)
check "a status asked as soon as the name is owned counts all 123 files ($counted)" test "$counted" = 123
check "the daemon took the mount over before its replay, and compared it with the log after" \
	sh -c "grep 'mount adopted' /tmp/early.log | head -1 | grep -q 'once it is replayed' &&
	       grep 'mount adopted' /tmp/early.log | tail -1 | grep -q ': 0 made, 125 already there, 0 conflicts, 0 errors'"
check "ready on the bus after the comparison" \
	sh -c "grep -n -e 'compared with the log in' -e 'ready on the bus' /tmp/early.log | head -1 | grep -q 'compared'"

# ---- a log entry rewritten in place, CRC and all, after it was replayed --------------
old=$(replay-tool rewrite $MNT/.meta/.log 3 0x200000 | field old_offset)
check "entry 3 (pre00003) rewritten to point into the log, CRC fixed up" test -n "$old"
famfsctl check $MNT >/tmp/check.rw 2>&1
rc=$?
sed 's/^/#   /' /tmp/check.rw | head -8
check "famfsctl check fails (exit $rc) on the rewritten entry" test $rc -ne 0
check "... and says the entry changed after it was replayed" grep -q 'changed after it was replayed' /tmp/check.rw
# The medium check reads the log where the daemon writes it (the mount's
# DAX mapping), not the pmem device's page cache, which still holds entry 3
# as it was.
check "... and the medium check sees the rewritten extent in the metadata" grep -q 'extent-in-metadata' /tmp/check.rw
check "entry 3 put back" sh -c "replay-tool rewrite $MNT/.meta/.log 3 $old >/dev/null"
check "famfsctl check is clean again" famfsctl check $MNT

kill -TERM $PID
check "famfs-manager exits on SIGTERM" wait_gone $PID
check "and unmounts the mount it adopted (its record says an earlier run made it)" test "$(nmounts)" = 0
grep -q " $MNT famfs " /proc/mounts && umount $MNT
check "fsck.famfs on /dev/pmem0 afterwards is clean" fsck.famfs -n /dev/pmem0

# ---- a module without MKFILES (as upstream's): one file at a time ---------------------
check "famfs.ko reloaded with mkfiles=0" sh -c "rmmod famfs && insmod /modules/famfs.ko mkfiles=0"
check "famfs-manager starts on it and mounts" start_daemon
grep 'famfs mounted' /tmp/manager.log | tail -1 >/tmp/line
echo "# $(cat /tmp/line)"
check "it said it creates files one at a time" grep -q 'has no MKFILES ioctl' /tmp/manager.log
check "... from the worker beside the replay" sh -c "tail -3 /tmp/manager.log | grep -q 'ran alongside the replay'"
check "the attach made every node, with no conflicts or errors" \
	grep -q ': 125 made, 0 already there, 0 conflicts, 0 errors' /tmp/line
c=$(replay-tool count $MNT)
check "the mount holds 123 files and 2 directories ($c)" test "$c" = "files 123 dirs 2"
check "d/e/f maps the same bytes" cmp /tmp/pattern $MNT/d/e/f
check "d/e/f has mode 0600 and d mode 0750, as the log says" \
	test "$(stat -c %a $MNT/d/e/f) $(stat -c %a $MNT/d)" = "600 750"
create_late() { call CreateFile 'stua{sv}' $MNT/d/late 4096 416 0 && test "$(stat -c %a $MNT/d/late)" = 640; }
check "CreateFile without MKFILES makes the file with its mode" create_late
check "famfsctl check is clean" famfsctl check $MNT
kill -TERM $PID
check "famfs-manager exits on SIGTERM" wait_gone $PID
check "no famfs mount is left" test "$(nmounts)" = 0

# ---- the kernel backend cannot mount: backend = auto falls back to view ----------
echo "a file, not a directory" >/tmp/notadir
manager_conf auto 100 "udev = no" "mount-root = /tmp/notadir/famfs"
check "famfs-manager starts with a mount root it cannot create" start_daemon
check "it says why the kernel backend failed and that it uses the view backend" \
	grep -q 'kernel backend: cannot create /tmp/notadir/famfs/pmem0: Not a directory; using the view backend' /tmp/manager.log
famfsctl status >/tmp/status.out 2>&1
sed 's/^/# status: /' /tmp/status.out
check "famfsctl status shows the view backend, healthy" sh -c "grep -q view /tmp/status.out && grep -q ok /tmp/status.out"
check "nothing was mounted" test "$(grep -c ' famfs ' /proc/mounts)" = 0
kill -TERM $PID
check "famfs-manager exits on SIGTERM" wait_gone $PID
check "fsck.famfs is clean at the end" fsck.famfs -n /dev/pmem0
finish
