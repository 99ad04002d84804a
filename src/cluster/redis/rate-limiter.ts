// Fleet-wide per-key limits: rate-limiter-flexible's Redis backend, whose
// one Lua script (SET NX + INCRBY + PTTL) counts a request in one round trip
// and cannot lose an update under concurrency. While Redis is unreachable
// or slow (the connection's command timeout), its insurance limiter, the
// same memory backend the local implementation uses, counts per instance.
// When Redis is back, the points this instance counted alone in windows that
// have not ended yet are added to the fleet's counters, so a key that spent
// its allowance during the outage does not get a second one.
import { RateLimiterMemory, RateLimiterRedis, type IRateLimiterOptions, type RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from 'pino';
import { errorMessage } from '../../shared/errors.js';
import { FlexibleRateLimiter, type RateLimitOptions } from '../rate-limiter.js';
import type { RedisConnection } from './connection.js';

interface Missed {
  points: number;
  /** When the local window these points were counted in ends (ms since the epoch). */
  until: number;
}

/** The insurance limiter: counts like the memory backend, and notes what it counted for the fleet's counters. */
class OutageLimiter extends RateLimiterMemory {
  readonly missed = new Map<string, Missed>();

  constructor(options: IRateLimiterOptions) {
    super(options);
  }

  override consume(key: string | number, points = 1, options: Record<string, unknown> = {}): Promise<RateLimiterRes> {
    // The Redis script counts a refused request too; so is it noted here.
    return super.consume(key, points, options).then(
      (res) => this.#note(key, points, res),
      (res: unknown) => {
        throw this.#note(key, points, res as RateLimiterRes);
      },
    );
  }

  override penalty(key: string | number, points = 1, options: Record<string, unknown> = {}): Promise<RateLimiterRes> {
    return super.penalty(key, points, options).then((res) => this.#note(key, points, res));
  }

  #note(key: string | number, points: number, res: RateLimiterRes): RateLimiterRes {
    const name = String(key);
    const now = Date.now();
    const missed = this.missed.get(name) ?? { points: 0, until: 0 };
    if (now >= missed.until) missed.points = 0; // the window they were counted in has ended
    missed.points += points;
    missed.until = Math.max(missed.until, now + res.msBeforeNext);
    this.missed.set(name, missed);
    return res;
  }
}

export function redisRateLimiter(redis: RedisConnection, options: RateLimitOptions, logger: Logger): FlexibleRateLimiter {
  const duration = options.windowMs / 1000;
  const insurance = new OutageLimiter({ keyPrefix: options.name, points: options.points, duration });
  const limiter = new RateLimiterRedis({
    storeClient: redis.client,
    keyPrefix: redis.key('rate', options.name),
    points: options.points,
    duration,
    rejectIfRedisNotReady: true,
    insuranceLimiter: insurance,
  });
  redis.onUp(function shareMissedPoints() {
    const now = Date.now();
    const missed = [...insurance.missed].filter(([, m]) => m.until > now);
    insurance.missed.clear();
    for (const [key, m] of missed) {
      // Should Redis fail again meanwhile, penalty() falls back to the insurance limiter, which notes the points again.
      limiter.penalty(key, m.points).catch((err: unknown) => logger.warn({ limit: options.name, err: errorMessage(err) }, 'sharing rate-limit points counted during the Redis outage failed'));
    }
  });
  return new FlexibleRateLimiter(limiter, options.points);
}
