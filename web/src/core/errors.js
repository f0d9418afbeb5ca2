// errors.js — AttnlabError: one error type for everything attnlab throws in JS.
//
// .code is a stable string: for a C failure it is the ALAB_E* name without its
// prefix (ALAB_EFORMAT -> 'EFORMAT'), with the numeric code in .rc and the C
// library's detail message (alab_last_error) in .message. Failures that arise
// on the JS side have codes of their own (ETYPE, EWASM, EDISPOSED, EABORT,
// ETIMEDOUT, EINTERNAL) and rc 0;
// bad argument values reuse the C names (EINVAL, ERANGE, ENAN) so a caller
// handles "layer 99 is out of range" the same way wherever it was caught.

import { C_ERRORS } from './abi.js';

/** ALAB_E* number -> stable code (generated from c/include/attnlab.h into abi.js). */
export const C_ERROR_CODES = Object.freeze(Object.fromEntries(Object.entries(C_ERRORS).map(([code, e]) => [e.rc, code])));

/** Codes that only the JS side raises. */
export const JS_ERROR_CODES = Object.freeze({
  ETYPE: 'an argument has the wrong type',
  EWASM: 'the WebAssembly module could not be loaded or trapped',
  EDISPOSED: 'the object was used after dispose()',
  EABORT: 'a load or a long computation was cancelled through options.signal',
  ETIMEDOUT: 'a download went options.timeoutMs (default 30 s) without a byte',
  EINTERNAL: 'an unexpected JS error (a bug in attnlab): the message and .cause say what',
});

/** Every code an AttnlabError can carry, for documentation and tests. */
export const ERROR_CODES = Object.freeze([...Object.values(C_ERROR_CODES), ...Object.keys(JS_ERROR_CODES)]);

export class AttnlabError extends Error {
  /**
   * @param {string} code  stable code ('EFORMAT', 'ERANGE', 'ETYPE', ...)
   * @param {string} message  what went wrong, as specific as known
   * @param {{rc?: number, cause?: unknown}} [extra]  rc: the C return code (0 if none)
   */
  constructor(code, message, { rc = 0, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AttnlabError';
    this.code = code;
    this.rc = rc;
  }
}

/** The stable code of a C return code ('EUNKNOWN' for a number that is not one). */
export function codeOfRc(rc) {
  return C_ERROR_CODES[rc] ?? 'EUNKNOWN';
}

/**
 * An AttnlabError for a negative C return code. detail is alab_last_error();
 * name is alab_strerror(rc) (by default the message abi.js has for it), used
 * when the detail is empty.
 */
export function errorFromRc(rc, detail = '', name = C_ERRORS[codeOfRc(rc)]?.message ?? '') {
  const code = codeOfRc(rc);
  const message = detail || name || `attnlab error ${code} (${rc})`;
  return new AttnlabError(code, message, { rc });
}

/**
 * Any thrown value as an AttnlabError: itself if it is one, EWASM for a trap
 * of the WebAssembly module, EABORT for an AbortError, ETYPE for a value that
 * cannot be cloned, EINTERNAL (with the original as .cause) for anything else.
 */
export function asAttnlabError(e) {
  if (e instanceof AttnlabError) return e;
  const name = e && e.name;
  const msg = String((e && e.message) || e);
  if (typeof WebAssembly !== 'undefined' && e instanceof WebAssembly.RuntimeError)
    return new AttnlabError('EWASM', `the WebAssembly module trapped: ${msg}`, { cause: e });
  if (name === 'AbortError') return new AttnlabError('EABORT', msg, { cause: e });
  if (name === 'DataCloneError') return new AttnlabError('ETYPE', msg, { cause: e });
  return new AttnlabError('EINTERNAL', `${name || 'Error'}: ${msg}`, { cause: e });
}
