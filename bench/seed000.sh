#!/usr/bin/env bash
# Seed 000's benchmark matrix with its own rigour (../shared/seeds/000_*): for cpus 96, 16 and
# 4 and the workloads idle, ps and walk-all, plus the seed's CPU-quota arm (cpus=2 with the
# whole sandbox under a quarter of a CPU, ps), each run
#   Start       `minisentry run` until the guest says it is ready,
#   Checkpoint  `minisentry checkpoint` of it (the command's wall time),
#   Restore     `minisentry restore` until its tasks run again (restore --stats),
# and measures wall time, the CPU time of the whole sandbox (launcher, Sentry and every stub:
# each phase runs in a cpuacct cgroup of its own), the image size, and the Sentry's anonymous
# memory 1.5 s after start and after restore. Two arms stand where the seed has "before" and
# "after": --eager-kernfs (every /proc and /sys node built, the shape of saving everything)
# and the default lazy kernfs. Runs are interleaved (cell by cell, arm by arm, round after
# round) so that drift in the machine's load falls on both arms alike. Each cell prints
# median ± the half-width of a ~95% confidence interval of the median (order statistics), the
# change of lazy against eager and a two-sided Mann-Whitney U test's p-value (normal
# approximation with ties), with the seed's gVisor figures beside ours.
#
# Usage: bench/seed000.sh MINISENTRY ROOTFS. Knobs: SEED_RUNS (16), SEED_CPUS ("96 16 4"),
# SEED_WORKLOADS ("idle ps walk-all"), SEED_QUOTA (1: include the quota arm). Needs root for
# the cgroups (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us and cpuacct where that is what the
# machine has); without them it says so and measures the Sentry's CPU only.
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: bench/seed000.sh MINISENTRY ROOTFS" >&2
  exit 2
fi
MS=$(realpath -m "$1")
ROOTFS=$(realpath -m "$2")
N=${SEED_RUNS:-16}
CPUS=${SEED_CPUS:-96 16 4}
WORKLOADS=${SEED_WORKLOADS:-idle ps walk-all}
QUOTA=${SEED_QUOTA:-1}
WORK=$(mktemp -d /tmp/minisentry-seed000.XXXXXX)
CG_NAME="minisentry-seed000-$$"
bad=0

declare -A prep=(
  [idle]=':'
  [ps]='cat /proc/sys/kernel/pid_max >/dev/null; cat /sys/devices/system/cpu/online >/dev/null; ps >/dev/null; for i in 1 2 3 4 5 6 7 8; do sleep 1000 & done; ps >/dev/null'
  [walk-all]='find /proc/sys /sys -exec stat -c %n {} + >/dev/null 2>&1'
)

# --- cgroups: one per phase, for the whole sandbox's CPU time and the quota arm --------------

cg_mode=none
if [ "$(id -u)" -eq 0 ]; then
  if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    cg_mode=v2
    cg_root=/sys/fs/cgroup/$CG_NAME
    mkdir -p "$cg_root" && echo +cpu >"$cg_root/cgroup.subtree_control" 2>/dev/null || cg_mode=none
  elif [ -d /sys/fs/cgroup/cpuacct ] && [ -d /sys/fs/cgroup/cpu ]; then
    cg_mode=v1
    mkdir -p "/sys/fs/cgroup/cpuacct/$CG_NAME" "/sys/fs/cgroup/cpu/$CG_NAME" || cg_mode=none
  fi
fi

cleanup() {
  local d
  if [ "$cg_mode" = v2 ]; then
    for d in "$cg_root"/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
    rmdir "$cg_root" 2>/dev/null
  elif [ "$cg_mode" = v1 ]; then
    for d in /sys/fs/cgroup/cpuacct/$CG_NAME/*/ /sys/fs/cgroup/cpu/$CG_NAME/*/; do
      [ -d "$d" ] && rmdir "$d" 2>/dev/null
    done
    rmdir "/sys/fs/cgroup/cpuacct/$CG_NAME" "/sys/fs/cgroup/cpu/$CG_NAME" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# cg_new NAME QUOTA: makes cgroup NAME (QUOTA: a fraction of a CPU, or "" for none).
cg_new() {
  case $cg_mode in
  v2)
    mkdir -p "$cg_root/$1"
    [ -n "$2" ] && echo "$(awk -v q="$2" 'BEGIN { printf "%d", q * 100000 }') 100000" >"$cg_root/$1/cpu.max"
    ;;
  v1)
    mkdir -p "/sys/fs/cgroup/cpuacct/$CG_NAME/$1" "/sys/fs/cgroup/cpu/$CG_NAME/$1"
    [ -n "$2" ] && echo 100000 >"/sys/fs/cgroup/cpu/$CG_NAME/$1/cpu.cfs_period_us" &&
      awk -v q="$2" 'BEGIN { printf "%d\n", q * 100000 }' >"/sys/fs/cgroup/cpu/$CG_NAME/$1/cpu.cfs_quota_us"
    ;;
  esac
  return 0
}

# cg_join NAME: moves this shell into cgroup NAME (its children are born there).
cg_join() {
  case $cg_mode in
  v2) echo $BASHPID >"$cg_root/$1/cgroup.procs" ;;
  v1)
    echo $BASHPID >"/sys/fs/cgroup/cpuacct/$CG_NAME/$1/cgroup.procs"
    echo $BASHPID >"/sys/fs/cgroup/cpu/$CG_NAME/$1/cgroup.procs"
    ;;
  esac
}

# cg_cpu_ms NAME: the CPU time of everything that ran in cgroup NAME, in ms.
cg_cpu_ms() {
  case $cg_mode in
  v2) awk '$1 == "usage_usec" { printf "%.3f\n", $2 / 1000 }' "$cg_root/$1/cpu.stat" ;;
  v1) awk '{ printf "%.3f\n", $1 / 1e6 }' "/sys/fs/cgroup/cpuacct/$CG_NAME/$1/cpuacct.usage" ;;
  *) echo 0 ;;
  esac
}

cg_free() {
  case $cg_mode in
  v2) rmdir "$cg_root/$1" 2>/dev/null ;;
  v1) rmdir "/sys/fs/cgroup/cpuacct/$CG_NAME/$1" "/sys/fs/cgroup/cpu/$CG_NAME/$1" 2>/dev/null ;;
  esac
  return 0
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# anon_kib LAUNCHER: the Sentry's anonymous resident memory (the launcher's child; the launcher
# itself under --unsafe-no-confine), in KiB.
anon_kib() {
  local s
  s=$(pgrep -P "$1" | head -1)
  awk '/^RssAnon:/ { print $2 }' "/proc/${s:-$1}/status" 2>/dev/null
}

wait_for() { # FILE REGEX SECS
  local i
  for ((i = 0; i < $3 * 100; i++)); do
    grep -qE -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.01
  done
  return 1
}

# one_run CPUS WORKLOAD ARM QUOTA: one Start, Checkpoint and Restore; appends "metric value"
# lines to $WORK/r.CELL.ARM.
one_run() {
  local cpus=$1 wl=$2 arm=$3 quota=$4 cell="$1.$2.${4:-0}" id="seed-$$-$RANDOM" flags=()
  local out="$WORK/r.$cell.$arm" t0 t1 c0 c1 pid ck bytes rs_wall
  [ "$arm" = eager ] && flags=(--eager-kernfs)
  rm -rf "$WORK/img" "$WORK/run.out" "$WORK/restore.err"
  cg_new "s$id" "$quota"
  t0=$(now_ms)
  (
    cg_join "s$id"
    exec timeout -k 5 120 "$MS" run --id "$id" --cpus "$cpus" "${flags[@]}" "$ROOTFS" -- \
      /bin/sh -c "${prep[$wl]}; echo ready; exec sleep 1000" </dev/null >"$WORK/run.out" 2>&1
  ) &
  pid=$!
  if ! wait_for "$WORK/run.out" '^ready$' 120; then
    echo "seed000: the sandbox did not start ($cell $arm): $(head -c 200 "$WORK/run.out")" >&2
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; cg_free "s$id"
    return 1
  fi
  t1=$(now_ms)
  echo "Start.wall $((t1 - t0))" >>"$out"
  echo "Start.cpu $(cg_cpu_ms "s$id")" >>"$out"
  sleep 1.5
  echo "Start.anon $(anon_kib "$(pgrep -P "$pid" | head -1)")" >>"$out"
  c0=$(cg_cpu_ms "s$id")
  t0=$(now_ms)
  if ! ck=$("$MS" checkpoint --image "$WORK/img" "$id" 2>&1); then
    echo "seed000: checkpoint failed ($cell $arm): $ck" >&2
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; cg_free "s$id"
    return 1
  fi
  t1=$(now_ms)
  wait "$pid" 2>/dev/null
  c1=$(cg_cpu_ms "s$id")
  bytes=$(sed -n 's/.*: \([0-9]*\) bytes, .*/\1/p' <<<"$ck")
  echo "Checkpoint.wall $((t1 - t0))" >>"$out"
  echo "Checkpoint.cpu $(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" >>"$out"
  echo "Checkpoint.state $bytes" >>"$out"
  cg_free "s$id"
  cg_new "r$id" "$quota"
  (
    cg_join "r$id"
    exec timeout -k 5 120 "$MS" restore --stats --image "$WORK/img" </dev/null >/dev/null 2>"$WORK/restore.err"
  ) &
  pid=$!
  if ! wait_for "$WORK/restore.err" 'stats: restore: wall' 120; then
    echo "seed000: restore failed ($cell $arm): $(head -n1 "$WORK/restore.err")" >&2
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; cg_free "r$id"
    return 1
  fi
  rs_wall=$(sed -n 's/.*stats: restore: wall \([0-9.]*\) ms.*/\1/p' "$WORK/restore.err")
  echo "Restore.wall $rs_wall" >>"$out"
  echo "Restore.cpu $(cg_cpu_ms "r$id")" >>"$out"
  sleep 1.5
  echo "Restore.anon $(anon_kib "$(pgrep -P "$pid" | head -1)")" >>"$out"
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  cg_free "r$id"
  return 0
}

# The cells: "CPUS WORKLOAD QUOTA".
cells=()
for c in $CPUS; do for w in $WORKLOADS; do cells+=("$c $w "); done; done
[ "$QUOTA" = 1 ] && [ "$cg_mode" != none ] && cells+=("2 ps 0.25")

echo "## Seed 000's matrix: eager (every /proc and /sys node built) against lazy kernfs"
echo
echo "n = $N interleaved runs per cell and arm; cgroups: $cg_mode$([ "$cg_mode" = none ] && echo ' (not root: CPU is the Sentry-only figure, no quota arm)');" \
  "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
for ((r = 0; r < N; r++)); do
  for cell in "${cells[@]}"; do
    read -r c w q <<<"$cell"
    # Alternate which arm goes first, so neither always runs on a warmer machine.
    if ((r % 2)); then arms="lazy eager"; else arms="eager lazy"; fi
    for arm in $arms; do
      one_run "$c" "$w" "$arm" "$q" || bad=1
    done
  done
done

# values CELL ARM METRIC: the run values of METRIC, one per line.
values() { awk -v m="$3" '$1 == m { print $2 }' "$WORK/r.$1.$2" 2>/dev/null; }

# summary: "median pct" of the values on stdin (pct: half-width of the ~95% CI of the median).
summary() {
  sort -g | awk '{ v[NR] = $1 } END {
    n = NR; if (n == 0) { print "- -"; exit }
    med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    k = int((n - 1.96 * sqrt(n)) / 2); if (k < 1) k = 1
    lo = v[k]; hi = v[n + 1 - k]
    d = (med - lo > hi - med) ? med - lo : hi - med
    printf "%.6g %.0f\n", med, (med > 0 ? 100 * d / med : 0) }'
}

# mwu A B: the two-sided p-value of a Mann-Whitney U test between files A and B of values.
mwu() {
  awk 'FNR == 1 { g++ } { x[++n] = $1; grp[n] = g }
    END {
      for (i = 1; i <= n; i++) idx[i] = i
      for (i = 2; i <= n; i++) { j = i; while (j > 1 && x[idx[j - 1]] > x[idx[j]]) { t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t; j-- } }
      ties = 0
      for (i = 1; i <= n; ) {
        j = i; while (j < n && x[idx[j + 1]] == x[idx[i]]) j++
        for (k = i; k <= j; k++) rank[idx[k]] = (i + j) / 2
        t = j - i + 1; ties += t * t * t - t; i = j + 1
      }
      n1 = 0; r1 = 0
      for (i = 1; i <= n; i++) if (grp[i] == 1) { n1++; r1 += rank[i] }
      n2 = n - n1
      if (n1 == 0 || n2 == 0) { print "-"; exit }
      u = r1 - n1 * (n1 + 1) / 2; mu = n1 * n2 / 2
      sd = sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
      if (sd == 0) { print "1.000"; exit }
      z = (u - mu); z = (z < 0 ? -z : z) - 0.5; if (z < 0) z = 0; z /= sd
      # erfc by Abramowitz and Stegun 7.1.26
      t = 1 / (1 + 0.3275911 * z / sqrt(2)); y = z / sqrt(2)
      erfc = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * exp(-y * y)
      printf "%.3f\n", erfc }' "$1" "$2"
}

# The seed's gVisor figures (before → after, the change), by row, for the columns beside ours.
declare -A gv=(
  [wall.Checkpoint/cpus=96/idle]="31.53m → 20.35m (-35.46%)" [wall.Restore/cpus=96/idle]="52.24m → 44.73m (-14.37%)" [wall.Start/cpus=96/idle]="355.5m → 340.2m (-4.30%)"
  [wall.Checkpoint/cpus=96/ps]="38.09m → 26.40m (-30.71%)" [wall.Restore/cpus=96/ps]="75.85m → 65.20m (-14.03%)" [wall.Start/cpus=96/ps]="348.7m → 330.4m (~)"
  [wall.Checkpoint/cpus=96/walk-all]="33.36m → 29.75m (-10.82%)" [wall.Restore/cpus=96/walk-all]="56.48m → 50.46m (-10.65%)" [wall.Start/cpus=96/walk-all]="327.0m → 333.2m (~)"
  [wall.Checkpoint/cpus=16/idle]="22.83m → 21.24m (-6.96%)" [wall.Restore/cpus=16/idle]="45.06m → 43.67m (~)" [wall.Start/cpus=16/idle]="340.7m → 343.7m (~)"
  [wall.Checkpoint/cpus=16/ps]="34.31m → 23.33m (-31.99%)" [wall.Restore/cpus=16/ps]="68.27m → 62.65m (~)" [wall.Start/cpus=16/ps]="347.1m → 334.5m (-3.64%)"
  [wall.Checkpoint/cpus=4/idle]="19.59m → 20.69m (~)" [wall.Restore/cpus=4/idle]="44.87m → 44.05m (~)" [wall.Start/cpus=4/idle]="337.5m → 329.7m (~)"
  [wall.Checkpoint/cpus=4/ps]="31.74m → 22.49m (-29.15%)" [wall.Restore/cpus=4/ps]="63.51m → 63.46m (~)" [wall.Start/cpus=4/ps]="331.3m → 329.7m (~)"
  [wall.Checkpoint/cpus=2,quota=0.25/ps]="35.82m → 22.61m (-36.87%)" [wall.Restore/cpus=2,quota=0.25/ps]="377.8m → 365.6m (~)" [wall.Start/cpus=2,quota=0.25/ps]="476.6m → 485.9m (~)"
  [cpu.Checkpoint/cpus=96/idle]="47.90m → 22.45m (-53.14%)" [cpu.Restore/cpus=96/idle]="99.71m → 85.62m (-14.13%)" [cpu.Start/cpus=96/idle]="94.07m → 90.34m (-3.97%)"
  [cpu.Checkpoint/cpus=96/ps]="62.19m → 45.08m (-27.52%)" [cpu.Restore/cpus=96/ps]="124.6m → 107.1m (-14.02%)" [cpu.Start/cpus=96/ps]="91.45m → 90.23m (~)"
  [cpu.Checkpoint/cpus=96/walk-all]="49.60m → 47.51m (~)" [cpu.Restore/cpus=96/walk-all]="108.89m → 96.85m (-11.06%)" [cpu.Start/cpus=96/walk-all]="93.08m → 90.33m (~)"
  [cpu.Checkpoint/cpus=16/idle]="14.98m → 12.71m (-15.17%)" [cpu.Restore/cpus=16/idle]="74.21m → 73.83m (~)" [cpu.Start/cpus=16/idle]="82.98m → 83.33m (~)"
  [cpu.Checkpoint/cpus=16/ps]="35.58m → 18.45m (-48.15%)" [cpu.Restore/cpus=16/ps]="99.11m → 91.48m (-7.70%)" [cpu.Start/cpus=16/ps]="82.21m → 82.08m (~)"
  [cpu.Checkpoint/cpus=4/idle]="12.67m → 11.85m (-6.51%)" [cpu.Restore/cpus=4/idle]="72.12m → 70.43m (~)" [cpu.Start/cpus=4/idle]="80.09m → 79.54m (~)"
  [cpu.Checkpoint/cpus=4/ps]="33.33m → 17.15m (-48.55%)" [cpu.Restore/cpus=4/ps]="94.10m → 86.62m (-7.95%)" [cpu.Start/cpus=4/ps]="80.83m → 81.51m (~)"
  [cpu.Checkpoint/cpus=2,quota=0.25/ps]="26.44m → 16.26m (-38.50%)" [cpu.Restore/cpus=2,quota=0.25/ps]="93.57m → 90.88m (-2.87%)" [cpu.Start/cpus=2,quota=0.25/ps]="77.74m → 77.56m (~)"
  [state.Checkpoint/cpus=96/idle]="372.5Ki → 113.8Ki (-69.46%)" [state.Checkpoint/cpus=96/ps]="611.3Ki → 272.6Ki (-55.41%)" [state.Checkpoint/cpus=96/walk-all]="464.5Ki → 274.5Ki (-40.91%)"
  [state.Checkpoint/cpus=16/idle]="173.9Ki → 113.3Ki (-34.87%)" [state.Checkpoint/cpus=16/ps]="412.6Ki → 252.8Ki (-38.74%)" [state.Checkpoint/cpus=4/idle]="145.4Ki → 113.2Ki (-22.14%)"
  [state.Checkpoint/cpus=4/ps]="384.0Ki → 249.8Ki (-34.96%)" [state.Checkpoint/cpus=2,quota=0.25/ps]="379.4Ki → 249.3Ki (-34.28%)"
  [anon.Restore/cpus=96/idle]="14.69Mi → 12.79Mi (-12.90%)" [anon.Start/cpus=96/idle]="11.82Mi → 11.46Mi (-3.09%)" [anon.Restore/cpus=96/ps]="16.67Mi → 14.88Mi (-10.69%)"
  [anon.Start/cpus=96/ps]="15.24Mi → 14.40Mi (-5.55%)" [anon.Restore/cpus=96/walk-all]="15.40Mi → 14.82Mi (-3.80%)" [anon.Start/cpus=96/walk-all]="13.94Mi → 13.64Mi (~)"
  [anon.Restore/cpus=16/idle]="11.90Mi → 11.55Mi (-2.95%)" [anon.Start/cpus=16/idle]="10.76Mi → 10.83Mi (~)" [anon.Restore/cpus=16/ps]="14.48Mi → 13.31Mi (-8.03%)"
)

# table KIND UNIT TITLE PHASES...: one of the seed's tables for metric KIND (wall, cpu, state,
# anon) over PHASES.
table() {
  local kind=$1 unit=$2 title=$3 phase cell c w q name e l pe pl p delta
  shift 3
  echo "### $title"
  echo
  echo "| benchmark | eager ($unit) | lazy ($unit) | lazy vs eager | p (n) | gVisor: before → after (seed 000) |"
  echo "|---|---:|---:|---:|---:|---|"
  for cell in "${cells[@]}"; do
    read -r c w q <<<"$cell"
    for phase in "$@"; do
      name="$phase/cpus=$c${q:+,quota=$q}/$w"
      values "$c.$w.${q:-0}" eager "$phase.$kind" >"$WORK/e"
      values "$c.$w.${q:-0}" lazy "$phase.$kind" >"$WORK/l"
      [ -s "$WORK/e" ] && [ -s "$WORK/l" ] || continue
      read -r e pe < <(summary <"$WORK/e")
      read -r l pl < <(summary <"$WORK/l")
      p=$(mwu "$WORK/e" "$WORK/l")
      delta=$(awk -v a="$e" -v b="$l" -v p="$p" 'BEGIN { if (p != "-" && p + 0 >= 0.05) print "~"; else if (a > 0) printf "%+.2f%%", 100 * (b - a) / a; else print "-" }')
      echo "| $name | $e ± $pe% | $l ± $pl% | $delta | $p ($(wc -l <"$WORK/l")) | ${gv[$kind.$name]:-} |"
    done
  done
  echo
}

table wall ms "Wall time (sec/op in the seed)" Checkpoint Restore Start
table cpu ms "CPU time of the whole sandbox (cpu-sec/op in the seed)" Checkpoint Restore Start
table state bytes "Image size (state-B in the seed)" Checkpoint
table anon KiB "Sentry anonymous memory 1.5 s after start / restore (sentry-anon-B in the seed)" Restore Start
exit $bad
