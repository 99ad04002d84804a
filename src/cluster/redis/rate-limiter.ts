// Fleet-wide per-key limits: rate-limiter-flexible's Redis backend, whose
// one Lua script (SET NX + INCRBY + PTTL) counts a request in one round trip
// and cannot lose an update under concurrency. While Redis is unreachable
// or slow (the connection's command timeout), its insurance limiter, the
// same memory backend the local implementation uses, counts per instance.
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { FlexibleRateLimiter, type RateLimitOptions } from '../rate-limiter.js';
import type { RedisConnection } from './connection.js';

export function redisRateLimiter(redis: RedisConnection, options: RateLimitOptions): FlexibleRateLimiter {
  const duration = options.windowMs / 1000;
  const limiter = new RateLimiterRedis({
    storeClient: redis.client,
    keyPrefix: redis.key('rate', options.name),
    points: options.points,
    duration,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: options.name, points: options.points, duration }),
  });
  return new FlexibleRateLimiter(limiter, options.points);
}
