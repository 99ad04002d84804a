// When may an OpenAI-compatible upstream get the client's own JSON text with
// only `model` replaced, instead of the parsed request serialized again?
// When that text says exactly what the parsed request says:
// - the fast parser took it (no transforms, nothing the gateway consumes or
//   maps), and no top-level null was dropped (the caller checks both);
// - no key appears twice at any depth, written plainly or escaped: JSON.parse
//   keeps the last copy, an upstream may keep another, so the text holds as
//   many keys as the parsed value;
// - no number has an exponent (1e400 parses to Infinity, which the
//   serialized request would send as null);
// - `model` is the first key, written plainly, its value as JSON.stringify
//   writes it.
// Anything else takes the usual path.
import type { RawRequestText } from './openai-types.js';

const MODEL_KEY = '"model"';
const BACKSLASH = 0x5c;
const COLON = 0x3a;

function skipSpace(text: string, at: number): number {
  let i = at;
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  return i;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Keys of every object in a valid JSON text, or -1 if a number in it has an exponent. */
function keysInText(text: string): number {
  let keys = 0;
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('"', i);
    const outside = open === -1 ? text.length : open;
    for (let k = i; k < outside; k++) {
      const c = text.charCodeAt(k) | 0x20; // e or E
      if (c === 0x65 && isDigit(text.charCodeAt(k - 1))) return -1;
    }
    if (open === -1) break;
    let close = text.indexOf('"', open + 1);
    for (;;) {
      if (close === -1) return -1; // not JSON: cannot happen after JSON.parse
      let backslashes = 0;
      while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) break;
      close = text.indexOf('"', close + 1);
    }
    i = skipSpace(text, close + 1);
    if (text.charCodeAt(i) === COLON) keys++;
  }
  return keys;
}

function keysInValue(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let keys = 0;
  if (Array.isArray(value)) {
    for (const item of value) keys += keysInValue(item);
    return keys;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) keys += 1 + keysInValue(record[key]);
  return keys;
}

/**
 * The raw text and where its `model` value ends, or undefined when the text
 * cannot stand for the request. `parsed` is what JSON.parse made of `text`.
 */
export function rawRequestText(text: string, parsed: unknown, model: string): RawRequestText | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return undefined; // {
  i = skipSpace(text, i + 1);
  if (!text.startsWith(MODEL_KEY, i)) return undefined;
  i = skipSpace(text, i + MODEL_KEY.length);
  if (text.charCodeAt(i) !== COLON) return undefined;
  i = skipSpace(text, i + 1);
  const value = JSON.stringify(model);
  if (!text.startsWith(value, i)) return undefined;
  const keys = keysInText(text);
  if (keys === -1 || keys !== keysInValue(parsed)) return undefined;
  return { text, afterModel: i + value.length };
}

/** The text with its `model` value replaced by `model`. */
export function withModel(raw: RawRequestText, model: string): string {
  return `{"model":${JSON.stringify(model)}${raw.text.slice(raw.afterModel)}`;
}
