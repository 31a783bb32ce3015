# Checkpoints at random instants (sourced by run.sh). Each workload of
# tests/rootfs-progs/stress.c (several processes, pipes, files, timers) runs once uninterrupted
# for its expected output; then E2E_STRESS_COUNT times (default 3; `make stress` runs more) it
# is checkpointed with --leave-running after a random delay within its running time. The run
# that went on must print the expected output, and the restored image must print exactly the
# expected lines after those the run had printed when the checkpoint was taken: at least as
# many as before the request, at most as many as when it returned.
STRESS_COUNT=${E2E_STRESS_COUNT:-3}

# A random delay in milliseconds below $1.
rand_ms() { echo $(((RANDOM * 32768 + RANDOM) % $1)); }

lines_of() { if [ -f "$1" ]; then grep -c '' "$1"; else echo 0; fi; }

# stress_workload NAME CMD...: the test.
stress_workload() {
  local mode=$1 expected t0 t1 span i id img before after k n=0 late=0
  shift
  step "stress $mode: the uninterrupted run"
  t0=$(date +%s%N)
  ms run "$ROOTFS" -- "$@"
  t1=$(date +%s%N)
  expect_status 0 || { why="uninterrupted: $why"; return 1; }
  expected=$out
  span=$(((t1 - t0) / 1000000))
  [ "$span" -gt 0 ] || span=1
  local total
  total=$(grep -c '' <<<"$expected")
  for ((i = 1; i <= STRESS_COUNT; i++)); do
    id="e2e-$$-stress-$mode-$i"
    img=$WORK/stress-img
    rm -rf "$img"
    step "stress $mode: instant $i of $STRESS_COUNT"
    local d start
    d=$(rand_ms "$span")
    start=$(date +%s%N)
    ms_bg "$WORK/stress.out" run --id "$id" "$ROOTFS" -- "$@"
    local p=$bg_pid
    wait_listed "$id" || { kill "$p"; return 1; }
    # D ms after the start, or at once if the control socket came up later than that.
    d=$((d - ($(date +%s%N) - start) / 1000000))
    [ "$d" -gt 0 ] && sleep "$((d / 1000)).$(printf '%03d' $((d % 1000)))"
    before=$(lines_of "$WORK/stress.out")
    if ! timeout -k 5 "$TIMEOUT" "$MS" checkpoint --leave-running --image "$img" "$id" \
      >"$WORK/ck.out" 2>"$WORK/ck.err"; then
      after=$(lines_of "$WORK/stress.out")
      wait "$p"
      # Too late: the workload had ended (or was ending) when the request came.
      if [ "$after" -eq "$total" ]; then
        late=$((late + 1))
        continue
      fi
      fail "$mode, instant $i: checkpoint failed after $after of $total lines: $(head -n1 "$WORK/ck.err")"
      return
    fi
    after=$(lines_of "$WORK/stress.out")
    bg_status "$p"
    [ "$status" -eq 0 ] && [ "$(cat "$WORK/stress.out")" = "$expected" ] ||
      fail "$mode, instant $i: the run that went on exited $status with $(lines_of "$WORK/stress.out") of $total lines" || return
    ms restore --image "$img"
    expect_status 0 || { why="$mode, instant $i (after line $before..$after): restore: $why"; return 1; }
    k=$((total - $(if [ -n "$out" ]; then grep -c '' <<<"$out"; else echo 0; fi)))
    [ "$k" -ge "$before" ] && [ "$k" -le "$after" ] &&
      [ "$out" = "$(tail -n "$((total - k))" <<<"$expected")" ] ||
      fail "$mode, instant $i: the restore printed from line $((k + 1)), the checkpoint came after line $before..$after; got $(out_hint)" || return
    n=$((n + 1))
  done
  echo "stress $mode: $n of $STRESS_COUNT checkpoints restored and matched ($late came after the end)" >&2
}

stress_prog() {
  need_in_rootfs /usr/local/bin/stress || return
  stress_workload "$1" /usr/local/bin/stress "$1"
}

random_instant_checkpoints_of_a_pipeline_restore_to_the_same_output() { stress_prog pipes; }
random_instant_checkpoints_of_file_writers_and_ticks_restore_to_the_same_output() { stress_prog files; }
random_instant_checkpoints_of_timers_restore_to_the_same_output() { stress_prog timers; }
# Busybox programs exec'd in a pipeline, a file in /tmp, sleeps; each line written by echo.
random_instant_checkpoints_of_a_busybox_pipeline_restore_to_the_same_output() {
  stress_workload busybox /bin/sh -c '
    i=0; while [ $i -lt 40 ]; do echo "$i $((i * i))"; i=$((i + 1)); sleep 0.02; done |
      while read -r a b; do echo "$a $((b % 7))" >>/tmp/stress.log; echo "line $a: $b"; done
    sort -k2 -n /tmp/stress.log | md5sum | while read -r sum _; do echo "sorted $sum"; done'
}

scenarios+=(
  random_instant_checkpoints_of_a_pipeline_restore_to_the_same_output
  random_instant_checkpoints_of_file_writers_and_ticks_restore_to_the_same_output
  random_instant_checkpoints_of_timers_restore_to_the_same_output
  random_instant_checkpoints_of_a_busybox_pipeline_restore_to_the_same_output
)
