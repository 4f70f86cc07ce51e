/* Numbers for people: "1,980" (thousands grouped with commas), as answers and evidence texts
 * print them. */
#ifndef RS_COMMON_GROUPED_H
#define RS_COMMON_GROUPED_H

#include <stddef.h>

/* Writes v rounded to an integer (negative: 0) with its thousands grouped into buf[len] and
 * returns buf. Thread-safe. */
const char *rs_grouped(double v, char *buf, size_t len);

#endif
