import { describe, expect, it } from 'vitest';
import { DEFAULT_GROWTH_FACTOR, GrowthPolicy, heapFlags, LEAN_GROWTH_FACTOR } from '../../src/core/young-generation-policy.js';

describe('young generation growth policy', () => {
  it('starts lean and stays lean while the event loop is lightly used', () => {
    const policy = new GrowthPolicy();
    expect(policy.factor).toBe(LEAN_GROWTH_FACTOR);
    for (let i = 0; i < 30; i++) expect(policy.next(0.12)).toBeUndefined();
    expect(policy.factor).toBe(LEAN_GROWTH_FACTOR);
  });

  it('allows growth as soon as the loop is busy, once', () => {
    const policy = new GrowthPolicy();
    expect(policy.next(0.5)).toBe(DEFAULT_GROWTH_FACTOR);
    expect(policy.next(0.9)).toBeUndefined();
    expect(policy.factor).toBe(DEFAULT_GROWTH_FACTOR);
  });

  it('goes lean again only after ten quiet checks in a row', () => {
    const policy = new GrowthPolicy();
    policy.next(0.6);
    for (let i = 0; i < 9; i++) expect(policy.next(0.05)).toBeUndefined();
    expect(policy.next(0.2)).toBeUndefined(); // between the thresholds: the quiet count starts over
    for (let i = 0; i < 9; i++) expect(policy.next(0.05)).toBeUndefined();
    expect(policy.next(0.05)).toBe(LEAN_GROWTH_FACTOR);
    expect(policy.factor).toBe(LEAN_GROWTH_FACTOR);
  });

  it('gives the old generation more room only while busy', () => {
    expect(heapFlags(LEAN_GROWTH_FACTOR)).toBe('--semi-space-growth-factor=1 --heap-growing-percent=0');
    expect(heapFlags(DEFAULT_GROWTH_FACTOR)).toBe('--semi-space-growth-factor=2 --heap-growing-percent=300');
  });
});
