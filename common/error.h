/* Error codes shared by every rankscope module.
 * Fallible functions return 0 on success or a negative code: either -errno (system errors) or one
 * of the RS_E_* codes below, which live in a range no errno value reaches. rs_strerror() names
 * both.
 */
#ifndef RS_COMMON_ERROR_H
#define RS_COMMON_ERROR_H

enum {
    RS_E_BASE = -10000,
    RS_E_MALFORMED, /* input bytes do not decode (truncated, garbage, bad field) */
    RS_E_TOO_BIG,   /* input exceeds a documented size limit */
    RS_E_VERSION,   /* input carries a schema version we do not speak */
    RS_E_NOT_FOUND, /* the named thing does not exist */
    RS_E_FULL,      /* a bounded queue, buffer or store is full */
    RS_E_CONFIG,    /* bad configuration key or value */
    RS_E_CORRUPT,   /* stored data is inconsistent or foreign */
    RS_E_STORE,     /* storage engine error not covered above */
    RS_E_CLOSED,    /* the object is shutting down */
    RS_E_LOCKED,    /* held by another process (e.g. a store another server writes) */
    RS_E_LAST
};

/* Human-readable text for a code returned by any rs_* function (negative errno or RS_E_*).
 * Never returns NULL. Thread-safe. */
const char *rs_strerror(int code);

#endif
