# Both platforms (sourced by run.sh; docs/platform.md): the rest of the suite runs under the
# default one (MINISENTRY_PLATFORM chooses it), these under each explicitly. An image does not
# depend on the platform it was taken under.

# A guest that forks, execs, waits, takes signals and faults, with the same output under both
# platforms as natively.
each_platform_runs_forks_signals_and_faults() {
  local p out want
  want='t=4000 child=7 trap=1 segv=1'
  for p in $(platforms); do
    step "--platform $p"
    out=$(timeout -k 5 "$TIMEOUT" "$MS" run --platform "$p" "$ROOTFS" -- /bin/sh -c '
      t=$( (for i in 1 2 3 4; do (j=0; while [ $j -lt 1000 ]; do j=$((j+1)); done; echo $j) & done; wait) | awk "{s+=\$1} END {print s}")
      sh -c "exit 7"; c=$?
      tr=$(sh -c "trap \"echo 1\" USR1; kill -USR1 \$\$; :")
      sg=$(sh -c "kill -SEGV \$\$" 2>/dev/null; [ $? -eq 139 ] && echo 1)
      echo "t=$t child=$c trap=$tr segv=$sg"' 2>&1) ||
      fail "--platform $p exited with $?: '$out'" || return
    [ "$out" = "$want" ] || fail "--platform $p: '$out', want '$want'" || return
  done
}

# A checkpoint taken under one platform restores under the other, both ways, and the restored
# counter goes on from where it was.
an_image_restores_under_the_other_platform() {
  local from to id last first
  need_both_platforms || return
  for from in ptrace seccomp; do
    to=ptrace
    [ "$from" = ptrace ] && to=seccomp
    step "taken under $from, restored under $to"
    id="e2e-$$-$RANDOM"
    rm -rf "$WORK/pimg" "$WORK/p.1" "$WORK/p.2"
    ms_bg "$WORK/p.1" run --platform "$from" --id "$id" "$ROOTFS" -- /bin/sh -c \
      'i=0; while :; do echo $i; i=$((i+1)); sleep 0.05; done'
    wait_line "$WORK/p.1" '^5$' || { kill "$bg_pid" 2>/dev/null; return 1; }
    checkpoint "$id" "$WORK/pimg" || { kill "$bg_pid" 2>/dev/null; return 1; }
    bg_status "$bg_pid"
    [ "$status" -eq 0 ] || fail "the checkpointed run exited with $status" || return
    ms_bg "$WORK/p.2" restore --platform "$to" --image "$WORK/pimg"
    wait_line "$WORK/p.2" '.' || { kill "$bg_pid" 2>/dev/null; return 1; }
    wait_line "$WORK/p.2" '^[0-9]+$' || { kill "$bg_pid" 2>/dev/null; return 1; }
    sleep 0.3
    kill "$bg_pid" 2>/dev/null
    wait "$bg_pid" 2>/dev/null
    last=$(tail -n1 "$WORK/p.1")
    first=$(head -n1 "$WORK/p.2")
    { [ "$first" -gt "$last" ] && [ "$first" -le $((last + 2)) ]; } ||
      fail "$from -> $to: run ended at $last, the restore started at '$first'" || return
    awk 'NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 } END { exit bad || NR < 2 }' \
      "$WORK/p.2" || fail "$from -> $to: the restored counter skips: '$(tr '\n' ' ' <"$WORK/p.2" | cut -c1-80)'" || return
  done
}

# An unknown platform is a usage error of one line.
unknown_platform_is_a_one_line_error() {
  local out
  out=$("$MS" run --platform kvm "$ROOTFS" -- /bin/true 2>&1)
  [ $? -eq 2 ] || fail "exit status $?, want 2: '$out'" || return
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ $out == *"--platform is ptrace or seccomp"* ]] ||
    fail "the error: '$out'"
}

scenarios+=(
  each_platform_runs_forks_signals_and_faults
  an_image_restores_under_the_other_platform
  unknown_platform_is_a_one_line_error
)
