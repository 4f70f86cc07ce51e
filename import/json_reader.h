/* A streaming (pull) JSON reader: the trace importer's tokenizer. It reads through a caller's read
 * function into a fixed buffer, so memory stays bounded whatever the size of the document: the
 * read buffer, one string of at most RS_JSON_MAX_STRING bytes, and a nesting stack of
 * RS_JSON_MAX_DEPTH levels. It checks the full JSON grammar (RFC 8259) and reports the first
 * error with its byte offset; it never asserts on input.
 *
 * Usage: rs_json_next() returns tokens in document order; rs_json_skip() skips the value a token
 * starts. One reader, one thread.
 */
#ifndef RS_IMPORT_JSON_READER_H
#define RS_IMPORT_JSON_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RS_JSON_MAX_STRING (1u << 20) /* a longer string (or key) is RS_E_TOO_BIG */
#define RS_JSON_MAX_DEPTH 256u        /* deeper nesting is RS_E_TOO_BIG */
#define RS_JSON_MAX_NUMBER 64u        /* characters of one number literal */

enum rs_json_type {
    RS_JSON_EOF = 0, /* the document ended (after exactly one top-level value) */
    RS_JSON_OBJECT,  /* '{' */
    RS_JSON_OBJECT_END,
    RS_JSON_ARRAY, /* '[' */
    RS_JSON_ARRAY_END,
    RS_JSON_KEY,    /* an object member's name; text = the decoded name */
    RS_JSON_STRING, /* text = the decoded string (UTF-8; invalid input bytes become U+FFFD) */
    RS_JSON_NUMBER, /* text = the literal as written ("-1.5e3") */
    RS_JSON_TRUE,
    RS_JSON_FALSE,
    RS_JSON_NULL
};

struct rs_json_token {
    enum rs_json_type type;
    const char *text; /* KEY, STRING, NUMBER: NUL-terminated, valid until the next call */
    size_t len;
    uint64_t offset; /* byte offset of the token's first character in the document */
};

/* Fills buf[0..cap) and returns the number of bytes read, 0 at the end of input, or a negative
 * error code (reported by rs_json_next as is). */
typedef ssize_t (*rs_json_read_fn)(void *arg, void *buf, size_t cap);

typedef struct rs_json_reader rs_json_reader;

/* A reader that pulls its input through `read(arg, ...)`. -ENOMEM. */
int rs_json_reader_new(rs_json_read_fn read, void *arg, rs_json_reader **out);
void rs_json_reader_free(rs_json_reader *r);

/* The next token. Returns 0, RS_E_MALFORMED (grammar or encoding), RS_E_TOO_BIG (a limit above),
 * or the read function's error; after an error every later call returns the same error, and
 * rs_json_error() says what and where ("expected ':' at byte 1234"). */
int rs_json_next(rs_json_reader *r, struct rs_json_token *tok);

/* Skips the rest of the value that `tok` (the token just returned) starts: a whole object or
 * array for OBJECT/ARRAY, nothing for scalars. Returns as rs_json_next. */
int rs_json_skip(rs_json_reader *r, const struct rs_json_token *tok);

/* Bytes consumed so far. */
uint64_t rs_json_offset(const rs_json_reader *r);

/* The last error's description with its byte offset, or "" when none. */
const char *rs_json_error(const rs_json_reader *r);

/* A NUMBER token's value times 10^decimals, rounded half away from zero: "4408806049057.834" with
 * decimals 3 is 4408806049057834 exactly (no floating point). RS_E_MALFORMED when the token is not
 * a number, RS_E_TOO_BIG when the result does not fit in int64. */
int rs_json_number_scaled(const struct rs_json_token *tok, unsigned decimals, int64_t *out);

/* A NUMBER token as a double. RS_E_MALFORMED when the token is not a number. */
int rs_json_number_double(const struct rs_json_token *tok, double *out);

#endif
