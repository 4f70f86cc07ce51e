/* Unit tests of the streaming JSON reader: token sequences, the same tokens whatever the read
 * sizes (buffer boundaries inside every kind of token), grammar errors with byte offsets, string
 * decoding (escapes, surrogates, invalid UTF-8), limits, and exact scaled numbers. */
#include "import/json_reader.h"

#include "common/error.h"
#include "tests/t.h"

#include <stdlib.h>
#include <string.h>

struct mem {
    const char *s;
    size_t len, pos, chunk; /* bytes per read: 1 makes every token straddle reads */
};

static ssize_t
mem_read(void *arg, void *buf, size_t cap)
{
    struct mem *m = arg;
    size_t n = m->len - m->pos;

    if (n > cap)
        n = cap;
    if (m->chunk && n > m->chunk)
        n = m->chunk;
    memcpy(buf, m->s + m->pos, n);
    m->pos += n;
    return (ssize_t)n;
}

/* Tokenizes `doc` and writes a compact rendering of the tokens ("{ k:a s:x n:1 }") into out.
 * Returns the reader's final code; *err_at gets the error offset message. */
static int
render(const char *doc, size_t len, size_t chunk, char *out, size_t cap, char *err, size_t err_len)
{
    struct mem m = {doc, len, 0, chunk};
    struct rs_json_token t;
    rs_json_reader *r;
    size_t n = 0;
    int rc;

    out[0] = '\0';
    if (rs_json_reader_new(mem_read, &m, &r) != 0)
        return -1;
    while ((rc = rs_json_next(r, &t)) == 0 && t.type != RS_JSON_EOF) {
        const char *tag = "";
        switch (t.type) {
        case RS_JSON_OBJECT:
            tag = "{";
            break;
        case RS_JSON_OBJECT_END:
            tag = "}";
            break;
        case RS_JSON_ARRAY:
            tag = "[";
            break;
        case RS_JSON_ARRAY_END:
            tag = "]";
            break;
        case RS_JSON_KEY:
            tag = "k:";
            break;
        case RS_JSON_STRING:
            tag = "s:";
            break;
        case RS_JSON_NUMBER:
            tag = "n:";
            break;
        case RS_JSON_TRUE:
            tag = "true";
            break;
        case RS_JSON_FALSE:
            tag = "false";
            break;
        case RS_JSON_NULL:
            tag = "null";
            break;
        case RS_JSON_EOF:
            break;
        }
        n += (size_t)snprintf(out + n, cap - n, "%s%s%s", n ? " " : "", tag, t.text ? t.text : "");
        if (n >= cap)
            break;
    }
    if (err)
        snprintf(err, err_len, "%s", rs_json_error(r));
    rs_json_reader_free(r);
    return rc;
}

static void
tokens(void)
{
    const char *doc = " {\"a\": [1, -2.5e3, true, false, null, \"x\\ty\"], \"b\" : {}, \"c\":[]}\n";
    const char *want = "{ k:a [ n:1 n:-2.5e3 true false null s:x\ty ] k:b { } k:c [ ] }";
    char out[512];

    for (size_t chunk = 0; chunk <= 7; chunk++) {
        T_EQ(render(doc, strlen(doc), chunk, out, sizeof out, NULL, 0), 0);
        T_CHECK(strcmp(out, want) == 0);
    }
    T_EQ(render("42", 2, 0, out, sizeof out, NULL, 0), 0);
    T_CHECK(strcmp(out, "n:42") == 0);
    T_EQ(render("\"top\"", 5, 1, out, sizeof out, NULL, 0), 0);
    T_CHECK(strcmp(out, "s:top") == 0);
}

/* A long document read in every chunk size from 1 to 9 bytes gives the same tokens as one read. */
static void
boundaries(void)
{
    char doc[8192], whole[16384], pieces[16384];
    size_t n = 0;

    n += (size_t)snprintf(doc + n, sizeof doc - n, "[");
    for (int i = 0; i < 60; i++)
        n += (size_t)snprintf(doc + n, sizeof doc - n,
                              "%s{\"name\":\"k\\u00e9rnel<%d>\xe2\x82\xac\",\"ts\":%d.125,"
                              "\"ok\":true,\"v\":null,\"a\":[false,-0.5e-2]}",
                              i ? "," : "", i, 1000 + i);
    n += (size_t)snprintf(doc + n, sizeof doc - n, "]");
    T_EQ(render(doc, n, 0, whole, sizeof whole, NULL, 0), 0);
    for (size_t chunk = 1; chunk <= 9; chunk++) {
        T_EQ(render(doc, n, chunk, pieces, sizeof pieces, NULL, 0), 0);
        T_CHECK(strcmp(whole, pieces) == 0);
    }
    T_CHECK(strstr(whole, "s:k\xc3\xa9rnel<59>\xe2\x82\xac") != NULL);
}

static void
expect_error(const char *doc, int code, const char *where)
{
    char out[512], err[256];

    for (size_t chunk = 0; chunk <= 1; chunk++) {
        int rc = render(doc, strlen(doc), chunk, out, sizeof out, err, sizeof err);
        T_EQ(rc, code);
        if (where && !strstr(err, where))
            fprintf(stderr, "  error for %s was '%s', wanted '%s'\n", doc, err, where);
        T_CHECK(!where || strstr(err, where) != NULL);
    }
}

static void
errors(void)
{
    expect_error("", RS_E_MALFORMED, "unexpected end of input at byte 0");
    expect_error("{", RS_E_MALFORMED, "unexpected end of input at byte 1");
    expect_error("{\"a\" 1}", RS_E_MALFORMED, "expected ':' at byte 5");
    expect_error("{\"a\":1,}", RS_E_MALFORMED, "expected a member name at byte 7");
    expect_error("[1,]", RS_E_MALFORMED, "expected a value at byte 3");
    expect_error("[1 2]", RS_E_MALFORMED, "expected ',' or ']' at byte 3");
    expect_error("[1}", RS_E_MALFORMED, "unexpected '}' at byte 2");
    expect_error("{1:2}", RS_E_MALFORMED, "expected a member name at byte 1");
    expect_error("[01]", RS_E_MALFORMED, "bad number '01'");
    expect_error("[1.]", RS_E_MALFORMED, "bad number");
    expect_error("[-]", RS_E_MALFORMED, "bad number");
    expect_error("[1e]", RS_E_MALFORMED, "bad number");
    expect_error("[tru]", RS_E_MALFORMED, "expected 'true'");
    expect_error("[\"a\nb\"]", RS_E_MALFORMED, "control character in string at byte 3");
    expect_error("[\"a\\x\"]", RS_E_MALFORMED, "bad escape");
    expect_error("[\"\\u12G4\"]", RS_E_MALFORMED, "bad \\u escape");
    expect_error("[\"abc", RS_E_MALFORMED, "unterminated string");
    expect_error("{} {}", RS_E_MALFORMED, "data after the end of the document at byte 3");
    expect_error("]", RS_E_MALFORMED, "expected a value");
    /* nesting limit */
    char deep[RS_JSON_MAX_DEPTH + 2];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    expect_error(deep, RS_E_TOO_BIG, "nesting deeper than");
    char longnum[RS_JSON_MAX_NUMBER + 8];
    memset(longnum, '1', sizeof longnum - 1);
    longnum[0] = '[';
    longnum[sizeof longnum - 1] = '\0';
    expect_error(longnum, RS_E_TOO_BIG, "number longer than");
}

static void
long_string(void)
{
    size_t n = RS_JSON_MAX_STRING + 16;
    char *doc = malloc(n + 4);
    char out[64];

    T_CHECK(doc != NULL);
    if (!doc)
        return;
    doc[0] = '"';
    memset(doc + 1, 'a', n);
    doc[n + 1] = '"';
    doc[n + 2] = '\0';
    T_EQ(render(doc, n + 2, 0, out, sizeof out, NULL, 0), RS_E_TOO_BIG);
    free(doc);
}

static void
strings(void)
{
    char out[256];

    /* escapes, a surrogate pair (U+1F600), lone surrogates and invalid bytes -> U+FFFD, \u0000 */
    const char *doc =
        "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\ud83d\\ude00\", \"\\ud83dx\", \"\\ude00\", "
        "\"a\xff"
        "b\", \"\xe2\x82\", \"\\u0000\", \"\\u00e9\"]";
    T_EQ(render(doc, strlen(doc), 1, out, sizeof out, NULL, 0), 0);
    T_CHECK(strcmp(out, "[ s:\"\\/\b\f\n\r\t s:\xf0\x9f\x98\x80 s:\xef\xbf\xbdx s:\xef\xbf\xbd "
                        "s:a\xef\xbf\xbd"
                        "b s:\xef\xbf\xbd s:\xef\xbf\xbd s:\xc3\xa9 ]") == 0);
}

static void
skip(void)
{
    const char *doc = "{\"skip\": {\"a\": [1, {\"b\": [2, 3]}], \"c\": \"d\"}, \"keep\": 7}";
    struct mem m = {doc, strlen(doc), 0, 3};
    struct rs_json_token t;
    rs_json_reader *r;

    T_OK(rs_json_reader_new(mem_read, &m, &r));
    T_OK(rs_json_next(r, &t));
    T_EQ(t.type, RS_JSON_OBJECT);
    T_OK(rs_json_next(r, &t));
    T_EQ(t.type, RS_JSON_KEY);
    T_OK(rs_json_next(r, &t));
    T_EQ(t.type, RS_JSON_OBJECT);
    T_EQ(t.offset, 9);
    T_OK(rs_json_skip(r, &t));
    T_OK(rs_json_next(r, &t));
    T_CHECK(t.type == RS_JSON_KEY && strcmp(t.text, "keep") == 0);
    T_OK(rs_json_next(r, &t));
    T_OK(rs_json_skip(r, &t)); /* a scalar: nothing to skip */
    T_OK(rs_json_next(r, &t));
    T_EQ(t.type, RS_JSON_OBJECT_END);
    T_OK(rs_json_next(r, &t));
    T_EQ(t.type, RS_JSON_EOF);
    T_EQ(rs_json_offset(r), strlen(doc));
    rs_json_reader_free(r);
}

static int64_t
scaled(const char *text, unsigned decimals, int *rc)
{
    struct rs_json_token t = {RS_JSON_NUMBER, text, strlen(text), 0};
    int64_t v = -999;

    *rc = rs_json_number_scaled(&t, decimals, &v);
    return v;
}

static void
numbers(void)
{
    int rc;

    T_EQ(scaled("4408806049057.834", 3, &rc), 4408806049057834ll);
    T_EQ(rc, 0);
    /* absolute epoch µs -> ns: beyond double precision, exact here */
    T_EQ(scaled("1790857026123456.789", 3, &rc), 1790857026123456789ll);
    T_EQ(scaled("1.5", 0, &rc), 2);
    T_EQ(scaled("-1.5", 0, &rc), -2);
    T_EQ(scaled("0.0004", 3, &rc), 0);
    T_EQ(scaled("0.0005", 3, &rc), 1);
    T_EQ(scaled("12", 3, &rc), 12000);
    T_EQ(scaled("1.25e2", 0, &rc), 125);
    T_EQ(scaled("125e-2", 1, &rc), 13);
    T_EQ(scaled("1e-300", 3, &rc), 0);
    T_EQ(rc, 0);
    T_EQ(scaled("-0", 3, &rc), 0);
    T_EQ(scaled("9223372036854775807", 0, &rc), INT64_MAX);
    T_EQ(rc, 0);
    scaled("9223372036854775808", 0, &rc);
    T_EQ(rc, RS_E_TOO_BIG);
    scaled("1e300", 0, &rc);
    T_EQ(rc, RS_E_TOO_BIG);
    scaled("9223372036854775.808", 3, &rc);
    T_EQ(rc, RS_E_TOO_BIG);
    struct rs_json_token s = {RS_JSON_STRING, "1", 1, 0};
    int64_t v;
    T_EQ(rs_json_number_scaled(&s, 0, &v), RS_E_MALFORMED);
    double d;
    struct rs_json_token n = {RS_JSON_NUMBER, "0.25", 4, 0};
    T_OK(rs_json_number_double(&n, &d));
    T_CHECK(d == 0.25);
}

static ssize_t
failing_read(void *arg, void *buf, size_t cap)
{
    return -5; /* -EIO */
}

static void
read_error(void)
{
    struct rs_json_token t;
    rs_json_reader *r;

    T_OK(rs_json_reader_new(failing_read, NULL, &r));
    T_EQ(rs_json_next(r, &t), -5);
    T_EQ(rs_json_next(r, &t), -5); /* sticky */
    T_CHECK(strstr(rs_json_error(r), "read error") != NULL);
    rs_json_reader_free(r);
}

int
main(void)
{
    T_RUN(tokens);
    T_RUN(boundaries);
    T_RUN(errors);
    T_RUN(long_string);
    T_RUN(strings);
    T_RUN(skip);
    T_RUN(numbers);
    T_RUN(read_error);
    return T_DONE("import/json_reader");
}
