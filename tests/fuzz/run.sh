#!/usr/bin/env bash
# Runs the fuzzers (tests/fuzz/README.md): every libFuzzer harness build-fuzz/fuzz_NAME from
# its checked-in seeds (tests/fuzz/corpus/NAME) for SECS seconds, one at a time, then the guest
# syscall fuzzer inside the sanitized Sentry (build-san/minisentry) for SECS seconds.
#
#   run.sh --time SECS [--smoke] ROOTFS
#
# --smoke (make test): a fresh working corpus each run, the syscall fuzzer with a fixed seed
# and FUZZ_SYS_TIME seconds (default 15). Without it (make fuzz) the working corpora in
# build-fuzz/corpus/NAME grow from run to run and the syscall fuzzer's seed is random. Each
# harness prints PASS or FAIL with its executions and coverage (libFuzzer's cov and ft); a
# crash, leak or hang leaves its input in build-fuzz/artifacts/ and the log in build-fuzz/logs/.
# When clang cannot link a libFuzzer program the harnesses are a SKIP line, not a failure.
# Environment: FUZZ_CC (clang), FUZZ_ONLY (regex of names to run), FUZZ_SEED, FUZZ_SYS_TIME,
# FUZZ_JOBS (harnesses at a time: 2 for --smoke on two CPUs, else 1).
set -uo pipefail

time=""
smoke=0
while [ $# -gt 1 ]; do
	case $1 in
	--time) time=$2; shift 2 ;;
	--smoke) smoke=1; shift ;;
	*) break ;;
	esac
done
if [ $# -ne 1 ] || ! [[ $time =~ ^[0-9]+$ ]]; then
	echo "usage: $0 --time SECS [--smoke] ROOTFS" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../jobs.sh"
top=$(cd "$here/../.." && pwd)
rootfs=$(cd "$1" 2>/dev/null && pwd) || { echo "fuzz: rootfs '$1' is not a directory" >&2; exit 2; }
cc=${FUZZ_CC:-clang}
out=$top/build-fuzz
mkdir -p "$out/logs" "$out/artifacts" "$out/corpus"
tmp=$(mktemp -d /tmp/minisentry-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

pass() { echo "PASS $1: $2"; passed=$((passed + 1)); }
# fresh BIN SRC: BIN is newer than SRC and this script (the guest programs are built only then).
fresh() { [ "$1" -nt "$2" ] && [ "$1" -nt "$here/run.sh" ]; }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# --- the libFuzzer harnesses --------------------------------------------------------------

names=()
for src in "$here"/fuzz_*.c; do
	n=$(basename "$src" .c)
	n=${n#fuzz_}
	[ -n "${FUZZ_ONLY:-}" ] && ! [[ $n =~ $FUZZ_ONLY ]] && continue
	names+=("$n")
done

printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$tmp/probe.c"
if [ ${#names[@]} -eq 0 ]; then
	:
elif ! "$cc" -fsanitize=fuzzer,address,undefined "$tmp/probe.c" -o "$tmp/probe" 2>"$tmp/probe.err"; then
	echo "SKIP libfuzzer: $cc cannot link -fsanitize=fuzzer (clang and its fuzzer runtime," \
		"libclang-rt-14-dev on Debian 12): $(head -n1 "$tmp/probe.err")"
	names=()
elif ! make -C "$top" --no-print-directory -j2 fuzz-build >"$out/logs/build.log" 2>&1; then
	fail build "make fuzz-build failed: $(grep -m1 -E 'error|Error' "$out/logs/build.log")"
	names=()
fi

# The restore seeds name the seed scene's executable (tests/fuzz/mkseeds.sh): it must be there
# for them to restore, and so reach the later sections.
if [ ${#names[@]} -gt 0 ]; then
	mkdir -p "$rootfs/opt/fuzz"
	fresh "$rootfs/opt/fuzz/seedscene" "$here/seedscene.c" ||
		gcc -static -O2 -pthread -Wall -Wextra -Werror -Wno-unused-result "$here/seedscene.c" \
			-o "$rootfs/opt/fuzz/seedscene" 2>"$out/logs/seedscene.log" ||
		echo "fuzz: cannot build seedscene.c: $(head -n1 "$out/logs/seedscene.log")"
fi

# harness NAME: one harness from its seeds, its PASS or FAIL line on stdout.
harness() {
	local n=$1 seeds work seedopt log rc runs secs cov corp what art
	seeds=$here/corpus/$n
	mkdir -p "$seeds"
	# The smoke in make test is reproducible: a fixed seed (a crash it finds, it finds on
	# every run); the long runs explore from a random one.
	if [ "$smoke" -eq 1 ]; then
		work=$tmp/corpus-$n
		seedopt=-seed=${FUZZ_SEED:-1}
	else
		work=$out/corpus/$n
		seedopt=
	fi
	mkdir -p "$work"
	log=$out/logs/$n.log
	rm -f "$out/artifacts/$n-"*
	# The outer timeout is the backstop for a harness that hangs outside libFuzzer's own
	# -timeout.
	FUZZ_ROOTFS=$rootfs timeout -k 10 $((time + 300)) "$out/fuzz_$n" \
		-max_total_time="$time" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 $seedopt \
		-artifact_prefix="$out/artifacts/$n-" "$work" "$seeds" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n1)
	corp=$(grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -n1)
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		pass "fuzz_$n" "${runs} runs (${secs:-?}/s) in ${time}s, ${cov:-no coverage line}, ${corp:-}"
	else
		what=$(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' "$log")
		art=$(ls "$out/artifacts/$n-"* 2>/dev/null | head -n1)
		fail "fuzz_$n" "exit $rc: ${what:-see $log}${art:+; input $art}"
	fi
}

# The smoke runs two harnesses at a time where there are two CPUs (each is one process and
# runs its wall-clock time whatever else runs); the long runs one at a time, the machine's cores
# being shared. FUZZ_JOBS chooses. The lines come in the order of the names.
cpus=$(nproc 2>/dev/null || echo 1)
jobs=1
[ "$smoke" -eq 1 ] && [ "$cpus" -ge 2 ] && jobs=2
jobs=${FUZZ_JOBS:-$jobs}
running=()
for n in "${names[@]}"; do
	while [ "${#running[@]}" -ge "$jobs" ]; do
		jobs_reap
	done
	harness "$n" >"$tmp/result-$n" 2>&1 &
	running+=($!)
done
wait
for n in "${names[@]}"; do
	cat "$tmp/result-$n"
	passed=$((passed + $(grep -c '^PASS ' "$tmp/result-$n")))
	failed=$((failed + $(grep -c '^FAIL ' "$tmp/result-$n")))
done

# --- the guest syscall fuzzer in the sanitized Sentry ------------------------------------

if [ -z "${FUZZ_ONLY:-}" ] || [[ sysfuzz =~ $FUZZ_ONLY ]]; then
	if [ "$smoke" -eq 1 ]; then
		stime=${FUZZ_SYS_TIME:-15}
		seed=${FUZZ_SEED:-1}
	else
		stime=${FUZZ_SYS_TIME:-$time}
		seed=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
	fi
	log=$out/logs/sysfuzz.log
	mkdir -p "$rootfs/opt/fuzz"
	if ! make -C "$top" --no-print-directory -j2 SAN=1 build-san/minisentry >"$out/logs/build-san.log" 2>&1; then
		fail sysfuzz "make SAN=1 failed: $(grep -m1 -E 'error|Error' "$out/logs/build-san.log")"
	elif ! fresh "$rootfs/opt/fuzz/sysfuzz" "$here/sysfuzz.c" &&
		! gcc -static -O2 -std=gnu11 -Wall -Wextra -Werror "$here/sysfuzz.c" \
			-o "$rootfs/opt/fuzz/sysfuzz" 2>"$log"; then
		fail sysfuzz "cannot build sysfuzz.c: $(head -n1 "$log")"
	else
		start=$(date +%s)
		timeout -k 10 $((stime + 120)) "$top/build-san/minisentry" run "$rootfs" -- \
			/opt/fuzz/sysfuzz "$seed" "$stime" </dev/null >"$log" 2>"$log.err"
		rc=$?
		took=$(($(date +%s) - start))
		san=$(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error|AddressSanitizer:DEADLYSIGNAL' "$log.err")
		if [ "$rc" -eq 0 ] && [ -z "$san" ] && grep -q '^sysfuzz: seed' "$log"; then
			pass sysfuzz "$(sed -n 's/^sysfuzz: seed [0-9]*: //p' "$log"); seed $seed, ${took}s"
			# Against the table: the syscalls the Sentry implements (supported or
			# partial) that answered, and that succeeded at least once.
			"$top/build-san/minisentry" --syscall-table 2>/dev/null |
				sed -n 's/^| \([0-9]*\) | [a-z0-9_]* | \(Supported\|Partial\) |.*/\1/p' >"$tmp/impl"
			impl=$(wc -l <"$tmp/impl")
			for what in answered succeeded; do
				sed -n "s/^sysfuzz: $what://p" "$log" | tr ' ' '\n' | grep . >"$tmp/$what"
			done
			echo "  implemented syscalls exercised: $(grep -cxFf "$tmp/impl" "$tmp/answered")" \
				"of $impl answered (not ENOSYS), $(grep -cxFf "$tmp/impl" "$tmp/succeeded")" \
				"of $impl succeeded at least once"
			sed -n 's/^sysfuzz: worker deaths/  worker deaths/p' "$log"
		elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			fail sysfuzz "the Sentry hung: no exit after $((stime + 120))s (seed $seed; $log.err)"
		else
			fail sysfuzz "exit $rc${san:+: $san} (seed $seed; $log.err)"
		fi
	fi
fi

echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
