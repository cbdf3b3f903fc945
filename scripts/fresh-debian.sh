#!/usr/bin/env bash
# Tries the README's claim: one of its two commands, from a clone of this
# repository's HEAD, in a Debian 12 root that holds nothing but debootstrap's
# minimal base (no compiler, CMake, git or Python), as root.
#
#   bash scripts/fresh-debian.sh [ROOT] [COMMAND]
#
# ROOT (default /tmp/dlgauge-deb12) is made by debootstrap --variant=minbase
# from deb.debian.org when it does not exist yet (apt-get installs
# debootstrap here if missing); COMMAND (default "bash scripts/test.sh";
# "bash scripts/quickstart.sh" for the other) runs in a clean environment
# (env -i, the standard PATH), chroot'ed, in a private mount namespace with
# /proc, /dev and /sys, and with this machine's /usr/local/cuda bound read-only
# where there is one, as a fresh machine of this project's kind has the
# toolkit.  A ROOT kept from an earlier try is reused as it is (its packages
# installed): delete it to start afresh.  Not part of CI: it needs root,
# Debian's mirrors and ~30 minutes on 2 cores.  It found that stock CMake
# 3.25.1's FindCUDAToolkit stopped the configure with CUDA 13 (this
# machine's copy of the module is patched).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${1:-/tmp/dlgauge-deb12}
CMD=${2:-bash scripts/test.sh}
[ "$(id -u)" = 0 ] || { echo "fresh-debian: run as root (debootstrap, chroot, mount)" >&2; exit 1; }

if [ ! -x "$ROOT/bin/bash" ]; then
  command -v debootstrap > /dev/null ||
    { apt-get update -qq && apt-get install -y -qq debootstrap > /dev/null; }
  debootstrap --variant=minbase bookworm "$ROOT" http://deb.debian.org/debian > "$ROOT.debootstrap.log" 2>&1 ||
    { echo "fresh-debian: debootstrap failed, see $ROOT.debootstrap.log" >&2; exit 1; }
  # a fresh machine's sources: the release, its updates and security
  rm -f "$ROOT/etc/apt/sources.list"
  cat > "$ROOT/etc/apt/sources.list.d/debian.sources" << 'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
rm -rf "$ROOT/root/dlgauge"
git clone -q "$top" "$ROOT/root/dlgauge"
echo "fresh-debian: $(git -C "$ROOT/root/dlgauge" log --oneline -1) in $ROOT: $CMD"

# the mounts live and die with the namespace: nothing to unmount after
unshare -m --propagation private bash -euc '
  root=$1 cmd=$2
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --rbind /sys "$root/sys"
  if [ -d /usr/local/cuda ]; then
    mkdir -p "$root/usr/local/cuda"
    mount --bind -o ro /usr/local/cuda "$root/usr/local/cuda"
  fi
  exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd /root/dlgauge && $cmd"
' fresh-debian "$ROOT" "$CMD"
