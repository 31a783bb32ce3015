# Scenarios for what `minisentry run` offers besides a command: bind mounts (--mount, -v),
# --user, --hostname, the environment (inherited, --clear-env), --quiet, and what stays hidden
# (sourced by run.sh, which provides ms, expect_status, expect_stdout, fail and $WORK; the
# checkpoint helpers come from checkpoint.sh).

# bind_dir NAME: a fresh host directory $WORK/NAME holding a file "f" with "from the host".
bind_dir() {
  rm -rf "${WORK:?}/$1"
  mkdir -p "$WORK/$1"
  echo "from the host" >"$WORK/$1/f"
}

# A writable bind mount is the host directory itself: the guest reads what is there, and what
# it creates, renames, links, changes and removes is so on the host.
bind_mount_writes_reach_the_host_directory() {
  bind_dir rw
  ms run --mount "type=bind,src=$WORK/rw,dst=/mnt/rw" "$ROOTFS" -- /bin/sh -c '
    cat /mnt/rw/f && echo new >/mnt/rw/g && mkdir /mnt/rw/sub && ln -s g /mnt/rw/lnk &&
    mv /mnt/rw/g /mnt/rw/h && chmod 640 /mnt/rw/h && echo more >>/mnt/rw/h && rm /mnt/rw/f &&
    ln /mnt/rw/h /mnt/rw/hard && grep " /mnt/rw " /proc/mounts'
  expect_status 0 || return
  expect_stdout "from the host"$'\n'"$WORK/rw /mnt/rw bind rw,relatime 0 0" || return
  [ ! -e "$WORK/rw/f" ] || fail "f was not removed on the host" || return
  [ "$(cat "$WORK/rw/h")" = $'new\nmore' ] || fail "h on the host: '$(cat "$WORK/rw/h")'" || return
  [ "$(stat -c %a "$WORK/rw/h")" = 640 ] || fail "h's mode on the host: $(stat -c %a "$WORK/rw/h")" || return
  [ "$(readlink "$WORK/rw/lnk")" = g ] || fail "lnk on the host: '$(readlink "$WORK/rw/lnk")'" || return
  [ -d "$WORK/rw/sub" ] || fail "sub was not made on the host" || return
  [ "$(stat -c %h "$WORK/rw/h")" = 2 ] || fail "h has $(stat -c %h "$WORK/rw/h") links on the host, want 2"
}

# Read-only: reads work, every change is EROFS, and the host directory is untouched.
bind_mount_read_only_refuses_changes_with_erofs() {
  bind_dir ro
  ms run --mount "type=bind,source=$WORK/ro,target=/srv,readonly" "$ROOTFS" -- /bin/sh -c '
    cat /srv/f; echo x >/srv/new; mkdir /srv/d; rm /srv/f; touch /srv/f; true'
  expect_status 0 || return
  expect_stdout "from the host" || return
  [ "$(grep -c 'Read-only file system' <<<"$err")" -eq 4 ] ||
    fail "want four EROFS errors, stderr: '$(tr '\n' '|' <<<"$err")'" || return
  [ "$(ls "$WORK/ro")" = f ] || fail "the host directory changed: $(ls "$WORK/ro" | tr '\n' ' ')"
}

# -v HOST:GUEST[:ro], with a single file as the source and a mountpoint the rootfs lacks (it
# is made in the sandbox's own layer, not on the host rootfs).
volume_short_form_binds_a_file_on_a_new_mountpoint() {
  echo "one file" >"$WORK/single"
  ms run -v "$WORK/single:/opt/new/dir/single:ro" "$ROOTFS" -- /bin/sh -c '
    cat /opt/new/dir/single; echo x >/opt/new/dir/single || echo refused'
  expect_status 0 && expect_stdout $'one file\nrefused' || return
  [ ! -e "$ROOTFS/opt/new" ] || fail "the mountpoint was made in the host rootfs"
}

bind_mount_of_a_missing_source_is_a_usage_error() {
  ms run -v "$WORK/no-such-dir:/mnt" "$ROOTFS" -- /bin/true
  expect_one_line_error || return
  expect_status 2
}

bind_mount_with_a_relative_target_is_a_usage_error() {
  bind_dir rel
  ms run --mount "type=bind,src=$WORK/rel,dst=mnt" "$ROOTFS" -- /bin/true
  expect_one_line_error || return
  expect_status 2
}

# A checkpoint keeps the bind mount as a host path: the restored sandbox writes to the same
# host directory, and goes on from where it was.
bind_mount_is_reopened_after_a_restore() {
  bind_dir ck
  local id="bind-ck-$$"
  ms_bg "$WORK/bk.1" run --id "$id" -v "$WORK/ck:/data" "$ROOTFS" -- /bin/sh -c '
    i=0; while :; do echo $i >>/data/log; echo $i; i=$((i+1)); sleep 0.1; done'
  local pid=$bg_pid
  wait_line "$WORK/bk.1" '^3$' || { kill "$pid"; return 1; }
  checkpoint "$id" "$WORK/bk-img" || { kill "$pid"; return 1; }
  bg_status "$pid"
  local before
  before=$(wc -l <"$WORK/ck/log")
  ms_bg "$WORK/bk.2" restore -v "$WORK/ck:/data" --image "$WORK/bk-img"
  pid=$bg_pid
  wait_line "$WORK/bk.2" "^$((before + 3))\$" || { kill "$pid"; return 1; }
  kill "$pid"
  bg_status "$pid"
  [ "$(sed -n "$((before + 1))p" "$WORK/ck/log")" = "$before" ] ||
    fail "the restored loop did not go on in the host file: $(tail -n 3 "$WORK/ck/log" | tr '\n' ' ')"
}

# An image is untrusted: the host paths of its bind mounts are not opened unless the user
# names each again (-v), and one whose source is gone is a one-line error.
restore_opens_only_the_bind_mounts_named_again() {
  bind_dir gone
  local id="bind-gone-$$"
  ms_bg "$WORK/bg.1" run --id "$id" -v "$WORK/gone:/data" "$ROOTFS" -- /bin/sh -c 'echo up; sleep 30'
  local pid=$bg_pid
  wait_line "$WORK/bg.1" '^up$' || { kill "$pid"; return 1; }
  checkpoint "$id" "$WORK/bg-img" || { kill "$pid"; return 1; }
  bg_status "$pid"
  ms restore --image "$WORK/bg-img"
  expect_one_line_error || return
  grep -q "the image has a bind mount on /data (of '$WORK/gone'): name its host directory with -v" <<<"$err" ||
    fail "without -v: $err" || return
  mkdir -p "$WORK/gone2"
  ms restore -v "$WORK/gone2:/elsewhere" --image "$WORK/bg-img"
  expect_one_line_error || return
  rm -rf "$WORK/gone"
  ms restore -v "$WORK/gone:/data" --image "$WORK/bg-img"
  expect_one_line_error || return
  expect_status 2
}

user_option_sets_the_ids_of_init() {
  ms run --user 1000:100 "$ROOTFS" -- /bin/sh -c 'id -u; id -g; touch /tmp/x; stat -c %u:%g /tmp/x'
  expect_status 0 && expect_stdout $'1000\n100\n1000:100'
}

user_option_without_a_group_uses_the_uid() {
  ms run --user 1234 "$ROOTFS" -- /bin/sh -c 'id -u; id -g'
  expect_status 0 && expect_stdout $'1234\n1234'
}

user_option_that_is_not_a_number_is_a_usage_error() {
  ms run --user nobody:x "$ROOTFS" -- /bin/true
  expect_one_line_error || return
  expect_status 2
}

hostname_option_names_the_sandbox() {
  ms run --hostname box1 "$ROOTFS" -- /bin/sh -c 'hostname; uname -n; cat /proc/sys/kernel/hostname'
  expect_status 0 && expect_stdout $'box1\nbox1\nbox1'
}

# As chroot and `runsc do`: the caller's variables reach the guest, --env changes them.
environment_is_inherited_by_default() {
  LANG=C.UTF-8 LC_ALL=C.UTF-8 MS_E2E_VAR="a b" ms run --env MS_E2E_VAR=changed "$ROOTFS" -- \
    /bin/sh -c 'echo "$LANG|$LC_ALL|$MS_E2E_VAR"'
  expect_status 0 && expect_stdout "C.UTF-8|C.UTF-8|changed"
}

clear_env_starts_from_path_and_home() {
  MS_E2E_VAR=leak ms run --clear-env --env A=1 "$ROOTFS" -- /usr/bin/env
  expect_status 0 || return
  [ "$(sort <<<"$out" | tr '\n' ' ')" = "A=1 HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin " ] ||
    fail "env: $(out_hint)"
}

quiet_hides_the_unimplemented_syscall_notice() {
  need_in_rootfs /usr/local/bin/enosys || return
  ms run --quiet "$ROOTFS" -- /usr/local/bin/enosys
  expect_status 0 || return
  [ "$(grep -c ENOSYS <<<"$out")" = 3 ] || fail "stdout $(out_hint), want three ENOSYS lines" || return
  [ -z "$err" ] || fail "stderr is not empty: $(err_hint)"
}

# The host's /tmp stays hidden, also with the host's own root as ROOTFS: /tmp is the sandbox's
# tmpfs.
host_tmp_is_hidden() {
  local mark
  mark=$(mktemp /tmp/minisentry-e2e-hidden.XXXXXX)
  ms run / -- /bin/sh -c "ls /tmp; test -e $mark && echo visible; true"
  rm -f "$mark"
  expect_status 0 && expect_stdout ""
}

# What the sandbox changed in its root, as an OCI layer: changed and new files, a deletion as
# .wh.NAME, a directory removed and made again as opaque; /tmp (a tmpfs) is not part of it.
export_upper_writes_the_changes_as_a_layer() {
  rm -rf "$WORK/layer"
  ms run --export-upper "$WORK/layer" "$ROOTFS" -- /bin/sh -c '
    echo changed >/etc/motd; rm /etc/hostname; mkdir -p /root/a/b; echo x >/root/a/b/c
    chmod 750 /root/a; ln -s /etc/motd /root/l; rm -rf /home; mkdir /home; touch /home/new
    echo tmp >/tmp/t'
  expect_status 0 || return
  local got want
  got=$(cd "$WORK/layer" && find . -printf '%M %p %l\n' | sort -k2 | tr '\n' '|')
  want="drwxr-xr-x . |drwxr-xr-x ./etc |-rw------- ./etc/.wh.hostname |-rw-r--r-- ./etc/motd |"
  want+="drwxr-xr-x ./home |-rw------- ./home/.wh..wh..opq |-rw-r--r-- ./home/new |"
  want+="$(stat -c %A "$ROOTFS/root") ./root |drwxr-x--- ./root/a |drwxr-xr-x ./root/a/b |"
  want+="-rw-r--r-- ./root/a/b/c |lrwxrwxrwx ./root/l /etc/motd|"
  [ "$got" = "$want" ] || fail "layer: '$got', want '$want'" || return
  [ "$(cat "$WORK/layer/etc/motd")" = changed ] || fail "etc/motd: '$(cat "$WORK/layer/etc/motd")'"
}

export_upper_into_a_non_empty_directory_is_a_usage_error() {
  mkdir -p "$WORK/full-layer" && touch "$WORK/full-layer/x"
  ms run --export-upper "$WORK/full-layer" "$ROOTFS" -- /bin/true
  expect_one_line_error || return
  expect_status 2
}

# make install: the binary, the man page (which man reads without a warning) and the bash
# completion under DESTDIR/PREFIX.
make_install_puts_the_binary_man_page_and_completion() {
  local repo
  repo=$(cd "$(dirname "$SELF")/../.." && pwd)
  [ "$(realpath "$repo/minisentry")" = "$MS" ] || { skip "make install installs $repo/minisentry, not $MS"; return; }
  rm -rf "$WORK/inst"
  step "make install"
  timeout "$TIMEOUT" make -s -C "$repo" install DESTDIR="$WORK/inst" PREFIX=/usr >"$WORK/out" 2>"$WORK/err" ||
    { fail "make install: $(head -n1 "$WORK/err")"; return; }
  local f
  for f in bin/minisentry share/man/man1/minisentry.1 share/bash-completion/completions/minisentry; do
    [ -s "$WORK/inst/usr/$f" ] || fail "no $f" || return
  done
  "$WORK/inst/usr/bin/minisentry" --version | grep -q '^minisentry ' || fail "the installed binary" || return
  bash -c "source '$WORK/inst/usr/share/bash-completion/completions/minisentry' && complete -p minisentry" >/dev/null ||
    fail "the completion does not load" || return
  if command -v man >/dev/null && command -v groff >/dev/null; then
    local w
    w=$(MANWIDTH=80 man --warnings -l "$WORK/inst/usr/share/man/man1/minisentry.1" 2>&1 >/dev/null)
    [ -z "$w" ] || fail "man warns: $(head -n1 <<<"$w")"
  fi
}

# --upper DIR: the writable layer persists from run to run in DIR (and the rootfs is untouched).
upper_layer_persists_across_runs() {
  rm -rf "$WORK/upper"
  ms run --upper "$WORK/upper" "$ROOTFS" -- /bin/sh -c 'echo one >/root/count; rm /etc/hostname; mkdir -p /srv/x; echo a >/srv/x/a'
  expect_status 0 || return
  [ -e "$WORK/upper/etc/.wh.hostname" ] && [ "$(cat "$WORK/upper/root/count")" = one ] ||
    fail "the layer after run 1: $(cd "$WORK/upper" && find . | sort | tr '\n' ' ')" || return
  ms run --upper "$WORK/upper" "$ROOTFS" -- /bin/sh -c 'cat /root/count; test -e /etc/hostname || echo gone; cat /srv/x/a; echo two >>/root/count; rm -r /srv/x'
  expect_status 0 && expect_stdout $'one\ngone\na' || return
  ms run --upper "$WORK/upper" "$ROOTFS" -- /bin/sh -c 'cat /root/count; ls -A /srv'
  expect_status 0 && expect_stdout $'one\ntwo' || return
  [ -e "$ROOTFS/etc/hostname" ] && [ ! -e "$ROOTFS/root/count" ] || fail "the rootfs changed" || return
  [ -z "$(find "$WORK" -maxdepth 1 -name '.upper.minisentry-new*')" ] || fail "a temporary layer was left beside"
}

missing_rootfs_is_a_usage_error() {
  ms run "$WORK/no-such-rootfs" -- /bin/true
  expect_one_line_error || return
  expect_status 2
}

# A name whose control socket would not fit in a Unix socket's path says so, not that the name
# is malformed; a malformed one says that.
id_names_are_checked_with_the_reason() {
  local long
  long="$WORK/$(printf 'd%.0s' {1..90})"
  mkdir -p "$long"
  XDG_RUNTIME_DIR=$long ms run --id short "$ROOTFS" -- /bin/true
  expect_one_line_error || return
  grep -q "its control socket .* is longer than a Unix socket's path may be" <<<"$err" ||
    fail "long path: $err" || return
  ms run --id 'a b' "$ROOTFS" -- /bin/true
  expect_one_line_error || return
  grep -q "a name is 1-64 letters" <<<"$err" || fail "bad name: $err"
}

scenarios+=(
  id_names_are_checked_with_the_reason
  bind_mount_writes_reach_the_host_directory
  bind_mount_read_only_refuses_changes_with_erofs
  volume_short_form_binds_a_file_on_a_new_mountpoint
  bind_mount_of_a_missing_source_is_a_usage_error
  bind_mount_with_a_relative_target_is_a_usage_error
  bind_mount_is_reopened_after_a_restore
  restore_opens_only_the_bind_mounts_named_again
  user_option_sets_the_ids_of_init
  user_option_without_a_group_uses_the_uid
  user_option_that_is_not_a_number_is_a_usage_error
  hostname_option_names_the_sandbox
  environment_is_inherited_by_default
  clear_env_starts_from_path_and_home
  quiet_hides_the_unimplemented_syscall_notice
  host_tmp_is_hidden
  export_upper_writes_the_changes_as_a_layer
  export_upper_into_a_non_empty_directory_is_a_usage_error
  upper_layer_persists_across_runs
  missing_rootfs_is_a_usage_error
  make_install_puts_the_binary_man_page_and_completion
)
