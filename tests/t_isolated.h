/* Test helper: runs a case in a child process, for code that keeps one state per process (the
 * collector's modules, as CUPTI has them). The child's stderr goes to a file that t_said() reads
 * back, so a case can check what the code said; a failing case prints it, and what
 * t_isolated_context() returns when the test sets one (e.g. a stand-in's call log).
 * T_RUN_ISOLATED(fn) runs fn so and counts it as one test. */
#ifndef RS_TESTS_T_ISOLATED_H
#define RS_TESTS_T_ISOLATED_H

#include "tests/t.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char t_stderr_path[] = "/tmp/rs-test-stderr-XXXXXX";
static const char *(*t_isolated_context)(void);

/* What the case has written on stderr so far. */
static inline const char *
t_said(void)
{
    static char text[8192];
    int fd = open(t_stderr_path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;

    text[n > 0 ? n : 0] = '\0';
    if (fd >= 0)
        close(fd);
    return text;
}

/* Runs fn in a child; the case fails when the child's checks did or it did not exit normally. */
static inline void
t_isolated(void (*fn)(void))
{
    static int made;
    pid_t pid;
    int status = 0;

    if (!made) {
        int fd = mkstemp(t_stderr_path);
        made = fd >= 0;
        if (fd >= 0)
            close(fd);
        T_CHECK(made);
    }
    if ((pid = fork()) == 0) {
        int fd = open(t_stderr_path, O_WRONLY | O_TRUNC);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(2);
        t_current_failed = 0;
        fn();
        if (t_current_failed)
            printf("  context: %s\n  stderr:\n%s", t_isolated_context ? t_isolated_context() : "-",
                   t_said());
        fflush(NULL);
        _exit(t_current_failed ? 1 : 0);
    }
    T_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Ends a case with exit() instead of returning, so that the atexit handlers of the code under
 * test run (its exit path is what the case tests); what t_isolated prints on failure, too. */
static inline void
t_isolated_exit(void)
{
    if (t_current_failed)
        printf("  context: %s\n  stderr:\n%s", t_isolated_context ? t_isolated_context() : "-",
               t_said());
    fflush(NULL);
    exit(t_current_failed ? 1 : 0);
}

/* Removes the stderr file (at the end of main). */
static inline void
t_isolated_done(void)
{
    unlink(t_stderr_path);
}

#define T_RUN_ISOLATED(fn) T_RUN_CALL(#fn, t_isolated(fn))

#endif
