# Checkpoint and restore scenarios (sourced by run.sh). Each workload is checkpointed while it
# runs, restored, checkpointed again from the restored sandbox, and then both images are
# restored (the first one a second time): every restore must go on exactly where the
# checkpoint left it.

# ms_bg OUT ARGS...: starts MINISENTRY ARGS in the background, stdout to OUT, stderr to
# OUT.err; its pid in $bg_pid.
ms_bg() {
  local o=$1
  shift
  timeout -k 5 "$TIMEOUT" "$MS" "$@" </dev/null >"$o" 2>"$o.err" &
  bg_pid=$!
}

# wait_line FILE REGEX: waits (up to $TIMEOUT s) until FILE has a line matching REGEX.
wait_line() {
  local i
  for ((i = 0; i < TIMEOUT * 20; i++)); do
    grep -qE -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "no line matching '$2' in $(basename "$1"): '$(head -c 200 "$1" | tr '\n' '|')'$(
    [ -s "$1.err" ] && printf '; stderr: %s' "$(head -n1 "$1.err")")"
}

# wait_listed NAME: waits until `minisentry list` shows sandbox NAME (a restore is listening).
wait_listed() {
  local i
  for ((i = 0; i < TIMEOUT * 20; i++)); do
    timeout 5 "$MS" list 2>/dev/null | grep -qxF -- "$1" && return 0
    sleep 0.05
  done
  fail "sandbox $1 never appeared in minisentry list"
}

# bg_status PID: waits for it; its exit status in $status.
bg_status() {
  wait "$1"
  status=$?
}

# checkpoint NAME IMAGE [OPTIONS]: checkpoints sandbox NAME into IMAGE.
checkpoint() {
  local name=$1 img=$2
  shift 2
  if ! timeout -k 5 "$TIMEOUT" "$MS" checkpoint "$@" --image "$img" "$name" >"$WORK/ck.out" 2>"$WORK/ck.err"; then
    fail "checkpoint of $name failed: $(head -n1 "$WORK/ck.err")"
    return 1
  fi
}

# The shared cycle. Runs CMD (a `run` command line after ROOTFS) with --id; once its output
# matches READY, checkpoints it into img1 (the run must end with status 0) and restores img1
# as run 2; once run 2's output matches READY2 (which may be empty: checkpoint at once),
# checkpoints it into img2. Then restores img1 again (run 3) and img2 (run 4), to completion
# unless KILL_AFTER matches, in which case they are stopped once their output matches it.
# Outputs: $WORK/cyc.{1,2,3,4}. Sets $status to run 4's exit status.
cycle() {
  local ready=$1 ready2=$2 kill_after=$3
  shift 3
  local id="e2e-$$-$RANDOM" c=$WORK/cyc
  rm -rf "$c".* "$WORK/img1" "$WORK/img2"
  ms_bg "$c.1" run --id "$id-a" "$ROOTFS" -- "$@"
  wait_line "$c.1" "$ready" || { kill "$bg_pid" 2>/dev/null; return 1; }
  checkpoint "$id-a" "$WORK/img1" || { kill "$bg_pid" 2>/dev/null; return 1; }
  bg_status "$bg_pid"
  [ "$status" -eq 0 ] || fail "the checkpointed run exited with $status, want 0" || return
  ms_bg "$c.2" restore --id "$id-b" --image "$WORK/img1"
  local p2=$bg_pid
  wait_listed "$id-b" || { kill "$p2" 2>/dev/null; return 1; }
  if [ -n "$ready2" ]; then
    wait_line "$c.2" "$ready2" || { kill "$p2" 2>/dev/null; return 1; }
  fi
  checkpoint "$id-b" "$WORK/img2" || { kill "$p2" 2>/dev/null; return 1; }
  bg_status "$p2"
  [ "$status" -eq 0 ] || fail "the checkpointed restore exited with $status, want 0$(
    [ -s "$c.2.err" ] && printf '; stderr: %s' "$(head -n1 "$c.2.err")")" || return
  local n img
  for n in 3 4; do
    img=$WORK/img1
    [ "$n" = 4 ] && img=$WORK/img2
    ms_bg "$c.$n" restore --image "$img"
    if [ -n "$kill_after" ]; then
      wait_line "$c.$n" "$kill_after" || { kill "$bg_pid" 2>/dev/null; return 1; }
      kill "$bg_pid" 2>/dev/null
      wait "$bg_pid" 2>/dev/null
      status=0
    else
      bg_status "$bg_pid"
      [ "$status" -eq 0 ] || fail "restore $n exited with $status$(
        [ -s "$c.$n.err" ] && printf '; stderr: %s' "$(head -n1 "$c.$n.err")")" || return
    fi
  done
}

# both_restores_end_with N PATTERN: the last N lines of the two final restores (runs 3 and 4),
# joined by spaces, match the glob PATTERN (plain text matches itself).
both_restores_end_with() {
  local n got
  for n in 3 4; do
    got=$(tail -n "$1" "$WORK/cyc.$n" | tr '\n' ' ')
    # shellcheck disable=SC2053
    [[ $got == $2 ]] || fail "run $n: '$(tr '\n' ' ' <"$WORK/cyc.$n")', want '$2'" || return
  done
}

# The lines of run N's output.
cyc_out() { cat "$WORK/cyc.$1"; }

counter_loop_continues_across_checkpoints() {
  cycle '^5$' '^12$' '^25$' /bin/sh -c 'i=0; while :; do echo $i; i=$((i+1)); sleep 0.1; done' || return
  local last1 first2 last2 first3 first4
  last1=$(tail -n1 "$WORK/cyc.1")
  first2=$(head -n1 "$WORK/cyc.2")
  last2=$(tail -n1 "$WORK/cyc.2")
  first3=$(head -n1 "$WORK/cyc.3")
  first4=$(head -n1 "$WORK/cyc.4")
  # No repeat and no gap beyond one tick: the restore starts at last+1 (or last+2).
  { [ "$first2" -gt "$last1" ] && [ "$first2" -le $((last1 + 2)) ]; } ||
    fail "run 1 ended at $last1, the restore started at $first2" || return
  { [ "$first3" -gt "$last1" ] && [ "$first3" -le $((last1 + 2)) ]; } ||
    fail "run 1 ended at $last1, the second restore of the same image started at $first3" || return
  { [ "$first4" -gt "$last2" ] && [ "$first4" -le $((last2 + 2)) ]; } ||
    fail "run 2 ended at $last2, the restore of its image started at $first4" || return
  # Within each run, the counter goes up one by one.
  local n
  for n in 1 2 3 4; do
    awk 'NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 } END { exit bad }' "$WORK/cyc.$n" ||
      fail "run $n's counter skips: '$(tr '\n' ' ' <"$WORK/cyc.$n" | cut -c1-120)'" || return
  done
}

# Open /proc files and a cwd inside /proc/PID name processes that a restore brings back only
# after the files: the image must restore, and they must still work.
open_proc_files_and_a_cwd_in_proc_survive() {
  cycle '^ready$' '' '' /bin/sh -c 'exec 3</proc/self/status; exec 4</proc/self/fdinfo/3
    cd /proc/self/task/$$; echo ready; sleep 2; head -1 <&3 | tr "\t" " "; cat comm
    head -1 <&4 | tr "\t" " "' || return
  both_restores_end_with 3 "Name: sh sh pos: 0 "
}

pipeline_with_bytes_in_the_pipe_survives() {
  cycle '^ready$' '' '' /bin/sh -c 'echo ready; seq 1 50000 | (sleep 2; wc -l)' || return
  both_restores_end_with 1 "50000 "
}

threads_mid_computation_give_the_uninterrupted_result() {
  need_in_rootfs /usr/local/bin/scene || return
  ms run "$ROOTFS" -- /usr/local/bin/scene threads
  expect_status 0 || return
  local want
  want=$(grep '^sum' <<<"$out")
  cycle '^ready$' '' '' /usr/local/bin/scene threads || return
  both_restores_end_with 1 "$want "
}

zombie_child_is_still_a_zombie_after_restore() {
  need_in_rootfs /usr/local/bin/scene || return
  cycle '^ready$' '' '' /usr/local/bin/scene zombie 2 || return
  both_restores_end_with 2 "child state Z child exit 7 "
}

files_in_tmp_and_over_etc_are_in_the_image() {
  cycle '^ready$' '' '' /bin/sh -c 'echo tmpdata > /tmp/f; echo etcdata > /etc/hostname; rm /etc/group; echo ready; sleep 2; cat /tmp/f /etc/hostname; ls /etc/group 2>&1 | grep -c "No such"' || return
  both_restores_end_with 3 "tmpdata etcdata 1 "
}

mapped_tmpfs_file_and_fd_offset_survive() {
  need_in_rootfs /usr/local/bin/scene || return
  cycle '^ready$' '' '' /usr/local/bin/scene mmap 2 || return
  both_restores_end_with 1 "offset 8 read XYfgh map abcXYfgh "
}

socket_pair_keeps_its_queued_messages() {
  need_in_rootfs /usr/local/bin/scene || return
  cycle '^ready$' '' '' /usr/local/bin/scene socket 2 || return
  both_restores_end_with 2 "got first got second "
}

timer_fires_after_restore() {
  need_in_rootfs /usr/local/bin/scene || return
  cycle '^ready$' '' '' /usr/local/bin/scene timer 2 || return
  both_restores_end_with 1 "fired after its time *"
}

sysctl_values_and_boot_id_survive() {
  cycle '^ready$' '' '' /bin/sh -c 'cat /proc/sys/kernel/random/boot_id; echo sandbox.example > /proc/sys/kernel/domainname; echo ready; sleep 2; cat /proc/sys/kernel/domainname /proc/sys/kernel/random/boot_id' || return
  local boot
  boot=$(head -n1 "$WORK/cyc.1")
  both_restores_end_with 2 "sandbox.example $boot "
}

# An idle sandbox's image does not depend on how many CPUs it shows, even after a walk of /sys.
image_size_does_not_grow_with_cpus() {
  local cpus size=() id
  for cpus in 2 96; do
    id="e2e-$$-cpus$cpus"
    rm -rf "$WORK/img-cpus$cpus"
    # Emptied here: ms_bg's redirection happens in the background, after wait_line may have
    # seen the last run's "ready" (and checkpointed a sandbox not yet listening).
    : >"$WORK/cpus.out"
    ms_bg "$WORK/cpus.out" run --id "$id" --cpus "$cpus" "$ROOTFS" -- /bin/sh -c 'find /sys/devices/system/cpu /proc/sys >/dev/null 2>&1; echo ready; exec sleep 100'
    local p=$bg_pid
    wait_line "$WORK/cpus.out" '^ready$' || { kill "$p"; return 1; }
    checkpoint "$id" "$WORK/img-cpus$cpus" || { kill "$p"; return 1; }
    wait "$p"
    size+=("$(cat "$WORK/img-cpus$cpus"/* | wc -c)")
  done
  [ $((size[1] - size[0])) -le 1024 ] ||
    fail "the image with 96 CPUs is ${size[1]} bytes, with 2 CPUs ${size[0]}: more than 1 KiB apart"
}

# --- the CLI and bad images ------------------------------------------------------------------

checkpoint_of_an_unknown_sandbox_is_a_one_line_error() {
  ms checkpoint --image "$WORK/never" "no-such-sandbox-$$"
  expect_one_line_error || return
  [ ! -e "$WORK/never" ] || fail "an image directory was left behind"
}

# tests/e2e/ctlpeer.c, the other end of a control socket, built into $WORK/ctlpeer.
build_ctlpeer() {
  command -v gcc >/dev/null || { skip "host gcc not found"; return; }
  [ -x "$WORK/ctlpeer" ] || gcc -O2 -o "$WORK/ctlpeer" "$(dirname "$SELF")/ctlpeer.c" ||
    fail "cannot build tests/e2e/ctlpeer.c"
}

# A request that comes slowly (in two parts, 100 ms apart) is served: the Sentry waits for the
# rest of the line across its placement ticks and whatever signals come meanwhile.
control_socket_serves_a_request_sent_in_parts() {
  build_ctlpeer || return
  export XDG_RUNTIME_DIR=$WORK/rt-slow # this scenario's bash only
  local id="e2e-$$-slow" p
  mkdir -p -m 700 "$XDG_RUNTIME_DIR"
  rm -rf "$WORK/slow-img"
  ms_bg "$WORK/slow.out" run --id "$id" "$ROOTFS" -- /bin/sh -c 'echo ready; sleep 3'
  p=$bg_pid
  wait_line "$WORK/slow.out" '^ready$' || { kill "$p"; return 1; }
  step "a checkpoint request sent in parts"
  timeout 10 "$WORK/ctlpeer" slow "$XDG_RUNTIME_DIR/minisentry/$id.sock" \
    "checkpoint 1 0 $WORK/slow-img" >"$WORK/slow.ans" 2>&1
  bg_status "$p"
  grep -q '^ok ' "$WORK/slow.ans" ||
    fail "the answer was '$(head -c 200 "$WORK/slow.ans")', want 'ok ...'" || return
  [ "$status" -eq 0 ] || fail "the sandbox exited with $status after the checkpoint, want 0"
}

# A checkpoint whose Sentry drops the request (it closes the connection before reading it, or
# after, without an answer: it died) prints one line saying so and fails; it never dies of
# SIGPIPE in silence. The client runs on the stand-in's CPU, so that it often writes after the
# close.
checkpoint_dropped_by_the_sentry_is_a_one_line_error() {
  command -v taskset >/dev/null || { skip "taskset not installed"; return; }
  build_ctlpeer || return
  export XDG_RUNTIME_DIR=$WORK/rt-drop # this scenario's bash only
  local cpu mode srv i sock=$WORK/rt-drop/minisentry/dropper.sock
  mkdir -p -m 700 "$WORK/rt-drop/minisentry"
  cpu=$(first_cpu)
  for mode in close read; do
    step "a stand-in Sentry that drops requests ($mode)"
    rm -f "$sock"
    taskset -c "$cpu" timeout 60 "$WORK/ctlpeer" drop "$sock" "$mode" &
    srv=$!
    for ((i = 0; i < 100; i++)); do [ -S "$sock" ] && break; sleep 0.05; done
    for ((i = 1; i <= 20; i++)); do
      step "checkpoint $i of a sandbox that drops it ($mode)"
      { timeout -k 5 "$TIMEOUT" taskset -c "$cpu" "$MS" checkpoint --image "$WORK/drop-img" dropper \
        >"$WORK/out" 2>"$WORK/err"; } 2>/dev/null
      status=$?
      err=$(<"$WORK/err")
      expect_one_line_error || { why="$mode, try $i: $why"; break; }
    done
    kill "$srv" 2>/dev/null
    wait "$srv" 2>/dev/null
    [ -z "$why" ] || return 1
  done
}

checkpoint_into_a_full_directory_is_refused_and_leaves_it_alone() {
  local id="e2e-$$-full"
  mkdir -p "$WORK/full"
  echo keep >"$WORK/full/precious"
  ms_bg "$WORK/full.out" run --id "$id" "$ROOTFS" -- /bin/sh -c 'echo ready; sleep 5'
  local p=$bg_pid
  wait_line "$WORK/full.out" '^ready$' || { kill "$p"; return 1; }
  ms checkpoint --image "$WORK/full" "$id"
  kill "$p" 2>/dev/null
  wait "$p" 2>/dev/null
  expect_one_line_error || return
  [ "$(cat "$WORK/full/precious")" = keep ] && [ "$(ls "$WORK/full")" = precious ] ||
    fail "the directory was changed: $(ls "$WORK/full" | tr '\n' ' ')"
}

# The workload computes (its thread is running, not blocked, when it is stopped) and sleeps.
leave_running_keeps_the_sandbox_going_and_list_shows_it() {
  local id="e2e-$$-leave"
  ms_bg "$WORK/leave.out" run --id "$id" "$ROOTFS" -- /bin/sh -c 'echo ready; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 0.5; echo still-here'
  local p=$bg_pid
  wait_line "$WORK/leave.out" '^ready$' || { kill "$p"; return 1; }
  ms list
  grep -qxF "$id" <<<"$out" || { kill "$p"; fail "list does not show $id: $(out_hint)"; return; }
  checkpoint "$id" "$WORK/leave-img" --leave-running || { kill "$p"; return 1; }
  bg_status "$p"
  [ "$status" -eq 0 ] && grep -qx still-here "$WORK/leave.out" ||
    fail "the sandbox did not go on: status $status, '$(tr '\n' ' ' <"$WORK/leave.out")'" || return
  ms restore --image "$WORK/leave-img"
  expect_status 0 && expect_stdout still-here
}

inspect_shows_sections_and_pages() {
  [ -d "$WORK/leave-img" ] || skip "needs leave_running_keeps_the_sandbox_going_and_list_shows_it" || return
  ms inspect "$WORK/leave-img"
  expect_status 0 || return
  local s
  for s in kernel memory mobjs vfs dentries files fdtables mms tasks; do
    grep -qE "^$s " <<<"$out" || fail "inspect shows no $s section: $(out_hint)" || return
  done
  grep -qE '^memory pages saved: [1-9]' <<<"$out" || fail "inspect shows no pages: $(out_hint)"
}

# Every kind of damage to an image is one line of error and no sandbox.
bad_images_are_refused_with_one_line() {
  [ -d "$WORK/leave-img" ] || skip "needs leave_running_keeps_the_sandbox_going_and_list_shows_it" || return
  local f bad=$WORK/bad-img size
  for f in "$WORK/leave-img"/*; do
    rm -rf "$bad"
    cp -a "$WORK/leave-img" "$bad"
    size=$(stat -c %s "$bad/${f##*/}")
    # A flipped byte in the middle of every file.
    printf '\x5a' | dd of="$bad/${f##*/}" bs=1 seek=$((size / 2)) conv=notrunc status=none
    ms restore --image "$bad"
    expect_one_line_error || { why="${f##*/} flipped: $why"; return 1; }
    # And each file cut short.
    rm -rf "$bad"
    cp -a "$WORK/leave-img" "$bad"
    truncate -s $((size - 1)) "$bad/${f##*/}"
    ms restore --image "$bad"
    expect_one_line_error || { why="${f##*/} truncated: $why"; return 1; }
  done
  rm -rf "$bad"
  ms restore --image "$WORK/no-such-image"
  expect_one_line_error || return
  cp -a "$WORK/leave-img" "$bad"
  copy_rootfs moved-rootfs
  echo extra >"$WORK/moved-rootfs/etc/extra-file"
  ms restore --rootfs "$WORK/moved-rootfs" --image "$bad"
  expect_one_line_error || { why="a different rootfs: $why"; return 1; }
  grep -q 'not the one' <<<"$err" || fail "stderr '$err' does not say the rootfs differs" || return
  # --force restores onto it all the same; an identical copy needs no --force.
  ms restore --rootfs "$WORK/moved-rootfs" --force --image "$bad"
  expect_status 0 && expect_stdout still-here || { why="--rootfs --force: $why"; return 1; }
  rm "$WORK/moved-rootfs/etc/extra-file"
  touch -r "$ROOTFS/etc" "$WORK/moved-rootfs/etc"
  ms restore --rootfs "$WORK/moved-rootfs" --image "$bad"
  expect_status 0 && expect_stdout still-here || { why="--rootfs on a copy: $why"; return 1; }
  ms restore --rootfs "$WORK/no-such-rootfs" --image "$bad"
  expect_one_line_error || { why="a missing rootfs: $why"; return 1; }
  # An image of another format version, with a header that is otherwise sound: bytes 8-11
  # are the version, the last four the CRC-32 of the rest (gzip's trailer computes it).
  local hdr=$bad/header n
  n=$(stat -c %s "$hdr")
  printf '\x63' | dd of="$hdr" bs=1 seek=8 conv=notrunc status=none
  head -c $((n - 4)) "$hdr" >"$WORK/hdr.body"
  { cat "$WORK/hdr.body"; gzip -c <"$WORK/hdr.body" | tail -c 8 | head -c 4; } >"$hdr"
  ms restore --image "$bad"
  expect_one_line_error || { why="another version: $why"; return 1; }
  grep -q 'format version 99' <<<"$err" || fail "stderr '$err' does not name the version" || return
  rm -rf "$bad" "$WORK/moved-rootfs"
}

# --force replaces an image directory without following the links in it: the old image's
# clean-up removes a link, never what it points to (it used to empty any directory linked
# from there, or from the predictable name of the temporary directory).
force_replaces_an_image_without_following_its_links() {
  local id="e2e-$$-links"
  rm -rf "$WORK/victim" "$WORK/linked-img"
  mkdir -p "$WORK/victim/sub" "$WORK/linked-img"
  echo keep >"$WORK/victim/precious"
  echo keep >"$WORK/victim/sub/precious"
  ln -s "$WORK/victim" "$WORK/linked-img/link"
  ln -s "$WORK/victim/precious" "$WORK/linked-img/file-link"
  ms_bg "$WORK/links.out" run --id "$id" "$ROOTFS" -- /bin/sh -c 'echo ready; sleep 5'
  local p=$bg_pid
  wait_line "$WORK/links.out" '^ready$' || { kill "$p"; return 1; }
  checkpoint "$id" "$WORK/linked-img" --force || { kill "$p"; return 1; }
  bg_status "$p"
  [ -f "$WORK/linked-img/header" ] || fail "no image in $WORK/linked-img" || return
  [ ! -e "$WORK/linked-img/link" ] || fail "the old image's link is still there" || return
  [ "$(cat "$WORK/victim/precious" "$WORK/victim/sub/precious" 2>&1)" = "keep
keep" ] || fail "the linked directory was changed: $(ls -R "$WORK/victim" | tr '\n' ' ')" || return
  local left
  left=$(ls -d "$WORK"/linked-img.* 2>/dev/null)
  [ -z "$left" ] || fail "temporary directories left: $left"
}

# A checkpoint that cannot be written leaves a --leave-running sandbox running, unharmed.
failed_checkpoint_leaves_the_sandbox_running() {
  local id="e2e-$$-fail"
  ms_bg "$WORK/fail.out" run --id "$id" "$ROOTFS" -- /bin/sh -c 'echo ready; sleep 1; echo still-here'
  local p=$bg_pid
  wait_line "$WORK/fail.out" '^ready$' || { kill "$p"; return 1; }
  ms checkpoint --leave-running --image /proc/no-such-dir/img "$id"
  expect_one_line_error || { kill "$p"; return 1; }
  bg_status "$p"
  [ "$status" -eq 0 ] && grep -qx still-here "$WORK/fail.out" ||
    fail "the sandbox did not go on: status $status, '$(tr '\n' ' ' <"$WORK/fail.out")'"
}

scenarios+=(
  counter_loop_continues_across_checkpoints
  pipeline_with_bytes_in_the_pipe_survives
  open_proc_files_and_a_cwd_in_proc_survive
  threads_mid_computation_give_the_uninterrupted_result
  zombie_child_is_still_a_zombie_after_restore
  files_in_tmp_and_over_etc_are_in_the_image
  mapped_tmpfs_file_and_fd_offset_survive
  socket_pair_keeps_its_queued_messages
  timer_fires_after_restore
  sysctl_values_and_boot_id_survive
  image_size_does_not_grow_with_cpus
  checkpoint_of_an_unknown_sandbox_is_a_one_line_error
  control_socket_serves_a_request_sent_in_parts
  checkpoint_dropped_by_the_sentry_is_a_one_line_error
  checkpoint_into_a_full_directory_is_refused_and_leaves_it_alone
  failed_checkpoint_leaves_the_sandbox_running
  force_replaces_an_image_without_following_its_links
  leave_running_keeps_the_sandbox_going_and_list_shows_it
  inspect_shows_sections_and_pages
  bad_images_are_refused_with_one_line
)
