import { describe, expect, it } from 'vitest';
import { DEFAULT_GROWTH_FACTOR, GrowthPolicy, heapFlags, LEAN, LEAN_GROWTH_FACTOR } from '../../src/core/young-generation-policy.js';

describe('young generation growth policy', () => {
  it('starts lean and stays lean while the event loop is lightly used', () => {
    const policy = new GrowthPolicy();
    expect(policy.mode).toEqual(LEAN);
    for (let i = 0; i < 30; i++) expect(policy.next(0.12)).toBeUndefined();
    expect(policy.mode).toEqual(LEAN);
  });

  it('allows young-generation growth as soon as the loop is busy, once', () => {
    const policy = new GrowthPolicy();
    expect(policy.next(0.5)).toEqual({ factor: DEFAULT_GROWTH_FACTOR, roomyOldGeneration: false });
    expect(policy.next(0.9)).toBeUndefined();
    expect(policy.mode.factor).toBe(DEFAULT_GROWTH_FACTOR);
  });

  it('gives the old generation room only after five busy checks with no quiet one since', () => {
    const policy = new GrowthPolicy();
    policy.next(0.5);
    policy.next(0.5);
    policy.next(0.1); // quiet: the busy count starts over
    for (let i = 0; i < 3; i++) expect(policy.next(0.6)).toBeUndefined();
    expect(policy.next(0.2)).toBeUndefined(); // between the thresholds: the busy count holds
    expect(policy.next(0.6)).toBeUndefined();
    expect(policy.next(0.6)).toEqual({ factor: DEFAULT_GROWTH_FACTOR, roomyOldGeneration: true });
    expect(policy.next(0.2)).toBeUndefined(); // between the thresholds it keeps the room
    expect(policy.mode.roomyOldGeneration).toBe(true);
  });

  it('goes lean again, old generation included, only after ten quiet checks in a row', () => {
    const policy = new GrowthPolicy();
    for (let i = 0; i < 5; i++) policy.next(0.6);
    for (let i = 0; i < 9; i++) expect(policy.next(0.05)).toBeUndefined();
    expect(policy.next(0.2)).toBeUndefined(); // between the thresholds: the quiet count starts over
    for (let i = 0; i < 9; i++) expect(policy.next(0.05)).toBeUndefined();
    expect(policy.next(0.05)).toEqual(LEAN);
    expect(policy.mode.factor).toBe(LEAN_GROWTH_FACTOR);
  });

  it('spells each mode as V8 flags', () => {
    expect(heapFlags(LEAN)).toBe('--semi-space-growth-factor=1 --heap-growing-percent=100');
    expect(heapFlags({ factor: DEFAULT_GROWTH_FACTOR, roomyOldGeneration: false })).toBe('--semi-space-growth-factor=2 --heap-growing-percent=100');
    expect(heapFlags({ factor: DEFAULT_GROWTH_FACTOR, roomyOldGeneration: true })).toBe('--semi-space-growth-factor=2 --heap-growing-percent=300');
  });
});
