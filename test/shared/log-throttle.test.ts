import { describe, expect, it } from 'vitest';
import { leftOutField, LogThrottle } from '../../src/shared/log-throttle.js';

describe('LogThrottle', () => {
  it('logs the first occurrence, leaves the rest of the interval out, and counts them on the next line', () => {
    let now = 1_000;
    const throttle = new LogThrottle(10_000, () => now);
    const logged: number[] = [];
    const occur = (): void => throttle.run((leftOut) => logged.push(leftOut));
    occur();
    for (let i = 0; i < 5; i++) occur();
    expect(logged).toEqual([0]);
    now += 9_999;
    occur();
    expect(logged).toEqual([0]);
    now += 1;
    occur();
    expect(logged).toEqual([0, 6]);
    now += 60_000;
    occur();
    expect(logged).toEqual([0, 6, 0]);
  });

  it('adds a field only when something was left out', () => {
    expect(leftOutField(0)).toEqual({});
    expect(leftOutField(3)).toEqual({ repeatedSinceLastLine: 3 });
  });
});
