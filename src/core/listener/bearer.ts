// `Authorization: Bearer <key>` checked against a set of keys in constant
// time: SHA-256 of both sides (equal lengths whatever was presented), then
// timingSafeEqual against every key, with no early exit.
import { createHash, timingSafeEqual } from 'node:crypto';

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

export class BearerKeys {
  readonly #digests: readonly Buffer[];

  constructor(keys: readonly string[]) {
    this.#digests = keys.map(digest);
  }

  /** True when the header (or gRPC metadata value) carries one of the keys. */
  accepts(authorization: string | undefined): boolean {
    if (authorization === undefined || !/^bearer /i.test(authorization)) return false;
    const presented = digest(authorization.slice(7).trim());
    let match = false;
    for (const known of this.#digests) {
      if (timingSafeEqual(known, presented)) match = true;
    }
    return match;
  }
}
