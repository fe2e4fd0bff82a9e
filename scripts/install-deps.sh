#!/bin/sh
# Installs the Debian packages that the given lists name (default:
# scripts/packages.txt) and that are not installed yet.  Needs root (or
# sudo) only when something is missing.
#   scripts/install-deps.sh [LIST...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- "$here/packages.txt"
missing=""
for pkg in $(cat "$@" | grep -v '^#' | sed 's/[[:space:]]*#.*//' | grep .); do
	if ! dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed'; then
		missing="$missing $pkg"
	fi
done
[ -z "$missing" ] && exit 0
echo "Installing:$missing"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# shellcheck disable=SC2086
$sudo apt-get install -y -q --no-install-recommends $missing
