#!/usr/bin/env bash
# What a new user meets on a freshly installed Debian 12 (the times and sizes in README and
# docs/dependencies.md): debootstraps bookworm (minbase) into a directory, installs only README's
# first line, then times `make demo` (cold and warm) and `make test` of this tree's HEAD as root,
# and `make` / `make deps` as a user without sudo (they must stop and say what to run as root).
# Prints each step's time and package counts. Needs root, debootstrap and the Debian mirror; takes
# about 5 - 10 minutes on 2 cores. No service starts in the chroot (policy-rc.d).
# usage: sudo tests/bench/fresh_debian.sh [DIR (default /tmp/rs-fresh)]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
F=${1:-/tmp/rs-fresh}
LOG=$F.logs
[ "$(id -u)" = 0 ] || { echo "fresh_debian: run as root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
rm -rf "$F" "$LOG" && mkdir -p "$LOG"
cleanup() {
    for m in dev/pts dev sys proc; do umount -R "$F/$m" 2>/dev/null; done
}
trap cleanup EXIT
step() { # step NAME CMD...: runs CMD, logs to $LOG/NAME.log, prints rc and seconds
    local name=$1 s rc; shift
    s=$(date +%s.%N)
    "$@" >"$LOG/$name.log" 2>&1
    rc=$?
    printf '%-28s rc=%d %6.1f s\n' "$name" "$rc" "$(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')"
    return $rc
}

step debootstrap debootstrap --variant=minbase bookworm "$F" http://deb.debian.org/debian || exit 1
mount -t proc proc "$F/proc"; mount --rbind /sys "$F/sys"; mount --make-rslave "$F/sys"
mount --bind /dev "$F/dev"; mount --bind /dev/pts "$F/dev/pts"
cp /etc/resolv.conf "$F/etc/resolv.conf"
# A network that reaches the npm registry through an intercepting proxy names its CA in
# NODE_EXTRA_CA_CERTS: the chroot gets a copy of its own (a path under /etc/ssl would be replaced
# when ca-certificates is installed) and the variable points there.
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
    cp "$NODE_EXTRA_CA_CERTS" "$F/root/extra-ca.crt" && chmod 644 "$F/root/extra-ca.crt"
    export NODE_EXTRA_CA_CERTS=/root/extra-ca.crt
fi
printf '%s\n' 'deb http://deb.debian.org/debian bookworm main' \
    'deb http://deb.debian.org/debian bookworm-updates main' \
    'deb http://deb.debian.org/debian-security bookworm-security main' >"$F/etc/apt/sources.list"
printf '#!/bin/sh\nexit 101\n' >"$F/usr/sbin/policy-rc.d" && chmod +x "$F/usr/sbin/policy-rc.d"
mkdir -p "$F/root/rankscope" && git -C "$ROOT" archive HEAD | tar -x -C "$F/root/rankscope"
chroot "$F" useradd -m u
mkdir -p "$F/home/u/rankscope" && git -C "$ROOT" archive HEAD | tar -x -C "$F/home/u/rankscope"
chroot "$F" chown -R u:u /home/u/rankscope
echo "tree $(git -C "$ROOT" rev-parse --short HEAD)"

step readme-first-line chroot "$F" sh -c \
    'apt-get update && apt-get install -y --no-install-recommends make git ca-certificates'
grep -E 'newly installed|Need to get|After this' "$LOG/readme-first-line.log"
chroot "$F" su u -c 'cd ~/rankscope && make' >"$LOG/user-make.log" 2>&1
echo "user without sudo, make: rc=$? ($(grep -c 'apt-get' "$LOG/user-make.log") line(s) naming apt-get)"
step demo-cold chroot "$F" sh -c 'cd /root/rankscope && make demo'
grep -E 'newly installed|Need to get|After this' "$F/root/rankscope/build/deps.log"
step demo-warm chroot "$F" sh -c 'cd /root/rankscope && make demo'
step test chroot "$F" sh -c 'cd /root/rankscope && make test'
tail -1 "$LOG/test.log"
grep -E 'newly installed|Need to get|After this' "$F/root/rankscope/build/deps.log" | tail -3
echo "logs in $LOG"
