// Fleet-wide per-key limits: rate-limiter-flexible's Redis backend, whose
// one Lua script (SET NX + INCRBY + PTTL) counts a request in one round trip
// and cannot lose an update under concurrency. While Redis is unreachable
// or slow (the connection's command timeout), its insurance limiter, the
// same memory backend the local implementation uses, counts per instance.
// What the instance counted alone in windows that are still open is then
// added to the fleet's counters: once Redis is back, and a second after a
// fallback while the connection stayed up (a slow command), again each
// second while Redis refuses them. A command that
// timed out here but ran in Redis is counted in both places. A share that
// times out on a live connection is not sent again: it runs once Redis
// catches up, and each retry would add the points once more. Closed (its
// state closes, the connection may stay), it shares what it still holds once
// more and then listens for reconnections no longer. Its windows (for a reload
// that turns cluster mode off) are the fleet's counts, read after it shares
// (while Redis does not answer, its own: every point it counted in the key's
// open window, through Redis or alone, of which Redis has all but the missed).
import { ReplyError } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type IRateLimiterOptions, type RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from 'pino';
import { errorMessage } from '../../shared/errors.js';
import { FlexibleRateLimiter, type CarriedWindows, type RateLimitOptions, type RateWindow } from '../rate-limiter.js';
import type { RedisConnection } from './connection.js';

const SHARE_AFTER_FALLBACK_MS = 1_000;

interface Missed {
  points: number;
  /** When the local window these points were counted in ends (ms since the epoch). */
  until: number;
}

/** The insurance limiter: counts like the memory backend, and notes what it counted for the fleet's counters. */
class OutageLimiter extends RateLimiterMemory {
  readonly missed = new Map<string, Missed>();
  readonly #onMissed: () => void;

  constructor(options: IRateLimiterOptions, onMissed: () => void) {
    super(options);
    this.#onMissed = onMissed;
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

  /** The points of `key` counted here that Redis has not been given yet. */
  missedPoints(key: string): number {
    const missed = this.missed.get(key);
    return missed !== undefined && missed.until > Date.now() ? missed.points : 0;
  }

  /** Notes points counted here until `until`; those of a window that has ended are dropped. */
  add(key: string, points: number, until: number): void {
    const now = Date.now();
    const missed = this.missed.get(key) ?? { points: 0, until: 0 };
    if (now >= missed.until) missed.points = 0;
    missed.points += points;
    missed.until = Math.max(missed.until, until);
    this.missed.set(key, missed);
  }

  #note(key: string | number, points: number, res: RateLimiterRes): RateLimiterRes {
    this.add(String(key), points, Date.now() + res.msBeforeNext);
    this.#onMissed();
    return res;
  }
}

interface RedisBackends {
  /** Redis, and the insurance while Redis does not answer. */
  readonly limiter: RateLimiterRedis;
  /** Redis alone. */
  readonly direct: RateLimiterRedis;
  /** What this instance counted while Redis did not answer. */
  readonly insurance: OutageLimiter;
}

/** A RateLimiter over Redis that stops sharing when closed. */
export class RedisRateLimiter extends FlexibleRateLimiter {
  readonly #backends: RedisBackends;
  readonly #share: () => Promise<void>;
  readonly #close: () => Promise<void>;
  /** Every point this instance counted per key, through Redis or alone, until its window ends: its own count when Redis does not answer. */
  readonly #own = new Map<string, Missed>();

  constructor(backends: RedisBackends, options: RateLimitOptions, share: () => Promise<void>, close: () => Promise<void>) {
    super(backends.limiter, options);
    this.#backends = backends;
    this.#share = share;
    this.#close = close;
  }

  /**
   * The fleet's counts once this instance's missed points are in them; while
   * Redis does not answer, this instance's own, of which Redis holds all but
   * those it missed.
   */
  override async windows(): Promise<CarriedWindows> {
    await this.#share();
    const { direct, insurance } = this.#backends;
    try {
      return { options: this.options, windows: await this.windowsIn(direct, (_key, points) => points) };
    } catch {
      const now = Date.now();
      const windows: RateWindow[] = [];
      for (const [key, own] of this.#own) {
        if (own.until > now) windows.push({ key, points: own.points, until: own.until, inRedis: Math.max(0, own.points - insurance.missedPoints(key)) });
      }
      // The points Redis missed go with the windows (their next state carries them): sharing them too, at a reconnection before the close, would count them twice.
      insurance.missed.clear();
      return { options: this.options, windows };
    }
  }

  protected override counted(key: string, points: number, msBeforeNext: number): void {
    // As the missed points are kept: a window that has ended starts again, and points of Redis's window and of one counted alone end with the later.
    const now = Date.now();
    const own = this.#own.get(key);
    if (own === undefined || own.until <= now) this.#own.set(key, { points, until: now + msBeforeNext });
    else {
      own.points += points;
      own.until = Math.max(own.until, now + msBeforeNext);
    }
  }

  /** Redis holds a carried window's points that came from it already. */
  protected override added(window: RateWindow): number {
    return window.points - window.inRedis;
  }

  /** The windows a reload carried in, those Redis held already too, are this instance's counts: a reload that turns cluster mode off while Redis does not answer keeps them. */
  override async carry(windows: readonly RateWindow[]): Promise<RateWindow[]> {
    const opened = await super.carry(windows);
    const now = Date.now();
    for (const window of opened) this.counted(window.key, window.points, window.until - now);
    return opened;
  }

  /** Shares what it counted alone (when the connection is up) and stops listening for reconnections. Idempotent. */
  close(): Promise<void> {
    return this.#close();
  }
}

export function redisRateLimiter(redis: RedisConnection, options: RateLimitOptions, logger: Logger): RedisRateLimiter {
  const duration = options.windowMs / 1000;
  const store = { storeClient: redis.client, keyPrefix: redis.key('rate', options.name), points: options.points, duration, rejectIfRedisNotReady: true };
  let scheduled: NodeJS.Timeout | undefined;
  let closed = false;
  function scheduleShare(): void {
    if (closed || scheduled !== undefined || !redis.up) return; // down: the reconnection shares
    scheduled = setTimeout(shareMissedPoints, SHARE_AFTER_FALLBACK_MS);
    scheduled.unref();
  }
  const insurance = new OutageLimiter({ keyPrefix: options.name, points: options.points, duration }, scheduleShare);
  const limiter = new RateLimiterRedis({ ...store, insuranceLimiter: insurance });
  // Without insurance: points that fail to reach Redis go back to be shared later, not into the local count twice.
  const direct = new RateLimiterRedis(store);

  // One warning while sharing keeps failing (each key, each second), not one per key and try.
  let failing = false;
  function shareMissedPoints(): Promise<void> {
    scheduled = undefined;
    const now = Date.now();
    const missed = [...insurance.missed].filter(([, m]) => m.until > now);
    insurance.missed.clear();
    if (missed.length === 0) return Promise.resolve();
    const shares = missed.map(([key, m]) =>
      // A key Redis no longer has expires with the local window, not a whole window from now.
      direct.penalty(key, m.points, { customDuration: Math.ceil((m.until - now) / 1000) }).then(
        () => undefined,
        function keepForLater(err: unknown) {
          // Refused (an error reply) or never sent (the connection is down): it did not run.
          const kept = err instanceof ReplyError || !redis.up;
          if (kept) insurance.add(key, m.points, m.until);
          return { err, kept };
        },
      ),
    );
    return Promise.all(shares).then(function logOutcome(outcomes) {
      const failed = outcomes.find((outcome) => outcome !== undefined);
      if (failed === undefined) {
        failing = false;
        return;
      }
      // Tried again in a second while the connection holds, else at the reconnection.
      scheduleShare();
      if (failing) return;
      failing = true;
      const kept = closed ? 'dropped: the shared state is closing' : 'kept to be tried again';
      const outcome = failed.kept ? kept : 'not answered in time: it runs when Redis catches up';
      logger.warn({ limit: options.name, err: errorMessage(failed.err) }, `sharing rate-limit points counted without Redis failed; ${outcome}`);
    });
  }
  const stopSharing = redis.onUp(() => void shareMissedPoints());
  async function shareNow(): Promise<void> {
    clearTimeout(scheduled);
    scheduled = undefined;
    if (redis.up) await shareMissedPoints();
  }
  return new RedisRateLimiter({ limiter, direct, insurance }, options, shareNow, async function close() {
    if (closed) return;
    closed = true;
    stopSharing();
    // The next state's limiter starts with nothing missed: what this one holds goes now, or never.
    await shareNow();
  });
}
