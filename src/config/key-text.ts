// API keys and upstream credentials in the config. A presented key loses the
// whitespace around it (`Bearer  <key> `), and an upstream takes none in a
// header or signature, so a configured one with whitespace at either end (most
// often the line break that ends a secret file, read into an environment
// variable) could never work: it is a config error naming its path, not a
// 401 for every request. So is one with a character no header can carry: a
// client cannot send it (fetch refuses anything beyond Latin-1, and UTF-8
// bytes arrive as other characters) and an upstream request cannot hold it.
import { validateHeaderValue } from 'node:http';
import { z } from 'zod';

export const EDGE_WHITESPACE = 'must not begin or end with whitespace (a line break at the end of a secret file, say): remove it';
export const NOT_HEADER_TEXT = 'must hold only characters an HTTP header can carry (no control characters, nothing beyond Latin-1): no request could carry it';

function headerText(value: string): boolean {
  try {
    validateHeaderValue('key', value);
    return true;
  } catch {
    return false;
  }
}

/** A key or credential string; `min` 1 refuses an empty one as well. */
export function keyText(options: { readonly min?: number } = {}): z.ZodString {
  const text = options.min === undefined ? z.string() : z.string().min(options.min, 'must not be empty');
  // A line break at the end is named as whitespace, not also as a character a header cannot carry.
  return text.refine((value) => value.trim() === value, { error: EDGE_WHITESPACE, abort: true }).refine(headerText, { error: NOT_HEADER_TEXT });
}
