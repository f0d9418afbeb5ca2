// errors.js (test helper) — how the JS tests catch a thrown or rejected error and hold it to an
// AttnlabError with a given code. One copy for every test file: errors, boundary, loading, model,
// wasm-forward, protocol, threads, circuits, evidence, heads, lineage, counterfactual, ….

import { expect } from 'vitest';
import { AttnlabError, ERROR_CODES } from '../../../web/src/core/errors.js';

/** What fn() throws; null when it returns. */
export function caught(fn) {
  try { fn(); } catch (e) { return e; }
  return null;
}

/**
 * What a promise rejects with (or what an async fn() throws or rejects with); null when it resolves.
 * Given a promise, the handler is attached at once: a rejection that comes before the await is not
 * reported as unhandled.
 */
export async function caughtAsync(p) {
  try { await (typeof p === 'function' ? p() : p); } catch (e) { return e; }
  return null;
}

/**
 * e is an AttnlabError with this code, one of ERROR_CODES, with a message that says something
 * (more than 10 characters), and, with `message` (a RegExp or a string to contain), one that matches.
 */
export function expectError(e, code, message) {
  expect(e, `expected AttnlabError ${code}, nothing was thrown`).not.toBeNull();
  expect(e, String(e && e.stack)).toBeInstanceOf(AttnlabError);
  expect(e.code, e.message).toBe(code);
  expect(ERROR_CODES).toContain(e.code);
  expect(e.message.length).toBeGreaterThan(10);
  if (message !== undefined) expect(e.message).toMatch(message);
  return e;
}

/** fn() throws the AttnlabError expectError asks for; returns it. */
export function expectThrows(fn, code, message) {
  return expectError(caught(fn), code, message);
}

/** The promise (or async fn()) rejects with the AttnlabError expectError asks for; resolves to it. */
export async function expectRejects(p, code, message) {
  return expectError(await caughtAsync(p), code, message);
}

/** The code of the AttnlabError fn() throws (anything else thrown fails the test); null when it returns. */
export function codeOf(fn) {
  try { fn(); } catch (e) { expect(e).toBeInstanceOf(AttnlabError); return e.code; }
  return null;
}

/** The code of the AttnlabError a promise rejects with (anything else fails the test); null when it resolves. */
export async function codeOfAsync(p) {
  try { await p; } catch (e) { expect(e).toBeInstanceOf(AttnlabError); return e.code; }
  return null;
}
