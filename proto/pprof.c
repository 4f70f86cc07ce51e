/* The pprof profile builder (pprof.h): interned strings, functions, locations and merged samples
 * in flat arrays, turned into the generated protobuf-c structs only when encoding. */
#include "proto/pprof.h"

#include "common/clock.h"

#include "common/array.h"
#include "common/hash.h"
#include "common/strtab.h"
#include "proto/gzip.h"
#include "pprof.pb-c.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Ids in the profile are positions + 1 (0 means "none" in the format). */
struct function {
    uint32_t name;
};

struct location {
    uint64_t function, mapping, address;
};

struct mapping {
    uint32_t file, build_id;
    uint64_t limit;
};

struct label {
    uint32_t key, str, num_unit; /* string indexes; str 0 = numeric */
    int64_t num;
};

struct sample {
    size_t stack_at, labels_at; /* into p->stack_pool and p->label_pool */
    uint32_t depth, n_labels;
};

/* An open-addressing index from a 64-bit hash to an item position (+1; 0 = empty slot). */
struct index_slot {
    uint64_t hash;
    size_t item;
};

struct index {
    struct index_slot *slots;
    size_t n_slots; /* power of two, or 0 */
};

struct rs_pprof {
    struct rs_strtab strings;
    uint32_t types[RS_PPROF_MAX_VALUES][2]; /* (type, unit) string indexes */
    size_t n_types;
    uint32_t default_type, period_type[2];
    uint32_t *comments;
    size_t comments_n, comments_cap;
    int64_t period;
    uint64_t start_ns, duration_ns;

    struct function *functions;
    size_t n_functions, cap_functions;
    struct location *locations;
    size_t n_locations, cap_locations;
    struct mapping *mappings;
    size_t n_mappings, cap_mappings;
    struct sample *samples;
    size_t n_samples, cap_samples;
    uint64_t *stack_pool;
    size_t n_stack_pool, cap_stack_pool;
    struct label *label_pool;
    size_t n_label_pool, cap_label_pool;
    int64_t *values; /* n_types per sample */
    size_t cap_values;

    struct index function_index, location_index, sample_index, mapping_index;
};

static int
string_id(rs_pprof *p, const char *s, uint32_t *id)
{
    uint32_t v = rs_strtab_intern(&p->strings, s ? s : "");
    if (v == RS_STRTAB_NONE)
        return -ENOMEM;
    *id = v;
    return 0;
}

typedef bool (*same_fn)(const rs_pprof *p, size_t item, const void *key);

static int
index_grow(struct index *ix)
{
    size_t n = ix->n_slots ? ix->n_slots * 2 : 64;
    struct index_slot *s = calloc(n, sizeof *s);

    if (!s)
        return -ENOMEM;
    for (size_t i = 0; i < ix->n_slots; i++) {
        if (!ix->slots[i].item)
            continue;
        size_t j = ix->slots[i].hash & (n - 1);
        while (s[j].item)
            j = (j + 1) & (n - 1);
        s[j] = ix->slots[i];
    }
    free(ix->slots);
    ix->slots = s;
    ix->n_slots = n;
    return 0;
}

/* Looks up `hash` in ix; `same(p, item, key)` confirms a candidate. Sets *item to the position
 * found, or else to `n_items` after recording it in the index: the caller must then append the
 * item without failing (it makes room before the lookup). */
static int
index_find_or_add(struct index *ix, const rs_pprof *p, uint64_t hash, same_fn same, const void *key,
                  size_t n_items, size_t *item)
{
    int rc;

    if ((n_items + 1) * 2 > ix->n_slots && (rc = index_grow(ix)) != 0)
        return rc;
    size_t j = hash & (ix->n_slots - 1);
    for (; ix->slots[j].item; j = (j + 1) & (ix->n_slots - 1))
        if (ix->slots[j].hash == hash && same(p, ix->slots[j].item - 1, key)) {
            *item = ix->slots[j].item - 1;
            return 0;
        }
    ix->slots[j] = (struct index_slot){hash, n_items + 1};
    *item = n_items;
    return 0;
}

int
rs_pprof_new(rs_pprof **out)
{
    rs_pprof *p = calloc(1, sizeof *p);
    uint32_t empty;

    if (!p)
        return -ENOMEM;
    rs_strtab_init(&p->strings);
    if (string_id(p, "", &empty) != 0) { /* string_table[0] must be "" */
        rs_pprof_free(p);
        return -ENOMEM;
    }
    *out = p;
    return 0;
}

void
rs_pprof_free(rs_pprof *p)
{
    if (!p)
        return;
    rs_strtab_fini(&p->strings);
    free(p->comments);
    free(p->functions);
    free(p->locations);
    free(p->mappings);
    free(p->samples);
    free(p->stack_pool);
    free(p->label_pool);
    free(p->values);
    free(p->function_index.slots);
    free(p->location_index.slots);
    free(p->sample_index.slots);
    free(p->mapping_index.slots);
    free(p);
}

int
rs_pprof_add_sample_type(rs_pprof *p, const char *type, const char *unit)
{
    if (p->n_types == RS_PPROF_MAX_VALUES || p->n_samples > 0)
        return -EINVAL;
    if (string_id(p, type, &p->types[p->n_types][0]) != 0 ||
        string_id(p, unit, &p->types[p->n_types][1]) != 0)
        return -ENOMEM;
    p->n_types++;
    return 0;
}

int
rs_pprof_set_default_sample_type(rs_pprof *p, const char *type)
{
    uint32_t id;

    if (string_id(p, type, &id) != 0)
        return -ENOMEM;
    for (size_t i = 0; i < p->n_types; i++)
        if (p->types[i][0] == id) {
            p->default_type = id;
            return 0;
        }
    return -EINVAL;
}

void
rs_pprof_set_time(rs_pprof *p, uint64_t start_ns, uint64_t duration_ns)
{
    p->start_ns = start_ns;
    p->duration_ns = duration_ns;
}

int
rs_pprof_set_period(rs_pprof *p, const char *type, const char *unit, int64_t period)
{
    if (string_id(p, type, &p->period_type[0]) != 0 || string_id(p, unit, &p->period_type[1]) != 0)
        return -ENOMEM;
    p->period = period;
    return 0;
}

int
rs_pprof_add_comment(rs_pprof *p, const char *text)
{
    uint32_t id;

    if (RS_ARRAY_RESERVE(p->comments, p->comments_cap, p->comments_n, 1) != 0 ||
        string_id(p, text, &id) != 0)
        return -ENOMEM;
    p->comments[p->comments_n++] = id;
    return 0;
}

static bool
same_mapping(const rs_pprof *p, size_t item, const void *key)
{
    const struct mapping *a = &p->mappings[item], *b = key;
    return a->file == b->file && a->build_id == b->build_id;
}

int
rs_pprof_add_mapping(rs_pprof *p, const char *file, const char *build_id, uint64_t limit,
                     uint64_t *id)
{
    struct mapping m = {0, 0, limit};
    size_t mi;
    int rc;

    if (RS_ARRAY_RESERVE(p->mappings, p->cap_mappings, p->n_mappings, 1) != 0 ||
        string_id(p, file, &m.file) != 0 || string_id(p, build_id, &m.build_id) != 0)
        return -ENOMEM;
    uint32_t key[2] = {m.file, m.build_id};
    if ((rc = index_find_or_add(&p->mapping_index, p, rs_hash_fnv1a64(key, sizeof key),
                                same_mapping, &m, p->n_mappings, &mi)) != 0)
        return rc;
    if (mi == p->n_mappings)
        p->mappings[p->n_mappings++] = m;
    else if (limit > p->mappings[mi].limit)
        p->mappings[mi].limit = limit;
    *id = mi + 1;
    return 0;
}

static bool
same_function(const rs_pprof *p, size_t item, const void *key)
{
    return p->functions[item].name == *(const uint32_t *)key;
}

static bool
same_location(const rs_pprof *p, size_t item, const void *key)
{
    const struct location *a = &p->locations[item], *b = key;
    return a->function == b->function && a->mapping == b->mapping && a->address == b->address;
}

int
rs_pprof_frame(rs_pprof *p, const char *function, uint64_t mapping_id, uint64_t address,
               uint64_t *location)
{
    uint32_t name;
    size_t fi, li;
    int rc;

    if (mapping_id > p->n_mappings)
        return -EINVAL;
    /* Room first: once the index knows an item, appending it must not fail. */
    if (RS_ARRAY_RESERVE(p->functions, p->cap_functions, p->n_functions, 1) != 0 ||
        RS_ARRAY_RESERVE(p->locations, p->cap_locations, p->n_locations, 1) != 0)
        return -ENOMEM;
    if ((rc = string_id(p, function, &name)) != 0 ||
        (rc = index_find_or_add(&p->function_index, p, rs_hash_fnv1a64(&name, sizeof name),
                                same_function, &name, p->n_functions, &fi)) != 0)
        return rc;
    if (fi == p->n_functions)
        p->functions[p->n_functions++] = (struct function){name};
    struct location l = {fi + 1, mapping_id, address};
    uint64_t key[3] = {l.function, l.mapping, l.address};
    if ((rc = index_find_or_add(&p->location_index, p, rs_hash_fnv1a64(key, sizeof key),
                                same_location, &l, p->n_locations, &li)) != 0)
        return rc;
    if (li == p->n_locations)
        p->locations[p->n_locations++] = l;
    *location = li + 1;
    return 0;
}

/* A sample's identity while it is being looked up: its stack and labels. */
struct sample_key {
    const uint64_t *stack;
    size_t depth;
    const struct label *labels;
    size_t n_labels;
};

static bool
same_sample(const rs_pprof *p, size_t item, const void *key)
{
    const struct sample *s = &p->samples[item];
    const struct sample_key *k = key;

    return s->depth == k->depth && s->n_labels == k->n_labels &&
           (k->depth == 0 ||
            memcmp(p->stack_pool + s->stack_at, k->stack, k->depth * sizeof *k->stack) == 0) &&
           (k->n_labels == 0 ||
            memcmp(p->label_pool + s->labels_at, k->labels, k->n_labels * sizeof *k->labels) == 0);
}

int
rs_pprof_add(rs_pprof *p, const uint64_t *stack, size_t depth, const int64_t *values,
             const struct rs_pprof_label *labels, size_t n_labels)
{
    struct label ls[RS_PPROF_MAX_LABELS];
    size_t si;
    int rc;

    if (p->n_types == 0 || depth > RS_PPROF_MAX_DEPTH || n_labels > RS_PPROF_MAX_LABELS)
        return -EINVAL;
    for (size_t i = 0; i < depth; i++)
        if (stack[i] == 0 || stack[i] > p->n_locations)
            return -EINVAL;
    memset(ls, 0, sizeof ls); /* compared and hashed as bytes: no stray padding */
    for (size_t i = 0; i < n_labels; i++) {
        if (string_id(p, labels[i].key, &ls[i].key) != 0 ||
            (labels[i].str && string_id(p, labels[i].str, &ls[i].str) != 0) ||
            (labels[i].num_unit && string_id(p, labels[i].num_unit, &ls[i].num_unit) != 0))
            return -ENOMEM;
        ls[i].num = labels[i].str ? 0 : labels[i].num;
    }
    if (RS_ARRAY_RESERVE(p->samples, p->cap_samples, p->n_samples, 1) != 0 ||
        RS_ARRAY_RESERVE(p->stack_pool, p->cap_stack_pool, p->n_stack_pool, depth) != 0 ||
        RS_ARRAY_RESERVE(p->label_pool, p->cap_label_pool, p->n_label_pool, n_labels) != 0 ||
        RS_ARRAY_RESERVE(p->values, p->cap_values, p->n_samples * p->n_types, p->n_types) != 0)
        return -ENOMEM; /* room first, as in rs_pprof_frame */
    struct sample_key k = {stack, depth, ls, n_labels};
    uint64_t h = rs_hash_fnv1a64(stack, depth * sizeof *stack) ^
                 rs_hash_fnv1a64(ls, n_labels * sizeof *ls) * 31;
    if ((rc = index_find_or_add(&p->sample_index, p, h, same_sample, &k, p->n_samples, &si)) != 0)
        return rc;
    if (si == p->n_samples) {
        if (depth) /* (the pools stay NULL while nothing was put in them) */
            memcpy(p->stack_pool + p->n_stack_pool, stack, depth * sizeof *stack);
        if (n_labels)
            memcpy(p->label_pool + p->n_label_pool, ls, n_labels * sizeof *ls);
        memset(p->values + p->n_samples * p->n_types, 0, p->n_types * sizeof *p->values);
        p->samples[p->n_samples++] =
            (struct sample){p->n_stack_pool, p->n_label_pool, (uint32_t)depth, (uint32_t)n_labels};
        p->n_stack_pool += depth;
        p->n_label_pool += n_labels;
    }
    for (size_t i = 0; i < p->n_types; i++)
        p->values[si * p->n_types + i] += values[i];
    return 0;
}

size_t
rs_pprof_samples(const rs_pprof *p)
{
    return p->n_samples;
}

/* The generated structs of one encoding, all allocated at once and freed together. */
struct encoding {
    Perftools__Profiles__Profile prof;
    Perftools__Profiles__ValueType types[RS_PPROF_MAX_VALUES], period_type;
    Perftools__Profiles__ValueType *type_ptrs[RS_PPROF_MAX_VALUES];
    Perftools__Profiles__Sample *samples, **sample_ptrs;
    Perftools__Profiles__Label *labels, **label_ptrs;
    Perftools__Profiles__Mapping *mappings, **mapping_ptrs;
    Perftools__Profiles__Location *locations, **location_ptrs;
    Perftools__Profiles__Line *lines, **line_ptrs;
    Perftools__Profiles__Function *functions, **function_ptrs;
    int64_t *comments;
};

static void
encoding_free(struct encoding *e)
{
    free(e->samples);
    free(e->sample_ptrs);
    free(e->labels);
    free(e->label_ptrs);
    free(e->mappings);
    free(e->mapping_ptrs);
    free(e->locations);
    free(e->location_ptrs);
    free(e->lines);
    free(e->line_ptrs);
    free(e->functions);
    free(e->function_ptrs);
    free(e->comments);
}

/* calloc of n (at least 1) elements, so that empty tables are not mistaken for failures. */
#define ALLOC(ptr, n) ((ptr) = calloc((n) ? (n) : 1, sizeof *(ptr)))

static int
encoding_build(const rs_pprof *p, struct encoding *e)
{
    Perftools__Profiles__Profile *pr = &e->prof;

    if (!ALLOC(e->samples, p->n_samples) || !ALLOC(e->sample_ptrs, p->n_samples) ||
        !ALLOC(e->labels, p->n_label_pool) || !ALLOC(e->label_ptrs, p->n_label_pool) ||
        !ALLOC(e->mappings, p->n_mappings) || !ALLOC(e->mapping_ptrs, p->n_mappings) ||
        !ALLOC(e->locations, p->n_locations) || !ALLOC(e->location_ptrs, p->n_locations) ||
        !ALLOC(e->lines, p->n_locations) || !ALLOC(e->line_ptrs, p->n_locations) ||
        !ALLOC(e->functions, p->n_functions) || !ALLOC(e->function_ptrs, p->n_functions) ||
        !ALLOC(e->comments, p->comments_n))
        return -ENOMEM;
    perftools__profiles__profile__init(pr);
    for (size_t i = 0; i < p->n_types; i++) {
        perftools__profiles__value_type__init(&e->types[i]);
        e->types[i].type = p->types[i][0];
        e->types[i].unit = p->types[i][1];
        e->type_ptrs[i] = &e->types[i];
    }
    pr->n_sample_type = p->n_types;
    pr->sample_type = e->type_ptrs;
    for (size_t i = 0; i < p->n_label_pool; i++) {
        const struct label *l = &p->label_pool[i];
        perftools__profiles__label__init(&e->labels[i]);
        e->labels[i].key = l->key;
        e->labels[i].str = l->str;
        e->labels[i].num = l->num;
        e->labels[i].num_unit = l->num_unit;
        e->label_ptrs[i] = &e->labels[i];
    }
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct sample *s = &p->samples[i];
        Perftools__Profiles__Sample *o = &e->samples[i];
        perftools__profiles__sample__init(o);
        o->n_location_id = s->depth;
        o->location_id = s->depth ? p->stack_pool + s->stack_at : NULL;
        o->n_value = p->n_types;
        o->value = p->values + i * p->n_types;
        o->n_label = s->n_labels;
        o->label = e->label_ptrs + s->labels_at;
        e->sample_ptrs[i] = o;
    }
    pr->n_sample = p->n_samples;
    pr->sample = e->sample_ptrs;
    for (size_t i = 0; i < p->n_mappings; i++) {
        Perftools__Profiles__Mapping *o = &e->mappings[i];
        perftools__profiles__mapping__init(o);
        o->id = i + 1;
        o->memory_limit = p->mappings[i].limit;
        o->filename = p->mappings[i].file;
        o->build_id = p->mappings[i].build_id;
        o->has_functions = 1; /* names come with every frame: nothing to symbolize */
        e->mapping_ptrs[i] = o;
    }
    pr->n_mapping = p->n_mappings;
    pr->mapping = e->mapping_ptrs;
    for (size_t i = 0; i < p->n_locations; i++) {
        Perftools__Profiles__Location *o = &e->locations[i];
        perftools__profiles__location__init(o);
        perftools__profiles__line__init(&e->lines[i]);
        e->lines[i].function_id = p->locations[i].function;
        e->line_ptrs[i] = &e->lines[i];
        o->id = i + 1;
        o->mapping_id = p->locations[i].mapping;
        o->address = p->locations[i].address;
        o->n_line = 1;
        o->line = &e->line_ptrs[i];
        e->location_ptrs[i] = o;
    }
    pr->n_location = p->n_locations;
    pr->location = e->location_ptrs;
    for (size_t i = 0; i < p->n_functions; i++) {
        Perftools__Profiles__Function *o = &e->functions[i];
        perftools__profiles__function__init(o);
        o->id = i + 1;
        o->name = o->system_name = p->functions[i].name;
        e->function_ptrs[i] = o;
    }
    pr->n_function = p->n_functions;
    pr->function = e->function_ptrs;
    pr->n_string_table = p->strings.count;
    pr->string_table = p->strings.strings;
    pr->time_nanos = (int64_t)p->start_ns;
    pr->duration_nanos = (int64_t)p->duration_ns;
    if (p->period_type[0]) {
        perftools__profiles__value_type__init(&e->period_type);
        e->period_type.type = p->period_type[0];
        e->period_type.unit = p->period_type[1];
        pr->period_type = &e->period_type;
        pr->period = p->period;
    }
    for (size_t i = 0; i < p->comments_n; i++)
        e->comments[i] = p->comments[i];
    pr->n_comment = p->comments_n;
    pr->comment = e->comments;
    pr->default_sample_type = p->default_type;
    return 0;
}

int
rs_pprof_encode(const rs_pprof *p, uint8_t **out, size_t *len)
{
    return rs_pprof_encode_until(p, 0, out, len);
}

int
rs_pprof_encode_until(const rs_pprof *p, uint64_t deadline_ns, uint8_t **out, size_t *len)
{
    struct encoding e;
    uint8_t *raw = NULL;
    int rc;

    memset(&e, 0, sizeof e);
    if ((rc = encoding_build(p, &e)) != 0)
        goto out;
    if (deadline_ns && rs_clock_mono_ns() > deadline_ns) { /* before packing: the longer part */
        rc = -ETIMEDOUT;
        goto out;
    }
    size_t n = perftools__profiles__profile__get_packed_size(&e.prof);
    if (!(raw = malloc(n ? n : 1))) {
        rc = -ENOMEM;
        goto out;
    }
    perftools__profiles__profile__pack(&e.prof, raw);
    if (deadline_ns && rs_clock_mono_ns() > deadline_ns) {
        rc = -ETIMEDOUT;
        goto out;
    }
    rc = rs_gzip_until(raw, n, -1, deadline_ns, out, len);
out:
    free(raw);
    encoding_free(&e);
    return rc;
}
