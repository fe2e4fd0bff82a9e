#!/bin/sh
# Builds the Debian packages (famfs-tools, famfs-manager, famfs-dkms) from
# this tree with dpkg-buildpackage in a copy, so the clone stays clean, runs
# lintian on them and leaves the .debs in $FAMFS_DEBS_DIR/<version>
# (default /var/cache/famfs-debs/<version>).
#   scripts/build-debs.sh               build; print the directory
#   scripts/build-debs.sh --print-dir   print the directory only
# The version lives in meson.build; debian/changelog and kmod/dkms.conf must
# say the same, or this stops and says which differs.
set -eu
cd "$(dirname "$0")/.."
version=$(sed -n "s/^ *version: '\([^']*\)'.*/\1/p" meson.build | head -1)
out=${FAMFS_DEBS_DIR:-/var/cache/famfs-debs}/$version
if [ "${1:-}" = --print-dir ]; then
	echo "$out"
	exit 0
fi
changelog=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' debian/changelog)
dkms=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' kmod/dkms.conf)
[ "$changelog" = "$version" ] ||
	{ echo "build-debs: debian/changelog says $changelog, meson.build $version" >&2; exit 1; }
[ "$dkms" = "$version" ] ||
	{ echo "build-debs: kmod/dkms.conf says $dkms, meson.build $version" >&2; exit 1; }

./scripts/install-deps.sh scripts/packages.txt scripts/packages-debs.txt >&2

work=$(mktemp -d /tmp/famfs-debs.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/famfs-manager-$version"
# The tracked files and the new ones not ignored: what a commit would hold
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$work/famfs-manager-$version"
start=$(date +%s)
(cd "$work/famfs-manager-$version" && dpkg-buildpackage -b -uc -us) >"$work/build.log" 2>&1 ||
	{ tail -40 "$work/build.log" >&2; echo "build-debs: dpkg-buildpackage failed" >&2; exit 1; }
lintian --info "$work"/*.changes >"$work/lintian.log" 2>&1 || true
mkdir -p "$out"
rm -f "$out"/*.deb
cp "$work"/*.deb "$out"/
cp "$work/lintian.log" "$out/lintian.txt"
echo "build-debs: built in $(( $(date +%s) - start )) s; lintian: $(grep -c '^E:' "$out/lintian.txt") errors," \
	"$(grep -c '^W:' "$out/lintian.txt") warnings ($out/lintian.txt)" >&2
echo "$out"
