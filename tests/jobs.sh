# jobs.sh: bounded background jobs for the suites' drivers (sourced). A driver keeps the pids
# of its jobs in the array `running`.

# jobs_reap: waits for one of `running` to end, drops it from the array and leaves its pid in
# done_pid.
jobs_reap() {
  local p left=()
  wait -n -p done_pid "${running[@]}"
  for p in "${running[@]}"; do [ "$p" = "$done_pid" ] || left+=("$p"); done
  running=("${left[@]}")
}

# proc_tree PID: a line for each process under PID, PID's included, and for each of their
# threads: what it waits in (state, kernel wait channel, syscall number, or "running"), so that
# a hang reported by a driver says where it hung before the process tree is killed.
proc_tree() {
  local p t stat state wchan sc
  local -a todo=("$1")
  while [ ${#todo[@]} -gt 0 ]; do
    p=${todo[0]}
    todo=("${todo[@]:1}")
    for t in /proc/"$p"/task/*; do
      [ -r "$t/stat" ] || continue
      stat=$(cat "$t/stat" 2>/dev/null) || continue
      state=${stat##*) }
      state=${state%% *}
      wchan=$(cat "$t/wchan" 2>/dev/null)
      sc=$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)
      printf '  pid %s tid %s %s wchan=%s syscall=%s %s\n' "$p" "${t##*/}" "$state" \
        "${wchan:-?}" "${sc:-?}" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c 1-100)"
      todo+=($(cat "$t/children" 2>/dev/null))
    done
  done
}
