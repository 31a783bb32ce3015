#!/usr/bin/env bash
# The syscall conformance suite: builds every tests/conformance/t_*.c as a glibc-static guest
# (NAME.static) and a musl-dynamic one (NAME.musl), installs them in ROOTFS/opt/conformance/
# and runs each natively (chroot), under `minisentry run`, and under `minisentry run
# --save-restore-test` (every maybe_save() checkpoints, tears down and restores the sandbox);
# every run must pass.
#
#   run.sh MINISENTRY ROOTFS [t_name ...]
#
# A run passes when it exits with the expected status (0, or N for a test whose source says
# `conformance: expect-exit N`), prints `ok NAME` and prints no FAIL. A test whose source says
# `conformance: no-musl` is built static only. Every run gets CONF_MODE=MODE in its
# environment (check.h's in_sandbox()). Every test calls maybe_save() where its state is live,
# or says `conformance: no-save REASON` (it has no state worth saving); one that does neither
# fails. Environment knobs:
#   CONFORMANCE_MODES          modes to run (default "native sandbox save-restore
#                              save-restore-lazy": the last restores with --lazy); also
#                              save-restore-slots: check.h's early point writes a golden image
#                              restored through a slot, each maybe_save() a delta against it
#                              restored through that slot (`make conformance-slots`; `make
#                              conformance` runs it on a quick subset)
#   CONFORMANCE_SANDBOX_FLAGS  extra `minisentry run` options, e.g. --save-restore-test
#   CONFORMANCE_TIMEOUT        seconds one run may take (default 20); a run that hangs is
#                              killed and reported as a FAIL
#   CONFORMANCE_JOBS           tests run at a time (default 2, 1 on one CPU); a test's binaries
#                              and modes run one after the other
set -uo pipefail

if [ $# -lt 2 ]; then
	echo "usage: $0 MINISENTRY ROOTFS [t_name ...]" >&2
	exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../jobs.sh"
top=$(cd "$here/../.." && pwd)
build="$top/build/conformance"
self="$here/run.sh"

case "$1" in
*/*) minisentry="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" ;;
*) minisentry=$(command -v "$1" || echo "$1") ;;
esac
rootfs=$(cd "$2" 2>/dev/null && pwd) || {
	echo "conformance: rootfs '$2' is not a directory" >&2
	exit 2
}
shift 2

modes=${CONFORMANCE_MODES:-native sandbox save-restore save-restore-lazy}
for mode in $modes; do
	case "$mode" in
	native | sandbox | save-restore | save-restore-lazy | save-restore-slots) ;;
	*)
		echo "conformance: unknown mode '$mode'" >&2
		exit 2
		;;
	esac
done
limit=${CONFORMANCE_TIMEOUT:-20}
read -r -a sandbox_flags <<<"${CONFORMANCE_SANDBOX_FLAGS:-}"

# What every run gets: a known argv after argv[0] and exactly this environment, plus
# CONF_MODE=MODE (t_argv_env checks all of it).
test_args=(one "two words" three)
test_env=("PATH=/usr/sbin:/usr/bin:/sbin:/bin" "HOME=/root" "CONF_TEST=hello conformance")

CFLAGS_STATIC=(-static -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE)
CFLAGS_MUSL=(-O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE)

if [ "$(id -u)" -eq 0 ]; then
	native=("$(command -v chroot)" "$rootfs")
else
	native=("$(command -v unshare)" -r "--root=$rootfs")
fi

# What `conformance: native-devpts` runs in its mount namespace: sh -c SCRIPT sh ROOTFS GUEST ARGS.
native_devpts='set -e
mount --make-rprivate / 2>/dev/null || true
mount -t tmpfs -o mode=755 devtmp "$1/dev"
mkdir "$1/dev/pts"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$1/dev/pts"
ln -s pts/ptmx "$1/dev/ptmx"
mknod -m 666 "$1/dev/tty" c 5 0
mknod -m 666 "$1/dev/null" c 1 3
root=$1
shift
exec chroot "$root" "$@"'

# The tests to run: all t_*.c, or those named on the command line.
srcs=()
if [ $# -gt 0 ]; then
	for t in "$@"; do
		t=${t%.c}
		t=${t%.static}
		t=${t%.musl}
		srcs+=("$here/${t##*/}.c")
	done
else
	srcs=("$here"/t_*.c)
fi

mkdir -p "$build" "$rootfs/opt/conformance"

# build_one SRC OUT COMPILER FLAGS...: make-like, rebuilds when the source, a header of the
# suite or this script is newer than OUT. A failed build removes OUT and leaves the errors in
# OUT.log.
build_one() {
	local src=$1 out=$2 cc=$3
	shift 3
	local dep fresh=1
	for dep in "$src" "$self" "$here"/*.h; do
		[ -e "$out" ] && [ "$out" -nt "$dep" ] || fresh=0
	done
	[ $fresh = 1 ] && return 0
	if "$cc" "$@" "$src" -o "$out.tmp" >"$out.log" 2>&1; then
		mv -f "$out.tmp" "$out"
	else
		rm -f "$out" "$out.tmp"
	fi
}

# Builds in parallel, one compiler per CPU.
max_jobs=$(nproc 2>/dev/null || echo 2)
bins=()
for src in "${srcs[@]}"; do
	name=$(basename "$src" .c)
	if [ ! -f "$src" ]; then
		echo "conformance: no such test $src" >&2
		exit 2
	fi
	bins+=("$name.static")
	build_one "$src" "$build/$name.static" gcc "${CFLAGS_STATIC[@]}" &
	if ! grep -q 'conformance: no-musl' "$src"; then
		bins+=("$name.musl")
		build_one "$src" "$build/$name.musl" musl-gcc "${CFLAGS_MUSL[@]}" &
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do
		wait -n
	done
done
wait

passed=0
failed=0

report() { # report PASS|FAIL BIN MODE [DETAIL]
	if [ "$1" = PASS ]; then
		echo "PASS $2 $3"
	else
		echo "FAIL $2 $3: $4"
	fi
}

# One line out of the last few lines of a run's output.
last_lines() {
	if [ -s "$1" ]; then
		tail -n 4 "$1" | tr -d '\r' | paste -sd '|' | sed 's/|/ | /g' | cut -c 1-400
	else
		echo "(no output)"
	fi
}

# A test without a save point adds nothing under save-restore: it must say why.
for src in "${srcs[@]}"; do
	if ! grep -qE 'maybe_save\(\);' "$src" && ! grep -q 'conformance: no-save [^ ]' "$src"; then
		report FAIL "$(basename "$src")" save-points \
			"never calls maybe_save() and says no 'conformance: no-save REASON'"
		failed=$((failed + 1))
	fi
done

# run_bin BIN: BIN in every mode, one PASS or FAIL line each.
run_bin() {
	local bin=$1 name=${1%.*} mode out rc reader left srt_tmp expect guest kv run_pid watcher p
	local -a cmd run_env
	if [ ! -x "$build/$bin" ]; then
		for mode in $modes; do
			report FAIL "$bin" "$mode" "build failed: $(grep -m1 -i error "$build/$bin.log")"
		done
		return
	fi
	cp -f "$build/$bin" "$rootfs/opt/conformance/$bin"

	expect=$(sed -n 's/.*conformance: expect-exit \([0-9][0-9]*\).*/\1/p' "$here/$name.c" | head -n 1)
	expect=${expect:-0}
	guest="/opt/conformance/$bin"
	for mode in $modes; do
		out="$build/$bin.$mode.out"
		run_env=("${test_env[@]}" "CONF_MODE=$mode")
		case "$mode" in
		native)
			cmd=(env -i "${run_env[@]}" "${native[@]}" "$guest" "${test_args[@]}")
			# `conformance: native-proc`: natively too in a fresh pid namespace with /proc
			# mounted in the chroot (private to a new mount namespace), as in the sandbox.
			if grep -q 'conformance: native-proc' "$here/$name.c" && [ "$(id -u)" -eq 0 ]; then
				cmd=(env -i "${run_env[@]}" unshare -m -p -f "--mount-proc=$rootfs/proc"
				     chroot "$rootfs" "$guest" "${test_args[@]}")
			fi
			# `conformance: native-devpts`: natively with a /dev of its own in the chroot
			# (a tmpfs in a new mount namespace) holding a new devpts instance, ptmx, tty
			# and null, as the sandbox's devfs has them.
			if grep -q 'conformance: native-devpts' "$here/$name.c" && [ "$(id -u)" -eq 0 ]; then
				cmd=(env -i "${run_env[@]}" unshare -m sh -c "$native_devpts" sh
				     "$rootfs" "$guest" "${test_args[@]}")
			fi
			;;
		sandbox | save-restore | save-restore-lazy | save-restore-slots)
			cmd=("$minisentry" run --clear-env "${sandbox_flags[@]}")
			# Each maybe_save() checkpoints the whole sandbox, tears it down and restores it;
			# save-restore-lazy restores with --lazy (the guest runs on while its pages
			# load), and is save-restore to the test itself.
			[ "$mode" = save-restore ] && cmd+=(--save-restore-test)
			if [ "$mode" = save-restore-lazy ]; then
				# Confined, as every mode: the stubs send their userfaultfds
				# (docs/security.md, "A stub's userfaultfd").
				cmd+=(--save-restore-test=lazy)
				run_env=("${test_env[@]}" "CONF_MODE=save-restore")
			fi
			# save-restore-slots: check.h's early point (before main) writes a golden
			# image, restored through a pool of one slot made for it; each maybe_save()
			# then writes a delta against it, restored through that slot (reset in
			# between). Confined: deltas and resets tracked (by comparison only where a
			# write went unseen).
			if [ "$mode" = save-restore-slots ]; then
				cmd+=(--save-restore-test=slots)
				run_env=("${test_env[@]}" "CONF_MODE=save-restore")
			fi
			for kv in "${run_env[@]}"; do
				cmd+=(--env "$kv")
			done
			cmd+=("$rootfs" -- "$guest" "${test_args[@]}")
			;;
		esac
		# stdout (and stderr) is a pipe, as t_ioctl expects; stdin is /dev/null. The reader
		# has a limit too: a process the test left behind (natively, in a session of its
		# own) may hold the pipe open.
		# The slots variant's images and pool go to a directory of the run's own on a tmpfs,
		# which must be empty again when the run ends (its last Sentry removes them).
		srt_tmp=""
		if [ "$mode" = save-restore-slots ]; then
			srt_tmp=$(mktemp -d /dev/shm/minisentry-conformance.XXXXXX)
			cmd=(env "TMPDIR=$srt_tmp" "${cmd[@]}")
		fi
		# A watcher notes where the run's processes wait a second before its limit, for a
		# hang's report (proc_tree, tests/jobs.sh).
		rm -f "$out.hang"
		run_pid=$BASHPID
		(
			sleep $((limit - 1)) || exit 0
			for p in $(pgrep -P "$run_pid" -x timeout); do proc_tree "$p"; done >"$out.hang"
		) 2>/dev/null &
		watcher=$!
		timeout -k 5 "$limit" "${cmd[@]}" </dev/null 2>&1 | timeout -k 5 $((limit + 10)) cat >"$out"
		rc=${PIPESTATUS[0]} reader=${PIPESTATUS[1]}
		pkill -P "$watcher" -x sleep # and the watcher ends
		wait "$watcher"
		left=""
		if [ -n "$srt_tmp" ]; then
			left=$(ls -A "$srt_tmp" | tr '\n' ' ')
			rm -rf "$srt_tmp"
		fi
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			report FAIL "$bin" "$mode" "hung: no exit within ${limit}s (killed): $(last_lines "$out")"
			[ -s "$out.hang" ] && { echo "  where its processes waited a second before:"; cat "$out.hang"; }
		elif [ "$reader" -ne 0 ]; then
			report FAIL "$bin" "$mode" "hung: its output was still open $((limit + 10))s on (a process it left behind): $(last_lines "$out")"
		elif grep -q "is not in the Sentry's seccomp allowlist" "$out"; then
			# --debug-host-syscalls (MINISENTRY_DEBUG_HOST_SYSCALLS=1) names what is missing.
			report FAIL "$bin" "$mode" "$(grep -m1 "seccomp allowlist" "$out")"
		elif [ "$rc" -ne "$expect" ]; then
			report FAIL "$bin" "$mode" "exit $rc, expected $expect: $(last_lines "$out")"
		elif grep -q FAIL "$out" || ! grep -qx "ok $name" "$out"; then
			report FAIL "$bin" "$mode" "$(last_lines "$out")"
		elif [ -n "$left" ]; then
			report FAIL "$bin" "$mode" "its golden image or pool was left behind: $left"
		else
			report PASS "$bin" "$mode"
		fi
	done
}

# The tests run CONFORMANCE_JOBS at a time (default 2, 1 on one CPU), a test's binaries one after
# the other (natively they share the rootfs's /tmp); each test's lines are printed in the order
# of the tests, once it has ended.
jobs=${CONFORMANCE_JOBS:-$((max_jobs >= 2 ? 2 : 1))}
results=$(mktemp -d /tmp/minisentry-conformance.XXXXXX)
trap 'rm -rf "$results"' EXIT
names=()
last=""
for bin in "${bins[@]}"; do
	[ "$last" = "${bin%.*}" ] || names+=("${bin%.*}")
	last=${bin%.*}
done
run_test() { # run_test NAME: its binaries, the lines in RESULTS/NAME, then RESULTS/NAME.done
	local bin
	for bin in "${bins[@]}"; do
		[ "${bin%.*}" = "$1" ] && run_bin "$bin"
	done >"$results/$1" 2>&1
	: >"$results/$1.done"
}
shown=0
flush() {
	local n
	while [ "$shown" -lt "${#names[@]}" ] && [ -e "$results/${names[$shown]}.done" ]; do
		cat "$results/${names[$shown]}"
		n=$(grep -c '^PASS ' "$results/${names[$shown]}")
		passed=$((passed + n))
		n=$(grep -c '^FAIL ' "$results/${names[$shown]}")
		failed=$((failed + n))
		shown=$((shown + 1))
	done
}
# Stopped: the runs under way are stopped too (each is its own process group, under timeout).
running=()
stop_running() {
	local p
	for p in "${running[@]}"; do pkill -TERM -P "$p" 2>/dev/null; done
	exit 130
}
trap stop_running INT TERM
for name in "${names[@]}"; do
	while [ "${#running[@]}" -ge "$jobs" ]; do
		jobs_reap
		flush
	done
	run_test "$name" &
	running+=($!)
done
wait
flush
# A test whose job ended without its lines (it cannot, short of being killed) is a failure.
for name in "${names[@]:$shown}"; do
	report FAIL "$name" all "its job ended without a result"
	failed=$((failed + 1))
done

echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
