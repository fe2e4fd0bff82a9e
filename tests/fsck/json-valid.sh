#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fsck.famfs --json of every corpus image must be valid UTF-8 and valid JSON,
# whatever bytes the names on the medium hold (f_names_hostile).  Strict:
# python3 decodes the bytes as UTF-8 itself, never with surrogateescape.
#
#   json-valid.sh FSCK CORPUS_DIR
set -u

fsck=$1
corpus=$2
if ! command -v zstd >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP zstd or python3 is not installed"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsck-json.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

for d in "$corpus"/*/; do
	c=$(basename "$d")
	[ -f "$d/image.zst" ] || continue
	if zstd -q -d --sparse "$d/image.zst" -o "$tmp/image"; then
		"$fsck" -n --json "$tmp/image" >"$tmp/$c.json" 2>/dev/null
	else
		: >"$tmp/$c.json"
	fi
	rm -f "$tmp/image"
done
exec python3 - "$tmp" <<'PY'
import json, os, sys

d = sys.argv[1]
names = sorted(n for n in os.listdir(d) if n.endswith(".json"))
print(f"1..{len(names)}")
failed = 0
for k, n in enumerate(names, 1):
    try:
        with open(os.path.join(d, n), "rb") as f:
            json.loads(f.read().decode("utf-8"))
        print(f"ok {k} - {n[:-5]}")
    except Exception as e:
        failed += 1
        print(f"not ok {k} - {n[:-5]}: fsck --json output is not valid UTF-8 JSON")
        print(f"# {e}")
sys.exit(1 if failed else 0)
PY
