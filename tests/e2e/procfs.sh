# Scenarios for /proc and /sys (sourced by run.sh): the tools that read them print what they
# print on Linux.

ps_lists_the_processes_of_the_sandbox() {
  ms run "$ROOTFS" -- /bin/sh -c 'sleep 5 & ps; kill $!'
  expect_status 0 || return
  grep -q 'PID' <<<"$out" || fail "no header: $(out_hint)"
  grep -Eq '^ *1 .*sh' <<<"$out" || fail "no line for pid 1 (sh): $(out_hint)"
  grep -q 'sleep 5' <<<"$out" || fail "no line for the sleep: $(out_hint)"
}

top_in_batch_mode_shows_memory_and_cpu() {
  ms run "$ROOTFS" -- /bin/sh -c 'top -b -n 1 | head -3'
  expect_status 0 || return
  grep -q '^Mem:' <<<"$out" && grep -q '^CPU:' <<<"$out" || fail "stdout $(out_hint)$(err_hint)"
}

free_and_uptime_read_proc() {
  ms run "$ROOTFS" -- /bin/sh -c 'free; uptime'
  expect_status 0 || return
  grep -q '^Mem:' <<<"$out" && grep -q 'load average' <<<"$out" ||
    fail "stdout $(out_hint)$(err_hint)"
}

nproc_and_cpuinfo_follow_the_cpus_option() {
  ms run --cpus 96 "$ROOTFS" -- /bin/sh -c 'nproc; grep -c ^processor /proc/cpuinfo; cat /sys/devices/system/cpu/online'
  expect_status 0 && expect_stdout $'96\n96\n0-95'
}

mount_and_df_see_the_sandbox_mounts() {
  ms run "$ROOTFS" -- /bin/sh -c 'mount; df /tmp | tail -1'
  expect_status 0 || return
  grep -q ' on / ' <<<"$out" || fail "no root mount: $(out_hint)"
  grep -q ' on /tmp type tmpfs' <<<"$out" || fail "no /tmp tmpfs: $(out_hint)"
  grep -q '/tmp$' <<<"$out" || fail "df: $(out_hint)$(err_hint)"
}

proc_self_describes_the_reader() {
  ms run "$ROOTFS" -- /bin/sh -c 'echo $$; readlink /proc/self; grep ^PPid /proc/self/status; cat /proc/self/comm; cat /proc/self/cmdline | tr "\0" " "; echo'
  expect_status 0 || return
  local lines
  mapfile -t lines <<<"$out"
  [ "${lines[0]}" = 1 ] || fail "shell pid ${lines[0]}"
  [[ ${lines[1]} =~ ^[0-9]+$ ]] && [ "${lines[1]}" != 1 ] || fail "self: ${lines[1]}"
  [[ ${lines[2]} =~ ^PPid:.1$ ]] || fail "status: ${lines[2]}"
  [ "${lines[3]}" = cat ] || fail "comm: ${lines[3]}"
  [ "${lines[4]}" = "cat /proc/self/cmdline " ] || fail "cmdline: '${lines[4]}'"
}

scenarios+=(
  ps_lists_the_processes_of_the_sandbox
  top_in_batch_mode_shows_memory_and_cpu
  free_and_uptime_read_proc
  nproc_and_cpuinfo_follow_the_cpus_option
  mount_and_df_see_the_sandbox_mounts
  proc_self_describes_the_reader
)
