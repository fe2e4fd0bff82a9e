#!/bin/sh
# Installs what is missing, builds, and runs famfs-manager on its embedded
# default device: a 4 GiB sparse image, formatted on first run.  See
# README.md ("Quick start") for what to do with it.
set -eu
cd "$(dirname "$0")"
./scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build
ninja -C build
exec ./scripts/start-daemon.sh build "$@"
