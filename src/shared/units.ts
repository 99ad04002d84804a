// Durations and byte sizes as config values. Components use the zod helpers
// in their own schemas so every key that takes a duration reads the same way.
import { z } from 'zod';

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
// Go's time.ParseDuration grammar (the collector's), for Sluice's units plus
// `d`: an optional sign, then parts each with digits on at least one side of
// an optional point (`1.5s`, `5.s`, `.5s`).
const DURATION_PART = /(\d+\.?\d*|\.\d+)(ms|s|m|h|d)/y;
const DURATION_SIGN = /^[+-]/;

const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1_000,
  mb: 1_000_000,
  gb: 1_000_000_000,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};
const SIZE_PATTERN = /^(\d+(?:\.\d+)?)\s*([a-z]+)?$/i;

/**
 * `200ms`, `5s`, `1m30s`, `1h`, `30d`, `+5s`, or a number of milliseconds;
 * undefined when unreadable. A negative duration (`-5s`) is read, for the
 * schema to refuse with a message naming its rule.
 */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  const trimmed = value.trim();
  const negative = trimmed.startsWith('-');
  const text = trimmed.replace(DURATION_SIGN, '');
  if (/^\d+(\.\d+)?$/.test(text)) return withSign(negative, Number(text));
  if (text === '') return undefined;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const match = DURATION_PART.exec(text);
    if (match === null) return undefined;
    total += Number(match[1]) * (DURATION_UNITS_MS[match[2] ?? ''] ?? Number.NaN);
  }
  return Number.isFinite(total) ? withSign(negative, total) : undefined;
}

function withSign(negative: boolean, ms: number): number {
  return negative && ms !== 0 ? -ms : ms;
}

/** `4MiB`, `512KiB`, `1GiB`, `10MB`, or a byte count; undefined when unreadable. */
export function parseByteSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  const match = SIZE_PATTERN.exec(value.trim());
  if (match === null) return undefined;
  const factor = match[2] === undefined ? 1 : SIZE_UNITS[match[2].toLowerCase()];
  if (factor === undefined) return undefined;
  const bytes = Math.round(Number(match[1]) * factor);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

const DURATION_HINT = 'must be a duration like 200ms, 5s, 1m or a number of milliseconds';
const SIZE_HINT = 'must be a size like 4MiB, 512KiB or a byte count';

function requiredOr(hint: string) {
  return function message(issue: { input?: unknown }): string {
    return issue.input === undefined ? 'required' : hint;
  };
}

/** A duration in the config, negative ones included; parses to milliseconds. */
function signedDuration() {
  return z.union([z.string(), z.number()], { error: requiredOr(DURATION_HINT) }).transform(function toMs(value, ctx) {
    const ms = parseDuration(value);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: DURATION_HINT });
      return z.NEVER;
    }
    return ms;
  });
}

/** A duration in the config; parses to milliseconds. */
export function duration() {
  return signedDuration().pipe(z.number().min(0, { error: 'must not be negative' }));
}

/**
 * The longest duration a key that becomes a timer takes (ms). Node holds a
 * timer of at most 2^31 - 1 ms (about 24.8 days) and fires a longer one at
 * once; grpc-js adds up to 10% jitter to max_connection_age, so 21 days keeps
 * every such timer in range.
 */
export const MAX_TIMER_MS = 21 * 86_400_000;
const timerMax = { error: 'must be at most 21d' };

/** A duration that becomes a timer: refused above 21d, where Node would fire it at once. */
export function timerDuration() {
  return duration().pipe(z.number().max(MAX_TIMER_MS, timerMax));
}

/**
 * A timer duration that must not be 0: for a key whose timer at 0 would fire
 * before any answer could come (every delivery or upstream attempt failing at
 * once), rather than mean "no limit". A negative one is refused by the same
 * rule, `must be greater than 0`.
 */
export function positiveTimerDuration() {
  return signedDuration().pipe(z.number().positive({ error: 'must be greater than 0' }).max(MAX_TIMER_MS, timerMax));
}

/** A byte size in the config; parses to a whole number of bytes. */
export function byteSize() {
  return z.union([z.string(), z.number()], { error: requiredOr(SIZE_HINT) }).transform(function toBytes(value, ctx) {
    const bytes = parseByteSize(value);
    if (bytes === undefined) {
      ctx.addIssue({ code: 'custom', message: SIZE_HINT });
      return z.NEVER;
    }
    return bytes;
  });
}

/** A byte size that must not be 0: a limit of 0 would refuse everything. */
export function positiveByteSize() {
  return byteSize().pipe(z.number().positive({ error: 'must be greater than 0' }));
}
