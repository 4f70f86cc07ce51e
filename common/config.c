/* Configuration parsing shared by every binary (see config.h). */
#include "common/config.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONFIG_FILE (1u << 20)

static const struct rs_config_option *
find_option(const struct rs_config_spec *spec, const char *key, size_t key_len)
{
    for (size_t i = 0; i < spec->n_options; i++) {
        const struct rs_config_option *o = &spec->options[i];
        if (strlen(o->key) == key_len && memcmp(o->key, key, key_len) == 0)
            return o;
    }
    return NULL;
}

static int
parse_bool(const char *s, bool *out)
{
    if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))
        *out = true;
    else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))
        *out = false;
    else
        return RS_E_CONFIG;
    return 0;
}

static int
set_value(const struct rs_config_option *o, void *cfg, const char *value, char *err, size_t err_len)
{
    char *field = (char *)cfg + o->offset;
    char *end;

    if (!value)
        value = "";
    switch (o->type) {
    case RS_CONFIG_STRING: {
        char *copy = strdup(value);
        if (!copy) {
            snprintf(err, err_len, "out of memory");
            return RS_E_CONFIG;
        }
        free(*(char **)field);
        *(char **)field = copy;
        return 0;
    }
    case RS_CONFIG_INT: {
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (*value == '\0' || *end != '\0' || errno != 0 ||
            (o->min < o->max && (v < o->min || v > o->max))) {
            if (o->min < o->max)
                snprintf(err, err_len, "--%s: '%s' is not an integer in [%.0f, %.0f]", o->key,
                         value, o->min, o->max);
            else
                snprintf(err, err_len, "--%s: '%s' is not an integer", o->key, value);
            return RS_E_CONFIG;
        }
        *(int64_t *)field = v;
        return 0;
    }
    case RS_CONFIG_DOUBLE: {
        errno = 0;
        double v = strtod(value, &end);
        if (*value == '\0' || *end != '\0' || errno != 0 || !isfinite(v) ||
            (o->min < o->max && (v < o->min || v > o->max))) {
            if (o->min < o->max)
                snprintf(err, err_len, "--%s: '%s' is not a number in [%g, %g]", o->key, value,
                         o->min, o->max);
            else
                snprintf(err, err_len, "--%s: '%s' is not a number", o->key, value);
            return RS_E_CONFIG;
        }
        *(double *)field = v;
        return 0;
    }
    case RS_CONFIG_BOOL:
        if (parse_bool(value, (bool *)field) != 0) {
            snprintf(err, err_len, "--%s: '%s' is not a boolean (true/false)", o->key, value);
            return RS_E_CONFIG;
        }
        return 0;
    }
    return RS_E_CONFIG;
}

int
rs_config_set(const struct rs_config_spec *spec, void *cfg, const char *key, const char *value,
              char *err, size_t err_len)
{
    const struct rs_config_option *o = find_option(spec, key, strlen(key));

    if (!o) {
        snprintf(err, err_len, "unknown option '%s' (see %s --help)", key, spec->program);
        return RS_E_CONFIG;
    }
    return set_value(o, cfg, value, err, err_len);
}

static char *
trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

int
rs_config_load_text(const struct rs_config_spec *spec, void *cfg, char *text, const char *origin,
                    char *err, size_t err_len)
{
    char *save = NULL, *line;
    int rc = 0, lineno = 0;

    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *s = trim(line), *eq, *key, *value;
        lineno++;
        if (*s == '\0' || *s == '#')
            continue;
        eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, err_len, "%s line %d: expected 'key = value'", origin, lineno);
            return RS_E_CONFIG;
        }
        *eq = '\0';
        key = trim(s);
        value = trim(eq + 1);
        if (!find_option(spec, key, strlen(key))) {
            snprintf(err, err_len, "%s line %d: unknown key '%s'", origin, lineno, key);
            return RS_E_CONFIG;
        }
        if ((rc = rs_config_set(spec, cfg, key, value, err, err_len)) != 0) {
            size_t n = strlen(err);
            snprintf(err + n, err_len - n, " (%s line %d)", origin, lineno);
            return rc;
        }
    }
    return 0;
}

static int
load_file(const struct rs_config_spec *spec, void *cfg, const char *path, char *err, size_t err_len)
{
    char *text = NULL, origin[600];
    size_t len;
    int rc = rs_fs_read_all(path, MAX_CONFIG_FILE, &text, &len);

    if (rc != 0) {
        snprintf(err, err_len, "config file %s: %s", path, rs_strerror(rc));
        return RS_E_CONFIG;
    }
    if (strlen(text) != len) {
        snprintf(err, err_len, "config file %s: contains a NUL byte", path);
        free(text);
        return RS_E_CONFIG;
    }
    snprintf(origin, sizeof origin, "config file %s", path);
    rc = rs_config_load_text(spec, cfg, text, origin, err, err_len);
    free(text);
    return rc;
}

void
rs_config_env_name(const struct rs_config_spec *spec, const char *key, char *out, size_t out_len)
{
    size_t n = (size_t)snprintf(out, out_len, "%s", spec->env_prefix ?: "RANKSCOPE_");
    if (n >= out_len)
        n = out_len - 1;
    for (const char *k = key; *k && n + 1 < out_len; k++)
        out[n++] = *k == '-' ? '_' : (char)toupper((unsigned char)*k);
    out[n] = '\0';
}

static void
print_version(const struct rs_config_spec *spec)
{
    printf("%s %s\n", spec->program, RS_VERSION);
}

static bool
key_listed(const char *keys, const char *key)
{
    size_t n = strlen(key);

    for (const char *p = keys; (p = strstr(p, key)) != NULL; p += n)
        if ((p == keys || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

void
rs_config_print_options(const struct rs_config_spec *spec, const char *keys)
{
    static const char *const type_names[] = {"TEXT", "N", "X", ""};
    char env[96], flag[64];

    for (size_t i = 0; i < spec->n_options; i++) {
        const struct rs_config_option *o = &spec->options[i];
        const char *def = o->default_value && *o->default_value ? o->default_value : "\"\"";
        if (keys && !key_listed(keys, o->key))
            continue;
        if (o->type == RS_CONFIG_BOOL)
            snprintf(flag, sizeof flag, "--%s", o->key);
        else
            snprintf(flag, sizeof flag, "--%s %s", o->key, type_names[o->type]);
        rs_config_env_name(spec, o->key, env, sizeof env);
        printf("  %-26s %s\n  %-26s env %s, default %s\n", flag, o->help, "", env,
               o->type == RS_CONFIG_BOOL && !o->default_value ? "false" : def);
    }
}

void
rs_config_print_help(const struct rs_config_spec *spec)
{
    char env[96];

    printf("usage: %s\n\n%s\n\noptions (flag, environment variable, default):\n", spec->usage,
           spec->summary);
    rs_config_print_options(spec, NULL);
    rs_config_env_name(spec, "config", env, sizeof env);
    printf("  %-26s %s\n  %-26s env %s\n", "--config FILE",
           "read 'key = value' lines (keys as above, without --) before env and flags", "", env);
    printf("  %-26s print this help and exit\n", "--help");
    printf("  %-26s print the version and exit\n", "--version");
}

int
rs_config_parse(const struct rs_config_spec *spec, void *cfg, int argc, char **argv,
                char **positional, int max_positional, int *n_positional, char *err, size_t err_len)
{
    const char *config_path;
    char env[96];
    int rc, npos = 0;

    rs_config_env_name(spec, "config", env, sizeof env);
    config_path = getenv(env);
    for (size_t i = 0; i < spec->n_options; i++) {
        rc = set_value(&spec->options[i], cfg,
                       spec->options[i].default_value              ? spec->options[i].default_value
                       : spec->options[i].type == RS_CONFIG_STRING ? ""
                       : spec->options[i].type == RS_CONFIG_BOOL   ? "false"
                                                                   : "0",
                       err, err_len);
        if (rc != 0)
            return rc; /* a bad table default is a programmer error, reported like any other */
    }
    /* First pass: help/version and --config, which must apply before env and flags. */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            rs_config_print_help(spec);
            return RS_CONFIG_EXIT;
        }
        if (!strcmp(argv[i], "--version")) {
            print_version(spec);
            return RS_CONFIG_EXIT;
        }
        if (!strncmp(argv[i], "--config=", 9))
            config_path = argv[i] + 9;
        else if (!strcmp(argv[i], "--config")) {
            if (i + 1 >= argc) {
                snprintf(err, err_len, "--config needs a file name");
                return RS_E_CONFIG;
            }
            config_path = argv[++i];
        }
    }
    if (config_path && *config_path && (rc = load_file(spec, cfg, config_path, err, err_len)))
        return rc;
    for (size_t i = 0; i < spec->n_options; i++) {
        const char *v;
        rs_config_env_name(spec, spec->options[i].key, env, sizeof env);
        v = getenv(env);
        if (v && (rc = set_value(&spec->options[i], cfg, v, err, err_len)) != 0) {
            size_t n = strlen(err);
            snprintf(err + n, err_len - n, " (from %s)", env);
            return rc;
        }
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *key, *eq, *value = NULL;
        const struct rs_config_option *o;

        if (!strcmp(arg, "--config")) {
            i++;
            continue;
        }
        if (!strncmp(arg, "--config=", 9))
            continue;
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (!spec->positional || npos >= max_positional) {
                snprintf(err, err_len, "unexpected argument '%s' (see %s --help)", arg,
                         spec->program);
                return RS_E_CONFIG;
            }
            positional[npos++] = argv[i];
            continue;
        }
        key = arg + 2;
        eq = strchr(key, '=');
        o = find_option(spec, key, eq ? (size_t)(eq - key) : strlen(key));
        if (!o) {
            snprintf(err, err_len, "unknown option '%.*s' (see %s --help)",
                     eq ? (int)(eq - arg) : (int)strlen(arg), arg, spec->program);
            return RS_E_CONFIG;
        }
        if (eq)
            value = eq + 1;
        else if (o->type == RS_CONFIG_BOOL)
            value = "true";
        else if (i + 1 < argc)
            value = argv[++i];
        else {
            snprintf(err, err_len, "--%s needs a value (see %s --help)", o->key, spec->program);
            return RS_E_CONFIG;
        }
        if ((rc = set_value(o, cfg, value, err, err_len)) != 0)
            return rc;
    }
    if (n_positional)
        *n_positional = npos;
    return 0;
}

void
rs_config_free(const struct rs_config_spec *spec, void *cfg)
{
    for (size_t i = 0; i < spec->n_options; i++) {
        if (spec->options[i].type == RS_CONFIG_STRING) {
            char **field = (char **)((char *)cfg + spec->options[i].offset);
            free(*field);
            *field = NULL;
        }
    }
}

int
rs_config_main(const struct rs_config_spec *spec, void *cfg, int argc, char **argv,
               char **positional, int max_positional, int *n_positional)
{
    const struct rs_config_option *level = find_option(spec, "log-level", 9);
    char err[512];
    int rc = rs_config_parse(spec, cfg, argc, argv, positional, max_positional, n_positional, err,
                             sizeof err);

    if (rc == 0 && level) {
        const char *name = *(char **)((char *)cfg + level->offset);
        if (rs_log_set_level(name) != 0) {
            snprintf(err, sizeof err, "--log-level: '%s' is not error, warn, info or debug", name);
            rc = RS_E_CONFIG;
        }
    }
    if (rc == 0)
        return -1;
    if (rc != RS_CONFIG_EXIT)
        fprintf(stderr, "%s: %s\n", spec->program, err);
    rs_config_free(spec, cfg);
    return rc == RS_CONFIG_EXIT ? 0 : 2;
}

int
rs_config_run(const struct rs_config_spec *spec, void *cfg, int argc, char **argv,
              int (*run)(void *cfg))
{
    int rc = rs_config_main(spec, cfg, argc, argv, NULL, 0, NULL);

    if (rc >= 0)
        return rc;
    rc = run(cfg);
    rs_config_free(spec, cfg);
    return rc;
}

int
rs_config_first_positional(const struct rs_config_spec *spec, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (arg[0] != '-' || arg[1] == '\0')
                return i;
            continue; /* -h */
        }
        if (strchr(arg, '='))
            continue;
        const struct rs_config_option *o = find_option(spec, arg + 2, strlen(arg + 2));
        if ((o && o->type != RS_CONFIG_BOOL) || strcmp(arg, "--config") == 0)
            i++; /* its value */
    }
    return argc;
}
