// The keep decision of OTEP 235: with R the trace id's low 56 bits (its last
// 7 bytes, big-endian) and p = percentage/100, keep iff R >= (1 - p) * 2^56.
// The threshold is computed once per rule with exact integer math, then split
// into a 32-bit high part and a 24-bit low part so the per-trace comparison
// needs no BigInt and no floating point (2^56 is beyond a double's exact range).

const TWO_POW_56 = 1n << 56n;
const LOW_BITS = 24;
const LOW_MASK = 0xff_ffff;

export interface Threshold {
  /** Bits 24..55 of the threshold; 2^32 when the threshold is 2^56 (keep nothing). */
  readonly high: number;
  /** Bits 0..23 of the threshold. */
  readonly low: number;
}

/** A decimal percentage as an exact fraction numerator / denominator. */
function exactFraction(percentage: number): { numerator: bigint; denominator: bigint } {
  // A double's shortest round-trip text (`12.5`, `1e-7`) is the decimal the user wrote.
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(String(percentage));
  if (match === null) throw new RangeError(`percentage ${percentage} is not a finite decimal`);
  const digits = `${match[1] ?? ''}${match[2] ?? ''}`;
  const exponent = Number(match[3] ?? '0') - (match[2]?.length ?? 0);
  const mantissa = BigInt(digits);
  if (exponent >= 0) return { numerator: mantissa * 10n ** BigInt(exponent), denominator: 1n };
  return { numerator: mantissa, denominator: 10n ** BigInt(-exponent) };
}

/** The smallest R that is kept: ceil((1 - percentage/100) * 2^56). */
export function thresholdFor(percentage: number): bigint {
  if (!(percentage >= 0 && percentage <= 100)) throw new RangeError(`percentage must be between 0 and 100, got ${percentage}`);
  const { numerator, denominator } = exactFraction(percentage);
  const scale = 100n * denominator;
  const dropped = scale - numerator; // (1 - p) as dropped / scale
  return (dropped * TWO_POW_56 + scale - 1n) / scale;
}

export function splitThreshold(threshold: bigint): Threshold {
  return { high: Number(threshold >> BigInt(LOW_BITS)), low: Number(threshold & BigInt(LOW_MASK)) };
}

/** R of a trace id as a BigInt (tests and diagnostics; the hot path uses keeps()). */
export function randomnessOf(traceId: Uint8Array): bigint {
  let value = 0n;
  for (let i = traceId.length - 7; i < traceId.length; i++) value = (value << 8n) | BigInt(i >= 0 ? (traceId[i] ?? 0) : 0);
  return value;
}

function byteAt(traceId: Uint8Array, fromEnd: number): number {
  return traceId[traceId.length - fromEnd] ?? 0;
}

/** True when the trace id's R reaches the threshold. Ids shorter than 7 bytes read as zero-padded. */
export function keeps(traceId: Uint8Array, threshold: Threshold): boolean {
  // bytes 9..12 of a 16-byte id are R's high 32 bits, bytes 13..15 its low 24.
  const high = ((byteAt(traceId, 7) << 24) >>> 0) + (byteAt(traceId, 6) << 16) + (byteAt(traceId, 5) << 8) + byteAt(traceId, 4);
  if (high !== threshold.high) return high > threshold.high;
  const low = (byteAt(traceId, 3) << 16) | (byteAt(traceId, 2) << 8) | byteAt(traceId, 1);
  return low >= threshold.low;
}
