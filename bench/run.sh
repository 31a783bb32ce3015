#!/usr/bin/env bash
# Benchmarks (DESIGN.md §8, §9): the cost of one intercepted syscall (getpid), of a clock read
# through libc (the vDSO's), and of starting a sandbox (/bin/true), natively and under
# minisentry with the guest on the Sentry's CPU (--placement same), on another one, and where
# --placement auto (the default) puts it; and
# what the Sentry's confinement costs (against --unsafe-no-confine). Prints
# markdown tables of medians and ratios against native, then the targets; exits non-zero if a
# run failed or a target is missed.
# Usage: bench/run.sh MINISENTRY ROOTFS
# Knobs: BENCH_RUNS (9), BENCH_N_NATIVE (200000), BENCH_N_SANDBOX (20000), BENCH_START_RUNS (30),
# BENCH_N_CLOCK (2000000).
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: bench/run.sh MINISENTRY ROOTFS" >&2
  exit 2
fi
MS=$(realpath -m "$1")
ROOTFS=$(realpath -m "$2")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$repo/build/bench"
RUNS=${BENCH_RUNS:-9}
N_NATIVE=${BENCH_N_NATIVE:-200000}
N_SANDBOX=${BENCH_N_SANDBOX:-20000}
START_RUNS=${BENCH_START_RUNS:-30}
N_CLOCK=${BENCH_N_CLOCK:-2000000}
TIMEOUT=60
TARGET_GETPID_NS=10000
TARGET_TRUE_MS=10
WORK=$(mktemp -d /tmp/minisentry-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
bad=0

die() { echo "bench: $*" >&2; exit 1; }
[ -x "$MS" ] || die "$MS is not an executable (make)"
[ -d "$ROOTFS" ] || die "$ROOTFS is not a directory (make rootfs)"

mkdir -p "$build" "$ROOTFS/opt/bench"
gcc -static -O2 -Wall -Wextra -Werror "$repo/bench/getpid.c" -o "$build/getpid" ||
  die "cannot build bench/getpid.c (static glibc missing?)"
cp "$build/getpid" "$ROOTFS/opt/bench/getpid"
gcc -static -O2 -Wall -Wextra -Werror -pthread "$repo/bench/procs.c" -o "$build/procs" ||
  die "cannot build bench/procs.c"
cp "$build/procs" "$ROOTFS/opt/bench/procs"
gcc -static -O2 -Wall -Wextra -Werror "$repo/bench/files.c" -o "$build/files" ||
  die "cannot build bench/files.c"
cp "$build/files" "$ROOTFS/opt/bench/files"
gcc -static -O2 -Wall -Wextra -Werror "$repo/bench/procall.c" -o "$build/procall" ||
  die "cannot build bench/procall.c"
cp "$build/procall" "$ROOTFS/opt/bench/procall"
gcc -static -O2 -Wall -Wextra -Werror "$repo/bench/net.c" -o "$build/net" ||
  die "cannot build bench/net.c"
cp "$build/net" "$ROOTFS/opt/bench/net"
gcc -static -O2 -Wall -Wextra -Werror -pthread "$repo/bench/threads.c" -o "$build/threads" ||
  die "cannot build bench/threads.c"
cp "$build/threads" "$ROOTFS/opt/bench/threads"
gcc -static -O2 -Wall -Wextra -Werror "$repo/bench/spawn.c" -o "$build/spawn" ||
  die "cannot build bench/spawn.c"
cp "$build/spawn" "$ROOTFS/opt/bench/spawn"
gcc -static -O2 -Wall -Wextra -Werror "$repo/bench/clock.c" -o "$build/clock" ||
  die "cannot build bench/clock.c"
cp "$build/clock" "$ROOTFS/opt/bench/clock"

# Native runs go through chroot (as the sandbox does) when we may; otherwise run directly.
if [ "$(id -u)" -eq 0 ]; then
  native_getpid=(chroot "$ROOTFS" /opt/bench/getpid)
  native_clock=(chroot "$ROOTFS" /opt/bench/clock)
  native_true=(chroot "$ROOTFS" /bin/true)
  native_label="native (chroot)"
else
  native_getpid=("$build/getpid")
  native_clock=("$build/clock")
  native_true=("$ROOTFS/bin/busybox" true)
  native_label="native (no chroot: not root)"
fi

median() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) exit 1
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# getpid_ns N CMD...: median ns per getpid over RUNS runs of `CMD N` (CMD ends with getpid);
# prints "failed" (and returns 1) at the first run that fails.
getpid_ns() {
  local n=$1 i ns
  shift
  for ((i = 0; i < RUNS; i++)); do
    if ! timeout -k 5 "$TIMEOUT" "$@" "$n" </dev/null >"$WORK/gp.out" 2>"$WORK/gp.err"; then
      echo failed
      return 1
    fi
    ns=$(awk 'NR == 1 { print $1 }' "$WORK/gp.out")
    [[ $ns =~ ^[0-9.]+$ ]] || { echo failed; return 1; }
    echo "$ns" >>"$WORK/gp.$$"
  done
  median <"$WORK/gp.$$"
  rm -f "$WORK/gp.$$"
}

# wall_ms CMD...: median wall time in ms of START_RUNS runs of CMD (hyperfine when present);
# prints "failed" (and returns 1) if CMD does not succeed.
wall_ms() {
  if ! timeout -k 5 "$TIMEOUT" "$@" </dev/null >/dev/null 2>&1; then
    echo failed
    return 1
  fi
  if command -v hyperfine >/dev/null; then
    local cmd
    cmd=$(printf '%q ' "$@")
    hyperfine -N --runs "$START_RUNS" --warmup 3 --style none --export-json "$WORK/hf.json" \
      "$cmd" >/dev/null 2>&1 || { echo failed; return 1; }
    tr -d ' \n' <"$WORK/hf.json" | grep -o '"median":[0-9.eE+-]*' | head -n1 |
      awk -F: '{ printf "%.3f\n", $2 * 1000 }'
  else
    local i t0 t1
    for ((i = 0; i < START_RUNS; i++)); do
      t0=$(date +%s%N)
      "$@" </dev/null >/dev/null 2>&1 || { echo failed; return 1; }
      t1=$(date +%s%N)
      echo $(((t1 - t0) / 1000)) >>"$WORK/wall.$$"
    done
    median <"$WORK/wall.$$" | awk '{ printf "%.3f\n", $1 / 1000 }'
    rm -f "$WORK/wall.$$"
  fi
}

fmt() { [ "$1" = failed ] && echo failed || printf '%.1f' "$1"; }
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b == 0) print "-"; else printf "%.1fx", a / b }'
}
# verdict VALUE LIMIT: "met" when VALUE < LIMIT.
verdict() {
  if [ "$1" = failed ]; then echo "failed"
  elif awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; then echo "met"
  else echo "MISSED"; bad=1; fi
}

peer_rows=()
gp_native=$(getpid_ns "$N_NATIVE" "${native_getpid[@]}") || bad=1
gp_auto=$(getpid_ns "$N_SANDBOX" "$MS" run --placement auto "$ROOTFS" -- /opt/bench/getpid) || bad=1
gp_same=$(getpid_ns "$N_SANDBOX" "$MS" run --placement same "$ROOTFS" -- /opt/bench/getpid) || bad=1
gp_other=$(getpid_ns "$N_SANDBOX" "$MS" run --placement other "$ROOTFS" -- /opt/bench/getpid) || bad=1
if command -v proot >/dev/null; then
  gp_proot=$(getpid_ns "$N_SANDBOX" proot -r "$ROOTFS" /opt/bench/getpid)
  peer_rows+=("| proot | $N_SANDBOX | $(fmt "$gp_proot") | $(ratio "$gp_proot" "$gp_native") |")
fi

echo "### getpid: ns per call (median of $RUNS runs)"
echo
echo "| where | calls per run | ns per getpid | ratio vs native |"
echo "|---|---:|---:|---:|"
echo "| $native_label | $N_NATIVE | $(fmt "$gp_native") | 1.0x |"
echo "| minisentry --placement auto (default) | $N_SANDBOX | $(fmt "$gp_auto") | $(ratio "$gp_auto" "$gp_native") |"
echo "| minisentry --placement same | $N_SANDBOX | $(fmt "$gp_same") | $(ratio "$gp_same" "$gp_native") |"
echo "| minisentry --placement other | $N_SANDBOX | $(fmt "$gp_other") | $(ratio "$gp_other" "$gp_native") |"
for row in "${peer_rows[@]}"; do echo "$row"; done
echo

# clock_gettime through libc: the vDSO's, natively the kernel's. MINISENTRY_VDSO_CLOCK=syscall
# makes every read the syscall, as before the guests had a vDSO (and on a host without a TSC
# to keep time with).
ck_native=$(getpid_ns "$N_CLOCK" "${native_clock[@]}") || bad=1
ck_auto=$(getpid_ns "$N_CLOCK" "$MS" run --placement auto "$ROOTFS" -- /opt/bench/clock) || bad=1
ck_same=$(getpid_ns "$N_CLOCK" "$MS" run --placement same "$ROOTFS" -- /opt/bench/clock) || bad=1
ck_other=$(getpid_ns "$N_CLOCK" "$MS" run --placement other "$ROOTFS" -- /opt/bench/clock) || bad=1
ck_sys=$(MINISENTRY_VDSO_CLOCK=syscall getpid_ns "$N_SANDBOX" "$MS" run --placement auto "$ROOTFS" -- \
  /opt/bench/clock) || bad=1
echo "### clock_gettime(CLOCK_MONOTONIC) through libc: ns per call (median of $RUNS runs)"
echo
echo "| where | calls per run | ns per call | ratio vs native |"
echo "|---|---:|---:|---:|"
echo "| $native_label | $N_CLOCK | $(fmt "$ck_native") | 1.0x |"
echo "| minisentry --placement auto (default) | $N_CLOCK | $(fmt "$ck_auto") | $(ratio "$ck_auto" "$ck_native") |"
echo "| minisentry --placement same | $N_CLOCK | $(fmt "$ck_same") | $(ratio "$ck_same" "$ck_native") |"
echo "| minisentry --placement other | $N_CLOCK | $(fmt "$ck_other") | $(ratio "$ck_other" "$ck_native") |"
echo "| minisentry, MINISENTRY_VDSO_CLOCK=syscall (a syscall per read) | $N_SANDBOX | $(fmt "$ck_sys") | $(ratio "$ck_sys" "$ck_native") |"
echo

# The two platforms side by side, and syscall-heavy threads (bench/platforms.sh, which also
# runs alone).
BENCH_SOURCED=1
# shellcheck source=bench/platforms.sh
source "$repo/bench/platforms.sh"

t_native=$(wall_ms "${native_true[@]}") || bad=1
t_auto=$(wall_ms "$MS" run --placement auto "$ROOTFS" -- /bin/true) || bad=1
t_same=$(wall_ms "$MS" run --placement same "$ROOTFS" -- /bin/true) || bad=1
t_other=$(wall_ms "$MS" run --placement other "$ROOTFS" -- /bin/true) || bad=1

echo "### start and exit: /bin/true, wall ms (median of $START_RUNS runs$(command -v hyperfine >/dev/null && echo ", hyperfine"))"
echo
echo "| where | ms | ratio vs native |"
echo "|---|---:|---:|"
echo "| $native_label | $(fmt "$t_native") | 1.0x |"
echo "| minisentry --placement auto (default) | $(fmt "$t_auto") | $(ratio "$t_auto" "$t_native") |"
echo "| minisentry --placement same | $(fmt "$t_same") | $(ratio "$t_same" "$t_native") |"
echo "| minisentry --placement other | $(fmt "$t_other") | $(ratio "$t_other" "$t_native") |"
echo

# Process operations: MODE, native N, sandbox N, unit. One number per run (bench/procs.c).
PROC_RUNS=${BENCH_PROC_RUNS:-5}
proc_rows=(
  "procs fork:fork + exit + wait:2000:300:µs"
  "procs exec:fork + exec /bin/true + wait:500:100:µs"
  "procs thread:pthread create + join:2000:300:µs"
  "procs pipe:pipe throughput, 64 KiB writes:512:128:MB/s"
  "files open:open + close of /etc/passwd:20000:2000:µs"
  "files stat:stat of /etc/passwd:20000:2000:µs"
  "files read4k:4 KiB pread of a rootfs file:20000:2000:µs"
  "files read4ktmp:4 KiB pread of a /tmp file:20000:2000:µs"
  "files seqread:sequential read of a 64 MiB /tmp file:64:64:MB/s"
)
echo "### processes, threads, pipes, files (median of $PROC_RUNS runs, default placement)"
echo
echo "| operation | unit | native | minisentry | minisentry / native |"
echo "|---|---|---:|---:|---:|"
for row in "${proc_rows[@]}"; do
  IFS=: read -r prog_mode label n_native n_sandbox unit <<<"$row"
  prog=${prog_mode% *}
  mode=${prog_mode#* }
  saved=$RUNS
  RUNS=$PROC_RUNS
  if [ "$(id -u)" -eq 0 ]; then
    v_native=$(getpid_ns "$n_native" chroot "$ROOTFS" /opt/bench/"$prog" "$mode") || bad=1
  else
    v_native=$(getpid_ns "$n_native" "$build/$prog" "$mode") || bad=1
  fi
  v_sandbox=$(getpid_ns "$n_sandbox" "$MS" run "$ROOTFS" -- /opt/bench/"$prog" "$mode") || bad=1
  RUNS=$saved
  r=$(ratio "$v_sandbox" "$v_native") # time: lower is better; MB/s: higher is better
  echo "| $label | $unit | $(fmt "$v_native") | $(fmt "$v_sandbox") | $r |"
done
echo

# The loopback network (bench/net.c): natively the host's loopback through its TCP/IP stack,
# in the sandbox the Sentry's private one (vfs/inet.c), and for scale gVisor's netstack
# (runsc do --network=none, ptrace platform) where runsc is installed and we are root.
# MODE:label:native N:sandbox N:unit.
NET_RUNS=${BENCH_NET_RUNS:-5}
net_rows=(
  "tcp:TCP throughput, 64 KiB writes:512:512:MB/s"
  "connect:TCP connect + accept + close:5000:2000:µs"
  "udp:UDP 64-byte ping-pong, round trip:20000:5000:µs"
)
have_runsc=0
command -v runsc >/dev/null && [ "$(id -u)" -eq 0 ] && have_runsc=1
echo "### loopback network (median of $NET_RUNS runs; ${MINISENTRY_PLATFORM:-default} platform, default placement and --placement other)"
echo
if [ $have_runsc = 1 ]; then
  echo "| operation | unit | native | minisentry | minisentry / native | --placement other | runsc (netstack, ptrace) |"
  echo "|---|---|---:|---:|---:|---:|---:|"
else
  echo "| operation | unit | native | minisentry | minisentry / native | --placement other |"
  echo "|---|---|---:|---:|---:|---:|"
fi
for row in "${net_rows[@]}"; do
  IFS=: read -r mode label n_native n_sandbox unit <<<"$row"
  saved=$RUNS
  RUNS=$NET_RUNS
  if [ "$(id -u)" -eq 0 ]; then
    v_native=$(getpid_ns "$n_native" chroot "$ROOTFS" /opt/bench/net "$mode") || bad=1
  else
    v_native=$(getpid_ns "$n_native" "$build/net" "$mode") || bad=1
  fi
  v_sandbox=$(getpid_ns "$n_sandbox" "$MS" run "$ROOTFS" -- /opt/bench/net "$mode") || bad=1
  v_other=$(getpid_ns "$n_sandbox" "$MS" run --placement other "$ROOTFS" -- /opt/bench/net "$mode") || bad=1
  runsc_col=""
  if [ $have_runsc = 1 ]; then
    v_runsc=$(getpid_ns "$n_sandbox" runsc --platform=ptrace --network=none do "$build/net" "$mode")
    runsc_col=" $(fmt "$v_runsc") |"
  fi
  RUNS=$saved
  echo "| $label | $unit | $(fmt "$v_native") | $(fmt "$v_sandbox") | $(ratio "$v_sandbox" "$v_native") | $(fmt "$v_other") |$runsc_col"
  eval "net_${mode}_native=\$v_native net_${mode}_sandbox=\$v_sandbox net_${mode}_other=\$v_other"
done
echo

# /proc/all against walking /proc/[pid] (the RFC's atop-like collector, bench/procall.c):
# stat, statm, status and io of every process, once per interval, five intervals each way,
# with N sleeping processes. Natively the walk runs in a fresh PID namespace with its own /proc
# (unshare --pid --mount-proc, so it sees just its N children, as the RFC's test did);
# in the sandbox both ways. Collector CPU is the guest's own (the Sentry's work for it is in the
# wall time). fork_ms shows a cost per process that grows with the number of processes.
# Medians of BENCH_PROCALL_RUNS (3) runs of the medians of five intervals.
PROCALL_RUNS=${BENCH_PROCALL_RUNS:-3}
echo "### /proc/all vs walking /proc/[pid]/{stat,statm,status,io} (median of $PROCALL_RUNS runs)"
echo
echo "| processes | native walk ms | sandbox: fork them ms | walk ms | walk syscalls | walk CPU ms | /proc/all ms | /proc/all syscalls | /proc/all CPU ms | time ratio | syscall ratio | /proc/all vs native walk |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
have_unshare=0
[ "$(id -u)" -eq 0 ] && unshare --pid --fork --mount-proc true 2>/dev/null && have_unshare=1
for n in ${BENCH_PROCALL_NS:-1000 5000 10000}; do
  rm -f "$WORK"/pa.*
  ok=1
  for ((i = 0; i < PROCALL_RUNS; i++)); do
    if r=$(timeout -k 5 300 "$MS" run --pids $((n + 100)) "$ROOTFS" -- /opt/bench/procall "$n" </dev/null 2>/dev/null); then
      read -r wms wsc ams asc _ _ fms wcpu acpu <<<"$r"
      for v in wms wsc ams asc fms wcpu acpu; do echo "${!v}" >>"$WORK/pa.$v"; done
    else
      ok=0
      break
    fi
    if [ $have_unshare = 1 ] && r=$(timeout -k 5 300 unshare --pid --fork --mount-proc "$build/procall" "$n" </dev/null 2>/dev/null); then
      read -r nms _ <<<"$r"
      echo "$nms" >>"$WORK/pa.nms"
    fi
  done
  if [ "$ok" = 1 ]; then
    fms=$(median <"$WORK/pa.fms") wms=$(median <"$WORK/pa.wms") wsc=$(median <"$WORK/pa.wsc")
    ams=$(median <"$WORK/pa.ams") asc=$(median <"$WORK/pa.asc")
    wcpu=$(median <"$WORK/pa.wcpu") acpu=$(median <"$WORK/pa.acpu")
    nms=$(median <"$WORK/pa.nms" 2>/dev/null || echo "n/a")
    echo "| $n | $nms | $fms | $wms | $wsc | $wcpu | $ams | $asc | $acpu | $(ratio "$wms" "$ams") | $(ratio "$wsc" "$asc") | $(ratio "$nms" "$ams") |"
  else
    echo "| $n | failed (or over 300 s) | | | | | | | | | | |"
    bad=1
  fi
done
echo

# Starting many sleeping processes (bench/spawn.c): what N forks take while the sandbox grows,
# and the Sentry's peak resident size (--stats), under each platform. New address spaces are
# forked from the stub factory, so a fork should cost the same at the 10,000th process as at
# the first; and the Sentry's memory per process (its peak less that of a sandbox of one
# process, over N) should stay a few KiB: its task, signal, descriptor and address-space
# records, not guest pages (docs/platform.md, "What a process costs the Sentry", has what
# those KiB are and what they were). Medians of BENCH_SPAWN_RUNS (3).
SPAWN_RUNS=${BENCH_SPAWN_RUNS:-3}
SPAWN_PLATFORMS=${BENCH_SPAWN_PLATFORMS:-seccomp ptrace}
spawn_10k=failed spawn_kib_10k=failed
spawn_peak_kib() { # spawn_peak_kib PLATFORM N: ms on stdout line 1, peak RSS KiB on line 2
  timeout -k 5 300 "$MS" run --stats --platform "$1" --pids $(($2 + 100)) "$ROOTFS" -- \
    /opt/bench/spawn "$2" </dev/null >"$WORK/sp.out" 2>"$WORK/sp.err" || return 1
  cat "$WORK/sp.out"
  awk '/stats: sentry: peak rss/ { print $(NF - 1) }' "$WORK/sp.err"
}
echo "### starting N sleeping processes: ms for the N forks, Sentry peak RSS (median of $SPAWN_RUNS runs)"
echo
echo "| processes | platform | native ms | minisentry ms | ms per process | Sentry peak RSS MiB | Sentry KiB per process |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for n in ${BENCH_SPAWN_NS:-1000 10000}; do
  rm -f "$WORK"/sp.native
  ok=1
  for ((i = 0; i < SPAWN_RUNS; i++)); do
    if [ "$(id -u)" -eq 0 ]; then
      timeout -k 5 120 chroot "$ROOTFS" /opt/bench/spawn "$n" </dev/null >>"$WORK/sp.native" 2>/dev/null || ok=0
    else
      timeout -k 5 120 "$build/spawn" "$n" </dev/null >>"$WORK/sp.native" 2>/dev/null || ok=0
    fi
  done
  nms=failed
  [ "$ok" = 1 ] && nms=$(median <"$WORK/sp.native")
  for plat in $SPAWN_PLATFORMS; do
    rm -f "$WORK"/sp.ms "$WORK"/sp.rss
    ok=1
    base=$(spawn_peak_kib "$plat" 1 | sed -n 2p) || ok=0
    for ((i = 0; ok && i < SPAWN_RUNS; i++)); do
      if out=$(spawn_peak_kib "$plat" "$n"); then
        sed -n 1p <<<"$out" >>"$WORK/sp.ms"
        sed -n 2p <<<"$out" >>"$WORK/sp.rss"
      else
        ok=0
      fi
    done
    if [ "$ok" = 1 ] && [ -n "$base" ]; then
      sms=$(median <"$WORK/sp.ms") rss=$(median <"$WORK/sp.rss")
      per=$(awk -v a="$sms" -v n="$n" 'BEGIN { printf "%.3f", a / n }')
      kib=$(awk -v r="$rss" -v b="$base" -v n="$n" 'BEGIN { printf "%.1f", (r - b) / n }')
      echo "| $n | $plat | $(fmt "$nms") | $(fmt "$sms") | $per | $(fmt "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')") | $kib |"
      if [ "$n" = 10000 ] && [ "$spawn_10k" = failed ]; then
        spawn_10k=$sms spawn_kib_10k=$kib
      fi
    else
      echo "| $n | $plat | $(fmt "$nms") | failed (or over 300 s) | | | |"
      bad=1
    fi
  done
done
echo

# A CI job: clone this repository and build ./minisentry with make -j2, natively and in a
# sandbox whose ROOTFS is the host's own root (its toolchain, read-only below the sandbox's
# memory layer). Wall seconds, median of BENCH_BUILD_RUNS (3); skipped without git and gcc.
BUILD_RUNS=${BENCH_BUILD_RUNS:-3}
if command -v git >/dev/null && command -v gcc >/dev/null && command -v make >/dev/null; then
  build_job='rm -rf /tmp/ms-bench-src && git clone -q "$0" /tmp/ms-bench-src &&
    make -C /tmp/ms-bench-src -j2 minisentry >/dev/null 2>&1 && rm -rf /tmp/ms-bench-src'
  build_s() { # build_s CMD...: wall seconds of one build, or nothing if it failed
    local t0 t1
    t0=$(date +%s.%N)
    "$@" /bin/sh -c "$build_job" "$repo" </dev/null >/dev/null 2>&1 || return 1
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
  }
  nat=() sbx=() same=()
  for _ in $(seq "$BUILD_RUNS"); do
    nat+=("$(build_s env)") || bad=1
    sbx+=("$(build_s timeout -k 5 600 "$MS" run / --)") || bad=1
    same+=("$(build_s timeout -k 5 600 "$MS" run --placement same / --)") || bad=1
  done
  b_nat=$(printf '%s\n' "${nat[@]}" | grep . | median) || b_nat=failed
  b_sbx=$(printf '%s\n' "${sbx[@]}" | grep . | median) || b_sbx=failed
  b_same=$(printf '%s\n' "${same[@]}" | grep . | median) || b_same=failed
  echo "### CI job: git clone + make -j2 of minisentry (median of $BUILD_RUNS runs, host root as ROOTFS)"
  echo
  echo "| where | seconds | ratio vs native |"
  echo "|---|---:|---:|"
  echo "| native | $b_nat | 1.0x |"
  echo "| minisentry (default placement: auto) | $b_sbx | $(ratio "$b_sbx" "$b_nat") |"
  echo "| minisentry --placement same | $b_same | $(ratio "$b_same" "$b_nat") |"
  echo
fi

# The Sentry's confinement (docs/security.md): its seccomp allowlist and namespaces against
# --unsafe-no-confine, the same binary without them (for this measurement only). Runs of the
# two alternate, so that the machine's drift falls on both; --placement same, the steadiest.
# paired N CMD...: "CONFINED UNCONFINED", the medians of RUNS runs of `minisentry run [...]
# ROOTFS -- CMD N` each.
paired() {
  local n=$1 i a b
  shift
  : >"$WORK/pc.$$"
  : >"$WORK/pu.$$"
  for ((i = 0; i < RUNS; i++)); do
    a=$(timeout -k 5 "$TIMEOUT" "$MS" run --placement same "$ROOTFS" -- "$@" "$n" </dev/null 2>/dev/null | awk 'NR == 1 { print $1 }')
    b=$(timeout -k 5 "$TIMEOUT" "$MS" run --placement same --unsafe-no-confine "$ROOTFS" -- "$@" "$n" </dev/null 2>/dev/null | awk 'NR == 1 { print $1 }')
    [[ $a =~ ^[0-9.]+$ ]] && [[ $b =~ ^[0-9.]+$ ]] || { echo "failed failed"; return 1; }
    echo "$a" >>"$WORK/pc.$$"
    echo "$b" >>"$WORK/pu.$$"
  done
  echo "$(median <"$WORK/pc.$$") $(median <"$WORK/pu.$$")"
}
pct() {
  if [ "$1" = failed ] || [ "$2" = failed ]; then echo -; else awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }'; fi
}
read -r c_gp u_gp <<<"$(paired "$N_SANDBOX" /opt/bench/getpid)" || bad=1
read -r c_open u_open <<<"$(paired 2000 /opt/bench/files open)" || bad=1
t_conf=$(wall_ms "$MS" run --placement same "$ROOTFS" -- /bin/true) || bad=1
t_unsafe=$(wall_ms "$MS" run --placement same --unsafe-no-confine "$ROOTFS" -- /bin/true) || bad=1
t_extra=failed
[ "$t_conf" = failed ] || [ "$t_unsafe" = failed ] ||
  t_extra=$(awk -v a="$t_conf" -v b="$t_unsafe" 'BEGIN { printf "%.3f\n", a - b }')
echo "### the Sentry's confinement: confined (the default) against --unsafe-no-confine (--placement same, medians of $RUNS alternating runs; start-up: $START_RUNS)"
echo
echo "| measure | confined | --unsafe-no-confine | cost |"
echo "|---|---:|---:|---:|"
echo "| getpid, ns per call | $(fmt "$c_gp") | $(fmt "$u_gp") | $(pct "$c_gp" "$u_gp") |"
echo "| open + close of /etc/passwd, µs | $(fmt "$c_open") | $(fmt "$u_open") | $(pct "$c_open" "$u_open") |"
echo "| run /bin/true, wall ms | $(fmt "$t_conf") | $(fmt "$t_unsafe") | +$(fmt "$t_extra") ms |"
echo
# The Sentry's own seccomp allowlist alone: on (the default) against off
# (MINISENTRY_DEBUG_HOST_SYSCALLS=none: namespaces, empty root, no capabilities all kept), runs
# alternating as above. paired_filter N CMD...: "ON OFF", medians of RUNS runs each.
paired_filter() {
  local n=$1 i a b
  shift
  : >"$WORK/fn.$$"
  : >"$WORK/ff.$$"
  for ((i = 0; i < RUNS; i++)); do
    a=$(timeout -k 5 "$TIMEOUT" "$MS" run --placement same "$ROOTFS" -- "$@" "$n" </dev/null 2>/dev/null | awk 'NR == 1 { print $1 }')
    b=$(MINISENTRY_DEBUG_HOST_SYSCALLS=none timeout -k 5 "$TIMEOUT" "$MS" run --placement same "$ROOTFS" -- "$@" "$n" </dev/null 2>/dev/null | awk 'NR == 1 { print $1 }')
    [[ $a =~ ^[0-9.]+$ ]] && [[ $b =~ ^[0-9.]+$ ]] || { echo "failed failed"; return 1; }
    echo "$a" >>"$WORK/fn.$$"
    echo "$b" >>"$WORK/ff.$$"
  done
  echo "$(median <"$WORK/fn.$$") $(median <"$WORK/ff.$$")"
}
read -r f_gp n_gp <<<"$(paired_filter "$N_SANDBOX" /opt/bench/getpid)" || bad=1
read -r f_open n_open <<<"$(paired_filter 2000 /opt/bench/files open)" || bad=1
t_nofilter=$(MINISENTRY_DEBUG_HOST_SYSCALLS=none wall_ms "$MS" run --placement same "$ROOTFS" -- /bin/true) || bad=1
t_fextra=failed
[ "$t_conf" = failed ] || [ "$t_nofilter" = failed ] ||
  t_fextra=$(awk -v a="$t_conf" -v b="$t_nofilter" 'BEGIN { printf "%.3f\n", a - b }')
echo "### the Sentry's seccomp allowlist: on (the default) against off (MINISENTRY_DEBUG_HOST_SYSCALLS=none, the rest of the confinement kept; --placement same, medians of $RUNS alternating runs; start-up: $START_RUNS)"
echo
echo "| measure | allowlist on | allowlist off | cost |"
echo "|---|---:|---:|---:|"
echo "| getpid, ns per call | $(fmt "$f_gp") | $(fmt "$n_gp") | $(pct "$f_gp" "$n_gp") |"
echo "| open + close of /etc/passwd, µs | $(fmt "$f_open") | $(fmt "$n_open") | $(pct "$f_open" "$n_open") |"
echo "| run /bin/true, wall ms | $(fmt "$t_conf") | $(fmt "$t_nofilter") | +$(fmt "$t_fextra") ms |"
echo

# The filter's cost as a fraction (target 5%), start-up's in ms (target 5).
cost_gp=failed cost_open=failed
[ "$c_gp" = failed ] || [ "$u_gp" = failed ] || cost_gp=$(awk -v a="$c_gp" -v b="$u_gp" 'BEGIN { print (a / b - 1) * 100 }')
[ "$c_open" = failed ] || [ "$u_open" = failed ] || cost_open=$(awk -v a="$c_open" -v b="$u_open" 'BEGIN { print (a / b - 1) * 100 }')

v_gp=$(verdict "$gp_auto" "$TARGET_GETPID_NS")
v_true=$(verdict "$t_auto" "$TARGET_TRUE_MS")
gp_us=failed
[ "$gp_auto" = failed ] || gp_us=$(awk -v a="$gp_auto" 'BEGIN { printf "%.2f µs", a / 1000 }')
echo "### targets (default placement: auto)"
echo
echo "| target | measured | verdict |"
echo "|---|---:|---|"
echo "| getpid under minisentry < 10 µs | $gp_us | $v_gp |"
true_ms=failed
[ "$t_auto" = failed ] || true_ms="$(fmt "$t_auto") ms"
echo "| /bin/true under minisentry < 10 ms | $true_ms | $v_true |"
# Issue 14: a clock read is no trap, within twice native's cost.
ck_limit=failed
[ "$ck_native" = failed ] || ck_limit=$(awk -v a="$ck_native" 'BEGIN { print 2 * a }')
v_clock=failed
[ "$ck_limit" = failed ] || v_clock=$(verdict "$ck_auto" "$ck_limit")
echo "| clock_gettime under minisentry < 2x native | $(fmt "$ck_auto") ns vs $(fmt "$ck_native") | $v_clock |"
# The network targets of issue 13: TCP throughput at least native's, a connect round trip
# under 50 µs, a ping-pong latency (half the round trip) under 15 µs.
v_tcp=failed
if [ "$net_tcp_sandbox" != failed ] && [ "$net_tcp_native" != failed ]; then
  v_tcp=$(verdict "$net_tcp_native" "$(awk -v a="$net_tcp_sandbox" 'BEGIN { print a + 0.001 }')")
fi
[ "$v_tcp" = met ] || bad=1
v_conn=$(verdict "$net_connect_sandbox" 50)
pp_half=failed pp_half_other=failed
[ "$net_udp_sandbox" = failed ] || pp_half=$(awk -v a="$net_udp_sandbox" 'BEGIN { printf "%.1f", a / 2 }')
[ "$net_udp_other" = failed ] || pp_half_other=$(awk -v a="$net_udp_other" 'BEGIN { printf "%.1f", a / 2 }')
v_pp=$(verdict "$pp_half" 15)
v_pp_other=$(verdict "$pp_half_other" 15)
echo "| TCP throughput under minisentry >= native | $(fmt "$net_tcp_sandbox") MB/s vs $(fmt "$net_tcp_native") | $v_tcp |"
echo "| TCP connect round trip under minisentry < 50 µs | $(fmt "$net_connect_sandbox") µs | $v_conn |"
echo "| UDP ping-pong latency (half a round trip) < 15 µs | $pp_half µs | $v_pp (not counted) |"
echo "| the same with --placement other | $pp_half_other µs | $v_pp_other (not counted) |"
# Issue 14's target for process creation: reported, not counted (a loaded machine misses it).
spawn_s=failed
[ "$spawn_10k" = failed ] || spawn_s=$(awk -v a="$spawn_10k" 'BEGIN { printf "%.2f", a / 1000 }')
echo "| 10,000 sleeping processes started in < 10 s | $spawn_s s | $(verdict "$spawn_s" 10) (not counted) |"
echo "| the Sentry's memory per sleeping process < 16 KiB (10,000, first platform) | $spawn_kib_10k KiB | $(verdict "$spawn_kib_10k" 16) (not counted) |"
v_cgp=$(verdict "$cost_gp" 5)
v_copen=$(verdict "$cost_open" 5)
v_start=$(verdict "$t_extra" 5)
echo "| confinement: getpid costs < 5% more | $(pct "$c_gp" "$u_gp") | $v_cgp |"
echo "| confinement: open + close costs < 5% more | $(pct "$c_open" "$u_open") | $v_copen |"
echo "| confinement: /bin/true starts < 5 ms later | +$(fmt "$t_extra") ms | $v_start |"
# The allowlist's own share: reported, not counted (on this shared VM it is within the
# run-to-run noise, docs/security.md, "Layer 3").
cost_fgp=failed cost_fopen=failed
[ "$f_gp" = failed ] || [ "$n_gp" = failed ] || cost_fgp=$(awk -v a="$f_gp" -v b="$n_gp" 'BEGIN { print (a / b - 1) * 100 }')
[ "$f_open" = failed ] || [ "$n_open" = failed ] || cost_fopen=$(awk -v a="$f_open" -v b="$n_open" 'BEGIN { print (a / b - 1) * 100 }')
echo "| allowlist alone: getpid costs < 5% more | $(pct "$f_gp" "$n_gp") | $(verdict "$cost_fgp" 5 | sed 's/MISSED/missed/') (not counted) |"
echo "| allowlist alone: open + close costs < 5% more | $(pct "$f_open" "$n_open") | $(verdict "$cost_fopen" 5 | sed 's/MISSED/missed/') (not counted) |"
# The UDP ping-pong target is reported, not counted: the default placement meets it only
# while the other CPU is free (its trial sends the two ends there), as --placement other does
# (docs/platform.md, "Placement"; docs/network.md).
[ "$v_gp" = met ] && [ "$v_true" = met ] && [ "$v_start" = met ] && [ "$v_conn" = met ] &&
  [ "$v_clock" = met ] &&
  [ "$bad" -eq 0 ]
