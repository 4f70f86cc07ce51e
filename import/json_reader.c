/* Streaming JSON tokenizer (see json_reader.h). A byte buffer refilled through the caller's read
 * function, a grammar state plus a nesting stack, and a scratch buffer for the current string. */
#include "import/json_reader.h"

#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_BUFFER (256u << 10)

enum expect {
    EXPECT_VALUE,           /* document start, after ':' or after ',' in an array */
    EXPECT_VALUE_OR_END,    /* after '[' */
    EXPECT_KEY,             /* after ',' in an object */
    EXPECT_KEY_OR_END,      /* after '{' */
    EXPECT_COLON,           /* after a key */
    EXPECT_COMMA_OR_END,    /* after a value inside a container */
    EXPECT_END_OF_DOCUMENT, /* after the top-level value */
};

struct rs_json_reader {
    rs_json_read_fn read;
    void *arg;
    unsigned char *buf;
    size_t len, pos;
    uint64_t base; /* document offset of buf[0] */
    bool eof;
    int err;
    char message[192];
    enum expect expect;
    unsigned depth;
    unsigned char stack[RS_JSON_MAX_DEPTH]; /* '{' or '[' */
    char *str;
    size_t str_len, str_cap;
    char num[RS_JSON_MAX_NUMBER + 1];
};

int
rs_json_reader_new(rs_json_read_fn read, void *arg, rs_json_reader **out)
{
    rs_json_reader *r = calloc(1, sizeof *r);

    if (!r || !(r->buf = malloc(READ_BUFFER)) || !(r->str = malloc(4096))) {
        rs_json_reader_free(r);
        return -ENOMEM;
    }
    r->read = read;
    r->arg = arg;
    r->str_cap = 4096;
    r->expect = EXPECT_VALUE;
    *out = r;
    return 0;
}

void
rs_json_reader_free(rs_json_reader *r)
{
    if (!r)
        return;
    free(r->buf);
    free(r->str);
    free(r);
}

uint64_t
rs_json_offset(const rs_json_reader *r)
{
    return r->base + r->pos;
}

const char *
rs_json_error(const rs_json_reader *r)
{
    return r->message;
}

static int
fail(rs_json_reader *r, int code, const char *fmt, ...)
{
    char what[128];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->message, sizeof r->message, "%s at byte %llu", what,
             (unsigned long long)rs_json_offset(r));
    r->err = code;
    return code;
}

/* Makes buf[pos] readable. 1 when a byte is there, 0 at the end of input, < 0 on a read error. */
static int
fill(rs_json_reader *r)
{
    if (r->pos < r->len)
        return 1;
    if (r->eof)
        return 0;
    r->base += r->len;
    r->len = r->pos = 0;
    ssize_t n = r->read(r->arg, r->buf, READ_BUFFER);
    if (n < 0)
        return fail(r, (int)n, "read error (%s)", rs_strerror((int)n));
    if (n == 0) {
        r->eof = true;
        return 0;
    }
    r->len = (size_t)n;
    return 1;
}

/* The next byte without consuming it: 0..255, -1 at the end of input, or an error (< -1). */
static int
peek(rs_json_reader *r)
{
    int rc = fill(r);

    if (rc == 1)
        return r->buf[r->pos];
    return rc == 0 ? -1 : rc;
}

static int
skip_space(rs_json_reader *r)
{
    for (;;) {
        while (r->pos < r->len) {
            unsigned char c = r->buf[r->pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                return peek(r);
            r->pos++;
        }
        int c = peek(r);
        if (c < 0)
            return c;
    }
}

static int
str_append(rs_json_reader *r, const void *p, size_t n)
{
    if (r->str_len + n + 1 > r->str_cap) {
        size_t cap = r->str_cap;
        while (cap < r->str_len + n + 1)
            cap *= 2;
        if (cap > RS_JSON_MAX_STRING + 1) {
            if (r->str_len + n > RS_JSON_MAX_STRING)
                return fail(r, RS_E_TOO_BIG, "string longer than %u bytes", RS_JSON_MAX_STRING);
            cap = RS_JSON_MAX_STRING + 1;
        }
        char *s = realloc(r->str, cap);
        if (!s)
            return fail(r, -ENOMEM, "out of memory");
        r->str = s;
        r->str_cap = cap;
    }
    memcpy(r->str + r->str_len, p, n);
    r->str_len += n;
    return 0;
}

static int
append_utf8(rs_json_reader *r, uint32_t cp)
{
    unsigned char b[4];
    size_t n;

    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | cp >> 6);
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | cp >> 12);
        b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | cp >> 18);
        b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return str_append(r, b, n);
}

#define REPLACEMENT 0xFFFDu

/* Four hex digits of a \u escape. */
static int
read_hex4(rs_json_reader *r, uint32_t *out)
{
    uint32_t v = 0;

    for (int i = 0; i < 4; i++) {
        int c = peek(r);
        if (c < -1)
            return c;
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return fail(r, RS_E_MALFORMED, "bad \\u escape");
        v = v << 4 | d;
        r->pos++;
    }
    *out = v;
    return 0;
}

/* After a backslash. Lone or mismatched surrogates decode to U+FFFD, as invalid bytes do. */
static int
read_escape(rs_json_reader *r)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    int c = peek(r);
    uint32_t cp, lo;
    int rc;

    if (c < -1)
        return c;
    if (c < 0)
        return fail(r, RS_E_MALFORMED, "unterminated string");
    r->pos++;
    if (c != 'u') {
        const char *at = c ? strchr(from, c) : NULL;
        if (!at)
            return fail(r, RS_E_MALFORMED, "bad escape '\\%c'", c >= 0x20 && c < 0x7F ? c : '?');
        return str_append(r, &to[at - from], 1);
    }
    if ((rc = read_hex4(r, &cp)) != 0)
        return rc;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return append_utf8(r, REPLACEMENT);
    if (cp < 0xD800 || cp > 0xDBFF)
        return append_utf8(r, cp ? cp : REPLACEMENT); /* NUL would cut C strings */
    /* a high surrogate: a low one must follow as another \u escape */
    if (peek(r) != '\\')
        return append_utf8(r, REPLACEMENT);
    r->pos++;
    if (peek(r) != 'u') {
        if ((rc = append_utf8(r, REPLACEMENT)) != 0)
            return rc;
        return read_escape(r); /* the backslash starts an ordinary escape */
    }
    r->pos++;
    if ((rc = read_hex4(r, &lo)) != 0)
        return rc;
    if (lo < 0xDC00 || lo > 0xDFFF) {
        if ((rc = append_utf8(r, REPLACEMENT)) != 0)
            return rc;
        return append_utf8(r, lo >= 0xD800 && lo <= 0xDFFF ? REPLACEMENT : (lo ? lo : REPLACEMENT));
    }
    return append_utf8(r, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
}

/* A raw byte >= 0x80 at buf[pos]: copies a well-formed UTF-8 sequence, or U+FFFD for an ill-formed
 * one (consuming only its first byte), per Unicode 15 table 3-7. */
static int
read_utf8(rs_json_reader *r)
{
    unsigned char seq[4];
    unsigned c = r->buf[r->pos], lo = 0x80, hi = 0xBF;
    size_t n;

    if (c >= 0xC2 && c <= 0xDF)
        n = 1;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 2;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 3;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
        r->pos++;
        return append_utf8(r, REPLACEMENT);
    }
    seq[0] = (unsigned char)c;
    r->pos++;
    for (size_t i = 1; i <= n; i++) {
        int b = peek(r);
        if (b < -1)
            return b;
        if (b < 0 || (unsigned)b < (i == 1 ? lo : 0x80) || (unsigned)b > (i == 1 ? hi : 0xBF))
            return append_utf8(r, REPLACEMENT); /* resynchronise at this byte */
        seq[i] = (unsigned char)b;
        r->pos++;
    }
    return str_append(r, seq, n + 1);
}

/* After the opening quote; leaves the decoded string in r->str. */
static int
read_string(rs_json_reader *r)
{
    int rc;

    r->str_len = 0;
    for (;;) {
        size_t start = r->pos;
        while (r->pos < r->len) {
            unsigned char c = r->buf[r->pos];
            if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
                break;
            r->pos++;
        }
        if (r->pos > start && (rc = str_append(r, r->buf + start, r->pos - start)) != 0)
            return rc;
        int c = peek(r);
        if (c < -1)
            return c;
        if (c < 0)
            return fail(r, RS_E_MALFORMED, "unterminated string");
        if (c == '"') {
            r->pos++;
            r->str[r->str_len] = '\0';
            return 0;
        }
        if (c == '\\') {
            r->pos++;
            rc = read_escape(r);
        } else if (c < 0x20) {
            rc = fail(r, RS_E_MALFORMED, "control character in string");
        } else if (c >= 0x80) {
            rc = read_utf8(r);
        } else {
            continue; /* an ordinary byte at the start of a refilled buffer */
        }
        if (rc != 0)
            return rc;
    }
}

static bool
is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* Collects a number literal into r->num and checks its grammar. */
static int
read_number(rs_json_reader *r, size_t *len)
{
    size_t n = 0;
    int c;

    for (;;) {
        c = peek(r);
        if (c < -1)
            return c;
        if (!(is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'))
            break;
        if (n == RS_JSON_MAX_NUMBER)
            return fail(r, RS_E_TOO_BIG, "number longer than %u characters", RS_JSON_MAX_NUMBER);
        r->num[n++] = (char)c;
        r->pos++;
    }
    r->num[n] = '\0';
    /* -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
    const char *p = r->num;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (is_digit(*p))
            p++;
    else
        return fail(r, RS_E_MALFORMED, "bad number '%s'", r->num);
    if (*p == '.') {
        if (!is_digit(*++p))
            return fail(r, RS_E_MALFORMED, "bad number '%s'", r->num);
        while (is_digit(*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!is_digit(*p))
            return fail(r, RS_E_MALFORMED, "bad number '%s'", r->num);
        while (is_digit(*p))
            p++;
    }
    if (*p)
        return fail(r, RS_E_MALFORMED, "bad number '%s'", r->num);
    *len = n;
    return 0;
}

static int
read_literal(rs_json_reader *r, const char *word)
{
    for (const char *w = word; *w; w++) {
        int c = peek(r);
        if (c < -1)
            return c;
        if (c != *w)
            return fail(r, RS_E_MALFORMED, "unexpected character (expected '%s')", word);
        r->pos++;
    }
    return 0;
}

/* After a value ends: what the enclosing container expects next. */
static void
value_done(rs_json_reader *r)
{
    r->expect = r->depth == 0 ? EXPECT_END_OF_DOCUMENT : EXPECT_COMMA_OR_END;
}

static int
read_value(rs_json_reader *r, int c, struct rs_json_token *t)
{
    int rc;

    t->text = NULL;
    t->len = 0;
    switch (c) {
    case '{':
    case '[':
        if (r->depth == RS_JSON_MAX_DEPTH)
            return fail(r, RS_E_TOO_BIG, "nesting deeper than %u", RS_JSON_MAX_DEPTH);
        r->stack[r->depth++] = (unsigned char)c;
        r->pos++;
        t->type = c == '{' ? RS_JSON_OBJECT : RS_JSON_ARRAY;
        r->expect = c == '{' ? EXPECT_KEY_OR_END : EXPECT_VALUE_OR_END;
        return 0;
    case '"':
        r->pos++;
        if ((rc = read_string(r)) != 0)
            return rc;
        t->type = RS_JSON_STRING;
        t->text = r->str;
        t->len = r->str_len;
        break;
    case 't':
    case 'f':
    case 'n':
        if ((rc = read_literal(r, c == 't' ? "true" : c == 'f' ? "false" : "null")) != 0)
            return rc;
        t->type = c == 't' ? RS_JSON_TRUE : c == 'f' ? RS_JSON_FALSE : RS_JSON_NULL;
        break;
    default:
        if (c != '-' && !is_digit(c))
            return fail(r, RS_E_MALFORMED, "expected a value");
        if ((rc = read_number(r, &t->len)) != 0)
            return rc;
        t->type = RS_JSON_NUMBER;
        t->text = r->num;
        break;
    }
    value_done(r);
    return 0;
}

static int
close_container(rs_json_reader *r, int c, struct rs_json_token *t)
{
    unsigned char open = c == '}' ? '{' : '[';

    if (r->depth == 0 || r->stack[r->depth - 1] != open)
        return fail(r, RS_E_MALFORMED, "unexpected '%c'", c);
    r->depth--;
    r->pos++;
    t->type = c == '}' ? RS_JSON_OBJECT_END : RS_JSON_ARRAY_END;
    t->text = NULL;
    t->len = 0;
    value_done(r);
    return 0;
}

static int
read_key(rs_json_reader *r, int c, struct rs_json_token *t)
{
    int rc;

    if (c != '"')
        return fail(r, RS_E_MALFORMED, "expected a member name");
    r->pos++;
    if ((rc = read_string(r)) != 0)
        return rc;
    t->type = RS_JSON_KEY;
    t->text = r->str;
    t->len = r->str_len;
    r->expect = EXPECT_COLON;
    return 0;
}

int
rs_json_next(rs_json_reader *r, struct rs_json_token *t)
{
    int c;

    if (r->err)
        return r->err;
    for (;;) {
        c = skip_space(r);
        if (c < -1)
            return c;
        t->offset = rs_json_offset(r);
        if (c < 0) {
            if (r->expect != EXPECT_END_OF_DOCUMENT)
                return fail(r, RS_E_MALFORMED, "unexpected end of input");
            t->type = RS_JSON_EOF;
            t->text = NULL;
            t->len = 0;
            return 0;
        }
        switch (r->expect) {
        case EXPECT_VALUE:
            return read_value(r, c, t);
        case EXPECT_VALUE_OR_END:
            return c == ']' ? close_container(r, c, t) : read_value(r, c, t);
        case EXPECT_KEY:
            return read_key(r, c, t);
        case EXPECT_KEY_OR_END:
            return c == '}' ? close_container(r, c, t) : read_key(r, c, t);
        case EXPECT_COLON:
            if (c != ':')
                return fail(r, RS_E_MALFORMED, "expected ':'");
            r->pos++;
            r->expect = EXPECT_VALUE;
            continue;
        case EXPECT_COMMA_OR_END:
            if (c == '}' || c == ']')
                return close_container(r, c, t);
            if (c != ',')
                return fail(r, RS_E_MALFORMED, "expected ',' or '%c'",
                            r->stack[r->depth - 1] == '{' ? '}' : ']');
            r->pos++;
            r->expect = r->stack[r->depth - 1] == '{' ? EXPECT_KEY : EXPECT_VALUE;
            continue;
        case EXPECT_END_OF_DOCUMENT:
            return fail(r, RS_E_MALFORMED, "data after the end of the document");
        }
    }
}

int
rs_json_skip(rs_json_reader *r, const struct rs_json_token *tok)
{
    struct rs_json_token t;
    unsigned target;
    int rc;

    if (tok->type != RS_JSON_OBJECT && tok->type != RS_JSON_ARRAY)
        return r->err;
    target = r->depth - 1;
    do {
        if ((rc = rs_json_next(r, &t)) != 0)
            return rc;
    } while (r->depth > target);
    return 0;
}

int
rs_json_number_scaled(const struct rs_json_token *tok, unsigned decimals, int64_t *out)
{
    const char *p;
    bool neg = false;
    unsigned __int128 v = 0;
    long exp = 0;
    int round_digit = -1;

    if (tok->type != RS_JSON_NUMBER || decimals > 18)
        return RS_E_MALFORMED;
    p = tok->text;
    if (*p == '-') {
        neg = true;
        p++;
    }
    /* digits, then the exponent: the value is digits * 10^(exp - fraction digits) */
    long frac = 0;
    bool in_frac = false;
    const char *digits = p;
    for (; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.')
            in_frac = true;
        else
            frac += in_frac;
    }
    if (*p == 'e' || *p == 'E')
        exp = strtol(p + 1, NULL, 10);
    if (exp > 100 || exp < -100)
        return exp > 100 ? RS_E_TOO_BIG : (*out = 0, 0);
    long shift = (long)decimals + exp - frac; /* scale the digit string by 10^shift */
    size_t ndig = 0;
    for (const char *d = digits; *d && *d != 'e' && *d != 'E'; d++)
        ndig += *d != '.';
    long keep = (long)ndig + (shift < 0 ? shift : 0); /* digits that stay left of the point */
    long i = 0;
    for (const char *d = digits; *d && *d != 'e' && *d != 'E'; d++) {
        if (*d == '.')
            continue;
        if (i < keep) {
            v = v * 10 + (unsigned)(*d - '0');
            if (v > (unsigned __int128)INT64_MAX + 1)
                return RS_E_TOO_BIG;
        } else if (i == keep) {
            round_digit = *d - '0';
        }
        i++;
    }
    for (long s = shift; s > 0; s--) {
        v *= 10;
        if (v > (unsigned __int128)INT64_MAX + 1)
            return RS_E_TOO_BIG;
    }
    if (round_digit >= 5)
        v++;
    if (v > (unsigned __int128)INT64_MAX + (neg ? 1 : 0))
        return RS_E_TOO_BIG;
    *out = neg ? (int64_t)(0 - (uint64_t)v) : (int64_t)v;
    return 0;
}

int
rs_json_number_double(const struct rs_json_token *tok, double *out)
{
    if (tok->type != RS_JSON_NUMBER)
        return RS_E_MALFORMED;
    *out = strtod(tok->text, NULL);
    return 0;
}
