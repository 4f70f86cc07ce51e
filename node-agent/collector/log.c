/* stderr logging for the collector (see log.h). */
#include "node-agent/collector/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void
rs_collector_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n = snprintf(line, sizeof line, "rankscope[%d]: ", (int)getpid());

    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}
