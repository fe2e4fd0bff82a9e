#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The fsck corpus driver, in the e2fsprogs style.  For each case folder
# (tests/fsck/<case>/ with name, image.zst, expect.1 [, expect.2, opts]):
#   pass 1: fsck.famfs OPTS image    (OPTS from `opts`, default -n)
#   pass 2: fsck.famfs -n image      (only when expect.2 exists)
# Each pass's output, filtered through filter.sed and followed by
# "Exit status is N", must equal expect.N.  Prints TAP, one line per case.
#
#   run-case.sh FSCK CORPUS_DIR [CASE...]            check (all cases by default)
#   run-case.sh --update FSCK CORPUS_DIR [CASE...]   rewrite expect.N from the output
set -u

update=0
if [ "${1:-}" = "--update" ]; then
	update=1
	shift
fi
if [ $# -lt 2 ]; then
	echo "usage: $0 [--update] FSCK CORPUS_DIR [CASE...]" >&2
	exit 2
fi
fsck=$1
corpus=$2
shift 2
# fsck runs inside a temporary folder: make a relative path absolute.
case $fsck in
/*) ;;
*/*) fsck=$(pwd)/$fsck ;;
esac

if [ $# -eq 0 ]; then
	for d in "$corpus"/*/; do
		[ -f "$d/name" ] && set -- "$@" "$(basename "$d")"
	done
fi

if ! command -v zstd >/dev/null 2>&1; then
	echo "1..0 # SKIP zstd is not installed"
	exit 0
fi
if [ $# -eq 0 ]; then
	echo "Bail out! no cases found in $corpus"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsck-corpus.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# run_pass CASE_DIR N OPTS...: runs fsck in $tmp, filtered output in $tmp/out.N
run_pass() {
	dir=$1
	n=$2
	shift 2
	(cd "$tmp" && "$fsck" "$@" image >raw.$n 2>&1; echo "Exit status is $?" >>raw.$n)
	sed -e "s|$tmp/||g" -f "$corpus/filter.sed" "$tmp/raw.$n" >"$tmp/out.$n"
	if [ $update -eq 1 ]; then
		cp "$tmp/out.$n" "$dir/expect.$n"
		return 0
	fi
	if ! diff -u "$dir/expect.$n" "$tmp/out.$n" >"$tmp/diff.$n" 2>&1; then
		sed 's/^/# /' "$tmp/diff.$n"
		return 1
	fi
	return 0
}

echo "1..$#"
k=0
failed=0
for c in "$@"; do
	k=$((k + 1))
	dir=$corpus/$c
	desc=$(head -n 1 "$dir/name" 2>/dev/null)
	rm -f "$tmp"/image "$tmp"/raw.* "$tmp"/out.* "$tmp"/diff.*
	if ! zstd -q -d --sparse "$dir/image.zst" -o "$tmp/image"; then
		echo "not ok $k - $c: cannot decompress $dir/image.zst"
		failed=$((failed + 1))
		continue
	fi
	opts=-n
	[ -f "$dir/opts" ] && opts=$(cat "$dir/opts")
	ok=1
	# shellcheck disable=SC2086  # opts holds several words on purpose
	run_pass "$dir" 1 $opts || ok=0
	if [ -f "$dir/expect.2" ]; then
		run_pass "$dir" 2 -n || ok=0
	fi
	if [ $ok -eq 1 ]; then
		echo "ok $k - $c: $desc"
	else
		echo "not ok $k - $c: $desc"
		failed=$((failed + 1))
	fi
done
[ $failed -eq 0 ]
