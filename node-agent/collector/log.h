/* The collector's only output: one line on stderr, prefixed "rankscope: " (never stdout: it is
 * the training job's). For conditions an operator must see once, not per record. Control
 * characters in the message are shown as \xNN (rs_utf8_escape). */
#ifndef RS_COLLECTOR_LOG_H
#define RS_COLLECTOR_LOG_H

void rs_collector_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
