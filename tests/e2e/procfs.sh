# Scenarios for /proc and /sys (sourced by run.sh): the tools that read them print what they
# print on Linux.

ps_lists_the_processes_of_the_sandbox() {
  ms run "$ROOTFS" -- /bin/sh -c 'sleep 5 & ps; [ "$(pidof sleep)" = $! ] && echo pidof-ok; kill $!'
  expect_status 0 || return
  grep -q 'PID' <<<"$out" || fail "no header: $(out_hint)"
  grep -Eq '^ *1 .*sh' <<<"$out" || fail "no line for pid 1 (sh): $(out_hint)"
  grep -q 'sleep 5' <<<"$out" || fail "no line for the sleep: $(out_hint)"
  grep -q '^pidof-ok$' <<<"$out" || fail "pidof sleep did not name it: $(out_hint)"
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

# The visible tree must not depend on laziness: names, modes, link counts, sizes, contents
# and the errors of changing it, for /sys and /proc/sys with 96 CPUs; names, modes and link
# counts for the rest of /proc with a second process running. Volatile: random/uuid,
# random/entropy_avail, random/boot_id, and the sizes and contents of /proc/[pid] files.
walk_kernfs='
  sleep 30 & sp=$!
  # Only init and the sleeper among the pids: the pipeline'"'"'s own processes may or may not be
  # listed yet, depending on when ls runs. One stat and one head for a whole list: a process
  # per file made the walk take a minute on a host where fork and exec are slow.
  { ls /proc | grep -v "^[0-9]"; echo 1; echo $sp; } | sort | sed "s|^|/proc/|" | xargs stat -c "%n %A %h"
  find /proc/1 /proc/$sp -maxdepth 2 | grep -v "/fd/\|/fdinfo/\|/task/" | sort | xargs stat -c "%n %A %h"
  kill $sp
  find /sys /proc/sys | sort | grep -v "/random/uuid$\|/random/entropy_avail$\|/random/boot_id$" >/tmp/walk
  xargs stat -c "%n %A %h %s" </tmp/walk
  while read -r p; do [ -f "$p" ] && [ -r "$p" ] && echo "$p"; done </tmp/walk >/tmp/readable
  xargs head -v -n 3 </tmp/readable 2>/tmp/walk.err; cat /tmp/walk.err
  rmdir /proc/sys/kernel 2>&1; mkdir /sys/devices/x 2>&1; rm /sys/devices/system/cpu/online 2>&1
  echo x > /proc/sys/kernel/ostype 2>&1; echo 5 > /proc/sys/vm/swappiness; cat /proc/sys/vm/swappiness
  true'

lazy_and_eager_kernfs_show_the_same_tree() {
  local lazy eager
  ms run --cpus 96 "$ROOTFS" -- /bin/sh -c "$walk_kernfs"
  expect_status 0 || return
  lazy=$out
  ms run --cpus 96 --eager-kernfs "$ROOTFS" -- /bin/sh -c "$walk_kernfs"
  expect_status 0 || return
  eager=$out
  [ "$(wc -l <<<"$lazy")" -gt 1500 ] || { fail "walk too short: $(wc -l <<<"$lazy") lines"; return; }
  [ "$lazy" = "$eager" ] || fail "lazy and eager differ: $(diff <(echo "$lazy") <(echo "$eager") | head -5 | tr '\n' '|')"
}

stat_line() { grep "stats: $1:" <<<"$err" | sed 's/.*stats: //'; }

kernfs_inode_counts_do_not_grow_with_cpus() {
  local two
  ms run --cpus 2 --stats "$ROOTFS" -- /bin/true
  expect_status 0 || return
  two="$(stat_line proc) / $(stat_line sysfs)"
  ms run --cpus 96 --stats "$ROOTFS" -- /bin/true
  expect_status 0 || return
  [ "$two" = "$(stat_line proc) / $(stat_line sysfs)" ] ||
    fail "cpus=2: $two; cpus=96: $(stat_line proc) / $(stat_line sysfs)"
  [ -n "$(stat_line sysfs)" ] || fail "no stats printed$(err_hint)"
}

reading_one_cpu_populates_only_that_cpu() {
  local base after
  ms run --cpus 96 --stats "$ROOTFS" -- /bin/true
  base=$(stat_line sysfs)
  ms run --cpus 96 --stats "$ROOTFS" -- /bin/cat /sys/devices/system/cpu/cpu5/topology/core_id
  expect_status 0 && expect_stdout 5 || return
  after=$(stat_line sysfs)
  local bi ai bp ap
  bi=$(sed 's/.*: \([0-9]*\) inodes.*/\1/' <<<"$base")
  ai=$(sed 's/.*: \([0-9]*\) inodes.*/\1/' <<<"$after")
  bp=$(sed 's/.*dentries, \([0-9]*\) populated.*/\1/' <<<"$base")
  ap=$(sed 's/.*dentries, \([0-9]*\) populated.*/\1/' <<<"$after")
  [ $((ai - bi)) -gt 0 ] && [ $((ai - bi)) -le 8 ] || fail "inodes $bi -> $ai"
  [ $((ap - bp)) -ge 1 ] && [ $((ap - bp)) -le 2 ] || fail "populated dirs $bp -> $ap"
}

scenarios+=(
  lazy_and_eager_kernfs_show_the_same_tree
  kernfs_inode_counts_do_not_grow_with_cpus
  reading_one_cpu_populates_only_that_cpu
)
