/* Logging for rankscope binaries (library folders never log: they return codes).
 * Every message carries a stable id ("RS-INGEST-DECODE") that operators can grep and alert on.
 * Output goes to stderr as one line: "<iso time> <level> <id> <message>", with control characters
 * and bytes that are not UTF-8 in the message shown as \xNN (rs_utf8_escape): a name from the wire
 * cannot forge a line or drive the terminal.
 */
#ifndef RS_COMMON_LOG_H
#define RS_COMMON_LOG_H

#include <stdint.h>

enum rs_log_level { RS_LOG_ERROR = 0, RS_LOG_WARN, RS_LOG_INFO, RS_LOG_DEBUG };

extern int rs_log_threshold; /* messages above it are skipped before their arguments run */

/* Sets the threshold from a name ("error", "warn", "info", "debug"). Returns 0 or RS_E_CONFIG. */
int rs_log_set_level(const char *name);

/* Writes one line. Use the rs_log() macro instead, so disabled levels cost one comparison. */
void rs__log_write(int level, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define rs_log(level, id, ...)                                                                     \
    do {                                                                                           \
        if ((level) <= rs_log_threshold)                                                           \
            rs__log_write((level), (id), __VA_ARGS__);                                             \
    } while (0)

/* Rate-limited variant for failures that may repeat at line rate: at most one line per
 * `interval_s` per call site; the line says how many were suppressed. Thread-safe enough for
 * logging (a lost count under a race is acceptable). */
#define rs_log_limited(interval_s, level, id, fmt, ...)                                            \
    do {                                                                                           \
        static uint64_t rs__last_ns_, rs__suppressed_;                                             \
        if ((level) <= rs_log_threshold) {                                                         \
            if (rs__log_allow(&rs__last_ns_, (interval_s)))                                        \
                rs__log_write((level), (id), fmt " (%llu similar suppressed)", ##__VA_ARGS__,      \
                              (unsigned long long)rs__log_take(&rs__suppressed_));                 \
            else                                                                                   \
                rs__suppressed_++;                                                                 \
        }                                                                                          \
    } while (0)

int rs__log_allow(uint64_t *last_ns, unsigned interval_s);
uint64_t rs__log_take(uint64_t *counter);

#endif
