#!/usr/bin/env bash
# make test: runs every unit test binary, the fuzz corpus replays and the integration scripts,
# then prints the grand total as "N passed, N failed" and exits non-zero on any failure.
# RS_TESTS="unit/collector integration/010-" runs only the tests whose name starts with one of
# these (make tsan); the default is every test.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
passed=0
failed=0
log=$(mktemp)

wanted() {
    local p
    [ -z "${RS_TESTS:-}" ] && return 0
    for p in $RS_TESTS; do
        case "$1" in "$p"*) return 0 ;; esac
    done
    return 1
}

run() {
    local name=$1; shift
    wanted "$name" || return 0
    local out rc p f
    out=$("$@" 2>&1); rc=$?
    printf '%s\n' "$out" >> "$log"
    p=$(printf '%s\n' "$out" | sed -n 's/.*: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\1/p' | tail -1)
    f=$(printf '%s\n' "$out" | sed -n 's/.*: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\2/p' | tail -1)
    if [ -z "$p" ]; then p=0; f=1; fi           # crashed before its summary
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$f" = 0 ]; then
        printf '  ok    %-44s %3d passed\n' "$name" "$p"
    else
        printf '  FAIL  %-44s %3d passed, %d failed\n' "$name" "$p" "$f"
        printf '%s\n' "$out" | tail -30 | sed 's/^/        /'
    fi
}

echo "unit tests"
for t in $(find "$BUILD/tests/unit" -type f -name '*_test' | sort); do
    run "${t#$BUILD/tests/}" "$t"
done
echo "fuzz corpus replays"
for t in $(find "$BUILD/tests/fuzz" -type f -name '*_replay' | sort); do
    name=$(basename "$t" _replay)
    run "fuzz/$name" "$t" "tests/fuzz/corpus/$name"
done
echo "integration tests"
for t in tests/integration/[0-9]*.sh; do
    run "${t#tests/}" bash "$t"
done
if [ -d tests/gpu ] && ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu tests: skipped (no GPU here; run tests/gpu/ on a GPU machine)"
fi
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
