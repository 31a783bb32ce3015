# Scenarios for the sandbox-wide bounds: --pids and its default (sourced by run.sh, which
# provides ms, expect_status, expect_stdout, fail and $WORK).

# With --pids 4 the shell, a sleep, a subshell and its sleep fill the sandbox: the
# subshell's next fork is EAGAIN (busybox sh gives up with status 2), and once the subshell
# is reaped there is room again.
pids_option_bounds_the_tasks() {
  ms run --pids 4 "$ROOTFS" -- /bin/sh -c 'sleep 0.5 & (sleep 0.5 & sleep 0.5 & echo inner) 2>/dev/null
    echo status $?; wait; (echo again)'
  expect_status 0 && expect_stdout $'status 2\nagain'
}

# A fork bomb with no options ends at the default bound (DEFAULT_PIDS, 1024) instead of
# exhausting the host: the subshell forks sleeps until fork is EAGAIN, then the shell counts
# what runs with a glob (no fork needed): itself and 1022 sleeps.
fork_bomb_ends_at_the_default_bound() {
  ms run "$ROOTFS" -- /bin/sh -c '(while :; do sleep 5 & done) 2>/dev/null
    set -- /proc/[0-9]*; echo $#'
  expect_status 0 && expect_stdout 1023
}

pids_zero_is_a_one_line_error() {
  ms run --pids 0 "$ROOTFS" -- /bin/true
  [ "$status" -ne 0 ] || fail "exit status 0" || return
  [ "$(wc -l <<<"$err")" -eq 1 ] || fail "stderr: $err"
}

scenarios+=(
  pids_option_bounds_the_tasks
  fork_bomb_ends_at_the_default_bound
  pids_zero_is_a_one_line_error
)
