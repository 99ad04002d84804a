// Generation ids: `gen_` and a ULID (26 Crockford base32 characters: 48 bits
// of ms timestamp, then 80 random bits), as Vercel's gateway uses. The
// timestamp tells a store which day's records hold the id.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const PREFIX = 'gen_';
const ID = /^gen_[0-9A-HJKMNP-TV-Z]{26}$/;
/** Random bytes drawn at once and handed out 10 per id: one syscall per 410 ids. */
const POOL_BYTES = 4100;

let pool = Buffer.alloc(0);
let poolOffset = 0;

export function newGenerationId(now: number = Date.now()): string {
  let out = PREFIX;
  let time = now;
  const timeChars: string[] = [];
  for (let i = 0; i < TIME_CHARS; i++) {
    timeChars.push(ALPHABET[time % 32] as string);
    time = Math.floor(time / 32);
  }
  out += timeChars.reverse().join('');
  if (poolOffset + 10 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  // 80 random bits as 16 characters of 5 bits each.
  let bits = 0;
  let value = 0;
  for (let i = 0; i < 10; i++) {
    value = (value << 8) | (pool[poolOffset + i] as number);
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(value >> bits) & 31] as string;
    }
    value &= (1 << bits) - 1;
  }
  poolOffset += 10;
  return out;
}

export function isGenerationId(id: string): boolean {
  return ID.test(id);
}

/** The ms timestamp a generation id was made at (ids are validated first). */
export function generationIdTime(id: string): number {
  let time = 0;
  for (let i = PREFIX.length; i < PREFIX.length + TIME_CHARS; i++) time = time * 32 + ALPHABET.indexOf(id[i] as string);
  return time;
}
