#!/bin/sh
# Runs one libFuzzer target for a bounded time from a fresh seed corpus and
# prints its figures as a bench line.  A crash, leak, timeout or broken
# property fails the test and leaves the input under WORK/artifacts/.
#   run-fuzz.sh EXE NAME SECONDS WORK MAKE_SEEDS FSCK_CORPUS INTEROP_DIR COMMITTED_CORPUS
set -eu
exe=$1 name=$2 seconds=$3 work=$4 make_seeds=$5 fsck_dir=$6 interop_dir=$7 committed=$8

rm -rf "$work"
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
python3 "$make_seeds" "$name" "$fsck_dir" "$interop_dir" "$work/seeds"
echo "seeds: $(ls "$work/seeds" | wc -l) generated, $(ls "$committed" | wc -l) committed"

rc=0
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	"$exe" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" "$work/seeds" "$committed" \
	>"$work/log" 2>&1 || rc=$?

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
echo "# bench: fuzz $name ${execs:-0} execs, ${rate:-0}/s"
if [ "$rc" -ne 0 ]; then
	tail -n 60 "$work/log"
	echo "fuzz-$name failed (exit $rc); reproducer(s):"
	ls -l "$work/artifacts"
	exit 1
fi
grep -E '^(#[0-9]+ +DONE|Done )' "$work/log" || true
