/* libFuzzer target for the collector's control-frame decoder (proto/capture.c), which reads what
 * arrives on the agent socket inside a training process: arbitrary bytes must decode to valid
 * orders or be refused, and what decodes must encode back to a frame that decodes the same.
 * Build with `make fuzz-capture_control`; `make test` replays tests/fuzz/corpus/capture_control/. */
#include "proto/capture.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rs_capture_order a[RS_CAPTURE_MAX_ORDERS], b[RS_CAPTURE_MAX_ORDERS];
    uint8_t again[RS_CAPTURE_MAX_CONTROL_BYTES];
    uint32_t n = 0, m = 0;
    size_t len;

    if (rs_capture_control_decode(data, size, a, &n) != 0)
        return 0;
    if (n == 0 || n > RS_CAPTURE_MAX_ORDERS)
        __builtin_trap();
    for (uint32_t i = 0; i < n; i++)
        if (!rs_capture_order_valid(&a[i]))
            __builtin_trap();
    if (rs_capture_control_encode(a, n, again, sizeof again, &len) != 0 ||
        rs_capture_control_decode(again, len, b, &m) != 0 || m != n)
        __builtin_trap();
    for (uint32_t i = 0; i < n; i++)
        if (a[i].id != b[i].id || a[i].rank != b[i].rank || a[i].kinds != b[i].kinds ||
            a[i].seconds != b[i].seconds || strcmp(a[i].job, b[i].job) != 0)
            __builtin_trap();
    return 0;
}
