/* Reading back a gzip-compressed pprof profile in unit tests (proto/pprof_test, query/
 * pprof_export_test): gunzip, unpack with the generated decoder, check the format's rules the way
 * pprof's own reader does (string 0 is "", ids nonzero and unique, every reference resolves, one
 * value per sample type, string indexes in range), and print a sample's stack root first
 * ("rank 1;a;a+0x80;long_scoreboard"). Header-only: each test binary is one translation unit. */
#ifndef RS_TESTS_UNIT_PPROF_READ_H
#define RS_TESTS_UNIT_PPROF_READ_H

#include "pprof.pb-c.h"
#include "tests/t.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile pprof_profile;

static bool
pprof_str_ok(const pprof_profile *p, int64_t i)
{
    return i >= 0 && (size_t)i < p->n_string_table;
}

static const char *
pprof_str(const pprof_profile *p, int64_t i)
{
    return pprof_str_ok(p, i) ? p->string_table[i] : "<bad string index>";
}

static const Perftools__Profiles__Location *
pprof_location(const pprof_profile *p, uint64_t id)
{
    for (size_t i = 0; i < p->n_location; i++)
        if (p->location[i]->id == id)
            return p->location[i];
    return NULL;
}

static const Perftools__Profiles__Function *
pprof_function(const pprof_profile *p, uint64_t id)
{
    for (size_t i = 0; i < p->n_function; i++)
        if (p->function[i]->id == id)
            return p->function[i];
    return NULL;
}

/* Whether the profile follows the format's rules; prints the first broken one. */
static bool
pprof_valid(const pprof_profile *p)
{
#define PPROF_RULE(c)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "pprof rule broken: %s\n", #c);                                        \
            return false;                                                                          \
        }                                                                                          \
    } while (0)
    PPROF_RULE(p->n_string_table > 0 && p->string_table[0][0] == '\0');
    PPROF_RULE(p->n_sample_type > 0);
    for (size_t i = 0; i < p->n_sample_type; i++)
        PPROF_RULE(pprof_str_ok(p, p->sample_type[i]->type) &&
                   pprof_str_ok(p, p->sample_type[i]->unit));
    for (size_t i = 0; i < p->n_function; i++) {
        PPROF_RULE(p->function[i]->id != 0 && pprof_str_ok(p, p->function[i]->name));
        for (size_t j = 0; j < i; j++)
            PPROF_RULE(p->function[j]->id != p->function[i]->id);
    }
    for (size_t i = 0; i < p->n_mapping; i++) {
        PPROF_RULE(p->mapping[i]->id != 0 && pprof_str_ok(p, p->mapping[i]->filename));
        for (size_t j = 0; j < i; j++)
            PPROF_RULE(p->mapping[j]->id != p->mapping[i]->id);
    }
    for (size_t i = 0; i < p->n_location; i++) {
        const Perftools__Profiles__Location *l = p->location[i];
        PPROF_RULE(l->id != 0);
        for (size_t j = 0; j < i; j++)
            PPROF_RULE(p->location[j]->id != l->id);
        bool mapping_found = l->mapping_id == 0;
        for (size_t j = 0; j < p->n_mapping; j++)
            if (p->mapping[j]->id == l->mapping_id) {
                mapping_found = true;
                PPROF_RULE(l->address >= p->mapping[j]->memory_start &&
                           l->address < p->mapping[j]->memory_limit);
            }
        PPROF_RULE(mapping_found);
        for (size_t j = 0; j < l->n_line; j++)
            PPROF_RULE(pprof_function(p, l->line[j]->function_id) != NULL);
    }
    for (size_t i = 0; i < p->n_sample; i++) {
        const Perftools__Profiles__Sample *s = p->sample[i];
        PPROF_RULE(s->n_value == p->n_sample_type);
        for (size_t j = 0; j < s->n_location_id; j++)
            PPROF_RULE(pprof_location(p, s->location_id[j]) != NULL);
        for (size_t j = 0; j < s->n_label; j++)
            PPROF_RULE(pprof_str_ok(p, s->label[j]->key) && pprof_str_ok(p, s->label[j]->str) &&
                       pprof_str_ok(p, s->label[j]->num_unit));
    }
    for (size_t i = 0; i < p->n_comment; i++)
        PPROF_RULE(pprof_str_ok(p, p->comment[i]));
    PPROF_RULE(pprof_str_ok(p, p->default_sample_type));
    return true;
#undef PPROF_RULE
}

/* Gunzips and unpacks `len` bytes; NULL when they are not a gzip-compressed profile. Free with
 * perftools__profiles__profile__free_unpacked(p, NULL). */
static pprof_profile *
pprof_read(const uint8_t *gz, size_t len)
{
    size_t cap = 1 << 20;
    uint8_t *raw = malloc(cap);
    z_stream z;
    pprof_profile *p = NULL;

    memset(&z, 0, sizeof z);
    if (!raw || inflateInit2(&z, 16 + 15) != Z_OK) {
        free(raw);
        return NULL;
    }
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)len;
    z.next_out = raw;
    z.avail_out = (uInt)cap;
    if (inflate(&z, Z_FINISH) == Z_STREAM_END)
        p = perftools__profiles__profile__unpack(NULL, cap - z.avail_out, raw);
    inflateEnd(&z);
    free(raw);
    return p;
}

/* The stack of sample s, root first, names joined by ';' (the folded-stack convention). */
static void
pprof_stack(const pprof_profile *p, const Perftools__Profiles__Sample *s, char *out, size_t len)
{
    size_t n = 0;

    out[0] = '\0';
    for (size_t i = s->n_location_id; i-- > 0 && n < len;) {
        const Perftools__Profiles__Location *l = pprof_location(p, s->location_id[i]);
        const Perftools__Profiles__Function *f =
            l && l->n_line ? pprof_function(p, l->line[0]->function_id) : NULL;
        n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ";" : "",
                              f ? pprof_str(p, f->name) : "?");
    }
}

/* The value `column` of the sample whose stack prints as `stack`; -1 when there is none. */
static int64_t
pprof_value(const pprof_profile *p, const char *stack, size_t column)
{
    char buf[1024];
    for (size_t i = 0; i < p->n_sample; i++) {
        pprof_stack(p, p->sample[i], buf, sizeof buf);
        if (strcmp(buf, stack) == 0)
            return p->sample[i]->value[column];
    }
    return -1;
}

#endif
