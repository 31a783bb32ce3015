#!/usr/bin/env bash
# Runs cmocka unit-test binaries and totals their results across all of them.
#   bash tests/unit/run.sh BIN...
# Each binary's output passes through; the last line is "unit: N passed, N failed".
# A binary that crashes or exits non-zero without a FAILED summary counts as one failure, and
# so does one that runs longer than UNIT_TIMEOUT seconds (default 120): it is killed.
set -u

if [ "$#" -eq 0 ]; then
	echo "usage: $0 BIN..." >&2
	echo "unit: 0 passed, 0 failed"
	exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# cmocka's summary format is only guaranteed for its default output mode.
export CMOCKA_MESSAGE_OUTPUT=stdout

limit=${UNIT_TIMEOUT:-120}
passed=0
failed=0
for bin in "$@"; do
	if [ ! -x "$bin" ]; then
		echo "unit: $bin: not an executable" >&2
		failed=$((failed + 1))
		continue
	fi
	timeout -k 5 "$limit" "$bin" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "unit: $bin: hung: no exit within ${limit}s (killed)" >&2
		failed=$((failed + 1))
		continue
	fi

	p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test(s)\..*/\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test(s),.*/\1/p' "$log" | tail -n 1)
	passed=$((passed + ${p:-0}))
	if [ -n "$f" ]; then
		failed=$((failed + f))
	elif [ "$rc" -ne 0 ] || [ -z "$p" ]; then
		echo "unit: $bin: exited with status $rc without a cmocka failure summary" >&2
		failed=$((failed + 1))
	fi
done

echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
