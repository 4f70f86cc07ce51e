/* rs_strerror: one place that names every error code (see error.h). */
#include "common/error.h"

#include <string.h>

const char *
rs_strerror(int code)
{
    switch (code) {
    case 0:
        return "success";
    case RS_E_MALFORMED:
        return "malformed input";
    case RS_E_TOO_BIG:
        return "input exceeds size limit";
    case RS_E_VERSION:
        return "unsupported schema version";
    case RS_E_NOT_FOUND:
        return "not found";
    case RS_E_FULL:
        return "full";
    case RS_E_CONFIG:
        return "invalid configuration";
    case RS_E_CORRUPT:
        return "stored data is corrupt or not a rankscope store";
    case RS_E_STORE:
        return "storage engine error";
    case RS_E_CLOSED:
        return "shutting down";
    case RS_E_LOCKED:
        return "in use by another process";
    default:
        break;
    }
    if (code < 0 && code > RS_E_BASE)
        return strerror(-code); /* glibc's strerror returns static text for known codes */
    return "unknown error";
}
