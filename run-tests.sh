#!/bin/sh
# Installs what is missing, builds, and runs every test suite: unit, fsck
# corpus, interop fixtures, D-Bus, udev, kernel module in a VM (on pmem with
# Debian's 6.1 and, fetched first, 6.12 kernels (scripts/fetch-debian-kernel.sh),
# on /dev/dax with the dev_dax_iomap test kernel it builds
# first: scripts/build-test-kernel.sh), and the VM benchmarks (replay and mmap bandwidth, figures printed); then the
# user-space suites once more under AddressSanitizer and UBSan, the Debian
# packages (scripts/build-debs.sh, suite debs) and, installed with apt in a
# Debian guest with systemd as PID 1, the used-by list (suite vm-systemd;
# its root file system is cached by tests/vm/systemd/build-rootfs.sh), and the fuzz
# targets (tests/fuzz) for 60 s each.
#   ./run-tests.sh            everything
#   ./run-tests.sh --quick    skip the VM suites, the sanitizer pass and fuzzing
set -eu
cd "$(dirname "$0")"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

if [ "$quick" -eq 1 ]; then
	./scripts/install-deps.sh scripts/packages.txt
else
	./scripts/install-deps.sh scripts/packages.txt scripts/packages-vm.txt scripts/packages-debs.txt
fi

status=0
run_suites() {
	builddir=$1; shift
	if [ ! -f "$builddir/build.ninja" ]; then
		meson setup "$builddir" "$@"
	fi
	ninja -C "$builddir"
	meson test -C "$builddir" --print-errorlogs --num-processes 2 $suites || status=1
	python3 scripts/test-summary.py "$builddir/meson-logs/testlog.json" || true
}

if [ "$quick" -eq 1 ]; then
	suites="--no-suite vm --no-suite kmod --no-suite debs"
	run_suites build-tests -Dvm_tests=disabled
else
	# The test kernel with dev_dax_iomap for the vm-devdax* suites: built
	# from Debian's linux-source-6.1 when its cache has none for these
	# patches (about 11 minutes on 2 cores), else reused at once.
	scripts/build-test-kernel.sh >/dev/null || { echo "run-tests: the test kernel did not build" >&2; status=1; }
	# Debian's 6.12 kernel for the *-6.12 tests, unpacked (not installed)
	# into /var/cache/famfs-debian-kernel; without it they skip, saying so.
	scripts/fetch-debian-kernel.sh 6.12 >/dev/null ||
		echo "run-tests: Debian's 6.12 kernel could not be fetched; the *-6.12 tests skip" >&2
	suites=""
	run_suites build-tests
	# The VM benchmarks check what they build as they go (every file there,
	# famfsctl check and fsck clean); their figures go to the output.
	meson test -C build-tests --benchmark --suite vm-bench --print-errorlogs --num-processes 1 || status=1
	grep -h '^# bench:' build-tests/meson-logs/testlog.txt || true
	# The sanitizers catch what the tests' assertions cannot see.
	suites="--no-suite vm --no-suite kmod --no-suite debs"
	# umockdev preloads its library ahead of the ASan runtime: allow that.
	ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		run_suites build-asan -Db_sanitize=address,undefined -Db_lundef=false \
			-Dkmod=disabled -Dvm_tests=disabled
	# libFuzzer targets (tests/fuzz), clang with ASan and UBSan, each for a
	# bounded time; a crash, leak or timeout fails the run.
	suites="--suite fuzz"
	CC=clang run_suites build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
		-Dkmod=disabled -Dvm_tests=disabled
	grep -h '^# bench: fuzz' build-fuzz/meson-logs/testlog.txt || true
fi
exit $status
