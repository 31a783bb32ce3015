#!/usr/bin/env bash
# End-to-end scenarios (DESIGN.md §8): whole `minisentry run` invocations against an
# Alpine-style rootfs, from busybox and musl/glibc-dynamic programs to bad inputs.
# Each scenario is a function named for the behaviour it specifies; it returns 0 to pass,
# 2 to skip (missing prerequisite) or 1 with $why set.
# Every scenario runs in a bash of its own under a time limit: one that hangs is stopped (with
# every process it started) and reported as a FAIL with its name and the step it was in, and
# what it printed. Scenarios run two at a time (see "driver" below for those that cannot).
# Usage: tests/e2e/run.sh MINISENTRY ROOTFS [SCENARIO...]   (MINISENTRY_ROOTFS overrides ROOTFS;
# E2E_TIMEOUT, default 30, is the limit in seconds for one run; E2E_SCENARIO_TIMEOUT, default
# four times that, for a whole scenario; E2E_ONLY=REGEX picks scenarios by name; E2E_JOBS,
# default 2, how many run at a time, 1 for one after the other)
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: tests/e2e/run.sh MINISENTRY ROOTFS [SCENARIO...]" >&2
  exit 2
fi
SELF=$(realpath "$0")
HERE=${SELF%/*} # the scenario files: sourced by every scenario's bash, so no fork of dirname each
. "$HERE/../jobs.sh"
MS=$(realpath -m "$1")
ROOTFS=$(realpath -m "${MINISENTRY_ROOTFS:-$2}")
shift 2
TIMEOUT=${E2E_TIMEOUT:-30}
SCENARIO_TIMEOUT=${E2E_SCENARIO_TIMEOUT:-$((TIMEOUT * 4))}
if [ -n "${E2E_WORK:-}" ]; then
  WORK=$E2E_WORK # one scenario's bash: the driver's directory, which the driver removes
else
  WORK=$(mktemp -d /tmp/minisentry-e2e.XXXXXX)
  trap 'rm -rf "$WORK"' EXIT
fi

passed=0
failed=0

# --- helpers ---------------------------------------------------------------------------------

# ms ARGS...: runs MINISENTRY ARGS... under a timeout with stdin from $WORK/in (empty unless
# a scenario wrote it); sets $status, $out and $err (stdout/stderr, trailing newlines dropped).
ms() {
  step "minisentry $*"
  [ -f "$WORK/in" ] || : >"$WORK/in"
  # The outer 2>/dev/null hides bash's "Terminated" note when timeout re-raises a guest's
  # fatal signal on itself.
  { timeout -k 5 "$TIMEOUT" "$MS" "$@" <"$WORK/in" >"$WORK/out" 2>"$WORK/err"; } 2>/dev/null
  status=$?
  out=$(<"$WORK/out")
  err=$(<"$WORK/err")
  rm -f "$WORK/in"
}

fail() { why=$*; return 1; }

# wait_bounded PID: waits for background PID, killing it after $TIMEOUT s; its status in $status.
# (No guard subshell: one ended by a signal runs this script's EXIT trap, which removes $WORK.)
wait_bounded() {
  # Inside braces with stderr closed: no note from bash when it died of a signal.
  {
    timeout "$TIMEOUT" tail --pid="$1" -s 0.05 -f /dev/null || kill -9 "$1"
    wait "$1"
    status=$?
  } 2>/dev/null
}

# sentry_of PID: the Sentry of the minisentry command started as PID: the child its launcher
# forked into the sandbox's namespaces (PID itself under --unsafe-no-confine). Its children
# are the stubs.
sentry_of() {
  local child
  child=$(pgrep -P "$1" | head -1)
  echo "${child:-$1}"
}
# factory_of SENTRY: the Sentry's stub factory, the child whose children are the stubs.
factory_of() {
  local c
  for c in $(pgrep -P "$1"); do
    pgrep -P "$c" >/dev/null && { echo "$c"; return; }
  done
}
# stub_of SENTRY: the host pid of the first stub (init's) of that Sentry.
stub_of() {
  local f
  f=$(factory_of "$1")
  [ -n "$f" ] && pgrep -P "$f" | head -1
}
skip() { why=$*; return 2; }

# platforms: the platforms this host runs guests under, of "ptrace seccomp" (the seccomp
# platform needs the FSGSBASE instructions: docs/platform.md); minisentry itself is asked, once
# per suite (the answer is kept in the driver's environment).
platforms() {
  if [ -z "${E2E_PLATFORMS:-}" ]; then
    E2E_PLATFORMS=ptrace
    timeout -k 5 "$TIMEOUT" "$MS" run --platform seccomp "$ROOTFS" -- /bin/true \
      </dev/null >/dev/null 2>&1 && E2E_PLATFORMS="ptrace seccomp"
  fi
  echo "$E2E_PLATFORMS"
}

# need_both_platforms: SKIPs (returns 2) unless this host runs both.
need_both_platforms() {
  [ "$(platforms)" = "ptrace seccomp" ] ||
    skip "the seccomp platform cannot run here (it needs FSGSBASE): only ptrace is tested"
}

# step TEXT: what the scenario is doing now, named in the report if it hangs there.
step() { printf '%s' "$*" | cut -c1-160 >"$WORK/step"; }

# The first CPU this shell may run on.
first_cpu() { taskset -cp $$ | sed 's/.*: *//; s/[,-].*//'; }

# wait_gone PID SECONDS: waits up to SECONDS for background process PID to end, its exit
# status in $status; if it has not, kills it (SIGKILL) and fails. (stderr hides bash's notes
# on jobs that end by a signal.)
wait_gone() {
  local pid=$1
  step "waiting for process $pid to end"
  if ! { timeout "$2" tail --pid="$pid" -s 0.05 -f /dev/null; } 2>/dev/null; then
    { kill -KILL "$pid"; wait "$pid"; } 2>/dev/null
    fail "process $pid still running after $2 s (killed)"
    return
  fi
  wait "$pid" 2>/dev/null
  status=$?
}

timed_out() { [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; }

# Context for failure messages: the first line of the guest's stderr, if any.
err_hint() { [ -n "$err" ] && printf '; stderr: %s' "$(head -n1 <<<"$err" | cut -c1-160)"; }
out_hint() { printf "'%s'" "$(head -n3 <<<"$out" | tr '\n' '|' | cut -c1-160)"; }

expect_status() {
  if timed_out && [ "$1" -ne "$status" ]; then
    fail "timed out after ${TIMEOUT}s"
  elif [ "$status" -ne "$1" ]; then
    fail "exit status $status, want $1$(err_hint)"
  fi
}

expect_stdout() {
  [ "$out" = "$1" ] || fail "stdout $(out_hint), want '$1'$(err_hint)"
}

expect_stdout_line() {
  grep -qxF -- "$1" <<<"$out" || fail "stdout $(out_hint) has no line '$1'$(err_hint)"
}

# A bad input is reported as one line on stderr starting with "minisentry:", a non-zero exit
# and no hang.
expect_one_line_error() {
  local lines
  lines=$(grep -c '' "$WORK/err")
  if timed_out; then
    fail "timed out after ${TIMEOUT}s"
  elif [ "$status" -eq 0 ]; then
    fail "exit status 0, want non-zero"
  elif [ "$lines" -ne 1 ]; then
    fail "stderr has $lines lines, want 1$(err_hint)"
  elif [[ $err != minisentry:* ]]; then
    fail "stderr '$err' does not start with 'minisentry:'"
  fi
}

need_in_rootfs() {
  [ -e "$ROOTFS$1" ] || skip "$1 is not in $ROOTFS"
}

# copy_rootfs NAME: a private copy of ROOTFS in $WORK/NAME for scenarios that add files.
copy_rootfs() {
  rm -rf "${WORK:?}/$1"
  cp -a "$ROOTFS" "$WORK/$1"
}

# --- running programs ------------------------------------------------------------------------

busybox_echo_prints_its_arguments() {
  ms run "$ROOTFS" -- /bin/busybox echo hello
  expect_status 0 && expect_stdout hello
}

busybox_ls_lists_passwd_group_and_hostname_in_etc() {
  need_in_rootfs /etc/hostname || return
  ms run "$ROOTFS" -- /bin/busybox ls -l /etc
  expect_status 0 || return
  local f
  for f in passwd group hostname; do
    grep -qE "[[:space:]]$f\$" <<<"$out" || fail "ls -l /etc does not list $f: $(out_hint)" || return
  done
}

busybox_cat_prints_etc_passwd_unchanged() {
  ms run "$ROOTFS" -- /bin/busybox cat /etc/passwd
  expect_status 0 || return
  cmp -s "$WORK/out" "$ROOTFS/etc/passwd" || fail "output differs from $ROOTFS/etc/passwd$(err_hint)"
}

shell_exit_status_becomes_the_exit_status() {
  ms run "$ROOTFS" -- /bin/busybox sh -c 'exit 7'
  expect_status 7
}

default_command_is_bin_sh_reading_stdin() {
  echo 'echo from-stdin; exit 3' >"$WORK/in"
  ms run "$ROOTFS"
  expect_status 3 && expect_stdout from-stdin
}

musl_dynamic_hello_prints_its_line() {
  need_in_rootfs /usr/local/bin/hello || return
  ms run "$ROOTFS" -- /usr/local/bin/hello
  expect_status 0 && expect_stdout "hello from musl"
}

unimplemented_syscall_is_enosys_and_named_once_on_stderr() {
  need_in_rootfs /usr/local/bin/enosys || return
  ms run "$ROOTFS" -- /usr/local/bin/enosys
  expect_status 0 || return
  [ "$(grep -c ENOSYS <<<"$out")" = 3 ] || fail "stdout $(out_hint), want three ENOSYS lines"
  [ "$(grep -c 'unimplemented syscall.*(1000)' <<<"$err")" = 1 ] ||
    fail "stderr should name syscall 1000 exactly once$(err_hint)"
}

env_option_and_arguments_reach_the_guest() {
  need_in_rootfs /usr/local/bin/args || return
  ms run --env FOO=bar "$ROOTFS" -- /usr/local/bin/args x y
  expect_status 0 || return
  local line
  for line in argc=3 argv[0]=/usr/local/bin/args argv[1]=x argv[2]=y FOO=bar; do
    expect_stdout_line "$line" || return
  done
}

cwd_option_sets_the_working_directory() {
  ms run --cwd /etc "$ROOTFS" -- /bin/busybox pwd
  expect_status 0 && expect_stdout /etc
}

glibc_dynamic_program_runs_with_its_libraries() {
  command -v gcc >/dev/null || skip "host gcc not found" || return
  command -v ldd >/dev/null || skip "host ldd not found" || return
  printf '#include <stdio.h>\nint main(void) { printf("hello from glibc\\n"); return 0; }\n' \
    >"$WORK/glibc-hello.c"
  gcc -O2 "$WORK/glibc-hello.c" -o "$WORK/glibc-hello" || fail "host gcc failed" || return
  copy_rootfs rootfs-glibc
  local root="$WORK/rootfs-glibc" lib
  mkdir -p "$root/usr/local/bin"
  cp "$WORK/glibc-hello" "$root/usr/local/bin/glibc-hello"
  # ldd lines: "libc.so.6 => /lib/.../libc.so.6 (0x..)" and "/lib64/ld-linux-x86-64.so.2 (0x..)".
  for lib in $(ldd "$WORK/glibc-hello" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    cp -L --parents "$lib" "$root" || fail "cannot copy $lib" || return
  done
  ms run "$root" -- /usr/local/bin/glibc-hello
  rm -rf "$root"
  expect_status 0 && expect_stdout "hello from glibc"
}

# The host's GNU coreutils (glibc-dynamic, and fussier about syscalls than busybox: xattrs,
# fadvise, statx) work in the sandbox and say nothing on stderr.
gnu_coreutils_run_quietly() {
  local tool root="$WORK/rootfs-gnu" lib
  for tool in ls cp sort md5sum; do
    command -v "$tool" >/dev/null && ldd "$(command -v "$tool")" >/dev/null 2>&1 ||
      { skip "no dynamic GNU $tool on the host"; return; }
  done
  copy_rootfs rootfs-gnu
  mkdir -p "$root/gnu"
  for tool in ls cp sort md5sum; do
    cp -L "$(command -v "$tool")" "$root/gnu/$tool"
    for lib in $(ldd "$(command -v "$tool")" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
      cp -L --parents "$lib" "$root" 2>/dev/null
    done
  done
  ms run "$root" -- /bin/sh -c '/gnu/ls -la /etc >/dev/null && /gnu/cp -a /etc /tmp/etc &&
    /gnu/ls /tmp/etc | /gnu/sort | head -1 && /gnu/md5sum /tmp/etc/passwd | cut -c1-32'
  local want
  want=$(ls "$ROOTFS/etc" | sort | head -1; md5sum "$ROOTFS/etc/passwd" | cut -c1-32)
  rm -rf "$root"
  expect_status 0 && expect_stdout "$want" || return
  [ -z "$err" ] || fail "stderr: $(err_hint)"
}

# The host's own root as ROOTFS (read-only below the sandbox's memory layer): its C toolchain
# compiles, assembles and links a program in /tmp, which then runs.
host_root_toolchain_builds_a_program() {
  command -v gcc >/dev/null || { skip "host gcc not found"; return; }
  ms run / -- /bin/sh -c 'printf "#include <stdio.h>\nint main(void) { puts(\"built inside\"); return 0; }\n" >/tmp/p.c &&
    gcc -O2 -o /tmp/p /tmp/p.c && /tmp/p'
  expect_status 0 && expect_stdout "built inside"
}

strace_option_logs_syscalls_on_stderr_and_keeps_stdout() {
  ms run --strace "$ROOTFS" -- /bin/busybox echo hello
  expect_status 0 && expect_stdout hello || return
  grep -qE 'write\(1,.*\) *= *6' <<<"$err" ||
    fail "stderr has no 'write(1, ...) = 6' line$(err_hint)"
}

# --strace reads like strace -f: no pid prefix while there is one task, [pid N] once there are
# more; execve with its argv; symbolic signals; a signal taken as `--- SIG {...} ---`; how each
# process ended as `+++ ... +++`, after its last call.
strace_output_reads_like_strace() {
  ms run --strace "$ROOTFS" -- /bin/sh -c '/bin/true one & wait; kill -USR1 $$; sh -c "kill -USR1 \$\$"; exit $?'
  expect_status 138 || return
  local first
  first=$(head -n1 <<<"$err")
  [[ $first == execve* ]] || [[ $first != "[pid"* ]] || fail "the first line has a pid prefix: '$first'" || return
  grep -qE '^\[pid +[0-9]+\] execve\("/bin/true", \["/bin/true", "one"\], 0x[0-9a-f]+ /\* [0-9]+ vars? \*/\) += 0$' <<<"$err" ||
    fail "no execve line with its argv$(err_hint)" || return
  grep -qE '^rt_sigaction\(SIGCHLD, ' <<<"$err" || fail "no rt_sigaction(SIGCHLD, ...)" || return
  grep -qE '^--- SIGCHLD \{si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=[0-9]+, si_uid=0, si_status=0, si_utime=[0-9]+, si_stime=[0-9]+\} ---$' <<<"$err" ||
    fail "no SIGCHLD line" || return
  grep -qE '^\[pid +[0-9]+\] exit_group\(0\) += \?$' <<<"$err" || fail "no exit_group(0) = ? line" || return
  grep -A1 -E '^\[pid +[0-9]+\] exit_group\(0\) += \?$' <<<"$err" | grep -qE '^\[pid +[0-9]+\] \+\+\+ exited with 0 \+\+\+$' ||
    fail "the child's exit does not follow its exit_group" || return
  # Init drops a signal it does not handle (pid_namespaces(7)); its child dies of it.
  grep -qE '^kill\(1, SIGUSR1\) += 0$' <<<"$err" || fail "no kill(1, SIGUSR1) line" || return
  grep -qE '^\[pid +[0-9]+\] \+\+\+ killed by SIGUSR1 \+\+\+$' <<<"$err" || fail "no child killed by SIGUSR1" || return
  [ "$(tail -n1 <<<"$err")" = "+++ exited with 138 +++" ] || fail "last line '$(tail -n1 <<<"$err")'"
}

# --strace decodes as strace -f does, line for line: constants by name, the structures strace
# shows (read back after the call for what the call wrote), strings quoted and cut at 32
# characters, the result from column 40, the command's own execve first, and a call that blocks
# while another task runs split into `<unfinished ...>` and `<... NAME resumed>` lines. Each
# pattern must match one whole line (addresses and sizes by pattern only).
strace_decodes_like_strace() {
  ms run --strace "$ROOTFS" -- /bin/sh -c 'sleep 0.2 & wait; /bin/sleep 0.1; cat /etc/hostname; ls -ld /etc | cat'
  expect_status 0 || return
  local a='0x[0-9a-f]+' p='\[pid +[0-9]+\] ' line
  [[ $(head -n1 <<<"$err") =~ ^execve\(\"/bin/sh\",\ \[\"/bin/sh\",\ \"-c\",\ \"sleep\ 0\.2\ \&\ wait\;\ /bin/sleep\ 0\.1\"\.\.\.\],\ $a\ /\*\ [0-9]+\ vars\ \*/\)\ =\ 0$ ]] ||
    fail "the first line is not the command's execve: '$(head -n1 <<<"$err")'" || return
  while IFS= read -r line; do
    grep -qxE -e "$line" <<<"$err" || fail "no line matching '$line'$(err_hint)" || return
  done <<EOF
brk\(NULL\) {31}= $a
arch_prctl\(ARCH_SET_FS, $a\) += 0
prlimit64\(0, RLIMIT_STACK, NULL, \{rlim_cur=([0-9*]+|RLIM64_INFINITY), rlim_max=([0-9*]+|RLIM64_INFINITY)\}\) = 0
readlink\("/proc/self/exe", "/bin/busybox", 4096\) = 12
getrandom\("(\\\\x[0-9a-f]{2}){8}", 8, GRND_NONBLOCK\) = 8
mprotect\($a, [0-9]+, PROT_READ\) += 0
prctl\(PR_GET_NAME, "sh"\) {16}= 0
rt_sigaction\(SIGCHLD, \{sa_handler=$a, sa_mask=~\[RTMIN RT_1\], sa_flags=SA_RESTORER, sa_restorer=$a\}, NULL, 8\) = 0
rt_sigaction\(SIGINT, NULL, \{sa_handler=SIG_DFL, sa_mask=\[\], sa_flags=0\}, 8\) = 0
uname\(\{sysname="Linux", nodename="[^"]*", \.\.\.\}\) = 0
getcwd\("/", 4096\) {23}= 2
clone\(child_stack=NULL, flags=CLONE_CHILD_CLEARTID\|CLONE_CHILD_SETTID\|SIGCHLD, child_tidptr=$a\) = 2
${p}rt_sigsuspend\(\[\], 8 <unfinished \.\.\.>
${p}clock_nanosleep\(CLOCK_REALTIME, 0, \{tv_sec=0, tv_nsec=200000000\}, $a\) = 0
<\.\.\. rt_sigsuspend resumed>\) {12}= \? ERESTARTNOHAND \(To be restarted if no handler\)
--- SIGCHLD \{si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=2, si_uid=[0-9]+, si_status=0, si_utime=[0-9]+, si_stime=[0-9]+\} ---
rt_sigreturn\(\{mask=~\[KILL STOP RTMIN RT_1\]\}\) = -1 EINTR \(Interrupted system call\)
wait4\(-1, \[\{WIFEXITED\(s\) && WEXITSTATUS\(s\) == 0\}\], WNOHANG, NULL\) = 2
wait4\(-1, $a, WNOHANG, NULL\) = -1 ECHILD \(No child processes\)
\[pid +1\] wait4\(-1,  <unfinished \.\.\.>
${p}clock_nanosleep\(CLOCK_REALTIME, 0, \{tv_sec=0, tv_nsec=100000000\}, $a\) = 0
<\.\.\. wait4 resumed>\[\{WIFEXITED\(s\) && WEXITSTATUS\(s\) == 0\}\], 0, NULL\) = 3
${p}openat\(AT_FDCWD, "/etc/hostname", O_RDONLY\) = 3
pipe2\(\[3, 4\], 0\) {24}= 0
${p}newfstatat\(AT_FDCWD, "/etc", \{st_mode=S_IFDIR\|0755, st_size=[0-9]+, \.\.\.\}, AT_SYMLINK_NOFOLLOW\) = 0
${p}read\(0, "drwxr-xr-x.{22}"\.\.\., 65536\) += [0-9]+
${p}exit_group\(0\) += \?
\+\+\+ exited with 0 \+\+\+
EOF
  # A task killed in the call it blocked in: the call never returns, and how it ended.
  step "minisentry run --strace: a sleeping child killed"
  ms run --strace "$ROOTFS" -- /bin/sh -c 'sleep 5 & /bin/sleep 1; kill -9 $!; wait'
  expect_status 0 || return
  while IFS= read -r line; do
    grep -qxE -e "$line" <<<"$err" || fail "no line matching '$line'$(err_hint)" || return
  done <<EOF
\[pid +1\] kill\(2, SIGKILL\) += 0
\[pid +2\] <\.\.\. clock_nanosleep resumed>\) += \?
\[pid +2\] \+\+\+ killed by SIGKILL \+\+\+
(\[pid +1\] )?wait4\(-1, \[\{WIFSIGNALED\(s\) && WTERMSIG\(s\) == SIGKILL\}\], WNOHANG, NULL\) += 2
EOF
}

# The calls whose arguments are structures or depend on a command (select's fd sets and time
# left, sigaltstack, itimers, socket options by level, tty and file ioctls, sendmsg/recvmsg
# with addresses and SCM_RIGHTS, rusage, mount and umount2 flags): tests/e2e/strace_calls.c
# runs under the host's `strace -f` and under --strace, and their lines must be the same once
# addresses, times, pids and ports are left out (and mount's result: the sandbox refuses a
# bind mount that Linux would attempt).
strace_decodes_structures_as_host_strace_does() {
  command -v strace >/dev/null || { skip "host strace not found"; return; }
  command -v gcc >/dev/null || { skip "host gcc not found"; return; }
  local bin="$WORK/sc-bin"
  mkdir -p "$bin"
  gcc -static -O2 -o "$bin/strace_calls" "$(dirname "$SELF")/strace_calls.c" ||
    fail "cannot build strace_calls.c" || return
  step "strace -f strace_calls (natively)"
  # Natively with only stdin, stdout and stderr open, as the guest is (a descriptor inherited
  # from the caller, a make jobserver's, would shift every fd number the calls show).
  (
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      [ "$fd" -gt 2 ] && eval "exec $fd>&-"
    done
    exec timeout "$TIMEOUT" strace -f -o "$WORK/sc-native" "$bin/strace_calls"
  ) || { skip "host strace cannot trace here"; return; }
  ms run --strace -v "$bin:/xbin:ro" "$ROOTFS" -- /xbin/strace_calls
  expect_status 0 || return
  local norm='s/^[0-9]+ +//; s/^\[pid +[0-9]+\] //; s/0x[0-9a-f]+/ADDR/g;
    s/(tv_sec|tv_usec|tv_nsec|pid|tms_[a-z]+)=[0-9]+/\1=N/g; s/htons\([0-9]+\)/htons(P)/g;
    s/^((fork|wait4)\()[0-9]+/\1N/; s/ += / = /; s/ = [0-9]+$/ = N/; s/^(mount\(.*\)) = .*/\1/'
  local calls='^(select|pselect6|sigaltstack|setitimer|getitimer|setsockopt|getsockopt|getsockname|getpeername|ioctl|sendmsg|recvmsg|getrusage|umount2|mount|wait4|<\.\.\. wait4|getpriority|setpriority|setgroups|getgroups|getresuid|times)\('
  local want got
  want=$(sed -E "$norm" "$WORK/sc-native" | grep -E "$calls")
  got=$(sed -E "$norm" <<<"$err" | grep -E "$calls")
  [ "$(wc -l <<<"$want")" -ge 40 ] || fail "the host's strace shows only $(wc -l <<<"$want") of the calls" || return
  [ "$want" = "$got" ] || fail "differs from strace -f: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -4 | tr '\n' '|')"
}

# --strace -o FILE, as strace -f -o: the trace goes to FILE, every line led by its pid in a
# column, and stderr has none of it; for run and for restore, whose trace is a new file (the
# checkpointed run's is left as it was).
strace_output_goes_to_a_file_for_run_and_restore() {
  local id="e2e-$$-$RANDOM" t1=$WORK/trace.run t2=$WORK/trace.restore
  ms run --strace -o "$t1" "$ROOTFS" -- /bin/sh -c 'echo hello; /bin/true one & wait'
  expect_status 0 && expect_stdout hello || return
  [ -z "$err" ] || fail "stderr is not empty with -o: '$(head -n2 <<<"$err" | tr '\n' '|')'" || return
  [[ $(head -n1 "$t1") =~ ^1\ {5}execve\(\"/bin/sh\",\ \[\"/bin/sh\",\ \"-c\",\ .*\)\ =\ 0$ ]] ||
    fail "the trace's first line is '$(head -n1 "$t1")'" || return
  grep -qE '^1 {5}write\(1, "hello\\n", 6\) += 6$' "$t1" || fail "no write(1, \"hello\\n\", 6) = 6 line" || return
  grep -qE '^[0-9]+ +execve\("/bin/true", \["/bin/true", "one"\], ' "$t1" ||
    fail "no N execve of /bin/true" || return
  ! grep -q '^\[pid' "$t1" || fail "a [pid N] prefix with -o" || return
  [ "$(tail -n1 "$t1")" = "1     +++ exited with 0 +++" ] || fail "the trace ends with '$(tail -n1 "$t1")'" || return

  # A restore's trace: the sandbox is checkpointed in its loop, and the restore's -o file
  # holds what it did after (its last echo, its end), and its stderr nothing.
  rm -f "$t1"
  ms_bg "$WORK/srun" run --strace -o "$t1" --id "$id" "$ROOTFS" -- /bin/sh -c \
    'echo ready; i=0; while [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done; echo after'
  wait_line "$WORK/srun" '^ready$' || { kill "$bg_pid" 2>/dev/null; return 1; }
  checkpoint "$id" "$WORK/simg" || { kill "$bg_pid" 2>/dev/null; return 1; }
  bg_status "$bg_pid"
  [ "$status" -eq 0 ] || fail "the checkpointed run exited with $status" || return
  grep -qE '^1 +write\(1, "ready\\n", 6\) += 6$' "$t1" || fail "the run's trace has no write of ready" || return
  ms restore --strace -o "$t2" --image "$WORK/simg"
  expect_status 0 && expect_stdout after || return
  [ -z "$err" ] || fail "restore's stderr is not empty with -o: '$(head -n2 <<<"$err" | tr '\n' '|')'" || return
  grep -qE '^1 +write\(1, "after\\n", 6\) += 6$' "$t2" || fail "the restore's trace has no write of after" || return
  ! grep -q '"ready' "$t2" || fail "the restore's trace has the run's write of ready" || return
  [ "$(tail -n1 "$t2")" = "1     +++ exited with 0 +++" ] || fail "the restore's trace ends with '$(tail -n1 "$t2")'"
}

# A -o FILE that cannot be made is refused before the guest starts: one line naming it, the
# usage error's status 2, no output of the guest; so is -o without --strace. (The Sentry ends
# before its launcher has written the id maps: five tries, as the launcher once died of that
# write's SIGPIPE, exit 141, in about half of them.)
strace_output_file_that_cannot_be_made_is_a_one_line_error() {
  local i
  for i in 1 2 3 4 5; do
    ms run --strace -o "$WORK/no/such/dir/trace" "$ROOTFS" -- /bin/sh -c 'echo started'
    expect_one_line_error && expect_status 2 || return
    [ -z "$out" ] || fail "the guest ran: stdout '$out'" || return
  done
  [[ $err == *"$WORK/no/such/dir/trace"* ]] || fail "stderr '$err' does not name the file" || return
  ms run --strace -o "$WORK" "$ROOTFS" -- /bin/sh -c 'echo started'
  expect_one_line_error && [ -z "$out" ] || fail "a directory as FILE: the guest ran" || return
  ms restore --strace -o "$WORK/no/such/dir/trace" --image "$WORK/no-image"
  expect_one_line_error || return
  [[ $err == *"$WORK/no/such/dir/trace"* ]] || fail "restore's stderr '$err' does not name the file" || return
  ms run -o "$WORK/trace" "$ROOTFS" -- /bin/true
  expect_one_line_error && [ ! -e "$WORK/trace" ] || fail "-o without --strace made the file"
}

# --- bad inputs ------------------------------------------------------------------------------

missing_rootfs_is_a_one_line_error() {
  ms run "$WORK/no-such-rootfs" -- /bin/busybox true
  expect_one_line_error
}

rootfs_that_is_a_file_is_a_one_line_error() {
  echo "not a directory" >"$WORK/rootfs-file"
  ms run "$WORK/rootfs-file" -- /bin/busybox true
  expect_one_line_error
}

missing_command_is_a_one_line_error() {
  ms run "$ROOTFS" -- /no/such/program
  expect_one_line_error
}

text_file_without_shebang_is_a_one_line_exec_error() {
  copy_rootfs rootfs-text
  printf 'echo this is not a program\n' >"$WORK/rootfs-text/bin/not-elf"
  chmod +x "$WORK/rootfs-text/bin/not-elf"
  ms run "$WORK/rootfs-text" -- /bin/not-elf
  rm -rf "$WORK/rootfs-text"
  expect_one_line_error
}

truncated_elf_is_a_one_line_exec_error() {
  copy_rootfs rootfs-trunc
  head -c 100 "$ROOTFS/bin/busybox" >"$WORK/rootfs-trunc/bin/truncated"
  chmod +x "$WORK/rootfs-trunc/bin/truncated"
  ms run "$WORK/rootfs-trunc" -- /bin/truncated
  rm -rf "$WORK/rootfs-trunc"
  expect_one_line_error
}

unknown_option_is_a_one_line_error() {
  ms run --no-such-option "$ROOTFS" -- /bin/busybox true
  expect_one_line_error
}

cpus_zero_is_a_one_line_error() {
  ms run --cpus 0 "$ROOTFS" -- /bin/busybox true
  expect_one_line_error
}

cpus_that_is_not_a_number_is_a_one_line_error() {
  ms run --cpus abc "$ROOTFS" -- /bin/busybox true
  expect_one_line_error
}

# --- the command line itself -----------------------------------------------------------------

help_prints_usage_and_exits_zero() {
  ms --help
  expect_status 0 || return
  grep -qi usage <<<"$out" || fail "stdout $(out_hint) does not mention usage"
}

version_prints_a_version() {
  ms --version
  expect_status 0 || return
  grep -q '[0-9]' <<<"$out" || fail "stdout $(out_hint) has no version number"
}

# --- hygiene ---------------------------------------------------------------------------------

# Processes running our MINISENTRY: the Sentry itself, stubs forked from it (they keep its
# executable even after unmapping its image) or an interpreter running it (argv[1]). The same
# file is the same device and inode (test -ef, which follows /proc's links and symlinks as
# realpath did): no process forked per process looked at, of the hundreds a host may have.
leftover_pids() {
  local p pid a args=()
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] && continue
    if [ "$p/exe" -ef "$MS" ]; then
      echo "$pid"
      continue
    fi
    mapfile -d '' -t args 2>/dev/null <"$p/cmdline" || continue
    for a in "${args[@]:0:2}"; do
      [ -n "$a" ] || continue
      [[ $a == /* ]] || a="$p/cwd/$a"
      if [ "$a" -ef "$MS" ]; then
        echo "$pid"
        break
      fi
    done
  done
}

no_minisentry_process_outlives_its_runs() {
  local left deadline=$((SECONDS + 3))
  while :; do
    left=$(leftover_pids)
    [ -z "$left" ] && return 0
    [ "$SECONDS" -ge "$deadline" ] && break
    sleep 0.2
  done
  fail "still running: $(for p in $left; do printf '%s(%s) ' "$p" "$(cat "/proc/$p/comm" 2>/dev/null)"; done)"
}

# Not in the list: a scenario that hangs, for the next one. (The sleep's length names it.)
selftest_hangs_in_a_wait() {
  step "sleeping forever"
  sleep 987654 &
  wait
}

# A scenario that hangs is stopped with what it started and reported by name and step.
hung_scenario_is_a_named_fail_and_leaves_nothing_behind() {
  step "the driver on a scenario that hangs"
  # A limit the scenario's bash reaches its step within on a loaded host (it took over 2 s).
  env -u E2E_ONE -u E2E_WORK -u E2E_ONLY E2E_SCENARIO_TIMEOUT=8 timeout -k 5 40 \
    bash "$SELF" "$MS" "$ROOTFS" selftest_hangs_in_a_wait >"$WORK/self.out" 2>&1
  status=$?
  [ "$status" -eq 1 ] || fail "the driver exited with $status, want 1: '$(tr '\n' '|' <"$WORK/self.out")'" || return
  grep -q '^FAIL selftest_hangs_in_a_wait: hung: .*stopped at: sleeping forever$' "$WORK/self.out" ||
    fail "no FAIL line naming the hang: '$(tr '\n' '|' <"$WORK/self.out")'" || return
  ! pgrep -f '^sleep 987654$' >/dev/null || fail "the hung scenario's sleep is still running"
}

# --- driver ----------------------------------------------------------------------------------

# The driver runs E2E_JOBS scenarios at a time (default 2, 1 on one CPU), each in a bash and a
# directory ($WORK) of its own. Two declarations, next to the scenarios they concern, say what
# may not run that way:
#   e2e_serial NAME...  scenarios that look at every minisentry process on the host (or at
#                       anything else a scenario beside them would change): they run after all
#                       the others, one at a time, with nothing beside them.
#   e2e_chain NAME...   scenarios that read what an earlier one left in $WORK (an image, a built
#                       helper) or share a daemon: each starts once the one before it has
#                       ended, in the directory of the first.
declare -A E2E_SERIAL=() E2E_PRED=()
e2e_serial() {
  local s
  for s; do E2E_SERIAL[$s]=1; done
}
e2e_chain() {
  local s prev=""
  for s; do
    [ -n "$prev" ] && E2E_PRED[$s]=$prev
    prev=$s
  done
}

scenarios=(
  busybox_echo_prints_its_arguments
  busybox_ls_lists_passwd_group_and_hostname_in_etc
  busybox_cat_prints_etc_passwd_unchanged
  shell_exit_status_becomes_the_exit_status
  default_command_is_bin_sh_reading_stdin
  musl_dynamic_hello_prints_its_line
  unimplemented_syscall_is_enosys_and_named_once_on_stderr
  env_option_and_arguments_reach_the_guest
  cwd_option_sets_the_working_directory
  glibc_dynamic_program_runs_with_its_libraries
  gnu_coreutils_run_quietly
  host_root_toolchain_builds_a_program
  strace_option_logs_syscalls_on_stderr_and_keeps_stdout
  strace_output_reads_like_strace
  strace_decodes_like_strace
  strace_decodes_structures_as_host_strace_does
  strace_output_goes_to_a_file_for_run_and_restore
  strace_output_file_that_cannot_be_made_is_a_one_line_error
  missing_rootfs_is_a_one_line_error
  rootfs_that_is_a_file_is_a_one_line_error
  missing_command_is_a_one_line_error
  text_file_without_shebang_is_a_one_line_exec_error
  truncated_elf_is_a_one_line_exec_error
  unknown_option_is_a_one_line_error
  cpus_zero_is_a_one_line_error
  cpus_that_is_not_a_number_is_a_one_line_error
  help_prints_usage_and_exits_zero
  version_prints_a_version
  hung_scenario_is_a_named_fail_and_leaves_nothing_behind
)
# shellcheck source=tests/e2e/processes.sh
source "$HERE/processes.sh"
# shellcheck source=tests/e2e/filesystem.sh
source "$HERE/filesystem.sh"
# shellcheck source=tests/e2e/pty.sh
source "$HERE/pty.sh"
# shellcheck source=tests/e2e/procfs.sh
source "$HERE/procfs.sh"
# shellcheck source=tests/e2e/checkpoint.sh
source "$HERE/checkpoint.sh"
# shellcheck source=tests/e2e/golden.sh
source "$HERE/golden.sh"
# shellcheck source=tests/e2e/holes.sh
source "$HERE/holes.sh"
# shellcheck source=tests/e2e/network.sh
source "$HERE/network.sh"
# shellcheck source=tests/e2e/confinement.sh
source "$HERE/confinement.sh"
# shellcheck source=tests/e2e/limits.sh
source "$HERE/limits.sh"
# shellcheck source=tests/e2e/run_options.sh
source "$HERE/run_options.sh"
# shellcheck source=tests/e2e/oci.sh
source "$HERE/oci.sh"
# shellcheck source=tests/e2e/engines.sh
source "$HERE/engines.sh"
# shellcheck source=tests/e2e/stress.sh
source "$HERE/stress.sh"
# shellcheck source=tests/e2e/faults.sh
source "$HERE/faults.sh"
# shellcheck source=tests/e2e/platforms.sh
source "$HERE/platforms.sh"
scenarios+=(no_minisentry_process_outlives_its_runs) # last: checks what the runs left behind
e2e_serial no_minisentry_process_outlives_its_runs

# One scenario, in the bash the driver started for it: its verdict is the exit status, the
# reason is in $WORK/why.
if [ -n "${E2E_ONE:-}" ]; then
  why=""
  "$E2E_ONE"
  rc=$?
  printf '%s' "$why" >"$WORK/why"
  [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || rc=1
  exit "$rc"
fi

if [ ! -x "$MS" ] || [ ! -d "$ROOTFS" ]; then
  [ -x "$MS" ] || echo "FAIL setup: $MS is not an executable"
  [ -d "$ROOTFS" ] || echo "FAIL setup: $ROOTFS is not a directory (make rootfs)"
  echo "e2e: 0 passed, 1 failed"
  exit 1
fi

E2E_PLATFORMS=$(platforms)
export E2E_PLATFORMS
[ "$E2E_PLATFORMS" = ptrace ] &&
  echo "note: the seccomp platform cannot run on this host (no FSGSBASE): scenarios run under ptrace only"
[ $# -gt 0 ] && scenarios=("$@")
# Two at a time where there are two CPUs (what the suite is tried with), else one.
cpus=$(nproc 2>/dev/null || echo 1)
JOBS=${E2E_JOBS:-$((cpus >= 2 ? 2 : 1))}
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || { echo "e2e: E2E_JOBS must be a number of at least 1, not '$JOBS'" >&2; exit 2; }

# The report order: the scenarios picked (E2E_ONLY=REGEX runs only those whose names match),
# those that run beside others first, in their order, then the serial ones, in theirs.
order=() serial=()
declare -A picked=()
for s in "${scenarios[@]}"; do
  [ -n "${E2E_ONLY:-}" ] && ! [[ $s =~ $E2E_ONLY ]] && continue
  [ -n "${picked[$s]:-}" ] && continue
  picked[$s]=1
  if [ -n "${E2E_SERIAL[$s]:-}" ]; then serial+=("$s"); else order+=("$s"); fi
done
order+=("${serial[@]}")

# The start order: the chains' scenarios first (a chain runs one scenario at a time: started
# last, a long one would run alone at the end), then the others, then the serial ones; but
# while others wait, chains take at most JOBS - 1 places (the report goes on in its order).
declare -A in_chain=()
for s in "${!E2E_PRED[@]}"; do
  in_chain[$s]=1
  in_chain[${E2E_PRED[$s]}]=1
done
queue=()
for s in "${order[@]}"; do [ -n "${in_chain[$s]:-}" ] && [ -z "${E2E_SERIAL[$s]:-}" ] && queue+=("$s"); done
for s in "${order[@]}"; do [ -z "${in_chain[$s]:-}" ] && queue+=("$s"); done

# A chained scenario waits for the nearest earlier member of its chain that runs (E2E_ONLY may
# leave some out).
pred_of() {
  local p=${E2E_PRED[$1]:-}
  while [ -n "$p" ] && [ -z "${picked[$p]:-}" ]; do p=${E2E_PRED[$p]:-}; done
  echo "$p"
}

RES=$WORK/results
mkdir -p "$RES"

# Each scenario's directory, $WORK/wN: short (a socket path under it must fit in 108 bytes),
# the same for a chain.
declare -A dir_of=()
for s in "${order[@]}"; do
  p=$(pred_of "$s")
  if [ -n "$p" ]; then dir_of[$s]=${dir_of[$p]}; else dir_of[$s]=$WORK/w${#dir_of[@]}; fi
done

# run_scenario NAME: runs it under its limit, in its directory; leaves its output in
# RES/NAME.log, then its verdict in RES/NAME.rc (written last: the driver's sign that it ended).
run_scenario() {
  local s=$1 dir=${dir_of[$1]} t0 rc
  mkdir -p "$dir"
  rm -f "$dir/why" "$dir/step"
  t0=${EPOCHREALTIME/./}
  # timeout signals its whole process group: the scenario's bash and what it started.
  E2E_ONE=$s E2E_WORK=$dir timeout -k 10 "$SCENARIO_TIMEOUT" bash "$SELF" "$MS" "$ROOTFS" \
    </dev/null >"$RES/$s.log" 2>&1
  rc=$?
  cp "$dir/why" "$RES/$s.why" 2>/dev/null
  cp "$dir/step" "$RES/$s.step" 2>/dev/null
  [ -s "$dir/err" ] && tail -n 5 "$dir/err" >"$RES/$s.err"
  echo $(((${EPOCHREALTIME/./} - t0) / 100000)) >"$RES/$s.ds"
  echo "$rc" >"$RES/$s.rc.tmp" && mv "$RES/$s.rc.tmp" "$RES/$s.rc"
}

passed=0
failed=0
# report NAME: its verdict line; before a PASS or SKIP whatever it printed (its notes), after
# a FAIL what it printed and the last lines of stderr of the last command it ran.
report() {
  local s=$1 rc why=""
  read -r rc <"$RES/$s.rc"
  [ -e "$RES/$s.why" ] && why=$(<"$RES/$s.why")
  case $rc in
    0 | 2) [ -s "$RES/$s.log" ] && cat "$RES/$s.log" ;;
  esac
  case $rc in
    0) echo "PASS $s"; passed=$((passed + 1)) ;;
    2) echo "SKIP $s: $why" ;;
    124 | 137)
      echo "FAIL $s: hung: no verdict within ${SCENARIO_TIMEOUT}s, stopped at: $(
        cat "$RES/$s.step" 2>/dev/null || echo "its start")"
      failed=$((failed + 1)) ;;
    *) echo "FAIL $s: ${why:-returned $rc}"; failed=$((failed + 1)) ;;
  esac
  if [ "$rc" != 0 ] && [ "$rc" != 2 ]; then
    [ -s "$RES/$s.log" ] && tail -n 30 "$RES/$s.log" | sed 's/^/  | /'
    [ -s "$RES/$s.err" ] && sed 's/^/  | stderr: /' "$RES/$s.err"
  fi
}

# Results are reported in the report order, each as soon as it and those before it have ended.
shown=0
flush() {
  while [ "$shown" -lt "${#order[@]}" ] && [ -e "$RES/${order[$shown]}.rc" ]; do
    report "${order[$shown]}"
    shown=$((shown + 1))
  done
}

# Stopped (Ctrl-C, or a limit around the driver): the scenarios running are stopped too.
running=()
stop_running() {
  local p
  for p in "${running[@]}"; do pkill -TERM -P "$p" 2>/dev/null; done
  wait
  exit 130
}
trap stop_running INT TERM

declare -A started=() ended=() name_of=()
chains_running=0
others_left=0
for s in "${order[@]}"; do
  [ -z "${in_chain[$s]:-}" ] && [ -z "${E2E_SERIAL[$s]:-}" ] && others_left=$((others_left + 1))
done
while :; do
  # Start what may start: the first scenarios in the start order that are not running yet,
  # whose chain predecessor has ended, up to JOBS at a time; a serial one only when nothing
  # else runs, and then nothing beside it.
  for s in "${queue[@]}"; do
    [ "${#running[@]}" -lt "$JOBS" ] || break
    [ -n "${started[$s]:-}" ] && continue
    if [ -n "${E2E_SERIAL[$s]:-}" ]; then
      [ "${#running[@]}" -eq 0 ] || break
    fi
    if [ -n "${in_chain[$s]:-}" ] && [ "$others_left" -gt 0 ] && [ "$JOBS" -gt 1 ] &&
      [ "$chains_running" -ge $((JOBS - 1)) ]; then
      continue
    fi
    p=$(pred_of "$s")
    [ -z "$p" ] || [ -n "${ended[$p]:-}" ] || continue
    run_scenario "$s" &
    running+=($!)
    started[$s]=$!
    name_of[$!]=$s
    if [ -n "${in_chain[$s]:-}" ]; then
      chains_running=$((chains_running + 1))
    elif [ -z "${E2E_SERIAL[$s]:-}" ]; then
      others_left=$((others_left - 1))
    fi
    [ -n "${E2E_SERIAL[$s]:-}" ] && break
  done
  [ "${#running[@]}" -gt 0 ] || break
  jobs_reap
  s=${name_of[$done_pid]}
  ended[$s]=1
  [ -n "${in_chain[$s]:-}" ] && chains_running=$((chains_running - 1))
  flush
done
flush
# A scenario whose job ended without a verdict (it cannot, short of being killed) fails.
for s in "${order[@]:$shown}"; do
  [ -e "$RES/$s.rc" ] && continue
  echo "its job ended without a verdict" >"$RES/$s.why"
  echo 1 >"$RES/$s.rc"
done
flush

echo "e2e: $passed passed, $failed failed"
if [ "${#order[@]}" -gt 1 ]; then
  echo "e2e: slowest: $(grep -H '' "$RES"/*.ds | sed 's|.*/||; s|\.ds:| |' | sort -k2 -rn | head -n 5 |
    awk '{ printf "%s%s %d.%d s", (NR > 1 ? ", " : ""), $1, $2 / 10, $2 % 10 }')"
fi
[ "$failed" -eq 0 ]
