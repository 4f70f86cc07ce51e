/* libFuzzer target for configuration text (common/config.c): arbitrary bytes as a config file
 * against a table with every option type. */
#include "common/config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_cfg {
    char *text;
    int64_t number;
    double ratio;
    bool flag;
};

static const struct rs_config_option options[] = {
    {"text", RS_CONFIG_STRING, "x", offsetof(struct fuzz_cfg, text), "", 0, 0},
    {"number", RS_CONFIG_INT, "1", offsetof(struct fuzz_cfg, number), "", -5, 5},
    {"ratio", RS_CONFIG_DOUBLE, "0", offsetof(struct fuzz_cfg, ratio), "", 0, 1},
    {"flag", RS_CONFIG_BOOL, "false", offsetof(struct fuzz_cfg, flag), "", 0, 0},
};
static const struct rs_config_spec spec = {"fuzz", "", "", options, 4, false, NULL};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_cfg cfg = {0};
    char err[256], *text = malloc(size + 1);
    char *argv[] = {"fuzz", NULL};

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (rs_config_parse(&spec, &cfg, 1, argv, NULL, 0, NULL, err, sizeof err) == 0 &&
        rs_config_load_text(&spec, &cfg, text, "fuzz input", err, sizeof err) == 0 &&
        (cfg.number < -5 || cfg.number > 5 || cfg.ratio < 0 || cfg.ratio > 1 || !cfg.text))
        __builtin_trap(); /* accepted a value outside its bounds */
    rs_config_free(&spec, &cfg);
    free(text);
    return 0;
}
