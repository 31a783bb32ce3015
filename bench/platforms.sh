#!/usr/bin/env bash
# The two platforms side by side (docs/platform.md): one intercepted syscall with the guest on
# the Sentry's CPU, on another one and where auto puts it; open+close, fork, exec and a run of
# /bin/true under the default placement; and the syscalls per second of 1, 2, 4 and 8
# syscall-heavy threads on each platform and placement. Medians of BENCH_PLATFORM_RUNS (5).
# Sourced by bench/run.sh, or alone:  bench/platforms.sh MINISENTRY ROOTFS
if [ -z "${BENCH_SOURCED:-}" ]; then
  set -uo pipefail
  [ $# -eq 2 ] || { echo "usage: bench/platforms.sh MINISENTRY ROOTFS" >&2; exit 2; }
  MS=$(realpath -m "$1")
  ROOTFS=$(realpath -m "$2")
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  build="$repo/build/bench"
  RUNS=5 N_NATIVE=${BENCH_N_NATIVE:-200000} N_SANDBOX=${BENCH_N_SANDBOX:-20000} START_RUNS=5
  TIMEOUT=60
  WORK=$(mktemp -d /tmp/minisentry-bench.XXXXXX)
  trap 'rm -rf "$WORK"' EXIT
  bad=0
  mkdir -p "$build" "$ROOTFS/opt/bench"
  for prog in getpid files procs threads; do
    gcc -static -O2 -Wall -Wextra -Werror -pthread "$repo/bench/$prog.c" -o "$build/$prog" &&
      cp "$build/$prog" "$ROOTFS/opt/bench/$prog" || { echo "bench: cannot build $prog" >&2; exit 1; }
  done
  # The helpers of bench/run.sh this needs.
  eval "$(sed -n '/^median() {/,/^}/p; /^getpid_ns() {/,/^}/p; /^wall_ms() {/,/^}/p; /^fmt() {/p; /^ratio() {/,/^}/p' "$repo/bench/run.sh")"
fi

PLAT_RUNS=${BENCH_PLATFORM_RUNS:-5}
native_of() { # native_of PROG MODE N: the native figure, as the tables below take it
  if [ "$(id -u)" -eq 0 ]; then getpid_ns "$3" chroot "$ROOTFS" /opt/bench/"$1" $2
  else getpid_ns "$3" "$build/$1" $2; fi
}
saved=$RUNS
RUNS=$PLAT_RUNS
echo "### the platforms side by side (median of $PLAT_RUNS runs)"
echo
echo "| operation | unit | native | ptrace | seccomp | ptrace / native | seccomp / native |"
echo "|---|---|---:|---:|---:|---:|---:|"
plat_rows=(
  "getpid::--placement same:getpid on the Sentry's CPU:ns:$N_SANDBOX"
  "getpid::--placement other:getpid on another CPU:ns:$N_SANDBOX"
  "getpid::--placement auto:getpid, auto placement:ns:$N_SANDBOX"
  "files:open:--placement auto:open + close of /etc/passwd:µs:2000"
  "procs:fork:--placement auto:fork + exit + wait:µs:300"
  "procs:exec:--placement auto:fork + exec /bin/true + wait:µs:100"
)
for row in "${plat_rows[@]}"; do
  IFS=: read -r prog mode place label unit n <<<"$row"
  v_native=$(native_of "$prog" "$mode" "$([ "$prog" = getpid ] && echo "$N_NATIVE" || echo $((n * 10)))") || bad=1
  v_pt=$(getpid_ns "$n" "$MS" run --platform ptrace $place "$ROOTFS" -- /opt/bench/"$prog" $mode) || bad=1
  v_sc=$(getpid_ns "$n" "$MS" run --platform seccomp $place "$ROOTFS" -- /opt/bench/"$prog" $mode) || bad=1
  echo "| $label | $unit | $(fmt "$v_native") | $(fmt "$v_pt") | $(fmt "$v_sc") | $(ratio "$v_pt" "$v_native") | $(ratio "$v_sc" "$v_native") |"
  [ "$label" = "getpid on the Sentry's CPU" ] && sc_getpid_same=$v_sc
  [ "$label" = "getpid on another CPU" ] && sc_getpid_other=$v_sc
done
RUNS=$saved
START_SAVED=$START_RUNS
START_RUNS=$PLAT_RUNS
t_pt=$(wall_ms "$MS" run --platform ptrace "$ROOTFS" -- /bin/true) || bad=1
t_sc=$(wall_ms "$MS" run --platform seccomp "$ROOTFS" -- /bin/true) || bad=1
START_RUNS=$START_SAVED
echo "| run /bin/true | ms | - | $(fmt "$t_pt") | $(fmt "$t_sc") | - | - |"
echo

# Syscall-heavy threads (bench/threads.c): total getpid calls per second of 1, 2, 4 and 8
# threads, on each platform and placement (higher is better).
RUNS=$PLAT_RUNS
echo "### syscalls per second of N syscall-heavy threads (median of $PLAT_RUNS runs)"
echo
echo "| threads | native | ptrace same | ptrace other | ptrace auto | seccomp same | seccomp other | seccomp auto |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for t in 1 2 4 8; do
  line="| $t | $(fmt "$(native_of threads "$t" 2000000)")"
  for p in ptrace seccomp; do
    for place in same other auto; do
      v=$(getpid_ns 40000 "$MS" run --platform $p --placement $place "$ROOTFS" -- /opt/bench/threads "$t") || bad=1
      line+=" | $(fmt "$v")"
    done
  done
  echo "$line |"
done
RUNS=$saved
echo


[ -n "${BENCH_SOURCED:-}" ] || exit "$bad"
