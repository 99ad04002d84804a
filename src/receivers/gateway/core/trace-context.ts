// W3C Trace Context `traceparent`, parsed strictly: a malformed header starts
// a new trace instead of continuing a bogus one.
import { randomFillSync } from 'node:crypto';

export interface ParentContext {
  traceId: string;
  spanId: string;
  flags: number;
  traceState: string | undefined;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

export function parseTraceparent(header: string | undefined, tracestate: string | undefined): ParentContext | undefined {
  if (header === undefined) return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === undefined || traceId === undefined || spanId === undefined || flags === undefined) return undefined;
  // Version ff is invalid; version 00 has exactly four fields, later versions may add more.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) & 0xff, traceState: tracestate === undefined || tracestate === '' ? undefined : tracestate };
}

/**
 * Whether W3C Trace Context is read from clients and sent upstream.
 * OpenTelemetry's OTEL_PROPAGATORS chooses it: unset or empty means its
 * default (`tracecontext,baggage`); a list without `tracecontext` (`none`,
 * say) turns it off. Other propagators in the list are not implemented here.
 */
export function traceContextPropagated(env: NodeJS.ProcessEnv = process.env): boolean {
  const list = env['OTEL_PROPAGATORS']?.trim() ?? '';
  if (list === '') return true;
  return list.split(',').some((name) => name.trim().toLowerCase() === 'tracecontext');
}

/** The `traceparent` (version 00) that makes a request a child of span `spanId`. */
export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}

// Ids come from a pool refilled by randomFillSync: one syscall per 256 span ids.
const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOffset = POOL_SIZE;

function randomHex(bytes: number): string {
  if (poolOffset + bytes > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

export function newTraceId(): string {
  const id = randomHex(16);
  return id === ZERO_TRACE ? newTraceId() : id;
}

export function newSpanId(): string {
  const id = randomHex(8);
  return id === ZERO_SPAN ? newSpanId() : id;
}

const EPOCH_BASE_NS = BigInt(Date.now()) * 1_000_000n;
const HR_BASE = process.hrtime.bigint();

/** Nanoseconds since the Unix epoch, monotonic within the process. */
export function nowNanos(): bigint {
  return EPOCH_BASE_NS + (process.hrtime.bigint() - HR_BASE);
}
