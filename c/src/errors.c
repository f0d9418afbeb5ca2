/* errors.c — error codes, their names, and the per-thread last-error message. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One message buffer per thread: the C API never throws, it returns a code and
 * leaves the details here (sqlite's sqlite3_errmsg, without a handle). */
static _Thread_local char last_error[512];

const char *alab_strerror(int rc) {
    switch (rc) {
    case ALAB_OK: return "ok";
    case ALAB_EINVAL: return "invalid argument";
    case ALAB_ENOMEM: return "out of memory";
    case ALAB_EIO: return "input/output error";
    case ALAB_EJSON: return "malformed JSON";
    case ALAB_ECONFIG: return "bad model config";
    case ALAB_EFORMAT: return "malformed safetensors file";
    case ALAB_EDTYPE: return "unsupported tensor dtype";
    case ALAB_EMISSING: return "missing tensor";
    case ALAB_ESHAPE: return "tensor has the wrong shape";
    case ALAB_EVOCAB: return "bad vocabulary";
    case ALAB_EMERGES: return "bad merges file";
    case ALAB_EEMPTY: return "empty input";
    case ALAB_ETOOLONG: return "input longer than the model's context";
    case ALAB_ERANGE: return "index out of range";
    case ALAB_ENAN: return "not a finite number";
    case ALAB_ELIMIT: return "input exceeds a size limit";
    case ALAB_ESTATE: return "no result available";
    case ALAB_ETHREAD: return "a helper thread failed";
    case ALAB_EMASKED: return "soft do on a masked cell";
    default: return "unknown error";
    }
}

const char *alab_last_error(void) { return last_error; }

void alab_clear_error(void) { last_error[0] = '\0'; }

int alab_fail(int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- 16-bit floats ------------------------------------------------------ */

float alab_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign; /* +-0 */
        } else {        /* subnormal: normalise */
            int e = -1;
            do { e++; man <<= 1; } while ((man & 0x400u) == 0);
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf / nan */
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float alab_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
