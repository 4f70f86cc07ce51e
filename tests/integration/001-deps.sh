#!/usr/bin/env bash
# The first hour of a new user: make says which packages are missing and what to run before it
# compiles anything, make deps without root or sudo prints the one apt-get line to run as root,
# and a command already on PATH (an npm from NodeSource) counts as its package. Runs no apt-get.
. "$(dirname "$0")/common.sh"
D=scripts/deps.sh

check "check: exit 1, naming the missing package and make deps" sh -c "
    $D check deps no-such-package-rs >'$WORK/c.out' 2>&1; rc=\$?; cat '$WORK/c.out'; [ \$rc = 1 ] &&
    grep -q '^missing: no-such-package-rs\$' '$WORK/c.out' && grep -q 'make deps' '$WORK/c.out'"
check "check without root or sudo: also the apt-get line to run as root" sh -c "
    RS_DEPS_UID=1000 RS_DEPS_NO_SUDO=1 $D check deps no-such-package-rs >'$WORK/c.out' 2>&1;
    rc=\$?; cat '$WORK/c.out'; [ \$rc = 1 ] &&
    grep -q 'apt-get update && apt-get install -y --no-install-recommends no-such-package-rs\$' '$WORK/c.out'"
check "install without root or sudo: no sudo, no apt-get, the line to run as root, exit 1" sh -c "
    RS_DEPS_UID=1000 RS_DEPS_NO_SUDO=1 DEPS_LOG='$WORK/deps.log' $D install deps no-such-package-rs \
        >'$WORK/i.out' 2>&1; rc=\$?; cat '$WORK/i.out'; [ \$rc = 1 ] &&
    ! grep -q 'sudo: not found' '$WORK/i.out' && grep -q 'as root, run:' '$WORK/i.out' &&
    grep -q 'apt-get install -y --no-install-recommends no-such-package-rs\$' '$WORK/i.out' &&
    [ ! -e '$WORK/deps.log' ]"
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexit 0\n' >"$WORK/bin/npm"
chmod +x "$WORK/bin/npm"
check "a package whose command is on PATH counts as present (npm from elsewhere)" \
    env PATH="$WORK/bin:$PATH" RS_DEPS_UID=1000 RS_DEPS_NO_SUDO=1 $D install test-deps npm
check "make stops before compiling when a build package is missing, and says make deps" sh -c "
    make --no-print-directory BUILD='$WORK/b' BUILD_DEB_PACKAGES=no-such-package-rs all \
        >'$WORK/m.out' 2>&1; rc=\$?; cat '$WORK/m.out'; [ \$rc != 0 ] &&
    grep -q 'missing: no-such-package-rs' '$WORK/m.out' && grep -q 'make deps' '$WORK/m.out' &&
    [ ! -e '$WORK/b/gen' ] && ! grep -q '^cc ' '$WORK/m.out'"
check "the Makefile keeps test and development packages out of make deps" sh -c "
    make -pn --no-print-directory deps 2>/dev/null | sed -n 's/^DEB_PACKAGES := //p' >'$WORK/p.out';
    cat '$WORK/p.out'; grep -q libnng-dev '$WORK/p.out' &&
    ! grep -qE 'golang-go|clang-format|prometheus|npm' '$WORK/p.out'"
finish
