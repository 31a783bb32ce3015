#!/usr/bin/env bash
# Golden images, deltas and slots (issue 12, seed 003's shape). A guest with 384 MiB of sparse
# memory of which 167 MiB are written (tests/rootfs-progs/sparsefill.c) is checkpointed with
# --golden; it then rewrites 7.15 MB in 20 regions and is checkpointed with --base (and, for
# the size comparison, in full). Reported, as median [min–max] of BENCH_GOLDEN_RUNS (5) runs:
# - delta creation: the checkpoint's wall time in the Sentry and the GB/s of populated base
#   (167 MiB / time), of a guest started from scratch (pages compared with the base) and of one
#   restored from the golden image (writes tracked), both confined;
# - the memory of a restore: plain restore of the delta (a full copy of the base, then the
#   delta) against a slot restore (overlay in place) plus the slot's reset at exit, as GB/s of
#   populated base;
# - time from main() to the guest's first instruction (restore --stats): plain restore, plain
#   delta restore, slot restore, and slot restore by a waiting Sentry (slots --warm), at golden
#   sizes BENCH_GOLDEN_SIZES (64 1024) MiB;
# - the delta image's size against the full image's.
# BENCH_GOLDEN_ONLY=first runs only the time to the first instruction by golden size.
# Usage: bench/golden.sh MINISENTRY ROOTFS
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: bench/golden.sh MINISENTRY ROOTFS" >&2
  exit 2
fi
MS=$(realpath -m "$1")
ROOTFS=$(realpath -m "$2")
RUNS=${BENCH_GOLDEN_RUNS:-5}
SIZES=${BENCH_GOLDEN_SIZES:-64 1024}
WORK=$(mktemp -d /tmp/minisentry-bench-golden.XXXXXX)
SLOTS=$(mktemp -d /dev/shm/minisentry-bench-slots.XXXXXX)
trap 'rm -rf "$WORK" "$SLOTS"' EXIT
export XDG_RUNTIME_DIR=$WORK/xdg
mkdir -p "$XDG_RUNTIME_DIR"
bad=0

[ -x "$ROOTFS/usr/local/bin/sparsefill" ] || { echo "bench: $ROOTFS has no sparsefill (make rootfs)" >&2; exit 1; }

stats3() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) exit 1
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.10g %.10g %.10g\n", m, v[1], v[NR] }'
}

# fmt3 "MED MIN MAX" DIGITS: "MED [MIN–MAX]".
fmt3() {
  local m lo hi
  read -r m lo hi <<<"$1"
  printf "%.${2}f [%.${2}f–%.${2}f]" "$m" "$lo" "$hi"
}

wait_for() {
  local i
  for ((i = 0; i < $3 * 20; i++)); do
    grep -qE -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# ck_ms OUTPUT: the checkpoint's wall ms and bytes.
ck_field() {
  sed -n 's/.*: \([0-9]*\) bytes, [0-9]* memory pages, \([0-9.]*\) ms (cpu.*/\2 \1/p' <<<"$1"
}

# make_images MIB POP DIR [CONFINE]: runs sparsefill, writes DIR/golden, DIR/full and DIR/delta;
# prints "delta_ms delta_bytes full_bytes golden_ms".
make_images() {
  local mib=$1 pop=$2 dir=$3 id="bench-golden-$$-$RANDOM" ck g d f
  shift 3
  rm -rf "$dir" && mkdir -p "$dir"
  timeout -k 5 600 "$MS" run "$@" --id "$id" "$ROOTFS" -- /usr/local/bin/sparsefill "$mib" "$pop" 5 20 6982 \
    </dev/null >"$dir/run.out" 2>&1 &
  local pid=$!
  wait_for "$dir/run.out" '^ready$' 300 || { echo "bench: sparsefill did not get ready" >&2; kill "$pid"; return 1; }
  ck=$("$MS" checkpoint --leave-running --golden --image "$dir/golden" "$id" 2>&1) || { echo "bench: $ck" >&2; kill "$pid"; return 1; }
  g=$(ck_field "$ck")
  wait_for "$dir/run.out" '^ready2$' 300 || { echo "bench: sparsefill did not change" >&2; kill "$pid"; return 1; }
  ck=$("$MS" checkpoint --leave-running --image "$dir/full" "$id" 2>&1) || { echo "bench: $ck" >&2; kill "$pid"; return 1; }
  f=$(ck_field "$ck")
  ck=$("$MS" checkpoint --base "$dir/golden" --image "$dir/delta" "$id" 2>&1) || { echo "bench: $ck" >&2; kill "$pid"; return 1; }
  d=$(ck_field "$ck")
  wait "$pid" 2>/dev/null
  echo "${d% *} ${d#* } ${f#* } ${g% *}"
}

# tracked_delta DIR: restores DIR/golden (its writes tracked from there, confined), lets it
# change, and checkpoints it with --base; prints the checkpoint's wall ms.
tracked_delta() {
  local dir=$1 id="bench-golden-t-$$-$RANDOM" ck
  rm -rf "$dir/tdelta"
  timeout -k 5 600 "$MS" restore --id "$id" --image "$dir/golden" \
    </dev/null >"$dir/t.out" 2>&1 &
  local pid=$!
  wait_for "$dir/t.out" '^ready2$' 300 || { echo "bench: tracked restore did not change: $(head -n2 "$dir/t.out")" >&2; kill "$pid"; return 1; }
  ck=$("$MS" checkpoint --base "$dir/golden" --image "$dir/tdelta" "$id" 2>&1) || { echo "bench: $ck" >&2; kill "$pid"; return 1; }
  wait "$pid" 2>/dev/null
  grep -q 'pages in the base' <<<"$ck" || return 1
  local f
  f=$(ck_field "$ck")
  echo "${f% *}"
}

# restore_run IMAGE [OPTIONS]: restores IMAGE; once it runs, stops it (SIGTERM reaches the
# guest, the sandbox ends and a slot is reset); prints "first_instruction_ms reset_ms
# memory_ms" (reset "-" without a slot; memory: the restore's memory part, a full load or a
# slot's overlay).
restore_run() {
  local img=$1 rs rz rm i
  shift
  : >"$WORK/restore.err"
  timeout -k 5 300 "$MS" restore --stats "$@" --image "$img" </dev/null >/dev/null 2>"$WORK/restore.err" &
  local pid=$!
  for ((i = 0; i < 6000; i++)); do
    grep -q 'memory loaded in' "$WORK/restore.err" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rs=$(sed -n 's/.*stats: restore: wall \([0-9.]*\) ms.*/\1/p' "$WORK/restore.err")
  rz=$(sed -n 's/.*stats: slot: reset .* in \([0-9.]*\) ms.*/\1/p' "$WORK/restore.err")
  rm=$(sed -n 's/.*stats: restore: memory loaded in \([0-9.]*\) ms.*/\1/p' "$WORK/restore.err")
  [ -n "$rs" ] || { echo "bench: restore $* $img failed: $(head -n1 "$WORK/restore.err")" >&2; return 1; }
  if [[ " $* " == *" --slots $SLOTS/w"* ]] && ! grep -q 'by its waiting Sentry' "$WORK/restore.err"; then
    echo "bench: restore $* $img was not served by a waiting Sentry" >&2
    return 1
  fi
  if [[ " $* " == *" --slots "* ]] && [ -z "$rz" ]; then
    echo "bench: restore $* $img: no slot reset: $(tr '\n' '|' <"$WORK/restore.err")" >&2
    return 1
  fi
  echo "$rs ${rz:--} ${rm:--}"
}

col() { awk -v f="$1" '$f != "-" { print $f }' "$2" | stats3; }

ONLY=${BENCH_GOLDEN_ONLY:-}
[ -z "$ONLY" ] || [ "$ONLY" = first ] || { echo "bench: BENCH_GOLDEN_ONLY is 'first' or empty" >&2; exit 2; }
echo "## Golden images, deltas and slots (seed 003's shape; median [min–max] of $RUNS runs; load $(cut -d' ' -f1-3 /proc/loadavg))"
pop=167
: >"$WORK/ck.runs"
: >"$WORK/tck.runs"
for ((r = 0; r < RUNS && ${#ONLY} == 0; r++)); do
  line=$(make_images 384 "$pop" "$WORK/shape") || { bad=1; break; }
  echo "$line" >>"$WORK/ck.runs"
  t=$(tracked_delta "$WORK/shape") && echo "$t" >>"$WORK/tck.runs"
done
popmb=$(awk -v p="$pop" 'BEGIN { print p * 1048576 / 1e6 }')
if [ -s "$WORK/ck.runs" ]; then
  c=$(col 1 "$WORK/ck.runs")
  printf "delta creation, confined (compared with the base): %s ms = %s GB/s of populated base\n" \
    "$(fmt3 "$c" 1)" "$(awk -v p="$popmb" '{ printf "%.2f [%.2f–%.2f]", p / $1, p / $3, p / $2 }' <<<"$c")"
  if [ -s "$WORK/tck.runs" ]; then
    c=$(col 1 "$WORK/tck.runs")
    printf "delta creation, tracked (restored from the golden image, confined): %s ms = %s GB/s\n" \
      "$(fmt3 "$c" 1)" "$(awk -v p="$popmb" '{ printf "%.2f [%.2f–%.2f]", p / $1, p / $3, p / $2 }' <<<"$c")"
  fi
  printf "image sizes: delta %s bytes, full image %s bytes, golden image (sparse) %s bytes on disk\n" \
    "$(col 2 "$WORK/ck.runs" | cut -d' ' -f1)" "$(col 3 "$WORK/ck.runs" | cut -d' ' -f1)" \
    "$(du -B1 -s "$WORK/shape/golden" | cut -f1)"
  "$MS" slots --base "$WORK/shape/golden" --count 2 "$SLOTS/shape" >/dev/null || bad=1
  for mode in plain slot slot-unconfined; do
    : >"$WORK/rs.$mode"
    for ((r = 0; r < RUNS; r++)); do
      case $mode in
        plain) restore_run "$WORK/shape/delta" >>"$WORK/rs.$mode" || bad=1 ;;
        slot) restore_run "$WORK/shape/delta" --slots "$SLOTS/shape" >>"$WORK/rs.$mode" || bad=1 ;;
        slot-unconfined) restore_run "$WORK/shape/delta" --unsafe-no-confine --slots "$SLOTS/shape" >>"$WORK/rs.$mode" || bad=1 ;;
      esac
    done
  done
  c=$(col 3 "$WORK/rs.plain")
  printf "memory of a plain delta restore (full copy of the base + overlay): %s ms = %s GB/s (first instruction at %s ms)\n" \
    "$(fmt3 "$c" 1)" "$(awk -v p="$popmb" '{ printf "%.2f [%.2f–%.2f]", p / $1, p / $3, p / $2 }' <<<"$c")" \
    "$(fmt3 "$(col 1 "$WORK/rs.plain")" 1)"
  for mode in slot slot-unconfined; do
    awk '{ print $3 + $2 }' "$WORK/rs.$mode" >"$WORK/sum.$mode"
    c=$(col 1 "$WORK/sum.$mode")
    printf "memory of a %s restore (overlay on the slot) + its reset: %s ms (overlay %s, reset %s) = %s GB/s (first instruction at %s ms)\n" \
      "$mode" "$(fmt3 "$c" 1)" "$(fmt3 "$(col 3 "$WORK/rs.$mode")" 2)" "$(fmt3 "$(col 2 "$WORK/rs.$mode")" 1)" \
      "$(awk -v p="$popmb" '{ printf "%.2f [%.2f–%.2f]", p / $1, p / $3, p / $2 }' <<<"$c")" \
      "$(fmt3 "$(col 1 "$WORK/rs.$mode")" 1)"
  done
fi

echo "## Time to the first instruction by golden size (restore --stats wall, ms; load $(cut -d' ' -f1-3 /proc/loadavg))"
for size in $SIZES; do
  line=$(make_images $((size + size / 4)) "$size" "$WORK/s$size") || { bad=1; continue; }
  "$MS" slots --base "$WORK/s$size/golden" --count 2 "$SLOTS/s$size" >/dev/null || { bad=1; continue; }
  "$MS" slots --base "$WORK/s$size/golden" --count 2 --warm "$SLOTS/w$size" >/dev/null || { bad=1; continue; }
  for mode in golden delta slot warm; do
    : >"$WORK/fi.$mode"
    for ((r = 0; r < RUNS; r++)); do
      case $mode in
        golden) restore_run "$WORK/s$size/golden" >>"$WORK/fi.$mode" || bad=1 ;;
        delta) restore_run "$WORK/s$size/delta" >>"$WORK/fi.$mode" || bad=1 ;;
        slot) restore_run "$WORK/s$size/delta" --slots "$SLOTS/s$size" >>"$WORK/fi.$mode" || bad=1 ;;
        # The slot just used gets its next Sentry when its client exits: a pause, as a
        # service's requests have, lets it start before the next restore is measured.
        warm) restore_run "$WORK/s$size/delta" --slots "$SLOTS/w$size" >>"$WORK/fi.$mode" || bad=1
          sleep 0.3 ;;
      esac
    done
  done
  printf "golden %5s MiB: plain restore %s, plain delta restore %s, slot restore %s (slot reset %s), warm slot restore %s\n" "$size" \
    "$(fmt3 "$(col 1 "$WORK/fi.golden")" 1)" "$(fmt3 "$(col 1 "$WORK/fi.delta")" 1)" \
    "$(fmt3 "$(col 1 "$WORK/fi.slot")" 1)" "$(fmt3 "$(col 2 "$WORK/fi.slot")" 1)" \
    "$(fmt3 "$(col 1 "$WORK/fi.warm")" 1)"
  # Its waiting Sentries end once their pool is gone.
  rm -rf "$SLOTS/s$size" "$SLOTS/w$size" "$WORK/s$size"
done
echo "(load after: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "seed's figures: create delta 1.5 GB/s; full copy + overlay ~1.0–1.2 GB/s; overlay on a slot + reset 7–8 GB/s"
exit $bad
