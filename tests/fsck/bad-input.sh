#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fsck.famfs on inputs that cannot be a corpus folder: missing, empty and
# truncated files, a directory, a FIFO, a character device that is not DAX,
# and bad command lines.  Each must give its exit status and a message that
# says what is wrong (never a crash, never a hang).  Also checks that -n
# never writes and that -y does not write to a clean file system.  TAP.
#
#   bad-input.sh FSCK MKFS CORPUS_DIR
set -u

fsck=${1:?usage: bad-input.sh FSCK MKFS CORPUS_DIR}
mkfs=${2:?usage: bad-input.sh FSCK MKFS CORPUS_DIR}
corpus=${3:?usage: bad-input.sh FSCK MKFS CORPUS_DIR}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsck-bad.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
result() { # result OK DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 1 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# expect STATUS PATTERN DESCRIPTION -- ARGS...: runs fsck (10 s at most),
# wants exit STATUS and PATTERN (grep -E) somewhere in its output.
expect() {
	want=$1 pattern=$2 desc=$3
	shift 4
	timeout 10 "$fsck" "$@" >"$tmp/out" 2>&1
	got=$?
	ok=1
	if [ "$got" -ne "$want" ]; then
		echo "# exit status $got, expected $want"
		ok=0
	fi
	if ! grep -Eq -- "$pattern" "$tmp/out"; then
		echo "# output does not match /$pattern/"
		ok=0
	fi
	[ $ok -eq 1 ] || sed 's/^/#   /' "$tmp/out"
	result $ok "$desc"
}

echo "1..19"

echo 11111111-2222-4333-8444-555555555555 >"$tmp/sysuuid"
truncate -s 64M "$tmp/good.img"
"$mkfs" -q -u "$tmp/sysuuid" "$tmp/good.img" >/dev/null 2>&1

expect 8 "cannot open .*/missing.img: No such file" "missing file: exit 8" -- "$tmp/missing.img"

: >"$tmp/empty.img"
expect 8 "empty.img is empty \(0 bytes\)" "zero-length file: exit 8" -- "$tmp/empty.img"

mkdir "$tmp/dir"
expect 8 "dir: is a directory" "directory: exit 8" -- "$tmp/dir"

mkfifo "$tmp/fifo"
expect 8 "fifo: is a FIFO" "FIFO: exit 8, no hang" -- "$tmp/fifo"

expect 8 "/dev/null is not a DAX device" "/dev/null (a character device, not DAX): exit 8" -- /dev/null

printf 'famfs!!' >"$tmp/seven.img"
expect 4 "FATAL \[device-too-small\] .*7 bytes" "7-byte file: exit 4, device-too-small" -- "$tmp/seven.img"

head -c 199 "$tmp/good.img" >"$tmp/sb199.img"
expect 4 "FATAL \[device-too-small\]" "199 bytes, one short of a superblock: exit 4" -- "$tmp/sb199.img"

head -c 8192 "$tmp/good.img" >"$tmp/t8192.img"
expect 4 "FATAL \[device-too-small\] the log .* past the end of the medium \(8192 bytes\)" \
	"8192-byte truncation: exit 4, the log lies past the end" -- "$tmp/t8192.img"

head -c 2097160 "$tmp/good.img" >"$tmp/hdrcut.img"
expect 4 "FATAL \[device-too-small\]" "cut inside the log header: exit 4" -- "$tmp/hdrcut.img"

head -c 8192 "$tmp/good.img" >"$tmp/t8192j.img"
expect 4 '"device-too-small"' "8192-byte truncation with --json: exit 4, code in the JSON" -- --json "$tmp/t8192j.img"

expect 16 "no device given" "no device: exit 16" --
expect 16 "more than one device" "two devices: exit 16" -- "$tmp/good.img" "$tmp/good.img"
expect 16 "exclude each other" "-n with -y: exit 16" -- -n -y "$tmp/good.img"
expect 16 "Usage" "unknown option: exit 16" -- --no-such-option "$tmp/good.img"

expect 0 "good.img: clean" "freshly made file system: exit 0" -- "$tmp/good.img"

# -y on a clean file system must not write.
cp --sparse=always "$tmp/good.img" "$tmp/good-y.img"
expect 0 "clean" "-y on a clean file system: exit 0" -- -y "$tmp/good-y.img"
ok=1
cmp -s "$tmp/good.img" "$tmp/good-y.img" || ok=0
result $ok "-y on a clean file system leaves it byte for byte unchanged"

# -n on a repairable file system must not write either.
if zstd -q -d --sparse "$corpus/f_torn_tail/image.zst" -o "$tmp/torn.img" 2>/dev/null; then
	cp --sparse=always "$tmp/torn.img" "$tmp/torn-n.img"
	expect 4 "Repair possible: set the log's next index to 5" "-n on a torn tail: exit 4, repair offered" -- \
		-n "$tmp/torn-n.img"
	ok=1
	cmp -s "$tmp/torn.img" "$tmp/torn-n.img" || ok=0
	result $ok "-n on a torn tail leaves the image byte for byte unchanged"
else
	for k in 1 2; do
		n=$((n + 1))
		echo "ok $n # SKIP zstd is not installed"
	done
fi

[ "$n" -eq 19 ] || { echo "# ran $n tests, planned 19"; exit 1; }
[ $failed -eq 0 ]
