#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs famfs-manager on its embedded default: a 4 GiB sparse image, made
# with mkfs.famfs on the first run, in a state directory.  On the system bus
# when one runs (installing the bus policy if it is missing), else on a
# private bus of type system that this script starts.  Prints how to talk to
# it and stays in the foreground until Ctrl-C.
#
# Usage: scripts/start-daemon.sh [BUILDDIR] [famfs-manager options...]
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
case $build in
/*) ;;
*) build=$top/$build ;;
esac
manager=$build/famfs-manager/famfs-manager
ctl=$build/famfs-manager/famfsctl
mkfs=$build/mkfs/mkfs.famfs
for f in "$manager" "$ctl" "$mkfs"; do
	if [ ! -x "$f" ]; then
		echo "start-daemon: $f is missing: build first (meson setup $build && ninja -C $build)" >&2
		exit 1
	fi
done

if [ "$(id -u)" = 0 ]; then
	state=/var/lib/famfs-manager
	uuid_file=/opt/famfs/system_uuid
else
	state=${XDG_STATE_HOME:-$HOME/.local/state}/famfs-manager
	uuid_file=$state/system_uuid
	echo "start-daemon: not root: the daemon will only accept changes from root or through polkit" >&2
fi
mkdir -p "$state"
image=$state/default.img
mount_root=/run/famfs
mountpoint=$mount_root/default

if [ ! -f "$image" ]; then
	echo "start-daemon: first run: creating the 4 GiB sparse image $image"
	truncate -s 4G "$image"
	if ! "$mkfs" --system-uuid-file "$uuid_file" "$image"; then
		rm -f "$image"
		exit 1
	fi
fi

bus_pid=
daemon_pid=
cleanup() {
	[ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
	[ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The system bus, if there is one we may own the name on.
use_system=no
if [ -S /run/dbus/system_bus_socket ] && busctl --system status >/dev/null 2>&1; then
	if [ ! -f /usr/share/dbus-1/system.d/org.famfs.Manager.conf ] &&
	   [ ! -f /etc/dbus-1/system.d/org.famfs.Manager.conf ] && [ "$(id -u)" = 0 ]; then
		echo "start-daemon: installing the bus policy /etc/dbus-1/system.d/org.famfs.Manager.conf"
		mkdir -p /etc/dbus-1/system.d
		cp "$top/dbus/org.famfs.Manager.conf" /etc/dbus-1/system.d/
		busctl --system call org.freedesktop.DBus /org/freedesktop/DBus \
			org.freedesktop.DBus ReloadConfig >/dev/null 2>&1 || true
		sleep 0.5
	fi
	if [ -f /usr/share/dbus-1/system.d/org.famfs.Manager.conf ] ||
	   [ -f /etc/dbus-1/system.d/org.famfs.Manager.conf ]; then
		use_system=yes
	fi
fi

if [ $use_system = yes ]; then
	unset DBUS_SYSTEM_BUS_ADDRESS
	addr=unix:path=/run/dbus/system_bus_socket
	where="the system bus"
else
	busdir=$state/bus
	mkdir -p "$busdir"
	chmod 0755 "$busdir"
	rm -f "$busdir/socket"
	cat > "$busdir/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$busdir/socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
  <include>$top/dbus/org.famfs.Manager.conf</include>
</busconfig>
EOF
	dbus-daemon --config-file="$busdir/bus.conf" --nofork --nopidfile 2>/dev/null &
	bus_pid=$!
	addr=unix:path=$busdir/socket
	i=0
	while [ ! -S "$busdir/socket" ]; do
		i=$((i + 1))
		if [ $i -gt 200 ]; then
			echo "start-daemon: dbus-daemon did not start" >&2
			exit 1
		fi
		sleep 0.05
	done
	export DBUS_SYSTEM_BUS_ADDRESS=$addr
	where="a private bus of type system ($addr; no system bus runs here)"
fi

"$manager" --device "$image" --system-uuid-file "$uuid_file" --mount-root "$mount_root" "$@" &
daemon_pid=$!
i=0
until busctl --system status org.famfs.Manager >/dev/null 2>&1; do
	i=$((i + 1))
	if ! kill -0 "$daemon_pid" 2>/dev/null || [ $i -gt 200 ]; then
		echo "start-daemon: famfs-manager did not come up" >&2
		exit 1
	fi
	sleep 0.05
done

env_prefix=
[ $use_system = no ] && env_prefix="DBUS_SYSTEM_BUS_ADDRESS=$addr "
cat <<EOF

famfs-manager is running on $where,
serving $image at $mountpoint.  Try, in another shell:

  ${env_prefix}$ctl status
  ${env_prefix}$ctl cp /etc/os-release $mountpoint/os-release
  ${env_prefix}$ctl cat $mountpoint/os-release
  ${env_prefix}$ctl ls -l $mountpoint
  ${env_prefix}busctl --system call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 ListFileSystems
  ${env_prefix}busctl --system call org.famfs.Manager /org/famfs/Manager org.famfs.Manager1 CreateFile 'stua{sv}' $mountpoint/hello 1048576 0644 0
  ${env_prefix}busctl --system introspect org.famfs.Manager /org/famfs/Manager

Press Ctrl-C to stop.
EOF
wait "$daemon_pid" || true
daemon_pid=
