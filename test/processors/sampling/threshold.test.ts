import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keeps, randomnessOf, splitThreshold, thresholdFor } from '../../../src/processors/sampling/threshold.js';

const MAX_R = (1n << 56n) - 1n;

function idWithR(r: bigint): Uint8Array {
  const id = randomBytes(16);
  id.set(Buffer.from(r.toString(16).padStart(14, '0'), 'hex'), 9);
  return id;
}

describe('keep threshold', () => {
  it('keeps every trace at 100% and none at 0%', () => {
    for (const r of [0n, 1n, MAX_R, MAX_R / 2n]) {
      expect(keeps(idWithR(r), splitThreshold(thresholdFor(100)))).toBe(true);
      expect(keeps(idWithR(r), splitThreshold(thresholdFor(0)))).toBe(false);
    }
  });

  it('keeps exactly the traces with R >= (1 - p) * 2^56', () => {
    const t = thresholdFor(10);
    expect(t).toBe(((1n << 56n) * 9n + 9n) / 10n);
    expect(keeps(idWithR(t), splitThreshold(t))).toBe(true);
    expect(keeps(idWithR(t - 1n), splitThreshold(t))).toBe(false);
  });

  it('reads R from the last 7 bytes, big-endian', () => {
    expect(randomnessOf(idWithR(0x0102030405060708n & MAX_R))).toBe(0x02030405060708n);
  });

  it('treats decimal percentages exactly', () => {
    expect(thresholdFor(12.5)).toBe(((1n << 56n) * 875n) / 1000n);
    expect(thresholdFor(0.001)).toBeLessThan(1n << 56n);
  });

  it('rejects percentages outside 0..100', () => {
    expect(() => thresholdFor(-1)).toThrow(RangeError);
    expect(() => thresholdFor(100.5)).toThrow(RangeError);
    expect(() => thresholdFor(Number.NaN)).toThrow(RangeError);
  });

  it('keeps 10% +- 0.5 points of 100,000 random trace ids at 10%', () => {
    const threshold = splitThreshold(thresholdFor(10));
    let kept = 0;
    for (let i = 0; i < 100_000; i++) if (keeps(randomBytes(16), threshold)) kept++;
    expect(kept / 100_000).toBeGreaterThanOrEqual(0.095);
    expect(kept / 100_000).toBeLessThanOrEqual(0.105);
  });

  it('agrees with the BigInt definition for any id and percentage', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.double({ min: 0, max: 100, noNaN: true }), (id, p) => {
        expect(keeps(id, splitThreshold(thresholdFor(p)))).toBe(randomnessOf(id) >= thresholdFor(p));
      }),
    );
  });

  it('keeps at every q >= p a trace kept at p', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (id, a, b) => {
          const [p, q] = a <= b ? [a, b] : [b, a];
          if (keeps(id, splitThreshold(thresholdFor(p)))) expect(keeps(id, splitThreshold(thresholdFor(q)))).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
