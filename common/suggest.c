/* "Did you mean" (see suggest.h): optimal string alignment distance over two short rows. */
#include "common/suggest.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define MAX_WORD 255

static size_t
min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* Edits from a to b (both at most MAX_WORD bytes), case-insensitive. */
static size_t
distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t rows[3][MAX_WORD + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int ai = tolower((unsigned char)a[i - 1]), bj = tolower((unsigned char)b[j - 1]);
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ai != bj));
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && prev2[j - 2] + 1 < cur[j])
                cur[j] = prev2[j - 2] + 1;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

const char *
rs_suggest(const char *word, const char *const *candidates, size_t n)
{
    size_t lw = strlen(word), best_d = (size_t)-1;
    size_t allowed = lw <= 4 ? 1 : lw <= 8 ? 2 : 3;
    const char *best = NULL;

    if (lw == 0 || lw > MAX_WORD)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t lc = strlen(candidates[i]);
        if (lc > MAX_WORD)
            continue;
        if (strcmp(word, candidates[i]) == 0)
            return NULL;
        size_t d = distance(word, lw, candidates[i], lc);
        if (lw >= 3 && lw < lc && strncasecmp(word, candidates[i], lw) == 0 && d > allowed)
            d = allowed; /* a prefix: as near as a typo can be */
        if (d <= allowed && d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}
