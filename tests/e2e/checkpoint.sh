# Checkpoint and restore scenarios (sourced by run.sh). Each workload is checkpointed while it
# runs, restored, checkpointed again from the restored sandbox, and then both images are
# restored (the first one a second time): every restore must go on exactly where the
# checkpoint left it.

# ms_bg OUT ARGS...: starts MINISENTRY ARGS in the background, stdout to OUT, stderr to
# OUT.err; its pid in $bg_pid.
ms_bg() {
  local o=$1
  shift
  # Emptied here, not only by the background shell's redirection: a wait_line on an OUT used
  # before could otherwise read the last run's lines before that shell gets to it.
  : >"$o"
  : >"$o.err"
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
    timeout 5 "$MS" list 2>/dev/null | awk 'NR > 1 { print $1 }' | grep -qxF -- "$1" && return 0
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
  # Running long enough for list and the checkpoint to find it on a loaded host (with a sleep
  # of 0.5 s, it had sometimes ended before).
  ms_bg "$WORK/leave.out" run --id "$id" "$ROOTFS" -- /bin/sh -c 'echo ready; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 3; echo still-here'
  local p=$bg_pid
  wait_line "$WORK/leave.out" '^ready$' || { kill "$p"; return 1; }
  ms list
  # NAME PID STATUS AGE OWNER, the pid the one the caller waits on (timeout's child).
  local ms_pid
  ms_pid=$(pgrep -P "$p" | head -1)
  grep -qE "^$id +$ms_pid +running +[0-9]+s +$(id -un)\$" <<<"$out" ||
    { kill "$p"; fail "list does not show $id with pid $ms_pid: '$(tr '\n' '|' <<<"$out")'"; return; }
  checkpoint "$id" "$WORK/leave-img" --leave-running || { kill "$p"; return 1; }
  bg_status "$p"
  [ "$status" -eq 0 ] && grep -qx still-here "$WORK/leave.out" ||
    fail "the sandbox did not go on: status $status, '$(tr '\n' ' ' <"$WORK/leave.out")'" || return
  ms restore --image "$WORK/leave-img"
  expect_status 0 && expect_stdout still-here
}

# evicted_matches_line ERE IMAGE: the eviction the checkpoint line in ck.out reports matches
# ERE, and `inspect IMAGE` shows the same figures in the same words (the image's `evicted`
# section).
evicted_matches_line() {
  local line shown
  line=$(sed -nE 's/.*, ([0-9]+ unused \/proc and \/sys nodes evicted .*)$/\1/p' "$WORK/ck.out")
  grep -qE -- "$1" <<<"$line" || fail "checkpoint line: '$(cat "$WORK/ck.out")'" || return
  shown=$(timeout "$TIMEOUT" "$MS" inspect "$2" 2>&1 | sed -n 's/^eviction before save: //p')
  [ "$shown" = "$line" ] || fail "inspect shows '$shown', the checkpoint line '$line'"
}

# Seed 000's eviction before save: a --leave-running checkpoint frees the /proc and /sys nodes
# the guest walked but no longer holds (a second one finds none left), keeps those it holds (a
# cwd, an open file), and the guest then sees the same trees with the same inode numbers; each
# image records what went, as the checkpoint line said it.
leave_running_checkpoint_evicts_unused_proc_and_sys_nodes() {
  local id="e2e-$$-evict" p n
  "$MS" run --id "$id" --cpus 8 "$ROOTFS" -- /bin/sh -c '
    trap "go=1" INT
    cd /proc/sys/kernel && exec 3</sys/devices/system/cpu/online
    walk() { find /proc/sys /sys -exec ls -di {} + 2>/dev/null | sort; }
    walk >/tmp/a; echo walked
    while [ -z "$go" ]; do sleep 0.05; done
    walk >/tmp/b; cmp -s /tmp/a /tmp/b && echo same-trees
    pwd; cat ostype; cat <&3' </dev/null >"$WORK/evict.out" 2>"$WORK/evict.out.err" &
  p=$!
  wait_line "$WORK/evict.out" '^walked$' || { kill "$p"; return 1; }
  step "first --leave-running checkpoint"
  checkpoint "$id" "$WORK/evict-img" --leave-running || { kill "$p"; return 1; }
  n=$(sed -n 's/.*, \([0-9]*\) unused \/proc and \/sys nodes evicted (.*)$/\1/p' "$WORK/ck.out")
  [ "${n:-0}" -gt 100 ] || { kill "$p"; fail "evicted '${n}' nodes: $(cat "$WORK/ck.out")"; return; }
  # Per mount kind, both walked, adding up to the total; some heap given back.
  evicted_matches_line '^[0-9]+ unused /proc and /sys nodes evicted \(proc [1-9][0-9]*, sysfs [1-9][0-9]*; [1-9][0-9]* bytes of heap\)$' \
    "$WORK/evict-img" || { kill "$p"; return 1; }
  local a b c
  read -r a b c < <(sed -nE 's/.* ([0-9]+) unused .*\(proc ([0-9]+), sysfs ([0-9]+);.*/\1 \2 \3/p' "$WORK/ck.out")
  [ "$a" = $((b + c)) ] || { kill "$p"; fail "$a nodes is not proc $b + sysfs $c"; return; }
  step "second --leave-running checkpoint"
  checkpoint "$id" "$WORK/evict-img2" --leave-running || { kill "$p"; return 1; }
  evicted_matches_line '^0 unused /proc and /sys nodes evicted \(proc 0, sysfs 0; [0-9]+ bytes of heap\)$' \
    "$WORK/evict-img2" || { kill "$p"; return 1; }
  kill -INT "$p"
  wait_gone "$p" "$TIMEOUT" || return
  [ "$status" -eq 0 ] || fail "exit status $status$(head -c 200 "$WORK/evict.out.err")" || return
  out=$(cat "$WORK/evict.out")
  expect_stdout $'walked\nsame-trees\n/proc/sys/kernel\nLinux\n0-7'
}

inspect_shows_sections_and_pages() {
  [ -d "$WORK/leave-img" ] || skip "needs leave_running_keeps_the_sandbox_going_and_list_shows_it" || return
  ms inspect "$WORK/leave-img"
  expect_status 0 || return
  local s
  for s in kernel memory mobjs vfs dentries files fdtables mms tasks evicted; do
    grep -qE "^$s " <<<"$out" || fail "inspect shows no $s section: $(out_hint)" || return
  done
  grep -qE '^memory pages saved: [1-9]' <<<"$out" || fail "inspect shows no pages: $(out_hint)" || return
  grep -qE '^eviction before save: [0-9]+ unused /proc and /sys nodes evicted \(proc [0-9]+, sysfs [0-9]+; [0-9]+ bytes of heap\)$' <<<"$out" ||
    fail "inspect shows no eviction: $(out_hint)"
}

# A sandbox of the host's own root restores a moment later: the image depends on the few host
# files the guest holds (its programs, libraries, cwd), not on the rest of a tree that changes
# all the time (/etc, /var, /run).
host_root_sandbox_restores() {
  [ -x /bin/sh ] && [ -x /bin/sleep ] || skip "no /bin/sh and /bin/sleep on the host" || return
  local id="e2e-$$-hostroot"
  rm -rf "$WORK/hostroot-img"
  ms_bg "$WORK/hostroot.out" run --id "$id" / -- /bin/sh -c 'echo ready; /bin/sleep 1; echo after-restore'
  local p=$bg_pid
  wait_line "$WORK/hostroot.out" '^ready$' || { kill "$p"; return 1; }
  checkpoint "$id" "$WORK/hostroot-img" || { kill "$p"; return 1; }
  wait "$p"
  ms restore --image "$WORK/hostroot-img"
  expect_status 0 && expect_stdout after-restore
}

# A tree of a few files: busybox and what the guest holds.
mini_rootfs() {
  local r=$WORK/$1
  rm -rf "$r"
  mkdir -p "$r/bin" "$r/etc" "$r/proc" "$r/dev" "$r/tmp" "$r/sys"
  cp -a "$ROOTFS/bin/busybox" "$r/bin/"
  ln -s busybox "$r/bin/sh"
  ln -s busybox "$r/bin/cat"
  ln -s busybox "$r/bin/sleep"
  echo held-before >"$r/etc/held"
  echo other >"$r/etc/other"
}

# Restore refuses a rootfs exactly when a file the image depends on (here one the guest holds
# open, and its program) changed, and names it; anything else may change.
restore_refuses_exactly_a_changed_file_the_image_depends_on() {
  need_in_rootfs /bin/busybox || return
  mini_rootfs deps-root
  local r=$WORK/deps-root id="e2e-$$-deps" img=$WORK/deps-img
  rm -rf "$img"
  ms_bg "$WORK/deps.out" run --id "$id" "$r" -- /bin/sh -c 'exec 3</etc/held; echo ready; sleep 1; cat <&3'
  local p=$bg_pid
  wait_line "$WORK/deps.out" '^ready$' || { kill "$p"; return 1; }
  checkpoint "$id" "$img" || { kill "$p"; return 1; }
  wait "$p"
  touch -r "$r/etc/held" "$WORK/deps-held-time"
  # Unrelated changes: a file in /etc rewritten, one added, the directories' times changed.
  echo changed >>"$r/etc/other"
  echo new >"$r/etc/new"
  touch "$r/etc" "$r/bin" "$r"
  ms restore --image "$img"
  expect_status 0 && expect_stdout held-before || { why="unrelated changes: $why"; return 1; }
  # The file the guest holds open: changed, restored anyway with --force, removed, put back
  # with another time, put back as it was.
  echo more >>"$r/etc/held"
  ms restore --image "$img"
  expect_one_line_error || { why="a held file changed: $why"; return 1; }
  grep -q "'/etc/held'.*changed" <<<"$err" || fail "stderr '$err' does not name /etc/held" || return
  ms restore --force --image "$img"
  expect_status 0 || { why="--force: $why"; return 1; }
  rm "$r/etc/held"
  ms restore --image "$img"
  expect_one_line_error || { why="a held file removed: $why"; return 1; }
  grep -q "'/etc/held'.*gone" <<<"$err" || fail "stderr '$err' does not say /etc/held is gone" || return
  echo held-before >"$r/etc/held"
  ms restore --image "$img"
  expect_one_line_error || { why="a held file's time changed: $why"; return 1; }
  touch -r "$WORK/deps-held-time" "$r/etc/held"
  ms restore --image "$img"
  expect_status 0 && expect_stdout held-before || { why="the held file as it was: $why"; return 1; }
  # The program the guest runs (its executable, mapped).
  touch -d '2001-01-01' "$r/bin/busybox"
  ms restore --image "$img"
  expect_one_line_error || { why="the program changed: $why"; return 1; }
  grep -q "'/bin/busybox'" <<<"$err" || fail "stderr '$err' does not name /bin/busybox"
}

# Every kind of damage to an image is one line of error and no sandbox.
bad_images_are_refused_with_one_line() {
  [ -d "$WORK/leave-img" ] || skip "needs leave_running_keeps_the_sandbox_going_and_list_shows_it" || return
  local f bad=$WORK/bad-img size byte
  for f in "$WORK/leave-img"/*; do
    rm -rf "$bad"
    cp -a "$WORK/leave-img" "$bad"
    size=$(stat -c %s "$bad/${f##*/}")
    # A flipped byte in the middle of every file: changed, whatever it was (writing a fixed
    # value left the file as it was when the byte already held it, one time in 256).
    byte=$(od -An -tu1 -j $((size / 2)) -N 1 "$bad/${f##*/}" | tr -d ' ')
    printf "\\x$(printf %02x $((byte ^ 0x5a)))" |
      dd of="$bad/${f##*/}" bs=1 seek=$((size / 2)) conv=notrunc status=none
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
  # A copy restores, with a file the image does not depend on added; one whose program
  # changed is refused, unless --force.
  echo extra >"$WORK/moved-rootfs/etc/extra-file"
  ms restore --rootfs "$WORK/moved-rootfs" --image "$bad"
  expect_status 0 && expect_stdout still-here || { why="--rootfs on a copy: $why"; return 1; }
  touch -d '2001-01-01' "$WORK/moved-rootfs/bin/busybox"
  ms restore --rootfs "$WORK/moved-rootfs" --image "$bad"
  expect_one_line_error || { why="a different rootfs: $why"; return 1; }
  grep -q "'/bin/busybox'.*changed" <<<"$err" || fail "stderr '$err' does not name the changed file" || return
  ms restore --rootfs "$WORK/moved-rootfs" --force --image "$bad"
  expect_status 0 && expect_stdout still-here || { why="--rootfs --force: $why"; return 1; }
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

# mem_cycle NAME MODE MIB [CHECKPOINT OPTIONS...]: runs memfill MODE MIB, checkpoints it once it
# is ready into $WORK/NAME-img, restores that (with the options in $mem_restore_opts), and
# checks that the restored guest finds the checksum it printed before the checkpoint.
mem_restore_opts=()
mem_cycle() {
  local name=$1 mode=$2 mib=$3
  shift 3
  need_in_rootfs /usr/local/bin/memfill || return
  local id="e2e-$$-$name" img=$WORK/$name-img o=$WORK/$name
  rm -rf "$img"
  ms_bg "$o.1" run --id "$id" "$ROOTFS" -- /usr/local/bin/memfill "$mode" "$mib" 3
  local p=$bg_pid
  wait_line "$o.1" '^ready$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$img" "$@" || { kill "$p" 2>/dev/null; return 1; }
  bg_status "$p"
  [ "$status" -eq 0 ] || fail "the checkpointed run exited with $status" || return
  ms restore "${mem_restore_opts[@]}" --image "$img"
  expect_status 0 || return
  local before after
  before=$(sed -n 's/^sum //p' "$o.1" | head -n1)
  after=$(sed -n 's/^sum //p' <<<"$out" | tail -n1)
  [ -n "$before" ] && [ "$before" = "$after" ] ||
    fail "memory checksum $before before the checkpoint, $after after the restore"
}

big_random_memory_comes_back_whole() {
  mem_cycle mem-random random 256 || return
  # Random pages are stored raw: the image is about as large as the memory, not larger.
  local bytes
  bytes=$(sed -n 's/.*: \([0-9]*\) bytes,.*/\1/p' "$WORK/ck.out")
  [ -n "$bytes" ] && [ "$bytes" -lt $((257 << 20)) ] && [ "$bytes" -gt $((255 << 20)) ] ||
    fail "a 256 MiB random image has $bytes bytes"
}

patterned_memory_comes_back_whole_with_either_codec() {
  mem_cycle mem-zlib pattern 64 || return
  local zlib_bytes
  zlib_bytes=$(sed -n 's/.*: \([0-9]*\) bytes,.*/\1/p' "$WORK/ck.out")
  [ "$zlib_bytes" -lt $((4 << 20)) ] || fail "64 MiB of pattern took $zlib_bytes bytes" || return
  ms inspect "$WORK/mem-zlib-img"
  grep -q 'codec zlib' <<<"$out" || fail "inspect does not say zlib: $(out_hint)" || return
  if "$MS" checkpoint --codec zstd --image "$WORK/x" no-such-sandbox 2>&1 | grep -q 'built without'; then
    return 0 # a build without libzstd: zlib only
  fi
  mem_cycle mem-zstd pattern 64 --codec zstd || return
  ms inspect "$WORK/mem-zstd-img"
  grep -q 'codec zstd' <<<"$out" || fail "inspect does not say zstd: $(out_hint)"
}

# The data files are checked like the sections: a flipped byte, a cut, a FIFO or a symlink in
# place of one is one line of error, never a hang and never a restored guest.
damaged_memory_files_are_refused_with_one_line() {
  [ -f "$WORK/mem-random-img/pages.0" ] || skip "needs big_random_memory_comes_back_whole" || return
  local good=$WORK/mem-random-img bad=$WORK/mem-bad size f=pages.0
  size=$(stat -c %s "$good/$f")
  rm -rf "$bad"
  cp -a "$good" "$bad"
  printf '\x5a' | dd of="$bad/$f" bs=1 seek=$((size / 2)) conv=notrunc status=none
  ms restore --image "$bad"
  expect_one_line_error || { why="$f flipped: $why"; return 1; }
  grep -q 'corrupt' <<<"$err" || fail "'$err' does not say the image is corrupt" || return
  cp "$good/$f" "$bad/$f"
  truncate -s $((size - 4096)) "$bad/$f"
  ms restore --image "$bad"
  expect_one_line_error || { why="$f truncated: $why"; return 1; }
  rm "$bad/$f"
  mkfifo "$bad/$f"
  ms restore --image "$bad"
  expect_one_line_error || { why="a FIFO as $f: $why"; return 1; }
  rm "$bad/$f"
  ln -s "$good/$f" "$bad/$f"
  ms restore --image "$bad"
  expect_one_line_error || { why="a symlink as $f: $why"; return 1; }
  rm "$bad/$f"
  ms restore --image "$bad"
  expect_one_line_error || { why="$f missing: $why"; return 1; }
  # inspect reads no data file, and does not block on a FIFO either.
  mkfifo "$bad/$f"
  ms inspect "$bad"
  timed_out && fail "inspect blocked on a FIFO" || true
  rm -rf "$bad"
}

# restore --lazy: the guest runs before its memory is in, and finds all of it.
lazy_restore_brings_back_big_memory_whole() {
  [ -f "$WORK/mem-random-img/pages.0" ] || skip "needs big_random_memory_comes_back_whole" || return
  ms restore --lazy --image "$WORK/mem-random-img"
  expect_status 0 || return
  local before after
  before=$(sed -n 's/^sum //p' "$WORK/mem-random.1" | head -n1)
  after=$(sed -n 's/^sum //p' <<<"$out" | tail -n1)
  [ -n "$before" ] && [ "$before" = "$after" ] ||
    fail "memory checksum $before before the checkpoint, $after after a lazy restore" || return
  # Patterned (compressed) chunks too, and a sandbox restored lazily checkpoints again.
  mem_restore_opts=(--lazy)
  mem_cycle mem-lazy pattern 64
  local r=$?
  mem_restore_opts=()
  return $r
}

# The loader holds the image's files open: removing the image while it loads harms nothing.
lazy_restore_outlives_its_image_being_removed() {
  [ -f "$WORK/mem-random-img/pages.0" ] || skip "needs big_random_memory_comes_back_whole" || return
  local img=$WORK/mem-removed-img id="e2e-$$-lazyrm"
  rm -rf "$img"
  cp -a "$WORK/mem-random-img" "$img"
  ms_bg "$WORK/lazyrm.out" restore --lazy --id "$id" --image "$img"
  local p=$bg_pid
  wait_listed "$id" || { kill "$p" 2>/dev/null; return 1; }
  rm -rf "$img"
  bg_status "$p"
  [ "$status" -eq 0 ] || fail "exit status $status; stderr: $(head -n1 "$WORK/lazyrm.out.err")" || return
  local before after
  before=$(sed -n 's/^sum //p' "$WORK/mem-random.1" | head -n1)
  after=$(sed -n 's/^sum //p' "$WORK/lazyrm.out" | tail -n1)
  [ "$before" = "$after" ] || fail "memory checksum $before before, $after after"
}

# A chunk that turns out bad after the guest started ends the sandbox with one line: the
# guest never runs on with a wrong page.
lazy_restore_of_a_corrupt_chunk_dies_with_one_line() {
  [ -f "$WORK/mem-random-img/pages.0" ] || skip "needs big_random_memory_comes_back_whole" || return
  local bad=$WORK/mem-lazy-bad size
  rm -rf "$bad"
  cp -a "$WORK/mem-random-img" "$bad"
  size=$(stat -c %s "$bad/pages.0")
  printf '\x5a' | dd of="$bad/pages.0" bs=1 seek=$((size / 2)) conv=notrunc status=none
  ms restore --lazy --stats --image "$bad"
  # The stats line says the guest was started; then one line of error, and no result.
  grep -q 'stats: restore' <<<"$err" || fail "the lazy restore did not start: $(err_hint)" || return
  err=$(grep -v 'stats: restore' <<<"$err")
  printf '%s\n' "$err" >"$WORK/err"
  expect_one_line_error || return
  grep -q 'corrupt' <<<"$err" && grep -q 'killed' <<<"$err" ||
    fail "'$err' does not say the image is corrupt and the sandbox killed" || return
  ! grep -q '^done' <<<"$out" || fail "the guest went on: $(out_hint)"
  rm -rf "$bad"
}

# A sandbox restored lazily is checkpointed at once, before its pages are all in: the new
# image has all of them.
checkpoint_during_a_lazy_restore_has_every_page() {
  [ -f "$WORK/mem-random-img/pages.0" ] || skip "needs big_random_memory_comes_back_whole" || return
  local id="e2e-$$-lazyck" img=$WORK/mem-lazyck-img
  rm -rf "$img"
  ms_bg "$WORK/lazyck.out" restore --lazy --id "$id" --image "$WORK/mem-random-img"
  local p=$bg_pid
  wait_listed "$id" || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$img" || { kill "$p" 2>/dev/null; return 1; }
  bg_status "$p"
  ms restore --image "$img"
  expect_status 0 || return
  local before after
  before=$(sed -n 's/^sum //p' "$WORK/mem-random.1" | head -n1)
  after=$(sed -n 's/^sum //p' <<<"$out" | tail -n1)
  [ "$before" = "$after" ] || fail "memory checksum $before before, $after after"
}

# checkpoint --parent: an unchanged guest's second image holds no page; one after a change holds
# the change; each restores whole (plainly and lazily); one whose parent is gone is refused.
parent_images_hold_only_what_changed() {
  need_in_rootfs /usr/local/bin/memfill || return
  local id="e2e-$$-parent" o=$WORK/parent.out a=$WORK/parent-a b=$WORK/parent-b c=$WORK/parent-c
  rm -rf "$a" "$b" "$c"
  # Eight seconds between the changes: the first checkpoint of 256 MiB must be done before the
  # first change, and on a loaded host it took over three.
  ms_bg "$o" run --id "$id" "$ROOTFS" -- /usr/local/bin/memfill random 256 8 16
  local p=$bg_pid
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$a" --leave-running || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$b" --leave-running --parent "$a" || { kill "$p" 2>/dev/null; return 1; }
  local bytes refs
  bytes=$(sed -n 's/.*: \([0-9]*\) bytes,.*/\1/p' "$WORK/ck.out")
  refs=$(sed -n 's/.*, \([0-9]*\) pages in the parent.*/\1/p' "$WORK/ck.out")
  [ "$bytes" -lt 65536 ] && [ "$refs" -ge 65536 ] ||
    { kill "$p" 2>/dev/null; fail "unchanged: $(cat "$WORK/ck.out")"; return 1; }
  wait_line "$o" '^ready2$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$c" --leave-running --parent "$b" || { kill "$p" 2>/dev/null; return 1; }
  bytes=$(sed -n 's/.*: \([0-9]*\) bytes,.*/\1/p' "$WORK/ck.out")
  [ "$bytes" -gt $((16 << 20)) ] && [ "$bytes" -lt $((18 << 20)) ] ||
    { kill "$p" 2>/dev/null; fail "16 MiB changed: $(cat "$WORK/ck.out")"; return 1; }
  bg_status "$p"
  [ "$status" -eq 0 ] || fail "the run exited with $status" || return
  local want img got
  want=$(sed -n 's/^sum //p' "$o" | tail -n1)
  for img in "$b" "$c" "$c --lazy"; do
    # shellcheck disable=SC2086
    ms restore --image $img
    expect_status 0 || { why="restore $img: $why"; return 1; }
    got=$(sed -n 's/^sum //p' <<<"$out" | tail -n1)
    [ "$got" = "$want" ] || fail "restore $img: checksum $got, want $want" || return
  done
  # c names b and a; without a it is refused, in one line naming a.
  mv "$a" "$a.moved"
  ms restore --image "$c"
  expect_one_line_error || return
  grep -qF "$a" <<<"$err" || fail "'$err' does not name the image it needs" || return
  mv "$a.moved" "$a"
}

# After a restore, the restored image is the base: a --parent checkpoint of it is small.
parent_of_a_restored_sandbox_is_its_image() {
  [ -d "$WORK/parent-a" ] || skip "needs parent_images_hold_only_what_changed" || return
  local id="e2e-$$-parent-r" img=$WORK/parent-r
  rm -rf "$img"
  ms_bg "$WORK/parent-r.out" restore --id "$id" --image "$WORK/parent-a"
  local p=$bg_pid
  wait_listed "$id" || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$img" --parent "$WORK/parent-a" || { kill "$p" 2>/dev/null; return 1; }
  bg_status "$p"
  local bytes
  bytes=$(sed -n 's/.*: \([0-9]*\) bytes,.*/\1/p' "$WORK/ck.out")
  [ "$bytes" -lt $((1 << 20)) ] || fail "a restored, unchanged guest: $(cat "$WORK/ck.out")" || return
  ms restore --image "$img"
  expect_status 0 || return
  grep -q '^done$' <<<"$out" || fail "the restore did not finish: $(out_hint)"
}

# --image-key: a signed image restores (and inspects) with its key; without a MAC, or with
# another key, restore and inspect refuse it in one line and run nothing. (Tampering with a
# signed image's sections is the unit test's, tests/unit/test_mac.c.)
signed_image_restores_only_with_its_key() {
  local id="e2e-$$-key" k1=$WORK/k1 k2=$WORK/k2
  printf 'the first key of this test, 40 bytes...' >"$k1"
  printf 'another key, certainly not the first one' >"$k2"
  rm -rf "$WORK/signed" "$WORK/unsigned"
  ms_bg "$WORK/key.out" run --id "$id" "$ROOTFS" -- /bin/sh -c 'i=0; while :; do echo $i; i=$((i+1)); sleep 0.1; done'
  local p=$bg_pid
  wait_line "$WORK/key.out" '^3$' || { kill "$p"; return 1; }
  checkpoint "$id" "$WORK/signed" --image-key "$k1" --leave-running || { kill "$p"; return 1; }
  checkpoint "$id" "$WORK/unsigned" || { kill "$p"; return 1; }
  bg_status "$p"
  ms inspect --image-key "$k1" "$WORK/signed"
  expect_status 0 || return
  grep -qE '^mac +1 ' <<<"$out" || fail "inspect shows no mac section: $(out_hint)" || return
  ms inspect --image-key "$k2" "$WORK/signed"
  expect_one_line_error || return
  [[ $err == *"MAC mismatch"* ]] || fail "inspect with another key: '$err'" || return
  ms restore --image-key "$k2" --image "$WORK/signed"
  expect_one_line_error || return
  [[ $err == *"MAC mismatch"* ]] && [ -z "$out" ] || fail "restore with another key: '$err'" || return
  ms restore --image-key "$k1" --image "$WORK/unsigned"
  expect_one_line_error || return
  [[ $err == *"not signed"* ]] && [ -z "$out" ] || fail "restore of an unsigned image: '$err'" || return
  printf short >"$WORK/k3"
  ms restore --image-key "$WORK/k3" --image "$WORK/signed"
  expect_one_line_error || return
  ms_bg "$WORK/key.2" restore --image-key "$k1" --image "$WORK/signed"
  wait_line "$WORK/key.2" '^9$' || { kill "$bg_pid"; return 1; }
  kill "$bg_pid" 2>/dev/null
  wait "$bg_pid" 2>/dev/null
  local first
  first=$(head -n1 "$WORK/key.2")
  [ "$first" -ge 3 ] || fail "the signed restore started at '$first'"
}

scenarios+=(
  signed_image_restores_only_with_its_key
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
  leave_running_checkpoint_evicts_unused_proc_and_sys_nodes
  inspect_shows_sections_and_pages
  bad_images_are_refused_with_one_line
  big_random_memory_comes_back_whole
  patterned_memory_comes_back_whole_with_either_codec
  damaged_memory_files_are_refused_with_one_line
  lazy_restore_brings_back_big_memory_whole
  lazy_restore_outlives_its_image_being_removed
  lazy_restore_of_a_corrupt_chunk_dies_with_one_line
  checkpoint_during_a_lazy_restore_has_every_page
  parent_images_hold_only_what_changed
  parent_of_a_restored_sandbox_is_its_image
  host_root_sandbox_restores
  restore_refuses_exactly_a_changed_file_the_image_depends_on
)
# Images and a helper the first of each chain leaves in $WORK for the others.
e2e_chain control_socket_serves_a_request_sent_in_parts checkpoint_dropped_by_the_sentry_is_a_one_line_error
e2e_chain leave_running_keeps_the_sandbox_going_and_list_shows_it inspect_shows_sections_and_pages \
  bad_images_are_refused_with_one_line
e2e_chain big_random_memory_comes_back_whole damaged_memory_files_are_refused_with_one_line \
  lazy_restore_brings_back_big_memory_whole lazy_restore_outlives_its_image_being_removed \
  lazy_restore_of_a_corrupt_chunk_dies_with_one_line checkpoint_during_a_lazy_restore_has_every_page
e2e_chain parent_images_hold_only_what_changed parent_of_a_restored_sandbox_is_its_image
