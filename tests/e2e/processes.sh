# Scenarios for processes, signals, threads and the terminal (sourced by run.sh, which
# provides ms, expect_status, expect_stdout, fail, skip, need_in_rootfs and $WORK).

pipeline_of_two_commands() {
  ms run "$ROOTFS" -- /bin/sh -c 'echo a | tr a b'
  expect_status 0 && expect_stdout b
}

loop_piped_into_sort() {
  ms run "$ROOTFS" -- /bin/sh -c 'for i in 1 2 3; do echo $i; done | sort -r'
  expect_status 0 && expect_stdout $'3\n2\n1'
}

background_job_and_wait() {
  ms run "$ROOTFS" -- /bin/sh -c 'sleep 0.2 & wait; echo done'
  expect_status 0 && expect_stdout done || return
  [ -z "$err" ] || fail "stderr: $err" # the job's stdin is /dev/null
}

devices_behave_like_linux() {
  ms run "$ROOTFS" -- /bin/sh -c 'echo gone > /dev/null; head -c 4096 /dev/zero | tr -d "\0" | wc -c; head -c 16 /dev/urandom | wc -c; echo x > /dev/full || echo full'
  expect_status 0 && expect_stdout $'0\n16\nfull'
}

dev_stdin_reads_the_sandbox_stdin() {
  printf 'line one\nline two\n' >"$WORK/in"
  ms run "$ROOTFS" -- /bin/sh -c 'cat /dev/stdin | wc -l; echo inner | cat /dev/stdin'
  expect_status 0 && expect_stdout $'2\ninner'
}

# busybox cat sends a file into a pipe with sendfile, which a full pipe takes in part;
# `> /dev/stdout` opens the pipe again through /proc/self/fd/1, and truncates a file.
whole_file_through_a_pipe_and_dev_stdout() {
  local size
  size=$(stat -L -c %s "$ROOTFS/bin/busybox")
  ms run "$ROOTFS" -- /bin/sh -c 'cat /bin/busybox | wc -c; echo hi > /dev/stdout | cat' </dev/null
  expect_status 0 && expect_stdout "$size"$'\nhi' || return
  ms run "$ROOTFS" -- /bin/sh -c 'echo gone; echo kept > /dev/stdout' </dev/null
  expect_status 0 && expect_stdout kept
}

# busybox cat sends with sendfile: when head has what it wants and goes, cat, blocked on the
# full pipe (filled while head sleeps), must get SIGPIPE.
writer_into_a_pipe_whose_reader_left_ends() {
  ms run "$ROOTFS" -- /bin/sh -c 'cat /dev/zero | (sleep 0.3; head -c 1000) | wc -c
    cat /bin/busybox /bin/busybox | (sleep 0.3; head -c 10) | wc -c'
  expect_status 0 && expect_stdout $'1000\n10'
}

trap_catches_a_signal_sent_to_the_shell_itself() {
  ms run "$ROOTFS" -- /bin/sh -c 'trap "echo caught" TERM; kill -TERM $$'
  expect_status 0 && expect_stdout caught
}

subshell_exit_status_is_seen_by_the_parent() {
  ms run "$ROOTFS" -- /bin/sh -c '(exit 3); echo $?'
  expect_status 0 && expect_stdout 3
}

# A process that is not init dies of a signal it does not handle, and its parent sees 128 + it.
guest_killed_by_a_signal_exits_with_128_plus_the_signal() {
  ms run "$ROOTFS" -- /bin/sh -c 'sh -c "kill -TERM \$\$"; echo $?'
  expect_status 0 && expect_stdout 143
}

# As Linux's PID-namespace init (pid_namespaces(7)): nothing sent from inside the sandbox to its
# init ends or stops it, SIGKILL and SIGSTOP included, unless it handles the signal; a signal
# to minisentry from the host still ends the sandbox (128 + the signal).
init_ignores_signals_from_inside_that_it_does_not_handle() {
  ms run "$ROOTFS" -- /bin/sh -c 'kill -KILL 1; kill -STOP 1; kill -TERM $$; kill -HUP 1
    sh -c "kill -9 1; kill -SEGV 1"; echo alive $?'
  expect_status 0 && expect_stdout 'alive 0' || return
  timeout -k 5 "$TIMEOUT" "$MS" run "$ROOTFS" -- /bin/sh -c 'echo started; kill -9 1; sleep 30' \
    </dev/null >"$WORK/init.out" 2>"$WORK/init.err" &
  local pid=$! i
  for ((i = 0; i < TIMEOUT * 20; i++)); do
    grep -q started "$WORK/init.out" && break
    sleep 0.05
  done
  kill -TERM "$pid"
  wait "$pid"
  status=$?
  [ "$status" -eq 143 ] || fail "signalled from the host, minisentry exited $status, not 143"
}

# busybox timeout execs the command in its own process and signals it from a child: the
# command must not be init, which would ignore the signal.
timeout_kills_a_long_sleep() {
  local start=$SECONDS
  ms run "$ROOTFS" -- /bin/sh -c '/bin/busybox timeout 1 sleep 5; echo $?'
  expect_status 0 && expect_stdout 143 || return
  [ $((SECONDS - start)) -lt 4 ] || fail "took $((SECONDS - start)) s"
}

fork_storm_of_200_short_processes() {
  ms run "$ROOTFS" -- /bin/sh -c 'i=0; while [ $i -lt 200 ]; do /bin/true || exit 1; i=$((i+1)); done; echo $i'
  expect_status 0 && expect_stdout 200
}

eight_threads_share_a_counter() {
  need_in_rootfs /usr/local/bin/threads || return
  ms run "$ROOTFS" -- /usr/local/bin/threads
  expect_status 0 && expect_stdout "80000 8"
}

xargs_runs_a_command_on_its_input() {
  ms run "$ROOTFS" -- /bin/sh -c 'echo /etc/passwd /etc/group | xargs cat | wc -l'
  local want
  want=$(cat "$ROOTFS/etc/passwd" "$ROOTFS/etc/group" | wc -l)
  expect_status 0 && expect_stdout "$want"
}

find_piped_into_xargs_grep() {
  ms run "$ROOTFS" -- /bin/sh -c 'find /etc -type f | xargs grep -l "^root:" | sort'
  local want
  want=$(cd "$ROOTFS" && grep -l '^root:' $(find etc -type f) | sed 's|^|/|' | sort)
  expect_status 0 && expect_stdout "$want"
}

# The sandbox dies with its Sentry: no stub outlives a SIGKILL or SIGTERM of minisentry.
stubs_die_with_a_killed_sentry() {
  local sig pid
  for sig in KILL TERM; do
    step "minisentry run, to be killed with SIG$sig"
    "$MS" run "$ROOTFS" -- /bin/sh -c 'sleep 30 & sleep 30' </dev/null >/dev/null 2>&1 &
    pid=$!
    sleep 0.5
    { kill -"$sig" "$pid"; wait_gone "$pid" 5; } 2>/dev/null || { why="SIG$sig: $why"; return 1; }
    local deadline=$((SECONDS + 3)) left
    while :; do
      left=$(leftover_pids)
      [ -z "$left" ] && break
      [ "$SECONDS" -ge "$deadline" ] && { fail "after SIG$sig still running: $left"; return; }
      sleep 0.1
    done
  done
}

# A signal sent to minisentry is acted on at once, even when it comes while the Sentry is not
# running and its placement tick is due too: SIGTERM ends the sandbox (143), SIGINT goes on to
# the guest's foreground process (whose trap exits 7). The Sentry shares its CPU with a host
# busy loop, so signals land while it waits to run; the guest computes, so no stop wakes it.
signals_to_minisentry_are_never_lost() {
  command -v taskset >/dev/null || { skip "taskset not installed"; return; }
  local cpu hog pid i sig want
  cpu=$(first_cpu)
  taskset -c "$cpu" timeout 120 sh -c 'while :; do :; done' &
  hog=$!
  trap "kill $hog 2>/dev/null" EXIT # also when the scenario is stopped
  for ((i = 0; i < 20; i++)); do
    sig=TERM want=143
    [ $((i % 4)) = 3 ] && sig=INT want=7
    step "try $((i + 1)): SIG$sig to minisentry with a computing guest"
    : >"$WORK/sig.out"
    taskset -c "$cpu" "$MS" run "$ROOTFS" -- /bin/sh -c 'trap "exit 7" INT; echo trapped; while :; do :; done' \
      </dev/null >"$WORK/sig.out" 2>&1 &
    pid=$!
    # SIGTERM also within the first milliseconds, before the Sentry's loop runs (a signal
    # passed on then was lost in about one try of four); SIGINT's want needs the guest's trap,
    # which a slow host (sharing its CPU with the hog) may take a while to reach.
    if [ "$sig" = TERM ] && [ $((i % 4)) != 2 ]; then
      sleep "0.00$((RANDOM % 10))"
    else
      wait_line "$WORK/sig.out" '^trapped$' || { kill -KILL "$pid"; why="try $((i + 1)): $why"; break; }
      sleep "0.0$((RANDOM % 10))"
    fi
    kill -"$sig" "$pid"
    wait_gone "$pid" 3 || { why="try $((i + 1)), SIG$sig: $why"; break; }
    [ "$status" -eq "$want" ] || { fail "try $((i + 1)), SIG$sig: exit status $status, want $want"; break; }
  done
  kill "$hog" 2>/dev/null
  wait "$hog" 2>/dev/null
  [ -z "$why" ]
}

# allowed_cpus FILE: the Cpus_allowed_list of a /proc status FILE.
allowed_cpus() { awk '/^Cpus_allowed_list/ { print $2 }' "$1" 2>/dev/null; }

# stub_cpus SCRIPT: runs SCRIPT in a sandbox for half a second and sets CPUS to the CPUs the
# host lets its first stub (init's) run on. (A variable, not output: a command substitution
# holding a background sandbox would wait for it.)
stub_cpus() {
  local pid stub
  step "minisentry run $1, for the affinity of its stub"
  "$MS" run "$ROOTFS" -- /bin/sh -c "$1" </dev/null >/dev/null 2>&1 &
  pid=$!
  sleep 0.5
  # A stub that just ended (a finished cat's) may still be listed: look again.
  for _ in 1 2 3 4 5; do
    stub=$(stub_of "$(sentry_of "$pid")")
    cpus=$(allowed_cpus "/proc/$stub/status" 2>/dev/null)
    [ -n "$cpus" ] && break
    sleep 0.1
  done
  kill "$pid"
  wait_gone "$pid" 5
}

# --placement auto: a guest thread that computes may run on every CPU, one that keeps making
# syscalls stays on the Sentry's (seen from the host, in the stub threads' affinity).
placement_auto_spreads_computing_threads_only() {
  [ "$(nproc)" -ge 2 ] || { skip "one CPU"; return; }
  local cpus all
  all=$(allowed_cpus /proc/self/status)
  stub_cpus 'while :; do :; done' || return
  [ "$cpus" = "$all" ] || { fail "computing stub allowed '$cpus', want '$all'"; return; }
  stub_cpus 'i=0; while [ $i -lt 3000 ]; do cat /proc/self/stat >/dev/null; i=$((i+1)); done' || return
  [[ $cpus =~ ^[0-9]+$ ]] || fail "syscall-bound stub allowed '$cpus', want one CPU"
}

# An interactive shell on a terminal (tmux): a command, Ctrl-C of a sleep, exit.
interactive_shell_in_a_terminal() {
  command -v tmux >/dev/null || { skip "tmux not installed"; return; }
  local sock="$WORK/tmux" session=ms$$ screen i
  trap "tmux -S '$sock' kill-server 2>/dev/null" EXIT # also when the scenario is stopped
  step "an interactive shell in tmux"
  tmux -S "$sock" new-session -d -s "$session" -x 100 -y 30 "$MS run $ROOTFS; echo sandbox-ended; sleep 30"
  wait_screen() { # wait_screen TEXT: up to 10 s for TEXT to appear
    for i in $(seq 50); do
      screen=$(tmux -S "$sock" capture-pane -p -t "$session")
      grep -qF -- "$1" <<<"$screen" && return 0
      sleep 0.2
    done
    return 1
  }
  local ok=1
  tmux -S "$sock" send-keys -t "$session" 'echo hi-$((40+2))' Enter
  wait_screen hi-42 || { ok=0; why="command output never appeared"; }
  if [ $ok = 1 ]; then
    tmux -S "$sock" send-keys -t "$session" 'sleep 100' Enter
    sleep 0.5
    tmux -S "$sock" send-keys -t "$session" C-c
    tmux -S "$sock" send-keys -t "$session" 'echo after-$((1+1))' Enter
    wait_screen after-2 || { ok=0; why="Ctrl-C did not end the sleep"; }
  fi
  if [ $ok = 1 ]; then
    tmux -S "$sock" send-keys -t "$session" 'exit' Enter
    wait_screen sandbox-ended || { ok=0; why="exit did not end the sandbox"; }
  fi
  tmux -S "$sock" kill-server 2>/dev/null
  [ $ok = 1 ] || fail "$why; screen: $(tr '\n' '|' <<<"$screen" | cut -c1-200)"
}

# A terminal on stdin is a tty by name: `tty` (ttyname) names a device node whose stat is the
# terminal's, as natively (script(1) gives both a pty); /proc/self/fd/0 names it too, and a
# descriptor opened from /dev/tty is named /dev/tty. The name is a pty slave's, as a container
# engine's -t gives one: /dev/pts/N, a character device of major 136 + N/256 listed in
# /dev/pts, which /proc/self/stat's tty_nr and ps's TT column name too.
terminal_stdin_is_a_tty_by_name() {
  command -v script >/dev/null || skip "script(1) not found" || return
  local native
  native=$(timeout 10 script -qec 'tty' /dev/null </dev/null | tr -d '\r')
  [[ $native == /dev/* ]] || skip "no terminal natively either: '$native'" || return
  step "minisentry run under script(1)"
  out=$(timeout -k 5 "$TIMEOUT" script -qec "'$MS' run '$ROOTFS' -- /bin/sh -c 'tty; readlink /proc/self/fd/0; stat -L -c %t:%T:%i:%d /proc/self/fd/0 \$(tty); tty </dev/tty; tty </dev/null'" /dev/null </dev/null | tr -d '\r')
  local name
  name=$(sed -n 1p <<<"$out")
  [[ $name == /dev/* ]] || fail "tty printed '$name' (native: $native)" || return
  [ "$(sed -n 2p <<<"$out")" = "$name" ] || fail "/proc/self/fd/0 is '$(sed -n 2p <<<"$out")', tty says $name" || return
  [ "$(sed -n 3p <<<"$out")" = "$(sed -n 4p <<<"$out")" ] ||
    fail "stdin and $name stat differently: $(sed -n 3,4p <<<"$out" | tr '\n' ' ')" || return
  [ "$(sed -n 5p <<<"$out")" = /dev/tty ] || fail "a descriptor of /dev/tty is '$(sed -n 5p <<<"$out")'" || return
  [ "$(sed -n 6p <<<"$out")" = "not a tty" ] || fail "/dev/null is '$(sed -n 6p <<<"$out")'" || return
  [[ $name =~ ^/dev/pts/([0-9]+)$ ]] || fail "tty printed '$name', not a /dev/pts path" || return
  local n=${BASH_REMATCH[1]}
  step "minisentry run under script(1): the pty's node, tty_nr and ps"
  out=$(timeout -k 5 "$TIMEOUT" script -qec "'$MS' run '$ROOTFS' -- /bin/sh -c 'ls /dev/pts; stat -c %F:%t:%T $name; cut -d\" \" -f7 /proc/self/stat; ps -o tty,comm | grep -w ps'" /dev/null </dev/null | tr -d '\r')
  # (devpts lists its ptmx beside the terminals, as Linux's does)
  grep -qw "$n" <<<"$(sed -n 1p <<<"$out")" || fail "/dev/pts lists '$(sed -n 1p <<<"$out")', not $n" || return
  local major=$((136 + n / 256)) minor=$((n % 256))
  [ "$(sed -n 2p <<<"$out")" = "character special file:$(printf %x $major):$(printf %x $minor)" ] ||
    fail "$name is '$(sed -n 2p <<<"$out")'" || return
  [ "$(sed -n 3p <<<"$out")" = $((major << 8 | minor)) ] ||
    fail "tty_nr is '$(sed -n 3p <<<"$out")', not $((major << 8 | minor))" || return
  [[ $(sed -n 4p <<<"$out") == "$major,$minor "* ]] || fail "ps shows '$(sed -n 4p <<<"$out")'"
}

# A sandbox with a terminal checkpointed and restored on another terminal: the guest's stdin is
# still /dev/pts/N by every name, with the new terminal's window size; restored without a
# terminal, it is the host object it was restored onto and the session has no controlling
# terminal any more (tty_nr 0), as after a hangup.
terminal_sandbox_restores_onto_another_terminal() {
  command -v script >/dev/null || skip "script(1) not found" || return
  local id="e2e-$$-$RANDOM" img="$WORK/tty-img"
  local cmd="tty; sleep 2; tty; readlink /proc/self/fd/0; cut -d\" \" -f7 /proc/self/stat; stty size"
  step "minisentry run --id $id under script(1)"
  timeout -k 5 "$TIMEOUT" script -qec "'$MS' run --id $id '$ROOTFS' -- /bin/sh -c '$cmd'" /dev/null \
    </dev/null >"$WORK/tty-run" 2>&1 &
  local pid=$!
  wait_line "$WORK/tty-run" '^/dev/pts/[0-9]+' || { kill "$pid" 2>/dev/null; return 1; }
  checkpoint "$id" "$img" || { kill "$pid" 2>/dev/null; return 1; }
  wait_bounded "$pid"
  step "minisentry restore under script(1), a 33x77 terminal"
  out=$(timeout -k 5 "$TIMEOUT" script -qec "stty rows 33 cols 77; '$MS' restore --image '$img'" /dev/null </dev/null | tr -d '\r')
  local name
  name=$(sed -n 1p <<<"$out")
  [[ $name =~ ^/dev/pts/[0-9]+$ ]] || fail "restored: tty printed '$name'" || return
  [ "$(sed -n 2p <<<"$out")" = "$name" ] || fail "restored: /proc/self/fd/0 is '$(sed -n 2p <<<"$out")'" || return
  [ "$(sed -n 3p <<<"$out")" != 0 ] || fail "restored: tty_nr is 0" || return
  [ "$(sed -n 4p <<<"$out")" = "33 77" ] || fail "restored: stty size says '$(sed -n 4p <<<"$out")'" || return
  ms restore --image "$img"
  [ "$(sed -n 1p <<<"$out")" = "not a tty" ] || fail "restored without a terminal: tty printed '$(sed -n 1p <<<"$out")'" || return
  [ "$(sed -n 3p <<<"$out")" = 0 ] || fail "restored without a terminal: tty_nr is '$(sed -n 3p <<<"$out")'"
}

# ASLR as a user sees it: each exec of busybox gets its own stack, heap and vDSO; `setarch -R`
# (busybox's linux64 -R: personality ADDR_NO_RANDOMIZE) gives every exec below it the same.
layout_is_randomised_per_exec_unless_setarch_R() {
  local maps='grep -E "\[(stack|heap|vdso|vvar)\]" /proc/self/maps | tr "\n" " "'
  ms run "$ROOTFS" -- /bin/sh -c "$maps; echo; $maps"
  expect_status 0 || return
  [ "$(sed -n 1p <<<"$out")" != "$(sed -n 2p <<<"$out")" ] || fail "the same layout twice: $(out_hint)" || return
  ms run "$ROOTFS" -- /bin/linux64 -R /bin/sh -c "$maps; echo; $maps"
  expect_status 0 || return
  [ -n "$(sed -n 1p <<<"$out")" ] && [ "$(sed -n 1p <<<"$out")" = "$(sed -n 2p <<<"$out")" ] ||
    fail "setarch -R: two layouts: $(out_hint)"
}

# Clock reads after the sandbox's start (here `date`, after a sleep) go through the vDSO and
# make no syscall, as natively: --strace shows none. With MINISENTRY_VDSO_CLOCK=syscall (what a
# host without a usable TSC gets) every read is the syscall, and the time is the same.
clock_reads_make_no_syscall_unless_the_vdso_is_told_to() {
  local clock_calls='/^\[pid +[0-9]+\] clock_nanosleep.* += 0$/ { after = 1; next }
    after && /(^|\] )(clock_gettime|gettimeofday|time)\(/ { n++ } END { print n + 0 }'
  ms run --stats "$ROOTFS" -- /bin/true
  expect_status 0 || return
  grep -q 'clock: tsc mode' <<<"$err" || skip "no TSC clock on this host: $(grep 'clock:' <<<"$err")" || return
  ms run --strace "$ROOTFS" -- /bin/sh -c 'sleep 0.05; date +%s'
  expect_status 0 || return
  local now
  now=$(date +%s)
  [ "$out" -ge $((now - 5)) ] && [ "$out" -le "$now" ] || fail "date says $(out_hint), the host $now" || return
  [ "$(awk "$clock_calls" "$WORK/err")" = 0 ] ||
    fail "clock syscalls after the start: $(grep -E 'clock_gettime|gettimeofday|time\(' "$WORK/err" | tail -n 2 | tr '\n' '|')" || return
  step "minisentry run with MINISENTRY_VDSO_CLOCK=syscall"
  MINISENTRY_VDSO_CLOCK=syscall ms run --strace --stats "$ROOTFS" -- /bin/sh -c 'sleep 0.05; date +%s'
  expect_status 0 || return
  now=$(date +%s)
  [ "$(tail -n 1 <<<"$out")" -ge $((now - 5)) ] && [ "$(tail -n 1 <<<"$out")" -le "$now" ] ||
    fail "syscall mode: date says $(out_hint), the host $now" || return
  grep -q 'clock: syscall mode (MINISENTRY_VDSO_CLOCK=syscall)' "$WORK/err" ||
    fail "syscall mode: --stats does not say so" || return
  [ "$(awk "$clock_calls" "$WORK/err")" -ge 1 ] || fail "syscall mode: no clock syscall after the start"
}

scenarios+=(
  terminal_stdin_is_a_tty_by_name
  terminal_sandbox_restores_onto_another_terminal
  layout_is_randomised_per_exec_unless_setarch_R
  clock_reads_make_no_syscall_unless_the_vdso_is_told_to
  dev_stdin_reads_the_sandbox_stdin
  pipeline_of_two_commands
  whole_file_through_a_pipe_and_dev_stdout
  writer_into_a_pipe_whose_reader_left_ends
  loop_piped_into_sort
  background_job_and_wait
  devices_behave_like_linux
  trap_catches_a_signal_sent_to_the_shell_itself
  subshell_exit_status_is_seen_by_the_parent
  guest_killed_by_a_signal_exits_with_128_plus_the_signal
  init_ignores_signals_from_inside_that_it_does_not_handle
  timeout_kills_a_long_sleep
  fork_storm_of_200_short_processes
  eight_threads_share_a_counter
  xargs_runs_a_command_on_its_input
  find_piped_into_xargs_grep
  stubs_die_with_a_killed_sentry
  signals_to_minisentry_are_never_lost
  placement_auto_spreads_computing_threads_only
  interactive_shell_in_a_terminal
)
# It checks that no minisentry process at all is left: alone.
# signals_to_minisentry…: its CPU hog shares a CPU with the Sentry it signals (a scenario beside
# it on that CPU made a start take over its 3 s).
e2e_serial stubs_die_with_a_killed_sentry signals_to_minisentry_are_never_lost
