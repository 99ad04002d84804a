// Shared state in Redis (DESIGN section 13): every store here is the Redis
// implementation over its local one, which keeps a copy and answers while
// Redis is down or slow. Callers hold a SharedState and never know which.
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { DecisionStore } from '../decision-store.js';
import type { DrainParser, DrainStore, StoredDrain } from '../drain-store.js';
import type { GenerationStore } from '../generation-store.js';
import { limiterId, type CarriedWindows, type RateLimitOptions } from '../rate-limiter.js';
import type { SpendLedger } from '../spend-ledger.js';
import type { LocalState } from '../local/state.js';
import type { DecisionStoreOptions } from '../state.js';
import type { SharedState } from '../state.js';
import type { RedisConnection } from './connection.js';
import { RedisDecisionStore } from './decision-store.js';
import { RedisDrainStore } from './drain-store.js';
import { RedisGenerationStore } from './generation-store.js';
import { redisRateLimiter, type RedisRateLimiter } from './rate-limiter.js';
import { RedisSpendLedger } from './spend-ledger.js';

/** Under the usage directory: generation records Redis missed, kept across restarts. */
const UNSHARED_GENERATIONS_FILE = 'generations-unshared.log';

export class RedisState implements SharedState {
  readonly mode = 'redis';
  readonly #redis: RedisConnection;
  readonly #local: LocalState;
  readonly #logger: Logger;
  /**
   * One limiter per family and allowance, shared by every key with that limit
   * and kept across reloads: each listens for reconnections until the state
   * closes (the connection may outlive it).
   */
  readonly #limiters = new Map<string, RedisRateLimiter>();
  #retentionMs: number;
  #ledger: Promise<SpendLedger> | undefined;
  #generations: Promise<RedisGenerationStore> | undefined;

  constructor(redis: RedisConnection, local: LocalState, options: { logger: Logger; retentionMs: number }) {
    this.#redis = redis;
    this.#local = local;
    this.#logger = options.logger;
    this.#retentionMs = options.retentionMs;
  }

  rateLimiter(options: RateLimitOptions): RedisRateLimiter {
    const id = limiterId(options);
    let limiter = this.#limiters.get(id);
    if (limiter === undefined) {
      limiter = redisRateLimiter(this.#redis, options, this.#logger);
      this.#limiters.set(id, limiter);
    }
    return limiter;
  }

  rateWindows(): Promise<CarriedWindows[]> {
    return Promise.all([...this.#limiters.values()].map((limiter) => limiter.windows()));
  }

  /** On a connection not up yet (one just opened), the points are counted locally and shared once it is, as an outage's. */
  async carryRateWindows(carried: readonly CarriedWindows[]): Promise<void> {
    for (const { options, windows } of carried) await this.rateLimiter(options).carry(windows);
  }

  spendLedger(): Promise<SpendLedger> {
    this.#ledger ??= this.#local.spendLedger({ outbox: true }).then((local) => new RedisSpendLedger(this.#redis, local, this.#logger));
    return this.#ledger;
  }

  generationStore(): Promise<GenerationStore> {
    this.#generations ??= Promise.all([this.#local.generationStore(), this.#local.usageDirectory()]).then(([local, directory]) =>
      RedisGenerationStore.open(this.#redis, local, { retentionMs: this.#retentionMs, logger: this.#logger, unsharedPath: join(directory, UNSHARED_GENERATIONS_FILE) }),
    );
    return this.#generations;
  }

  drainStore<D extends StoredDrain>(parse: DrainParser<D>): DrainStore<D> {
    return new RedisDrainStore(this.#redis, this.#local.drainStore(parse), parse, this.#logger);
  }

  decisionStore(options: DecisionStoreOptions): DecisionStore {
    return new RedisDecisionStore(this.#redis, this.#local.decisionStore(options), options.name, options.logger);
  }

  setRetention(retentionMs: number): void {
    this.#retentionMs = retentionMs;
    this.#local.setRetention(retentionMs);
    void this.#generations?.then((generations) => generations.setRetention(retentionMs), function notOpened() {});
  }

  async close(): Promise<void> {
    const ledger = this.#ledger;
    const generations = this.#generations;
    const limiters = [...this.#limiters.values()];
    this.#ledger = undefined;
    this.#generations = undefined;
    this.#limiters.clear();
    // The Redis stores flush; LocalState closes the local ones and releases its lock.
    await Promise.all([ledger?.then((l) => l.close()), generations?.then((g) => g.close()), ...limiters.map((l) => l.close())]);
    await this.#local.close();
  }
}
