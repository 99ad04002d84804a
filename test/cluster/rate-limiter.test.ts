import { describe, expect, it } from 'vitest';
import { LocalRateLimiter } from '../../src/cluster/rate-limiter.js';

describe('LocalRateLimiter', () => {
  it('lets exactly `points` of many concurrent requests through in a window', async () => {
    const limiter = new LocalRateLimiter({ name: 'rpm', points: 30, windowMs: 60_000 });
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.consume('team-a', 1)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(30);
    const refused = decisions.find((d) => !d.allowed);
    expect(refused !== undefined && !refused.allowed && refused.retryAfterMs > 0 && refused.retryAfterMs <= 60_000).toBe(true);
    expect((await limiter.consume('team-b', 1)).allowed).toBe(true);
  });

  it('counts recorded points without refusing, and checks refuse once they reach the allowance', async () => {
    const limiter = new LocalRateLimiter({ name: 'tpm', points: 100, windowMs: 60_000 });
    expect((await limiter.check('k')).allowed).toBe(true);
    await limiter.record('k', 60);
    expect((await limiter.check('k')).allowed).toBe(true);
    await limiter.record('k', 60);
    expect((await limiter.check('k')).allowed).toBe(false);
  });
});
