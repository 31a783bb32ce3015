# Scenarios for the filesystem (sourced by run.sh): the overlay root, tmpfs, shell file
# tools, escape attempts, and the host rootfs left untouched.

# A checksum of everything under the host rootfs: names, types, modes, sizes, contents.
tree_sum() {
  (cd "$ROOTFS" && find . -path ./opt -prune -o -print0 | sort -z |
    xargs -0 stat -c '%n %F %a %s %Y' | md5sum | cut -d' ' -f1
   cd "$ROOTFS" && find . -path ./opt -prune -o -type f -print0 | sort -z | xargs -0 md5sum | md5sum)
}

tar_round_trip_of_etc() {
  ms run "$ROOTFS" -- /bin/sh -c 'tar czf /tmp/etc.tgz /etc 2>/dev/null && mkdir /tmp/x && tar xzf /tmp/etc.tgz -C /tmp/x && diff -r /etc /tmp/x/etc && echo same'
  expect_status 0 && expect_stdout same
}

cp_a_mv_and_ln_s() {
  ms run "$ROOTFS" -- /bin/sh -c 'cp -a /etc /tmp/etc2 && diff -r /etc /tmp/etc2 && mv /tmp/etc2 /tmp/etc3 && ln -s /tmp/etc3/passwd /tmp/pw && cat /tmp/pw | head -1 && [ ! -e /tmp/etc2 ] && echo ok'
  expect_status 0 && expect_stdout "$(head -1 "$ROOTFS/etc/passwd")"$'\nok'
}

find_counts_the_same_tree_as_native() {
  local want
  want=$(chroot "$ROOTFS" /bin/busybox find / -xdev 2>/dev/null | wc -l)
  ms run "$ROOTFS" -- /bin/sh -c 'find / -xdev | wc -l'
  expect_status 0 && expect_stdout "$want"
}

writes_everywhere_are_visible_inside_and_the_host_tree_is_unchanged() {
  local before after
  before=$(tree_sum)
  ms run "$ROOTFS" -- /bin/sh -c '
    echo new > /newfile && echo more >> /etc/hostname && chmod 600 /etc/group &&
    mkdir -p /etc/a/b && touch /etc/a/b/c && rm /etc/passwd && mv /etc/hosts /etc/hosts2 &&
    ln /etc/os-release /etc/hard && echo t > /tmp/t && B=/bin/busybox && $B rm -rf /usr &&
    $B cat /newfile && $B tail -1 /etc/hostname && $B stat -c %a /etc/group &&
    [ ! -e /etc/passwd ] && [ -e /etc/hosts2 ] && [ ! -e /usr/bin ] && $B ls /etc/a/b'
  after=$(tree_sum)
  expect_status 0 && expect_stdout $'new\nmore\n600\nc' || return
  [ "$before" = "$after" ] || fail "the host rootfs changed"
}

escapes_stay_inside_the_rootfs() {
  # Host files that exist outside the rootfs must never be reachable.
  local marker=/tmp/minisentry-escape-marker.$$
  echo secret >"$marker"
  ms run "$ROOTFS" -- /bin/sh -c "
    cat /../../../..$marker 2>/dev/null && echo LEAK1
    cd /etc && cat ../../../..$marker 2>/dev/null && echo LEAK2
    ln -s /../../../../.. /tmp/up && cat /tmp/up$marker 2>/dev/null && echo LEAK3
    ln -s ../../../../../../.. /tmp/rel && cat /tmp/rel$marker 2>/dev/null && echo LEAK4
    ls /tmp/up/ | grep -qx etc && echo root-is-root
    cat /proc/self/root/../../..$marker 2>/dev/null && echo LEAK5
    cat /proc/1/root$marker 2>/dev/null && echo LEAK6
    cd /etc && cat /proc/self/cwd/../..$marker 2>/dev/null && echo LEAK7
    mkdir -p /tmp/in && ln -s /tmp/in /tmp/l
    (i=0; while [ \$i -lt 300 ]; do ln -sfn /tmp/in /tmp/l; ln -sfn /../../.. /tmp/l; i=\$((i+1)); done) &
    i=0; while [ \$i -lt 300 ]; do cat /tmp/l$marker 2>/dev/null && echo LEAK8; i=\$((i+1)); done
    wait
    echo done"
  rm -f "$marker"
  expect_status 0 && expect_stdout $'root-is-root\ndone'
}

tmpfs_is_mounted_on_tmp_and_dev_shm() {
  ms run "$ROOTFS" -- /bin/sh -c 'echo a > /tmp/f && echo b > /dev/shm/g && cat /tmp/f /dev/shm/g && stat -f -c %T /tmp'
  expect_status 0 && expect_stdout $'a\nb\ntmpfs'
}


scenarios+=(
  tar_round_trip_of_etc
  cp_a_mv_and_ln_s
  find_counts_the_same_tree_as_native
  writes_everywhere_are_visible_inside_and_the_host_tree_is_unchanged
  escapes_stay_inside_the_rootfs
  tmpfs_is_mounted_on_tmp_and_dev_shm
)
