/* libFuzzer target for the in-flight condition's text (proto/in_flight.c), which the server reads
 * from every rank batch's collector status: arbitrary bytes must parse or be refused, and what
 * parses must be exactly what the writer writes for the values read. */
#include "proto/in_flight.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), again[RS_IN_FLIGHT_MAX + 1];
    struct rs_in_flight f, g;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (rs_in_flight_parse(text, &f) == 0) {
        if (f.comm_rank >= f.comm_size || strlen(text) > RS_IN_FLIGHT_MAX ||
            rs_in_flight_format(&f, again, sizeof again) != 0 || strcmp(again, text) != 0 ||
            rs_in_flight_parse(again, &g) != 0 || g.comm != f.comm || g.seq != f.seq ||
            g.since_ms != f.since_ms || g.for_ms != f.for_ms || g.comm_rank != f.comm_rank ||
            g.comm_size != f.comm_size || g.gpu_started != f.gpu_started ||
            strcmp(g.op, f.op) != 0)
            abort();
    }
    free(text);
    return 0;
}
