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
