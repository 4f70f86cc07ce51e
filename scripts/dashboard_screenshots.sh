#!/usr/bin/env bash
# Retakes docs/dashboard/*.png, the screenshot of each dashboard view in docs/dashboard.md, with
# Debian's chromium: runs the browser tests (tests/integration/260-dashboard.sh and 264-panels.sh,
# which screenshot every passing check into $RS_SCREENSHOTS) and copies one check's screenshot per
# view. Nothing by hand: a view that changed is retaken by running this again.
#   scripts/dashboard_screenshots.sh [DEST]    (default docs/dashboard; make all test-build browser-tools first)
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-docs/dashboard}
SHOTS=$(mktemp -d "${TMPDIR:-/tmp}/rs-shots.XXXXXX")
trap 'rm -rf "$SHOTS"' EXIT
for t in 260-dashboard 264-panels; do
    if ! RS_SCREENSHOTS=$SHOTS RS_TEST_OUT=$SHOTS/out-$t bash "tests/integration/$t.sh" >"$SHOTS/$t.out" 2>&1; then
        tail -20 "$SHOTS/$t.out" >&2
        echo "dashboard_screenshots: $t failed: no screenshot replaced" >&2
        exit 1
    fi
done
# view -> the check whose screenshot shows it (the file name is the check's name, harness.mjs)
copy() {
    local f
    f=$(ls "$SHOTS"/"$2"*.png 2>/dev/null | head -1)
    [ -n "$f" ] || { echo "dashboard_screenshots: no screenshot of check '$2*' for $1" >&2; exit 1; }
    cp "$f" "$DEST/$1.png"
    echo "$DEST/$1.png <- $(basename "$f")"
}
mkdir -p "$DEST"
copy jobs 'jobs-list-every-job'
copy overview 'overview-hovering-a-cell'
copy nccl 'NCCL-view-communicators-and-ranks'
copy kernels 'kernels-view-deep-link'
copy stalls 'stall-reasons-the-icicle'
copy timeline 'timeline-tracks'
copy hangs 'hangs-view-the-open-hang'
copy gpus 'GPU-panel-rank-2-marked'
copy advice 'advice-panel-the-API-s-findings'
copy fleet 'fleet-GPUs-ranked'
