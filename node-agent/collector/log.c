/* stderr logging for the collector (see log.h). */
#include "node-agent/collector/log.h"

#include "common/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void
rs_collector_log(const char *fmt, ...)
{
    char msg[512], shown[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* another tool's name (CUPTI's subscriber), an environment variable's value: shown escaped */
    rs_utf8_escape(msg, strlen(msg), shown, sizeof shown);
    fprintf(stderr, "rankscope[%d]: %s\n", (int)getpid(), shown);
}
