# Fault scenarios (sourced by run.sh after checkpoint.sh, whose ms_bg, wait_line and checkpoint
# they use): the Sentry killed with SIGKILL at random moments, with a busy multi-process guest
# and in the middle of a checkpoint, and a checkpoint into a full filesystem. Each must leave no
# host process, no image or temporary directory, and no file in the runtime directory.

e2e_runtime_dir() {
  if [ -n "${XDG_RUNTIME_DIR:-}" ] && [[ $XDG_RUNTIME_DIR == /* ]]; then
    echo "$XDG_RUNTIME_DIR/minisentry"
  elif [ "$(id -u)" -eq 0 ]; then
    echo /run/minisentry
  else
    echo "/tmp/minisentry-$(id -u)"
  fi
}

# launcher_pid_of PID / sentry_pid_of PID: the launcher (the minisentry process at PID or below it, as
# under timeout) and the Sentry (its one child), waiting for them.
launcher_pid_of() {
  local i p=$1
  for ((i = 0; i < TIMEOUT * 20; i++)); do
    if [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$MS" ]; then
      echo "$p"
      return 0
    fi
    p=$(pgrep -P "$1" 2>/dev/null | head -n1)
    [ -n "$p" ] || { p=$1; sleep 0.05; }
  done
  return 1
}
sentry_pid_of() {
  local i l s
  l=$(launcher_pid_of "$1") || return 1
  for ((i = 0; i < TIMEOUT * 20; i++)); do
    s=$(pgrep -P "$l" 2>/dev/null | head -n1)
    [ -n "$s" ] && { echo "$s"; return 0; }
    sleep 0.05
  done
  return 1
}

# no_leftover_processes WHAT: within 3 s no minisentry process is left (stubs included).
no_leftover_processes() {
  local deadline=$((SECONDS + 3)) left
  while :; do
    left=$(leftover_pids)
    [ -z "$left" ] && return 0
    [ "$SECONDS" -ge "$deadline" ] && { fail "$1: still running: $(tr '\n' ' ' <<<"$left")"; return 1; }
    sleep 0.1
  done
}

# no_runtime_files NAME [launcher-killed]: neither NAME.sock nor NAME.lock is left in the
# runtime directory. A launcher killed with SIGKILL cannot remove the socket (nothing outside
# is left to do it): then it must at least not be listed, and the next run of that name
# replaces it.
no_runtime_files() {
  local d f
  d=$(e2e_runtime_dir)
  for f in "$d/$1.sock" "$d/$1.lock"; do
    [ -n "${2:-}" ] && [[ $f == *.sock ]] && continue
    [ ! -e "$f" ] || { fail "$f was left behind"; return 1; }
  done
  if [ -n "${2:-}" ]; then
    ! "$MS" list | grep -qxF "$1" || { fail "list shows $1, whose launcher was killed"; return 1; }
  fi
}

# A guest with a pipeline, background loops, subshells and threads of forks, killed (the Sentry
# with SIGKILL, or its launcher) at six random moments: no stub outlives it.
sentry_killed_at_random_moments_leaves_no_process() {
  local i pid sentry victim
  for ((i = 0; i < 6; i++)); do
    step "run $i, to be killed"
    "$MS" run --id "e2e-$$-kill$i" "$ROOTFS" -- /bin/sh -c '
      (while :; do echo x; done | cat | wc -l) &
      (while :; do sh -c "true"; done) &
      for j in 1 2 3; do (while :; do :; done) & done
      while :; do ls / >/dev/null; done' </dev/null >/dev/null 2>&1 &
    pid=$!
    sentry=$(sentry_pid_of "$pid") || { kill -9 "$pid"; fail "run $i: no Sentry under launcher $pid"; return; }
    sleep "0.$((RANDOM % 6 + 1))$((RANDOM % 10))"
    victim=$sentry
    [ $((i % 3)) = 2 ] && victim=$pid # the launcher too: the Sentry dies with it
    kill -9 "$victim" 2>/dev/null
    wait_gone "$pid" 5 || { why="run $i: $why"; return 1; }
    no_leftover_processes "run $i (SIGKILL to $([ "$victim" = "$pid" ] && echo launcher || echo Sentry))" || return
    no_runtime_files "e2e-$$-kill$i" $([ "$victim" = "$pid" ] && echo launcher-killed) || return
  done
}

# SIGKILL of the Sentry while it writes a checkpoint (a sandbox with 48 MB of incompressible
# tmpfs data, so the write takes a while), at a random moment: the checkpoint fails with one
# line, and there is neither an image nor a temporary directory, nor a process, nor a runtime
# file. (Should the kill come too late, the image must be complete instead.)
sentry_killed_mid_checkpoint_leaves_no_image_and_no_temp_dir() {
  local i id pid sentry ck st
  for ((i = 0; i < 3; i++)); do
    id="e2e-$$-midck$i"
    rm -rf "$WORK/mid" "$WORK"/mid.*
    ms_bg "$WORK/mid.out" run --id "$id" "$ROOTFS" -- /bin/sh -c \
      'head -c 48000000 /dev/urandom >/tmp/noise; echo ready; sleep 60'
    pid=$bg_pid
    wait_line "$WORK/mid.out" '^ready$' || { kill -9 "$pid"; return 1; }
    sentry=$(sentry_pid_of "$pid") || { kill -9 "$pid"; fail "no Sentry"; return; }
    step "checkpoint $i, to be killed"
    timeout -k 5 "$TIMEOUT" "$MS" checkpoint --image "$WORK/mid" "$id" >"$WORK/ck.out" 2>"$WORK/ck.err" &
    ck=$!
    sleep "0.0$((RANDOM % 9 + 1))"
    kill -9 "$sentry" 2>/dev/null
    wait "$ck"
    st=$?
    { wait_gone "$pid" 5; } 2>/dev/null || return 1
    if [ "$st" -eq 0 ]; then
      # Too late: the checkpoint was done. The image must be whole.
      ms inspect "$WORK/mid"
      expect_status 0 || { fail "kill $i came after a checkpoint that left a broken image: $(err_hint)"; return; }
    else
      [ "$(grep -c '' "$WORK/ck.err")" -eq 1 ] && grep -q '^minisentry: checkpoint: ' "$WORK/ck.err" ||
        { fail "kill $i: checkpoint's stderr: $(head -c 300 "$WORK/ck.err")"; return; }
      # The kill may come after the image was renamed into place and before the reply: then
      # the client must fail, but the image is whole (never a half-written one).
      if [ -e "$WORK/mid" ]; then
        ms inspect "$WORK/mid"
        expect_status 0 || { fail "kill $i: a failed checkpoint left a broken image: $(err_hint)"; return; }
      fi
    fi
    local stray
    stray=$(cd "$WORK" && ls -d mid.tmp.* mid.old.* 2>/dev/null)
    [ -z "$stray" ] || { fail "kill $i: left $stray"; return; }
    no_leftover_processes "kill $i" || return
    no_runtime_files "$id" || return
  done
}

# A checkpoint into a filesystem too small for the image (a 1 MiB tmpfs, mounted in a mount
# namespace of the client's own) fails with one line, leaves the filesystem empty, and the
# sandbox goes on: a checkpoint elsewhere then works.
checkpoint_into_a_full_filesystem_fails_with_one_line_and_leaves_nothing() {
  [ "$(id -u)" -eq 0 ] || { skip "needs root to mount a small tmpfs"; return; }
  command -v unshare >/dev/null || { skip "unshare not installed"; return; }
  local id="e2e-$$-full" pid
  mkdir -p "$WORK/small"
  ms_bg "$WORK/fullfs.out" run --id "$id" "$ROOTFS" -- /bin/sh -c \
    'head -c 4000000 /dev/urandom >/tmp/noise; echo ready; sleep 30'
  pid=$bg_pid
  wait_line "$WORK/fullfs.out" '^ready$' || { kill "$pid"; return 1; }
  step "checkpoint into a 1 MiB tmpfs"
  timeout -k 5 "$TIMEOUT" unshare -m sh -c '
    mount -t tmpfs -o size=1m tmpfs "$1" || exit 99
    "$2" checkpoint --leave-running --image "$1/img" "$3"; st=$?
    echo "left: $(ls -A "$1" | tr "\n" " ")" >&3
    exit $st' sh "$WORK/small" "$MS" "$id" >"$WORK/out" 2>"$WORK/err" 3>"$WORK/left"
  status=$?
  err=$(<"$WORK/err")
  [ "$status" -ne 99 ] || { kill "$pid"; skip "cannot mount a tmpfs here"; return; }
  expect_one_line_error || { kill "$pid"; return 1; }
  [[ $err == *"No space left on device"* ]] || { kill "$pid"; fail "not ENOSPC: $err"; return; }
  [ "$(cat "$WORK/left")" = "left: " ] || { kill "$pid"; fail "the filesystem holds: $(cat "$WORK/left")"; return; }
  checkpoint "$id" "$WORK/after-full" || { kill "$pid"; return 1; }
  wait_gone "$pid" 5 || return 1
  no_runtime_files "$id"
}

# Checkpoint locks do not pile up: none is left after a checkpoint, a failed one or the end
# of the sandbox.
checkpoint_lock_files_are_removed() {
  local id="e2e-$$-lock" pid
  ms_bg "$WORK/lock.out" run --id "$id" "$ROOTFS" -- /bin/sh -c 'echo ready; sleep 30'
  pid=$bg_pid
  wait_line "$WORK/lock.out" '^ready$' || { kill "$pid"; return 1; }
  checkpoint "$id" "$WORK/lock-img1" --leave-running || { kill "$pid"; return 1; }
  [ ! -e "$(e2e_runtime_dir)/$id.lock" ] || { kill "$pid"; fail "a lock is left after a checkpoint"; return; }
  ms checkpoint --leave-running --image /proc/no-such-dir/img "$id"
  [ ! -e "$(e2e_runtime_dir)/$id.lock" ] || { kill "$pid"; fail "a lock is left after a failed checkpoint"; return; }
  : >"$(e2e_runtime_dir)/$id.lock" # as a killed client would leave it
  kill "$pid"
  wait_gone "$pid" 5 || return 1
  no_runtime_files "$id"
}

scenarios+=(
  sentry_killed_at_random_moments_leaves_no_process
  sentry_killed_mid_checkpoint_leaves_no_image_and_no_temp_dir
  checkpoint_into_a_full_filesystem_fails_with_one_line_and_leaves_nothing
  checkpoint_lock_files_are_removed
)
# They check that no minisentry process at all is left: alone.
e2e_serial sentry_killed_at_random_moments_leaves_no_process \
  sentry_killed_mid_checkpoint_leaves_no_image_and_no_temp_dir
