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

/** A key's open window: the points counted in it and when it ends (ms since the epoch). */
export interface RateWindow {
  readonly key: string;
  readonly points: number;
  readonly until: number;
  /** How many of the points Redis holds (and goes on holding): the rest only this instance has. */
  readonly inRedis: number;
}

/**
 * One limiter's open windows, handed by a reload that turns cluster mode on
 * or off from the state it closes to the state it opens.
 */
export interface CarriedWindows {
  readonly options: RateLimitOptions;
  readonly windows: readonly RateWindow[];
}

/** Allowed: the points left in the window and when it ends (0 when none is open); refused: when it ends. */
export type RateDecision = { readonly allowed: true; readonly remaining: number; readonly resetMs: number } | { readonly allowed: false; readonly retryAfterMs: number };

export interface RateLimiter {
  readonly options: RateLimitOptions;
  /** Takes `points` for `key` now, or refuses when that would pass the window's allowance. */
  consume(key: string, points: number): Promise<RateDecision>;
  /** Refuses when the window's allowance is already used up; takes nothing. */
  check(key: string): Promise<RateDecision>;
  /** Counts points already spent (tokens reported by an upstream): never refuses. */
  record(key: string, points: number): Promise<void>;
}

/** The limiters' key within a state: keys of one family and allowance share a limiter. */
export function limiterId(options: RateLimitOptions): string {
  return `${options.name}:${options.points}:${options.windowMs}`;
}

/** A RateLimiter over any rate-limiter-flexible backend (memory here, Redis in redis/rate-limiter.ts). */
export class FlexibleRateLimiter implements RateLimiter {
  readonly options: RateLimitOptions;
  readonly #limiter: RateLimiterAbstract;
  /** The keys counted here (API key names, so few), whose windows a reload may carry. */
  readonly #keys = new Set<string>();

  constructor(limiter: RateLimiterAbstract, options: RateLimitOptions) {
    this.#limiter = limiter;
    this.options = options;
  }

  async consume(key: string, points: number): Promise<RateDecision> {
    this.#keys.add(key);
    try {
      const state = await this.#limiter.consume(key, points);
      this.counted(key, points, state.msBeforeNext);
      return { allowed: true, remaining: state.remainingPoints, resetMs: state.msBeforeNext };
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      // A refused request counts too (rate-limiter-flexible's backends all take its points).
      this.counted(key, points, err.msBeforeNext);
      return { allowed: false, retryAfterMs: err.msBeforeNext };
    }
  }

  async check(key: string): Promise<RateDecision> {
    const state = await this.#limiter.get(key);
    if (state === null) return { allowed: true, remaining: this.options.points, resetMs: 0 };
    if (state.consumedPoints < this.options.points) return { allowed: true, remaining: this.options.points - state.consumedPoints, resetMs: state.msBeforeNext };
    return { allowed: false, retryAfterMs: state.msBeforeNext };
  }

  async record(key: string, points: number): Promise<void> {
    this.#keys.add(key);
    if (points <= 0) return;
    const state = await this.#limiter.penalty(key, points);
    this.counted(key, points, state.msBeforeNext);
  }

  /** Points this instance counted for `key` in the window that ends in `msBeforeNext`; a backend that needs them keeps them. */
  protected counted(_key: string, _points: number, _msBeforeNext: number): void {}

  /** The open windows of the keys counted here, as the backend counts them. */
  async windows(): Promise<CarriedWindows> {
    return { options: this.options, windows: await this.windowsIn(this.#limiter) };
  }

  /**
   * The open windows of the keys counted here, as `backend` counts them
   * (asked together: a stalled Redis is waited for once); `inRedis`: how
   * many of a key's points Redis holds.
   */
  protected async windowsIn(backend: RateLimiterAbstract, inRedis: (key: string, points: number) => number = () => 0): Promise<RateWindow[]> {
    const counted = await Promise.all([...this.#keys].map(async (key) => ({ key, state: await backend.get(key) })));
    const now = Date.now();
    const windows: RateWindow[] = [];
    for (const { key, state } of counted) {
      if (state !== null && state.consumedPoints > 0 && state.msBeforeNext > 0) windows.push({ key, points: state.consumedPoints, until: now + state.msBeforeNext, inRedis: inRedis(key, state.consumedPoints) });
    }
    return windows;
  }

  /**
   * Adds windows counted elsewhere (by the state a reload closed), each ending
   * when it did there (in whole seconds, rounded up). Returns them as opened
   * here, with that end.
   */
  async carry(windows: readonly RateWindow[]): Promise<RateWindow[]> {
    const now = Date.now();
    const open = windows.filter((window) => window.until > now).map((window) => ({ ...window, seconds: Math.ceil((window.until - now) / 1000) }));
    for (const window of open) this.#keys.add(window.key);
    await Promise.all(open.map((window) => (this.added(window) > 0 ? this.#limiter.penalty(window.key, this.added(window), { customDuration: window.seconds }) : undefined)));
    return open.map(({ seconds, ...window }) => ({ ...window, until: now + seconds * 1000 }));
  }

  /** The points of a carried window this backend adds: all of them here; Redis adds only those it does not hold. */
  protected added(window: RateWindow): number {
    return window.points;
  }
}

export class LocalRateLimiter extends FlexibleRateLimiter {
  /**
   * The points Redis holds of those a reload that turned cluster mode off
   * carried in (the fleet's counts), by key, until the window they opened
   * ends: a reload that turns it on again (or a failed one's restore) adds
   * only the others, not the fleet's points a second time.
   */
  readonly #carried = new Map<string, RateWindow>();

  constructor(options: RateLimitOptions) {
    super(new RateLimiterMemory({ keyPrefix: options.name, points: options.points, duration: options.windowMs / 1000 }), options);
  }

  /** The points counted here, of which Redis holds those carried in from it (which a Redis limiter counts as its own, but does not add again). */
  override async windows(): Promise<CarriedWindows> {
    const counted = await super.windows();
    const now = Date.now();
    const own = counted.windows.map((window) => {
      const carried = this.#carried.get(window.key);
      return carried !== undefined && carried.until > now ? { ...window, inRedis: Math.min(window.points, carried.inRedis) } : window;
    });
    return { ...counted, windows: own };
  }

  override async carry(windows: readonly RateWindow[]): Promise<RateWindow[]> {
    const opened = await super.carry(windows);
    for (const window of opened) if (window.inRedis > 0) this.#carried.set(window.key, window);
    return opened;
  }
}
