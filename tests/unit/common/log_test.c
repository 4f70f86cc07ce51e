/* Unit tests of common/log: one line per message whatever the names in it hold (a newline in a
 * host name must not forge a second line, an escape sequence must not reach the terminal). */
#include "common/log.h"
#include "tests/t.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs one rs_log with `host` and returns what reached stderr. */
static const char *
logged(const char *host)
{
    static char text[4096];
    char path[] = "/tmp/rs-log-test-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    ssize_t n;

    fflush(stderr);
    dup2(fd, 2);
    rs_log(RS_LOG_WARN, "RS-TEST", "rank 3 on %s is a straggler", host);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return text;
}

static void
one_line_whatever_the_name(void)
{
    const char *t = logged("node7\n2026-11-24T00:00:00.000Z info  RS-STRAGGLER-CLEARED job x");

    T_CHECK(strchr(t, '\n') == t + strlen(t) - 1); /* the only newline ends the line */
    T_CHECK(strstr(t, "node7\\x0a2026-11-24T00:00:00.000Z info") != NULL);
    t = logged("\x1b]0;pwned\x07\x1b[2J");
    T_CHECK(strchr(t, '\x1b') == NULL && strchr(t, '\x07') == NULL);
    T_CHECK(strstr(t, "\\x1b]0;pwned\\x07\\x1b[2J is a straggler") != NULL);
    t = logged("gpu-\xc3\xa9");
    T_CHECK(strstr(t, "warn  RS-TEST rank 3 on gpu-\xc3\xa9 is a straggler\n") != NULL);
}

int
main(void)
{
    T_RUN(one_line_whatever_the_name);
    return T_DONE("common/log");
}
