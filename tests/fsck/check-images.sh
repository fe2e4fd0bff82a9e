#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The committed images are what mkcase makes today: for every case mkcase
# lists, the freshly made image equals the decompressed image.zst byte for
# byte, and every case folder comes from mkcase.  Catches a generator edited
# without regenerating the corpus (tests/fsck/regen.sh).  TAP.
#
#   check-images.sh MKCASE CORPUS_DIR
set -u

mkcase=${1:?usage: check-images.sh MKCASE CORPUS_DIR}
corpus=${2:?usage: check-images.sh MKCASE CORPUS_DIR}

if ! command -v zstd >/dev/null 2>&1; then
	echo "1..0 # SKIP zstd is not installed"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsck-images.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

"$mkcase" --list | cut -d'|' -f1 >"$tmp/list" || { echo "Bail out! mkcase --list failed"; exit 1; }
for d in "$corpus"/*/; do
	[ -f "$d/name" ] && basename "$d"
done >"$tmp/folders"

total=$(($(wc -l <"$tmp/list") + 1))
echo "1..$total"
n=0
failed=0
while read -r c; do
	n=$((n + 1))
	ok=1
	if ! "$mkcase" "$c" "$tmp/new.img" ||
	   ! zstd -q -d --sparse -f "$corpus/$c/image.zst" -o "$tmp/old.img" ||
	   ! cmp "$tmp/old.img" "$tmp/new.img" >"$tmp/cmp" 2>&1; then
		ok=0
		sed 's/^/# /' "$tmp/cmp" 2>/dev/null
	fi
	rm -f "$tmp/new.img" "$tmp/old.img"
	if [ $ok -eq 1 ]; then
		echo "ok $n - $c"
	else
		echo "not ok $n - $c: image.zst differs from what mkcase makes (run tests/fsck/regen.sh)"
		failed=$((failed + 1))
	fi
done <"$tmp/list"

n=$((n + 1))
extra=$(sort "$tmp/folders" | comm -23 - "$(sort "$tmp/list" >"$tmp/list.sorted"; echo "$tmp/list.sorted")")
if [ -z "$extra" ]; then
	echo "ok $n - every case folder is made by mkcase"
else
	echo "not ok $n - case folders mkcase does not make: $extra"
	failed=$((failed + 1))
fi
[ $failed -eq 0 ]
