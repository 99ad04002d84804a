// API keys: compared in constant time (SHA-256 of both sides, then
// timingSafeEqual against every configured key, no early exit). A match
// yields what the gateway holds for that key (its name and limits).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GatewayHttpError } from './http-error.js';

interface KeyEntry<T> {
  readonly digest: Buffer;
  readonly value: T;
}

/** Presented keys whose SHA-256 is remembered; the cache starts over when full. */
const DIGEST_CACHE_SIZE = 256;

/** The key in `Authorization: Bearer <key>`, the default way clients present one. */
export function bearerKey(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || !/^bearer /i.test(header)) return undefined;
  return header.slice(7).trim();
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** Whether `presented` is `expected` (compared in constant time); never true for an unset or empty expected key. */
export function isKey(presented: string | undefined, expected: string | undefined): boolean {
  if (presented === undefined || expected === undefined || expected === '') return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

export class ApiKeys<T> {
  readonly #entries: readonly KeyEntry<T>[];
  // Hashing is what makes the comparison length-independent, not a secret:
  // remembering the digest of a presented string skips a hash per request
  // while every configured key is still compared with timingSafeEqual.
  readonly #digests = new Map<string, Buffer>();

  constructor(keys: readonly { readonly key: string; readonly value: T }[]) {
    this.#entries = keys.map((k) => ({ digest: digest(k.key), value: k.value }));
  }

  /** The matching key's value; throws 401 for a missing or unknown key. */
  authorize(key: string | undefined): T {
    if (key === undefined) {
      throw new GatewayHttpError(401, 'Missing API key: send Authorization: Bearer <key>.', { code: 'missing_api_key' });
    }
    const presented = this.#digest(key);
    let match: KeyEntry<T> | undefined;
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.digest, presented) && match === undefined) match = entry;
    }
    if (match === undefined) throw new GatewayHttpError(401, 'Incorrect API key provided.', { code: 'invalid_api_key' });
    return match.value;
  }

  #digest(key: string): Buffer {
    let known = this.#digests.get(key);
    if (known === undefined) {
      known = digest(key);
      if (this.#digests.size >= DIGEST_CACHE_SIZE) this.#digests.clear();
      this.#digests.set(key, known);
    }
    return known;
  }
}
