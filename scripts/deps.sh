#!/bin/sh
# Debian packages for make deps / test-deps / dev-deps, and the Makefile's check that the build
# tools are there before it compiles anything (docs/dependencies.md says why each package).
#   scripts/deps.sh check   TARGET PKG...   prints what is missing and how to install it; exit 1
#   scripts/deps.sh install TARGET PKG...   installs what is missing (apt-get, output in $DEPS_LOG)
# A package counts as present when dpkg has it installed, or when the command it is needed for is
# already on PATH from elsewhere (e.g. a nodejs+npm from NodeSource, which Debian's npm package
# conflicts with; a compiler that is not from build-essential).
# For tests only: RS_DEPS_UID stands for `id -u`, RS_DEPS_NO_SUDO=1 hides sudo.
set -u
uid=${RS_DEPS_UID:-$(id -u)}
have_sudo() { [ -z "${RS_DEPS_NO_SUDO:-}" ] && command -v sudo >/dev/null 2>&1; }
mode=$1
target=$2
shift 2
LOG=${DEPS_LOG:-build/deps.log}

# The command a package is needed for, where one is enough to stand for the package.
command_of() {
    case $1 in
    build-essential) echo cc ;;
    pkg-config) echo pkg-config ;;
    protobuf-c-compiler) echo protoc-c ;;
    python3) echo python3 ;;
    curl) echo curl ;;
    openssl) echo openssl ;;
    golang-go) echo go ;;
    prometheus) echo promtool ;;
    nodejs) echo node ;;
    npm) echo npm ;;
    clang) echo clang ;;
    clang-format) echo clang-format ;;
    graphviz) echo dot ;;
    esac
}

missing_packages() {
    installed=""
    dpkg=""
    if command -v dpkg-query >/dev/null 2>&1; then
        dpkg=1
        installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null |
                    sed -n 's/ installed$//p')
    fi
    for p in "$@"; do
        cmd=$(command_of "$p")
        if [ -n "$cmd" ] && command -v "$cmd" >/dev/null 2>&1; then
            continue
        fi
        if printf '%s\n' "$installed" | grep -qx "$p"; then
            continue
        fi
        # not Debian: libraries may come from anywhere; leave them to the compiler
        if [ -z "$dpkg" ] && [ -z "$cmd" ]; then
            continue
        fi
        printf '%s ' "$p"
    done
}

missing=$(missing_packages "$@")
missing=${missing% }

case $mode in
check)
    [ -z "$missing" ] && exit 0
    echo "missing: $missing" >&2
    if [ "$uid" = 0 ] || have_sudo; then
        echo "run \`make $target\` (as root, or with sudo) to install them" >&2
    else
        echo "to install them, as root run \`make $target\` here, or:" >&2
        echo "    apt-get update && apt-get install -y --no-install-recommends $missing" >&2
    fi
    exit 1
    ;;
install)
    if [ -z "$missing" ]; then
        echo "$target: all packages present"
        exit 0
    fi
    if [ "$uid" = 0 ]; then
        SUDO=""
    elif have_sudo; then
        SUDO="sudo"
    else
        echo "$target: missing packages: $missing" >&2
        echo "$target: installing them needs root, and there is no sudo here; as root, run:" >&2
        echo "    apt-get update && apt-get install -y --no-install-recommends $missing" >&2
        echo "then run make again (as yourself: nothing more needs root)" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$target: missing packages: $missing; there is no apt-get here (Debian 12 expected)" >&2
        exit 1
    fi
    logdir=$(dirname "$LOG")
    [ -d "$logdir" ] || made_logdir=1
    mkdir -p "$logdir"
    echo "$target: installing $missing"
    echo "$target: (apt-get's output goes to $LOG)"
    start=$(date +%s)
    seen=$(cat "$LOG" 2>/dev/null | wc -l)
    {
        echo "== $(date -u '+%F %T') make $target: $missing"
        $SUDO apt-get update &&
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
    } >>"$LOG" 2>&1
    rc=$?
    # root in someone else's tree (su -c 'make deps'): leave build/ theirs, or their make fails
    if [ "$(id -u)" = 0 ]; then
        [ -n "${made_logdir:-}" ] && chown --reference=. "$logdir" 2>/dev/null
        chown --reference=. "$LOG" 2>/dev/null
    fi
    if [ $rc != 0 ]; then
        echo "$target: apt-get failed (exit $rc); the end of $LOG:" >&2
        tail -n +"$((seen + 1))" "$LOG" | tail -n 20 | sed 's/^/    /' >&2
        exit 1
    fi
    still=$(missing_packages $missing)
    if [ -n "$still" ]; then
        echo "$target: apt-get succeeded but these are still missing: $still (see $LOG)" >&2
        exit 1
    fi
    echo "$target: installed in $(($(date +%s) - start)) s"
    ;;
*)
    echo "usage: scripts/deps.sh check|install TARGET PKG..." >&2
    exit 2
    ;;
esac
