#!/usr/bin/env bash
# Installs the Debian packages minisentry's build, rootfs and tests need, only when missing.
set -euo pipefail
# The Sentry is linked statically (-static-pie, the Makefile): libc6-dev (from build-essential,
# with rcrt1.o), libseccomp-dev, libcap-dev, zlib1g-dev and libzstd-dev ship the .a files.
# clang and libclang-rt-14-dev (its libFuzzer runtime, which clang-14 does not pull in): the
# fuzz harnesses of tests/fuzz. libzstd-dev: the optional zstd codec of images. crun: the
# engines bench compares it. podman, runc,
# containerd and docker.io: the OCI runtime's e2e scenarios drive the engines with minisentry and
# with runc (tests/e2e/engines.sh, which starts private containerd and dockerd daemons itself
# and skips without the packages).
pkgs=(build-essential libseccomp-dev libcap-dev zlib1g-dev libzstd-dev libcmocka-dev busybox-static
      musl-tools musl-dev pkg-config tmux hyperfine clang-format clang libclang-rt-14-dev
      podman runc crun containerd docker.io)
# One dpkg-query for all of them (make test runs this first, every time).
declare -A installed=()
while read -r p st; do
  [ "$st" = "install ok installed" ] && installed[${p%%:*}]=1
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${pkgs[@]}" 2>/dev/null || true)
missing=()
for p in "${pkgs[@]}"; do
  [ -n "${installed[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
