#!/usr/bin/env bash
# The checkpoint benchmark of the seed (../shared/seeds/000_*): for cpus in {2, 4, 16, 96} and
# three workloads — idle (a shell that execs sleep), ps (reads a sysctl and the online CPU list,
# runs ps, starts 8 sleepers, runs ps again) and walk-all (stats every file under /proc/sys and
# /sys first) — checkpoint wall and CPU time, image bytes, restore wall and CPU time and the
# restored Sentry's RSS, in lazy and --eager-kernfs mode, medians of BENCH_CKPT_RUNS (10) runs,
# with the lazy/eager ratio. Checkpoint times are measured in the Sentry (quiesce + image
# written); restore times from the restoring process's main() to its tasks running again.
# Then the targets: an idle image under 64 KiB at every CPU count and idle checkpoint and
# restore each under 10 ms wall and CPU. Exits non-zero if a run failed or a target is missed.
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
exit $bad
