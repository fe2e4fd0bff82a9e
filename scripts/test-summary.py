#!/usr/bin/env python3
"""Prints one closing line for a meson test run: 'N passed, N failed, N skipped'.

Counts come from meson's testlog.json: one per meson test (a TAP program is one).
"""
import json
import sys


def main(path):
    passed = failed = skipped = 0
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            result = t.get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
