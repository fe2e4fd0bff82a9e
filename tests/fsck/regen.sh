#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Regenerates the fsck corpus from mkcase: for every case mkcase lists, the
# folder with name, opts, image.zst, and expect.1 (and expect.2 for repair
# cases) from the current fsck.famfs.  Review every expect file by eye
# before committing: each must show the finding its case is about.
#
#   tests/fsck/regen.sh BUILD_DIR [CASE...]
set -eu

build=${1:?usage: regen.sh BUILD_DIR [CASE...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
mkcase=$build/tests/fsck/mkcase
fsck=$(cd "$build" && pwd)/fsck/fsck.famfs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$mkcase" --list >"$tmp/list"
done_cases=
while IFS='|' read -r name opts desc; do
	if [ $# -gt 0 ]; then
		case " $* " in *" $name "*) ;; *) continue ;; esac
	fi
	dir=$here/$name
	mkdir -p "$dir"
	echo "$desc" >"$dir/name"
	if [ -n "$opts" ]; then echo "$opts" >"$dir/opts"; else rm -f "$dir/opts"; fi
	"$mkcase" "$name" "$tmp/image"
	zstd -q -19 -f "$tmp/image" -o "$dir/image.zst"
	rm -f "$tmp/image" "$dir/expect.1" "$dir/expect.2"
	case " $opts " in *" -y "*|*" -p "*) : >"$dir/expect.2" ;; esac
	done_cases="$done_cases $name"
done <"$tmp/list"
if [ -z "$done_cases" ]; then
	echo "regen.sh: no such case in mkcase --list: $*" >&2
	exit 1
fi
# shellcheck disable=SC2086
sh "$here/run-case.sh" --update "$fsck" "$here" $done_cases
