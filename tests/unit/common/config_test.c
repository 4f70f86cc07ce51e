/* Unit tests of common/config: precedence, types, bounds, unknown keys, positionals. */
#include "common/config.h"
#include "common/error.h"
#include "tests/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cfg {
    char *name;
    int64_t count;
    double ratio;
    bool flag;
};

static const struct rs_config_option opts[] = {
    {"name", RS_CONFIG_STRING, "dflt", offsetof(struct cfg, name), "a name", 0, 0},
    {"count", RS_CONFIG_INT, "5", offsetof(struct cfg, count), "a count", 1, 10},
    {"ratio", RS_CONFIG_DOUBLE, "0.5", offsetof(struct cfg, ratio), "a ratio", 0, 1},
    {"flag", RS_CONFIG_BOOL, "false", offsetof(struct cfg, flag), "a flag", 0, 0},
};
static const struct rs_config_spec spec = {"t", "t", "test", opts, 4, true, NULL};

static int
parse(struct cfg *c, int argc, char **argv, char *err)
{
    char *pos[4];
    int n = 0;
    memset(c, 0, sizeof *c);
    return rs_config_parse(&spec, c, argc, argv, pos, 4, &n, err, 256);
}

static void
defaults_and_flags(void)
{
    struct cfg c;
    char err[256];
    char *argv[] = {"t", "--count=7", "--ratio", "0.25", "--flag", "--name=x", NULL};

    T_EQ(parse(&c, 1, argv, err), 0);
    T_CHECK(strcmp(c.name, "dflt") == 0);
    T_EQ(c.count, 5);
    T_CHECK(!c.flag);
    rs_config_free(&spec, &c);
    T_EQ(parse(&c, 6, argv, err), 0);
    T_EQ(c.count, 7);
    T_CHECK(c.ratio == 0.25);
    T_CHECK(c.flag);
    T_CHECK(strcmp(c.name, "x") == 0);
    rs_config_free(&spec, &c);
}

static void
rejects_bad_values(void)
{
    struct cfg c;
    char err[256];
    char *a1[] = {"t", "--count=11"}, *a2[] = {"t", "--count=abc"}, *a3[] = {"t", "--nope=1"},
         *a4[] = {"t", "--flag=maybe"}, *a5[] = {"t", "--ratio"};

    T_EQ(parse(&c, 2, a1, err), RS_E_CONFIG);
    rs_config_free(&spec, &c);
    T_EQ(parse(&c, 2, a2, err), RS_E_CONFIG);
    rs_config_free(&spec, &c);
    T_EQ(parse(&c, 2, a3, err), RS_E_CONFIG);
    T_CHECK(strstr(err, "unknown option '--nope'") != NULL);
    rs_config_free(&spec, &c);
    T_EQ(parse(&c, 2, a4, err), RS_E_CONFIG);
    rs_config_free(&spec, &c);
    T_EQ(parse(&c, 2, a5, err), RS_E_CONFIG);
    rs_config_free(&spec, &c);
}

static void
precedence_file_env_argv(void)
{
    struct cfg c;
    char err[256], path[] = "/tmp/rs-config-test-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    char cfgarg[64];

    fprintf(f, "# comment\nname = fromfile\ncount = 2\nratio=0.75\n");
    fclose(f);
    snprintf(cfgarg, sizeof cfgarg, "--config=%s", path);
    char *argv[] = {"t", cfgarg, "--count=9"};
    setenv("RANKSCOPE_COUNT", "3", 1);
    setenv("RANKSCOPE_NAME", "fromenv", 1);
    T_EQ(parse(&c, 3, argv, err), 0);
    T_CHECK(strcmp(c.name, "fromenv") == 0); /* env beats file */
    T_EQ(c.count, 9);                        /* argv beats env */
    T_CHECK(c.ratio == 0.75);                /* file beats default */
    rs_config_free(&spec, &c);
    unsetenv("RANKSCOPE_COUNT");
    unsetenv("RANKSCOPE_NAME");
    f = fopen(path, "w");
    fprintf(f, "bogus = 1\n");
    fclose(f);
    T_EQ(parse(&c, 2, argv, err), RS_E_CONFIG);
    T_CHECK(strstr(err, "unknown key 'bogus'") != NULL);
    rs_config_free(&spec, &c);
    unlink(path);
}

static void
positionals(void)
{
    struct cfg c;
    char err[256], *pos[4];
    int n = 0;
    char *argv[] = {"t", "ranks", "--flag", "job1"};

    memset(&c, 0, sizeof c);
    T_OK(rs_config_parse(&spec, &c, 4, argv, pos, 4, &n, err, sizeof err));
    T_EQ(n, 2);
    T_CHECK(n == 2 && strcmp(pos[0], "ranks") == 0 && strcmp(pos[1], "job1") == 0);
    rs_config_free(&spec, &c);
}

/* A binary's prefix names its variables (and its config file's); another binary's are not read. */
static void
env_prefix(void)
{
    static const struct rs_config_spec agent = {"a", "a", "", opts, 4, true, "RANKSCOPE_AGENT_"};
    struct cfg c;
    char err[256], env[96], *pos[4];
    int n = 0;
    char *argv[] = {"t"};

    rs_config_env_name(&agent, "count", env, sizeof env);
    T_CHECK(strcmp(env, "RANKSCOPE_AGENT_COUNT") == 0);
    rs_config_env_name(&spec, "count", env, sizeof env);
    T_CHECK(strcmp(env, "RANKSCOPE_COUNT") == 0);
    setenv("RANKSCOPE_COUNT", "3", 1); /* another binary's (the collector's) name */
    setenv("RANKSCOPE_AGENT_NAME", "mine", 1);
    setenv("RANKSCOPE_AGENT_CONFIG", "/nonexistent/rs-config", 1);
    memset(&c, 0, sizeof c);
    T_EQ(rs_config_parse(&agent, &c, 1, argv, pos, 4, &n, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "/nonexistent/rs-config") != NULL); /* the config file's variable */
    rs_config_free(&agent, &c);
    unsetenv("RANKSCOPE_AGENT_CONFIG");
    memset(&c, 0, sizeof c);
    T_OK(rs_config_parse(&agent, &c, 1, argv, pos, 4, &n, err, sizeof err));
    T_EQ(c.count, 5); /* the default: RANKSCOPE_COUNT is not this binary's */
    T_CHECK(c.name && strcmp(c.name, "mine") == 0);
    rs_config_free(&agent, &c);
    unsetenv("RANKSCOPE_COUNT");
    unsetenv("RANKSCOPE_AGENT_NAME");
}

/* The command word before parsing: options and their values are skipped, a value-taking option at
 * the end reads nothing past argv. */
static void
first_positional(void)
{
    char *a[] = {"t", "--name", "x", "--flag", "--count=3", "-h", "ranks", "job"};
    char *b[] = {"t", "--flag", "--name"};
    char *c[] = {"t", "--config", "f", "--name"};

    T_EQ(rs_config_first_positional(&spec, 8, a), 6);
    T_EQ(rs_config_first_positional(&spec, 3, b), 3);
    T_EQ(rs_config_first_positional(&spec, 4, c), 4);
}

int
main(void)
{
    T_RUN(defaults_and_flags);
    T_RUN(env_prefix);
    T_RUN(rejects_bad_values);
    T_RUN(precedence_file_env_argv);
    T_RUN(positionals);
    T_RUN(first_positional);
    return T_DONE("common/config");
}
