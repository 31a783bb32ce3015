#!/usr/bin/env bash
# CRIU on the guests of bench/checkpoint.sh's memory part (issue 18 compares with it): the same
# memfill program (tests/rootfs-progs/memfill.c, built for the host) holding N MiB of random or
# patterned memory, dumped with `criu dump --leave-running` and restored with `criu restore
# --restore-detached`, wall times of the criu command, medians [min–max] of BENCH_MEM_RUNS (5)
# runs, and the image's size. CRIU is ${CRIU:-criu}; it needs root. Where it is missing or
# cannot run on this kernel, one line says so and the script exits 0.
# Usage: bench/criu.sh   (BENCH_MEM_SIZES, default "16 64 256 1024")
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
CRIU=${CRIU:-criu}
RUNS=${BENCH_MEM_RUNS:-5}
SIZES=${BENCH_MEM_SIZES:-16 64 256 1024}

if ! command -v "$CRIU" >/dev/null; then
  echo "criu: SKIP: $CRIU is not installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "criu: SKIP: CRIU needs root"
  exit 0
fi
WORK=$(mktemp -d /tmp/minisentry-bench-criu.XXXXXX)
guest=""
cleanup() {
  [ -n "$guest" ] && pkill -KILL -f "$WORK/memfill" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
if ! gcc -O2 -Wall -Wextra -Werror "$repo/tests/rootfs-progs/memfill.c" -o "$WORK/memfill"; then
  echo "criu: cannot build tests/rootfs-progs/memfill.c" >&2
  exit 1
fi
if ! "$CRIU" check >"$WORK/check" 2>&1; then
  echo "criu: not runnable here ($CRIU check: $(grep -m1 -i error "$WORK/check" | cut -c1-120))"
  exit 0
fi

ms_of() { echo $((($2 - $1) / 1000)) | awk '{ printf "%.1f\n", $1 / 1000 }'; }

# stats3: "median min max" of the numbers on stdin.
stats3() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) exit 1
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    print m, v[1], v[NR] }'
}

# one MODE MIB: appends "dump_ms bytes restore_ms" to $WORK/runs, or fails saying why.
one() {
  local mode=$1 mib=$2 pid t0 t1 t2 t3 i
  rm -rf "$WORK/img" "$WORK/out"
  mkdir "$WORK/img"
  setsid "$WORK/memfill" "$mode" "$mib" 100000 </dev/null >"$WORK/out" 2>&1 &
  pid=$!
  guest=1
  for ((i = 0; i < 3000; i++)); do
    grep -q '^ready$' "$WORK/out" 2>/dev/null && break
    sleep 0.02
  done
  grep -q '^ready$' "$WORK/out" || { echo "criu: memfill $mode $mib did not get ready" >&2; return 1; }
  t0=$(date +%s%N)
  "$CRIU" dump -t "$pid" -D "$WORK/img" --leave-running -o dump.log >/dev/null 2>&1 ||
    { echo "criu: dump failed: $(grep -m1 Error "$WORK/img/dump.log")" >&2; return 1; }
  t1=$(date +%s%N)
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  t2=$(date +%s%N)
  "$CRIU" restore -D "$WORK/img" --restore-detached -o restore.log >/dev/null 2>&1 ||
    { echo "criu: restore failed: $(grep -m1 Error "$WORK/img/restore.log")" >&2; return 1; }
  t3=$(date +%s%N)
  kill -KILL "$pid" 2>/dev/null
  for ((i = 0; i < 500 && $(kill -0 "$pid" 2>/dev/null && echo 1 || echo 0); i++)); do sleep 0.01; done
  echo "$(ms_of "$t0" "$t1") $(du -sb --exclude='*.log' "$WORK/img" | cut -f1) $(ms_of "$t2" "$t3")" >>"$WORK/runs"
}

echo "## CRIU on the same guests ($("$CRIU" --version | head -n1), median [min–max] of $RUNS runs)"
echo
echo "| memory | MiB | dump ms | image bytes | restore ms |"
echo "|---|---|---|---|---|"
bad=0
for mode in random pattern; do
  for mib in $SIZES; do
    : >"$WORK/runs"
    ok=1
    for ((r = 0; r < RUNS; r++)); do
      one "$mode" "$mib" || { ok=0; break; }
    done
    if [ "$ok" = 0 ]; then
      echo "| $mode | $mib | failed | | |"
      bad=1
      continue
    fi
    read -r dm d0 d1 < <(awk '{ print $1 }' "$WORK/runs" | stats3)
    read -r bm _ _ < <(awk '{ print $2 }' "$WORK/runs" | stats3)
    read -r rm r0 r1 < <(awk '{ print $3 }' "$WORK/runs" | stats3)
    echo "| $mode | $mib | $dm [$d0–$d1] | $bm | $rm [$r0–$r1] |"
  done
done
echo
exit $bad
