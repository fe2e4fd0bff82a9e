#!/bin/sh
# Builds the Debian packages with scripts/build-debs.sh (into a directory of
# its own under the build tree) and checks, as TAP, that each holds what it
# must, that the versions agree and that lintian finds no error.  Installing
# them is the job of a VM test, never of this host.
#   check-debs.sh SOURCE_DIR OUT_DIR
set -u
src=$1
export FAMFS_DEBS_DIR=$2
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { d=$1; shift; if "$@" >/dev/null 2>&1; then ok "$d"; else nok "$d"; fi; }

out=$("$src/scripts/build-debs.sh" 2>"$FAMFS_DEBS_DIR.log" | tail -1)
rc=$?
sed 's/^/# /' "$FAMFS_DEBS_DIR.log" | tail -5
check "scripts/build-debs.sh builds the packages" test $rc = 0 -a -d "$out"
version=$(basename "$out")

# holds DEB PATH...: every PATH is in DEB
holds() {
	deb=$out/$1_${version}_$2.deb
	shift 2
	dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >/tmp/debs-list.$$ || return 1
	for p in "$@"; do grep -qx "$p" /tmp/debs-list.$$ || { echo "# missing $p"; return 1; }; done
}
check "famfs-tools holds mkfs.famfs, fsck.famfs, famfs_id, the udev rule and their man pages" \
	holds famfs-tools amd64 /usr/sbin/mkfs.famfs /usr/sbin/fsck.famfs /lib/udev/famfs_id \
	/lib/udev/rules.d/60-famfs.rules /usr/share/man/man8/mkfs.famfs.8.gz /usr/share/man/man8/fsck.famfs.8.gz
check "famfs-manager holds the daemon, famfsctl, unit, bus policy, activation, interface, polkit policy, config, man pages" \
	holds famfs-manager amd64 /usr/sbin/famfs-manager /usr/bin/famfsctl /lib/systemd/system/famfs-manager.service \
	/usr/share/dbus-1/system.d/org.famfs.Manager.conf /usr/share/dbus-1/system-services/org.famfs.Manager.service \
	/usr/share/dbus-1/interfaces/org.famfs.Manager1.xml /usr/share/polkit-1/actions/org.famfs.manager.policy \
	/etc/famfs/manager.conf /usr/share/man/man8/famfs-manager.8.gz /usr/share/man/man8/famfsctl.8.gz
check "famfs-dkms holds the module sources, the uapi header and dkms.conf" \
	holds famfs-dkms all /usr/src/famfs-$version/dkms.conf /usr/src/famfs-$version/Kbuild \
	/usr/src/famfs-$version/famfs_inode.c /usr/src/famfs-$version/include/linux/famfs_ioctl.h
check "famfs-dkms's dkms.conf is for version $version" \
	sh -c "dpkg-deb --fsys-tarfile '$out/famfs-dkms_${version}_all.deb' | tar -xOf - ./usr/src/famfs-$version/dkms.conf | grep -qx 'PACKAGE_VERSION=\"$version\"'"
check "/etc/famfs/manager.conf is a conffile" \
	sh -c "dpkg-deb -I '$out/famfs-manager_${version}_amd64.deb' conffiles | grep -qx /etc/famfs/manager.conf"
check "famfs-manager's maintainer scripts enable the unit and never restart it on upgrade" \
	sh -c "d=\$(mktemp -d); dpkg-deb -e '$out/famfs-manager_${version}_amd64.deb' \$d &&
	       grep -q \"deb-systemd-helper enable 'famfs-manager.service'\" \$d/postinst &&
	       ! grep -q -e 'deb-systemd-invoke restart' -e 'try-restart' \$d/postinst; r=\$?; rm -rf \$d; exit \$r"
e=$(grep -c '^E:' "$out/lintian.txt")
sed -n '/^[EW]:/s/^/# lintian: /p' "$out/lintian.txt"
check "lintian: 0 errors ($e)" test "$e" = 0
rm -f /tmp/debs-list.$$
echo "1..$n"
[ $fails = 0 ]
