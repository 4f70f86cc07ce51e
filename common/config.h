/* Table-driven configuration. Each binary declares one static table of options; that table alone
 * drives the config file (--config FILE, "key = value" lines), RANKSCOPE_<KEY> environment
 * variables, --key=value / --key value flags, and --help. Precedence, lowest first: table default,
 * config file, environment, command line. Unknown keys in the file or on the command line are
 * rejected with a message naming them.
 */
#ifndef RS_COMMON_CONFIG_H
#define RS_COMMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rs_config_type {
    RS_CONFIG_STRING, /* char * field, owned by the config struct (rs_config_free releases) */
    RS_CONFIG_INT,    /* int64_t field, bounded by [min, max] when min < max */
    RS_CONFIG_DOUBLE, /* double field, bounded by [min, max] when min < max */
    RS_CONFIG_BOOL,   /* bool field; "--key" alone means true */
};

struct rs_config_option {
    const char *key; /* lower-case, '-' separated; env name is the spec's prefix + upper, '_' */
    enum rs_config_type type;
    const char *default_value; /* parsed exactly like user input; NULL = empty string / 0 */
    size_t offset;             /* offsetof() the field in the binary's config struct */
    const char *help;
    double min, max;
};

/* One row of a binary's option table for a field of config struct `conf` (a struct type):
 * RS_CONFIG_OPT(struct x_config, "key", RS_CONFIG_INT, "5", field, "help", 1, 10). */
#define RS_CONFIG_OPT(conf, key, type, def, field, help, lo, hi)                                   \
    {                                                                                              \
        key, type, def, offsetof(conf, field), help, lo, hi                                        \
    }

struct rs_config_spec {
    const char *program; /* "rankscope-server" */
    const char *usage;   /* one line after "usage: " */
    const char *summary; /* one paragraph printed by --help */
    const struct rs_config_option *options;
    size_t n_options;
    bool positional; /* accept non-option arguments (returned through rs_config_parse) */
    /* Environment variables are env_prefix + KEY ("RANKSCOPE_SERVER_" + "DATA"), and the config
     * file's is env_prefix + "CONFIG". NULL = "RANKSCOPE_". Binaries must not share a prefix: the
     * collector (inside training processes) owns the bare RANKSCOPE_ names. */
    const char *env_prefix;
};

/* The environment variable that sets `key` for `spec` ("RANKSCOPE_SERVER_LOG_LEVEL"). */
void rs_config_env_name(const struct rs_config_spec *spec, const char *key, char *out,
                        size_t out_len);

#define RS_CONFIG_EXIT 1 /* --help or --version was printed: the caller exits with status 0 */

/* Fills `cfg` from defaults, file, environment and argv. Non-option arguments are collected into
 * `positional` (pointers into argv, at most `max_positional`) when the spec allows them.
 * Returns 0, RS_CONFIG_EXIT, or RS_E_CONFIG with a message for people in `err`. On error the
 * strings already set in `cfg` are still owned by it: call rs_config_free in every case. */
int rs_config_parse(const struct rs_config_spec *spec, void *cfg, int argc, char **argv,
                    char **positional, int max_positional, int *n_positional, char *err,
                    size_t err_len);

/* Sets one key from text, as if given on the command line. Returns 0 or RS_E_CONFIG. */
int rs_config_set(const struct rs_config_spec *spec, void *cfg, const char *key, const char *value,
                  char *err, size_t err_len);

/* Applies "key = value" lines ('#' comments, blank lines) from `text` (modified in place) to
 * `cfg`. `origin` names the text in messages ("config file /etc/x.conf"). Returns 0 or
 * RS_E_CONFIG with the line number in `err`. */
int rs_config_load_text(const struct rs_config_spec *spec, void *cfg, char *text,
                        const char *origin, char *err, size_t err_len);

/* Prints --help text for the spec to stdout. */
void rs_config_print_help(const struct rs_config_spec *spec);

/* Prints the options named in `keys` (space-separated, e.g. "rank limit since"; NULL = all) as
 * --help does: flag, help, environment variable and default. Unknown names are skipped. */
void rs_config_print_options(const struct rs_config_spec *spec, const char *keys);

/* The whole of option handling for a main(): rs_config_parse, then the "log-level" option (when
 * the table has one) applied to the logger; errors are printed as "<program>: <message>" on
 * stderr. Returns -1 when the program should go on, otherwise the status main() should return
 * (0 after --help/--version, 2 on a usage error; the config is freed then). */
int rs_config_main(const struct rs_config_spec *spec, void *cfg, int argc, char **argv,
                   char **positional, int max_positional, int *n_positional);

/* The whole main() of a binary without positional arguments: rs_config_main, then run(cfg) when
 * the program should go on, then rs_config_free. Returns the status main() should return. */
int rs_config_run(const struct rs_config_spec *spec, void *cfg, int argc, char **argv,
                  int (*run)(void *cfg));

/* The index in argv of the first argument that is neither an option nor an option's value, as
 * rs_config_parse reads them (a command word, before parsing: to answer `CMD --help`), or argc. */
int rs_config_first_positional(const struct rs_config_spec *spec, int argc, char **argv);

/* Frees the strings the config owns. Idempotent. */
void rs_config_free(const struct rs_config_spec *spec, void *cfg);

#endif
