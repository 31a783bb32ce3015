#!/usr/bin/env bash
# Builds an Alpine-style root filesystem for minisentry guests (DESIGN.md §10): Debian's static
# busybox with its applet links, musl's loader+libc at /lib/ld-musl-x86_64.so.1, a minimal /etc,
# and the small musl-dynamic programs from tests/rootfs-progs/ in /usr/local/bin.
# Usage: scripts/mkrootfs.sh DIR.  The tree is built beside DIR and renamed into place, so a
# rerun replaces DIR whole; DIR/.stamp (the Makefile's target) is written last.
set -euo pipefail

die() { echo "mkrootfs: $*" >&2; exit 1; }

[ $# -eq 1 ] && [ -n "$1" ] || die "usage: mkrootfs.sh DIR"
dest=${1%/}
[ -n "$dest" ] || die "refusing to build over /"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
progs_dir="$repo/tests/rootfs-progs"

# Inputs: the host's static busybox and musl's combined loader+libc.
busybox=""
for c in /bin/busybox /usr/bin/busybox; do
  [ -x "$c" ] && { busybox=$c; break; }
done
[ -n "$busybox" ] || die "busybox not found (install busybox-static)"
if command -v file >/dev/null; then
  file -L "$busybox" | grep -q 'statically linked' ||
    die "$busybox is not statically linked (install busybox-static)"
fi
command -v musl-gcc >/dev/null || die "musl-gcc not found (install musl-tools)"
musl_libc=""
for c in /usr/lib/musl/lib/libc.so /usr/lib/x86_64-linux-musl/libc.so \
         /lib/x86_64-linux-musl/libc.so /lib/ld-musl-x86_64.so.1; do
  [ -e "$c" ] && { musl_libc=$(readlink -f "$c"); break; }
done
[ -n "$musl_libc" ] || die "musl libc.so not found (install musl)"

# Build in a sibling directory so the final rename stays on one filesystem.
parent=$(dirname "$dest")
mkdir -p "$parent"
tmp=$(mktemp -d "$parent/.$(basename "$dest").tmp.XXXXXX")
old=""
cleanup() { rm -rf "$tmp" ${old:+"$old"}; }
trap cleanup EXIT
chmod 755 "$tmp"

mkdir -p "$tmp"/{bin,sbin,lib,etc,usr/bin,usr/sbin,usr/local/bin,proc,sys,dev,tmp,root,home,opt,var,run,mnt}
chmod 1777 "$tmp/tmp"
chmod 700 "$tmp/root"

# busybox and one relative symlink per applet (bin/ls -> busybox, usr/bin/tr -> ../../bin/busybox).
install -m 755 "$busybox" "$tmp/bin/busybox"
while IFS= read -r applet; do
  [ -n "$applet" ] && [ "$applet" != bin/busybox ] || continue
  dir=$(dirname "$applet")
  up=""
  if [ "$dir" != . ]; then
    IFS=/ read -ra parts <<<"$dir"
    for _ in "${parts[@]}"; do up+="../"; done
  fi
  target="${up}bin/busybox"
  [ "$dir" = bin ] && target=busybox
  mkdir -p "$tmp/$dir"
  ln -sfn "$target" "$tmp/$applet"
done < <("$busybox" --list-full)
[ -L "$tmp/bin/sh" ] || die "busybox has no sh applet"

# musl: the loader is libc; Alpine also names it libc.musl-x86_64.so.1.
install -m 755 "$musl_libc" "$tmp/lib/ld-musl-x86_64.so.1"
ln -sfn ld-musl-x86_64.so.1 "$tmp/lib/libc.musl-x86_64.so.1"

cat >"$tmp/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/:/sbin/nologin
PASSWD
cat >"$tmp/etc/group" <<'GROUP'
root:x:0:root
nobody:x:65534:
GROUP
echo minisentry >"$tmp/etc/hostname"
cat >"$tmp/etc/hosts" <<'HOSTS'
127.0.0.1	localhost
::1	localhost
HOSTS
cat >"$tmp/etc/os-release" <<'OSREL'
NAME="minisentry rootfs"
ID=minisentry
PRETTY_NAME="minisentry rootfs (busybox + musl)"
OSREL
echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' >"$tmp/etc/profile"

# The test programs, musl-dynamic like Alpine's.
shopt -s nullglob
for src in "$progs_dir"/*.c; do
  name=$(basename "$src" .c)
  musl-gcc -O2 -Wall -Wextra -Werror -pthread "$src" -o "$tmp/usr/local/bin/$name" ||
    die "failed to build $src with musl-gcc"
done

touch "$tmp/.stamp"

# Swap into place: the old tree (if any) is moved aside first and removed by cleanup.
if [ -e "$dest" ] || [ -L "$dest" ]; then
  old="$tmp.old"
  mv -T "$dest" "$old"
fi
mv -T "$tmp" "$dest"
echo "mkrootfs: built $dest"
