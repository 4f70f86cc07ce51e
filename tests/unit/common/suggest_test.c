/* Unit tests of common/suggest: typos, swaps, prefixes, case, and what is too far to suggest. */
#include "common/suggest.h"
#include "tests/t.h"

#include <string.h>

static const char *const commands[] = {"jobs",   "ranks",  "stragglers", "steps", "skew",
                                       "top",    "stalls", "compare",    "watch", "analyze",
                                       "import", "export", "delete"};
#define N (sizeof commands / sizeof commands[0])

static int
is(const char *got, const char *want)
{
    return got && want ? strcmp(got, want) == 0 : got == want;
}

static void
typos(void)
{
    T_CHECK(is(rs_suggest("stragglr", commands, N), "stragglers"));
    T_CHECK(is(rs_suggest("stargglers", commands, N), "stragglers")); /* two letters swapped */
    T_CHECK(is(rs_suggest("rank", commands, N), "ranks"));
    T_CHECK(is(rs_suggest("TOP", commands, N), "top"));
    T_CHECK(is(rs_suggest("anlayze", commands, N), "analyze"));
    T_CHECK(is(rs_suggest("strag", commands, N), "stragglers")); /* a prefix */
    T_CHECK(is(rs_suggest("llama-7c", (const char *const[]){"llama-7b", "gpt-3"}, 2), "llama-7b"));
}

static void
nothing_near(void)
{
    T_CHECK(is(rs_suggest("frobnicate", commands, N), NULL));
    T_CHECK(is(rs_suggest("xy", commands, N), NULL));
    T_CHECK(is(rs_suggest("", commands, N), NULL));
    T_CHECK(is(rs_suggest("top", commands, N), NULL)); /* itself */
    T_CHECK(is(rs_suggest("job", NULL, 0), NULL));
    char longword[300];
    memset(longword, 'a', sizeof longword - 1);
    longword[sizeof longword - 1] = '\0';
    T_CHECK(is(rs_suggest(longword, commands, N), NULL));
}

int
main(void)
{
    T_RUN(typos);
    T_RUN(nothing_near);
    return T_DONE("common/suggest");
}
