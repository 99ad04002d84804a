// Per-key counting over fixed windows (requests_per_minute, tokens_per_minute).
// The local implementation is rate-limiter-flexible's memory backend; its Redis
// backend (RateLimiterRedis) takes the same options, so a shared implementation
// counts fleet-wide with the same semantics. Callers never know which they hold.
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface RateLimitOptions {
  /** Names the counter family (`rpm`, `tpm`); keys of different families never mix. */
  readonly name: string;
  /** Points allowed per window. */
  readonly points: number;
  readonly windowMs: number;
}

export type RateDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number };

export interface RateLimiter {
  /** Takes `points` for `key` now, or refuses when that would pass the window's allowance. */
  consume(key: string, points: number): Promise<RateDecision>;
  /** Refuses when the window's allowance is already used up; takes nothing. */
  check(key: string): Promise<RateDecision>;
  /** Counts points already spent (tokens reported by an upstream): never refuses. */
  record(key: string, points: number): Promise<void>;
}

const ALLOWED: RateDecision = { allowed: true };

/** A RateLimiter over any rate-limiter-flexible backend (memory here, Redis in redis/rate-limiter.ts). */
export class FlexibleRateLimiter implements RateLimiter {
  readonly #limiter: RateLimiterAbstract;
  readonly #points: number;

  constructor(limiter: RateLimiterAbstract, points: number) {
    this.#limiter = limiter;
    this.#points = points;
  }

  async consume(key: string, points: number): Promise<RateDecision> {
    try {
      await this.#limiter.consume(key, points);
      return ALLOWED;
    } catch (err) {
      if (err instanceof RateLimiterRes) return { allowed: false, retryAfterMs: err.msBeforeNext };
      throw err;
    }
  }

  async check(key: string): Promise<RateDecision> {
    const state = await this.#limiter.get(key);
    if (state === null || state.consumedPoints < this.#points) return ALLOWED;
    return { allowed: false, retryAfterMs: state.msBeforeNext };
  }

  async record(key: string, points: number): Promise<void> {
    if (points > 0) await this.#limiter.penalty(key, points);
  }
}

export class LocalRateLimiter extends FlexibleRateLimiter {
  constructor(options: RateLimitOptions) {
    super(new RateLimiterMemory({ keyPrefix: options.name, points: options.points, duration: options.windowMs / 1000 }), options.points);
  }
}
