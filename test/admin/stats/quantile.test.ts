import { describe, expect, it } from 'vitest';
import { histogramQuantile } from '../../../src/admin/stats/quantile.js';

const buckets = (counts: Array<[string, number]>) => counts.map(([le, value]) => ({ labels: { le }, value }));

describe('histogramQuantile', () => {
  it('interpolates within the bucket the rank falls in', () => {
    // 10 in (0, 0.1], 10 more in (0.1, 0.2]: the median is the top of the first bucket, p75 half way up the second.
    const b = buckets([['0.1', 10], ['0.2', 20], ['+Inf', 20]]);
    expect(histogramQuantile(0.5, b)).toBeCloseTo(0.1);
    expect(histogramQuantile(0.75, b)).toBeCloseTo(0.15);
  });

  it('answers the highest finite bound for a rank in the +Inf bucket', () => {
    expect(histogramQuantile(0.99, buckets([['1', 1], ['+Inf', 10]]))).toBe(1);
  });

  it('answers null for an empty histogram', () => {
    expect(histogramQuantile(0.5, buckets([['1', 0], ['+Inf', 0]]))).toBeNull();
    expect(histogramQuantile(0.5, [])).toBeNull();
  });
});
