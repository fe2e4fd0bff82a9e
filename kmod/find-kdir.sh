#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the newest kernel build directory (/lib/modules/*/build with a
# Makefile), or nothing.
for d in $(ls -d /lib/modules/*/build 2>/dev/null | sort -V -r); do
	if [ -f "$d/Makefile" ]; then
		echo "$d"
		exit 0
	fi
done
exit 0
