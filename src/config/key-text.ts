// API keys and upstream credentials in the config. A presented key loses the
// whitespace around it (`Bearer  <key> `), and an upstream takes none in a
// header or signature, so a configured one with whitespace at either end (most
// often the line break that ends a secret file, read into an environment
// variable) could never work: it is a config error naming its path, not a
// 401 for every request.
import { z } from 'zod';

export const EDGE_WHITESPACE = 'must not begin or end with whitespace (a line break at the end of a secret file, say): remove it';

/** A key or credential string; `min` 1 refuses an empty one as well. */
export function keyText(options: { readonly min?: number } = {}): z.ZodString {
  const text = options.min === undefined ? z.string() : z.string().min(options.min, 'must not be empty');
  return text.refine((value) => value.trim() === value, { error: EDGE_WHITESPACE });
}
