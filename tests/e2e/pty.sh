# Scenarios for pseudo-terminals (sourced by run.sh): an interactive shell run on a pty by
# tests/rootfs-progs/ptyrun.c, a small `script` (busybox has none), typed at through the
# master as a person at a terminal would type.

# ptyrun_shell INPUT...: ash -i on a new pty with INPUT typed 300 ms apart; $out is what the
# terminal showed, carriage returns and ash's cursor-position queries taken out.
ptyrun_shell() {
  need_in_rootfs /usr/local/bin/ptyrun || return
  ms run "$ROOTFS" -- /usr/local/bin/ptyrun "$@" -- /bin/sh -i
  out=$(tr -d '\r' <<<"$out" | sed 's/\x1b\[6n//g')
}

# The shell's terminal is /dev/pts/1 (0 is the sandbox's own), with the size the master set,
# its controlling terminal in /proc (tty_nr 136:1) and ps; its lines are echoed and edited as
# typed; the command's exit status comes back.
pty_interactive_shell_sees_a_terminal() {
  ptyrun_shell $'tty; stty size\n' $'echo $((6*7))x\177\n' \
    $'cut -d" " -f7 /proc/self/stat; ps -o tty,comm | grep -w ps\n' $'exit 3\n' || return
  expect_status 3 || return
  expect_stdout_line '/dev/pts/1' || return
  expect_stdout_line '24 80' || return
  expect_stdout_line '42' || return
  expect_stdout_line $((136 << 8 | 1)) || return
  grep -q '^136,1 *ps$' <<<"$out" || fail "ps does not show 136,1: $(out_hint)"
}

# ^C typed at the terminal interrupts the foreground job (SIGINT to its process group) and
# not the shell; ^D ends cat's input.
pty_ctrl_c_interrupts_the_foreground_job() {
  ptyrun_shell $'sleep 10\n' $'\003' $'echo after $?\n' $'cat\n' $'typed\n' $'\004' $'exit\n' || return
  expect_status 0 || return
  expect_stdout_line '^C' || return
  expect_stdout_line 'after 130' || return
  [ "$(grep -cxF typed <<<"$out")" -eq 2 ] || fail "cat's input and output: $(out_hint)"
}

# Job control through the terminal: ^Z stops the foreground job (SIGTSTP to its group), fg
# brings it back (TIOCSPGRP), and a background job that reads the terminal is stopped by
# SIGTTIN. (The first exit only warns of the stopped job, as ash does.)
pty_job_control_stops_and_resumes_jobs() {
  ptyrun_shell $'sleep 5\n' $'\032' $'jobs\n' $'fg\n' $'\003' $'cat &\n' '' $'jobs\n' \
    $'kill -9 %1\n' $'exit\n' $'exit\n' || return
  expect_status 0 || return
  grep -q '^\[1\]+ *Stopped *sleep 5$' <<<"$out" || fail "^Z did not stop sleep: $(out_hint)" || return
  grep -q '^\[1\]+ *Stopped (tty input) *cat$' <<<"$out" || fail "cat was not stopped by SIGTTIN: $(out_hint)"
}

# A pair checkpointed while its slave's reader waits for a line typed in two parts (the
# shared cycle of checkpoint.sh: checkpoint, restore, checkpoint the restore at once, restore
# both images): every restore reads the whole line. The terminal shows no carriage returns
# (-opost), so the output is lines.
pty_pair_with_a_waiting_reader_survives_checkpoints() {
  need_in_rootfs /usr/local/bin/ptyrun || return
  cycle '^ready$' '' '' /usr/local/bin/ptyrun '' '' '' 'hel' '' '' $'lo\n' -- \
    /bin/sh -c 'stty -opost; echo ready; read x; echo "got $x"' || return
  both_restores_end_with 2 "hello got hello "
}

scenarios+=(
  pty_interactive_shell_sees_a_terminal
  pty_ctrl_c_interrupts_the_foreground_job
  pty_job_control_stops_and_resumes_jobs
  pty_pair_with_a_waiting_reader_survives_checkpoints
)
