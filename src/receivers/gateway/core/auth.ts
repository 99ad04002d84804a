// API keys: compared in constant time (SHA-256 of both sides, then
// timingSafeEqual against every configured key, no early exit), with an
// optional per-key token bucket of `requests_per_minute`.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GatewayHttpError } from './http-error.js';

export interface ApiKeyConfig {
  key: string;
  requestsPerMinute: number | undefined;
}

interface KeyEntry {
  readonly digest: Buffer;
  readonly bucket: TokenBucket | undefined;
}

const MS_PER_MINUTE = 60_000;
/** Presented keys whose SHA-256 is remembered; the cache starts over when full. */
const DIGEST_CACHE_SIZE = 256;

class TokenBucket {
  readonly #capacity: number;
  readonly #msPerToken: number;
  #tokens: number;
  #updatedAt: number;

  constructor(perMinute: number) {
    this.#capacity = perMinute;
    this.#msPerToken = MS_PER_MINUTE / perMinute;
    this.#tokens = perMinute;
    this.#updatedAt = Date.now();
  }

  /** 0 when a token was taken, else the ms until one is available. */
  take(now: number): number {
    this.#tokens = Math.min(this.#capacity, this.#tokens + (now - this.#updatedAt) / this.#msPerToken);
    this.#updatedAt = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - this.#tokens) * this.#msPerToken);
  }
}

/** The key in `Authorization: Bearer <key>`, the default way clients present one. */
export function bearerKey(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || !/^bearer /i.test(header)) return undefined;
  return header.slice(7).trim();
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

export class ApiKeys {
  readonly #entries: readonly KeyEntry[];
  // Hashing is what makes the comparison length-independent, not a secret:
  // remembering the digest of a presented string skips a hash per request
  // while every configured key is still compared with timingSafeEqual.
  readonly #digests = new Map<string, Buffer>();

  constructor(keys: readonly ApiKeyConfig[]) {
    this.#entries = keys.map(function toEntry(k): KeyEntry {
      return { digest: digest(k.key), bucket: k.requestsPerMinute === undefined ? undefined : new TokenBucket(k.requestsPerMinute) };
    });
  }

  /** Throws 401 for a missing or unknown key, 429 (with Retry-After) over the key's rate. */
  authorize(key: string | undefined): void {
    if (key === undefined) {
      throw new GatewayHttpError(401, 'Missing API key: send Authorization: Bearer <key>.', { code: 'missing_api_key' });
    }
    const presented = this.#digest(key);
    let match: KeyEntry | undefined;
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.digest, presented) && match === undefined) match = entry;
    }
    if (match === undefined) throw new GatewayHttpError(401, 'Incorrect API key provided.', { code: 'invalid_api_key' });
    const waitMs = match.bucket?.take(Date.now()) ?? 0;
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new GatewayHttpError(429, `Rate limit reached for this API key: retry in ${seconds}s.`, { code: 'rate_limit_exceeded', headers: { 'retry-after': String(seconds) } });
    }
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
