/* "Did you mean": the candidate closest to a mistyped word, for messages about unknown commands,
 * jobs and options. Pure function; no allocation beyond the stack. */
#ifndef RS_COMMON_SUGGEST_H
#define RS_COMMON_SUGGEST_H

#include <stddef.h>

/* The candidate nearest to `word` by edit distance (insertions, deletions, substitutions and
 * swaps of two neighbours, case-insensitive) when it is near enough to be a typo: at most 1 edit
 * for words up to 4 characters, 2 up to 8, 3 beyond; or a candidate that `word` is a prefix of
 * (at least 3 characters). Ties go to the earlier candidate. NULL when none is near, when `word`
 * is itself a candidate, or when a string is longer than 255 bytes. */
const char *rs_suggest(const char *word, const char *const *candidates, size_t n);

#endif
