#!/usr/bin/env bash
# The checkpoint benchmark. Part one, the seed's (../shared/seeds/000_*): for cpus in {2, 4, 16,
# 96} and three workloads — idle (a shell that execs sleep), ps (reads a sysctl and the online CPU
# list, runs ps, starts 8 sleepers, runs ps again) and walk-all (stats every file under /proc/sys
# and /sys first) — checkpoint wall and CPU time, image bytes, restore wall and CPU time and the
# restored Sentry's RSS, in lazy and --eager-kernfs mode, medians of BENCH_CKPT_RUNS (10) runs,
# with the lazy/eager ratio. Checkpoint times are measured in the Sentry (quiesce + image
# written); restore times from the restoring process's main() to its tasks running again.
# Then the targets: an idle image under 64 KiB at every CPU count and idle checkpoint and
# restore each under 10 ms wall and CPU.
# Part two, issue 18's: guests holding BENCH_MEM_SIZES (16 64 256 1024) MiB of random or of
# patterned memory (tests/rootfs-progs/memfill.c), BENCH_MEM_RUNS (5) runs each: checkpoint
# and restore wall time (median, min, max), the image size, the throughput, against the
# native memcpy bandwidth of this machine (bench/membw.c) and the load average while it ran;
# where this minisentry has them, `restore --lazy` (time to the first instruction) and
# `checkpoint --parent` of the unchanged guest, all confined (docs/checkpoint.md, "Under
# confinement"); BENCH_MEM_UNCONFINED=1 runs everything with --unsafe-no-confine instead, for
# comparison. BENCH_CKPT_PARTS ("idle memory") picks parts.
# Exits non-zero if a run failed or a target is missed.
# Usage: bench/checkpoint.sh MINISENTRY ROOTFS
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: bench/checkpoint.sh MINISENTRY ROOTFS" >&2
  exit 2
fi
MS=$(realpath -m "$1")
ROOTFS=$(realpath -m "$2")
RUNS=${BENCH_CKPT_RUNS:-10}
CPUS=${BENCH_CKPT_CPUS:-2 4 16 96}
PARTS=${BENCH_CKPT_PARTS:-idle memory}
MEM_SIZES=${BENCH_MEM_SIZES:-16 64 256 1024}
MEM_RUNS=${BENCH_MEM_RUNS:-5}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d /tmp/minisentry-bench-ckpt.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
bad=0

median() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) exit 1
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

declare -A prep=(
  [idle]=':'
  [ps]='cat /proc/sys/kernel/pid_max >/dev/null; cat /sys/devices/system/cpu/online >/dev/null; ps >/dev/null; for i in 1 2 3 4 5 6 7 8; do sleep 1000 & done; ps >/dev/null'
  [walk-all]='find /proc/sys /sys -exec stat -c %n {} + >/dev/null 2>&1'
)

# one_run CPUS WORKLOAD MODE: prints "ck_wall_ms ck_cpu_ms bytes rs_wall_ms rs_cpu_ms rss_kib".
one_run() {
  local cpus=$1 wl=$2 mode=$3 id="bench-$$-$RANDOM" flags=()
  [ "$mode" = eager ] && flags=(--eager-kernfs)
  rm -rf "$WORK/img" "$WORK/run.out"
  timeout -k 5 120 "$MS" run --id "$id" --cpus "$cpus" "${flags[@]}" "$ROOTFS" -- \
    /bin/sh -c "${prep[$wl]}; echo ready; exec sleep 1000" </dev/null >"$WORK/run.out" 2>&1 &
  local pid=$! i
  for ((i = 0; i < 2400; i++)); do
    grep -q '^ready$' "$WORK/run.out" 2>/dev/null && break
    sleep 0.05
  done
  sleep 0.1
  local ck
  if ! ck=$("$MS" checkpoint --image "$WORK/img" "$id" 2>&1); then
    echo "bench: checkpoint failed ($cpus cpus, $wl, $mode): $ck" >&2
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 1
  fi
  wait "$pid" 2>/dev/null
  # "checkpointed 'x' to DIR: B bytes, P memory pages, W ms (cpu C ms)"
  local bytes wall cpu
  read -r bytes wall cpu < <(sed -n 's/.*: \([0-9]*\) bytes, [0-9]* memory pages, \([0-9.]*\) ms (cpu \([0-9.]*\) ms).*/\1 \2 \3/p' <<<"$ck")
  : >"$WORK/restore.err"
  timeout -k 5 120 "$MS" restore --stats --image "$WORK/img" </dev/null >/dev/null 2>"$WORK/restore.err" &
  pid=$!
  local rs=""
  for ((i = 0; i < 2400; i++)); do
    rs=$(sed -n 's/.*stats: restore: wall \([0-9.]*\) ms, cpu \([0-9.]*\) ms, rss \([0-9]*\) KiB.*/\1 \2 \3/p' "$WORK/restore.err")
    [ -n "$rs" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if [ -z "$rs" ] || [ -z "$bytes" ]; then
    echo "bench: restore failed ($cpus cpus, $wl, $mode): $(head -n1 "$WORK/restore.err")" >&2
    return 1
  fi
  echo "$wall $cpu $bytes $rs"
}

# medians CPUS WORKLOAD MODE: the six medians over RUNS runs into $med (a space-separated list).
medians() {
  local f r
  : >"$WORK/runs"
  for ((r = 0; r < RUNS; r++)); do
    one_run "$@" >>"$WORK/runs" || return 1
  done
  med=""
  for f in 1 2 3 4 5 6; do
    med+="$(awk -v f="$f" '{ print $f }' "$WORK/runs" | median) "
  done
}

part_idle() {
  echo "## Checkpoint and restore (medians of $RUNS runs)"
  echo
  echo "| cpus | workload | mode | checkpoint wall ms | checkpoint CPU ms | image bytes | restore wall ms | restore CPU ms | restored RSS KiB |"
  echo "|---|---|---|---|---|---|---|---|---|"
  declare -A result
  for cpus in $CPUS; do
    for wl in idle ps walk-all; do
      for mode in lazy eager; do
        if ! medians "$cpus" "$wl" "$mode"; then
          bad=1
          continue
        fi
        result[$cpus,$wl,$mode]=$med
        read -r a b c d e f <<<"$med"
        echo "| $cpus | $wl | $mode | $a | $b | $c | $d | $e | $f |"
      done
    done
  done
  echo
  echo "### lazy / eager"
  echo
  echo "| cpus | workload | checkpoint wall | checkpoint CPU | image bytes | restore wall | restore CPU | RSS |"
  echo "|---|---|---|---|---|---|---|---|"
  for cpus in $CPUS; do
    for wl in idle ps walk-all; do
      [ -n "${result[$cpus,$wl,lazy]:-}" ] && [ -n "${result[$cpus,$wl,eager]:-}" ] || continue
      read -r -a l <<<"${result[$cpus,$wl,lazy]}"
      read -r -a e <<<"${result[$cpus,$wl,eager]}"
      row="| $cpus | $wl |"
      for i in 0 1 2 3 4 5; do
        row+=" $(awk -v a="${l[$i]}" -v b="${e[$i]}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }') |"
      done
      echo "$row"
    done
  done
  echo
  echo "### Targets (idle sandbox)"
  for cpus in $CPUS; do
    [ -n "${result[$cpus,idle,lazy]:-}" ] || continue
    read -r a b c d e f <<<"${result[$cpus,idle,lazy]}"
    verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v < t) ? "met" : "MISSED" }'; }
    for check in "image $c bytes < 65536:$c:65536" "checkpoint wall $a ms < 10:$a:10" \
      "checkpoint CPU $b ms < 10:$b:10" "restore wall $d ms < 10:$d:10" "restore CPU $e ms < 10:$e:10"; do
      IFS=: read -r label v t <<<"$check"
      res=$(verdict "$v" "$t")
      echo "- $cpus cpus: $label: $res"
      [ "$res" = met ] || bad=1
    done
  done
}

# --- part two: guest memory ------------------------------------------------------------------

# stats3: "median min max" of the numbers on stdin.
stats3() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) exit 1
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.10g %.10g %.10g\n", m, v[1], v[NR] }'
}

# wait_for FILE REGEX SECS: 0 once FILE has a line matching REGEX.
wait_for() {
  local i
  for ((i = 0; i < $3 * 20; i++)); do
    grep -qE -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# restore_stats IMAGE [OPTIONS]: restores IMAGE until its stats line, then kills it; prints the
# wall ms from main() to the tasks running.
restore_stats() {
  local img=$1 i rs=""
  shift
  : >"$WORK/restore.err"
  timeout -k 5 300 "$MS" restore --stats "$@" --image "$img" </dev/null >/dev/null 2>"$WORK/restore.err" &
  local pid=$!
  for ((i = 0; i < 6000; i++)); do
    rs=$(sed -n 's/.*stats: restore: wall \([0-9.]*\) ms.*/\1/p' "$WORK/restore.err")
    [ -n "$rs" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  [ -n "$rs" ] || { echo "bench: restore $* failed: $(head -n1 "$WORK/restore.err")" >&2; return 1; }
  echo "$rs"
}

# ck_field OUTPUT: "wall_ms bytes" from checkpoint's line.
ck_field() {
  sed -n 's/.*: \([0-9]*\) bytes, [0-9]* memory pages, \([0-9.]*\) ms (cpu.*/\2 \1/p' <<<"$1"
}

# mem_run MODE MIB: one run; appends "ck_ms bytes rs_ms [lazy_ms parent_ms parent_bytes]" to
# $WORK/mem.runs.
mem_run() {
  local mode=$1 mib=$2 id="bench-mem-$$-$RANDOM" ck line
  rm -rf "$WORK/mimg" "$WORK/mimg2" "$WORK/mem.out"
  timeout -k 5 600 "$MS" run --id "$id" "${RUN_FLAGS[@]}" "$ROOTFS" -- /usr/local/bin/memfill "$mode" "$mib" 100000 \
    </dev/null >"$WORK/mem.out" 2>&1 &
  local pid=$!
  if ! wait_for "$WORK/mem.out" '^ready$' 300; then
    echo "bench: memfill $mode $mib did not get ready: $(head -c 200 "$WORK/mem.out")" >&2
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    return 1
  fi
  if ! ck=$("$MS" checkpoint --leave-running --image "$WORK/mimg" "$id" 2>&1); then
    echo "bench: checkpoint failed ($mode $mib MiB): $ck" >&2
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    return 1
  fi
  line="$(ck_field "$ck")"
  local parent=""
  if [ -n "$HAVE_PARENT" ]; then
    if ! ck=$("$MS" checkpoint --leave-running --parent "$WORK/mimg" --image "$WORK/mimg2" "$id" 2>&1); then
      echo "bench: checkpoint --parent failed ($mode $mib MiB): $ck" >&2
      kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
      return 1
    fi
    parent="$(ck_field "$ck")"
  fi
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  local rs lazy=""
  rs=$(restore_stats "$WORK/mimg") || return 1
  if [ -n "$HAVE_LAZY" ]; then
    lazy=$(restore_stats "$WORK/mimg" --lazy "${RUN_FLAGS[@]}") || return 1
  fi
  read -r a b <<<"$line"
  echo "$a $b $rs ${lazy:--} ${parent:--}" >>"$WORK/mem.runs"
}

part_memory() {
  local bw hot fresh mode mib r
  mkdir -p "$repo/build/bench"
  if ! gcc -O2 -Wall -Wextra -Werror "$repo/bench/membw.c" -o "$repo/build/bench/membw"; then
    echo "bench: cannot build bench/membw.c" >&2
    bad=1
    return
  fi
  [ -x "$ROOTFS/usr/local/bin/memfill" ] || { echo "bench: $ROOTFS has no memfill (make rootfs)" >&2; bad=1; return; }
  HAVE_LAZY=""
  HAVE_PARENT=""
  # Not "$MS --help | grep -q": with pipefail, grep's early exit can fail the pipeline.
  local help
  help=$("$MS" --help 2>&1)
  grep -q -- '--lazy' <<<"$help" && HAVE_LAZY=1
  grep -q -- '--parent' <<<"$help" && HAVE_PARENT=1
  RUN_FLAGS=()
  [ "${BENCH_MEM_UNCONFINED:-0}" = 1 ] && RUN_FLAGS=(--unsafe-no-confine)
  read -r hot fresh < <("$repo/build/bench/membw" 256 5)
  echo "## Guest memory: checkpoint and restore (median [min–max] of $MEM_RUNS runs)"
  echo
  echo "Native memcpy on this machine: $hot MB/s between faulted-in buffers, $fresh MB/s into fresh"
  echo "pages of a memfd (what a restore pays per page). Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  local hdr="| memory | MiB | checkpoint ms | MB/s | image bytes | restore ms | MB/s |"
  local sep="|---|---|---|---|---|---|---|"
  [ -n "$HAVE_LAZY" ] && { hdr+=" lazy restore: first instruction ms |"; sep+="---|"; }
  [ -n "$HAVE_PARENT" ] && { hdr+=" --parent (unchanged) ms | --parent bytes |"; sep+="---|---|"; }
  echo "$hdr"
  echo "$sep"
  for mode in random pattern; do
    for mib in $MEM_SIZES; do
      : >"$WORK/mem.runs"
      local ok=1
      for ((r = 0; r < MEM_RUNS; r++)); do
        mem_run "$mode" "$mib" || { ok=0; break; }
      done
      if [ "$ok" = 0 ]; then
        bad=1
        echo "| $mode | $mib | failed | | | | |"
        continue
      fi
      local ck by rs lz pa pb
      ck=$(awk '{ print $1 }' "$WORK/mem.runs" | stats3)
      by=$(awk '{ print $2 }' "$WORK/mem.runs" | stats3)
      rs=$(awk '{ print $3 }' "$WORK/mem.runs" | stats3)
      read -r ckm ck0 ck1 <<<"$ck"
      read -r bym _ _ <<<"$by"
      read -r rsm rs0 rs1 <<<"$rs"
      local row
      row="| $mode | $mib | $ckm [$ck0–$ck1] | $(awk -v m="$mib" -v t="$ckm" 'BEGIN { printf "%.0f", m * 1.048576 / t * 1000 }') | $bym | $rsm [$rs0–$rs1] | $(awk -v m="$mib" -v t="$rsm" 'BEGIN { printf "%.0f", m * 1.048576 / t * 1000 }') |"
      if [ -n "$HAVE_LAZY" ]; then
        read -r lzm lz0 lz1 < <(awk '{ print $4 }' "$WORK/mem.runs" | stats3)
        row+=" $lzm [$lz0–$lz1] |"
        result_lazy[$mode,$mib]=$lzm
      fi
      if [ -n "$HAVE_PARENT" ]; then
        read -r pam pa0 pa1 < <(awk '{ print $5 }' "$WORK/mem.runs" | stats3)
        read -r pbm _ _ < <(awk '{ print $6 }' "$WORK/mem.runs" | stats3)
        row+=" $pam [$pa0–$pa1] | $pbm |"
        result_parent[$mode,$mib]=$pam
      fi
      result_ck[$mode,$mib]=$ckm
      result_rs[$mode,$mib]=$rsm
      echo "$row"
    done
  done
  echo
  echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "### Targets (issue 18)"
  verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "MISSED" }'; }
  local v
  if [ -n "${result_ck[random,64]:-}" ]; then
    v=$(verdict "${result_ck[random,64]}" 60)
    echo "- 64 MiB random checkpoint ${result_ck[random,64]} ms <= 60 ms: $v"
    [ "$v" = met ] || bad=1
  fi
  for mib in $MEM_SIZES; do
    [ "$mib" -ge 64 ] && [ -n "${result_rs[random,$mib]:-}" ] || continue
    v=$(verdict "${result_rs[random,$mib]}" "$(awk -v m="$mib" 'BEGIN { print m * 1.048576 }')")
    echo "- $mib MiB random restore ${result_rs[random,$mib]} ms (>= 1 GB/s): $v"
    [ "$v" = met ] || bad=1
  done
  if [ -n "$HAVE_LAZY" ] && [ -n "${result_lazy[random,1024]:-}" ]; then
    v=$(verdict "${result_lazy[random,1024]}" 10)
    echo "- lazy restore of 1 GiB: first instruction after ${result_lazy[random,1024]} ms <= 10 ms: $v"
    [ "$v" = met ] || bad=1
  fi
  if [ -n "$HAVE_PARENT" ] && [ -n "${result_parent[random,1024]:-}" ]; then
    v=$(verdict "${result_parent[random,1024]}" 20)
    echo "- --parent checkpoint of an unchanged 1 GiB: ${result_parent[random,1024]} ms <= 20 ms: $v"
    [ "$v" = met ] || bad=1
  fi
  echo
}
declare -A result_ck result_rs result_lazy result_parent
for part in $PARTS; do
  case $part in
  idle) part_idle ;;
  memory) part_memory ;;
  *) echo "bench: unknown part $part" >&2; bad=1 ;;
  esac
done
exit $bad
