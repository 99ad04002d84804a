// The state instances must share in cluster mode, behind one interface per
// kind: rate limiters, the spend ledger, generation records, API drains and
// sampling decisions. The service builds one SharedState and hands it to
// components at start(host); LocalState (local/state.ts) keeps everything in this process and
// under service.storage.directory, RedisState (redis/state.ts) shares it.
import type { Logger } from 'pino';
import type { DecisionStore } from './decision-store.js';
import type { DrainParser, DrainStore, StoredDrain } from './drain-store.js';
import type { GenerationStore } from './generation-store.js';
import type { CarriedWindows, RateLimiter, RateLimitOptions } from './rate-limiter.js';
import type { SpendLedger } from './spend-ledger.js';

export interface DecisionStoreOptions {
  /** Stable across instances (a drain id), so every instance reads the same decisions. */
  readonly name: string;
  /** Where decisions made with a root are kept across restarts; undefined: memory only. */
  readonly directory: string | undefined;
  readonly logger: Logger;
}

export interface SharedState {
  readonly mode: 'local' | 'redis';
  rateLimiter(options: RateLimitOptions): RateLimiter;
  /** Opened on first use (only a gateway needs it). */
  spendLedger(): Promise<SpendLedger>;
  /** Opened on first use (only a gateway needs it). */
  generationStore(): Promise<GenerationStore>;
  /** API-managed drains (`drains.json` under the storage directory is the local copy). */
  drainStore<D extends StoredDrain>(parse: DrainParser<D>): DrainStore<D>;
  /** One sampler's trace decisions (each drain has its own). */
  decisionStore(options: DecisionStoreOptions): DecisionStore;
  /**
   * The open rate-limit windows of the keys this state counted (a Redis
   * state's: the fleet's counts; a local state's: its own, less the fleet's
   * it was opened with), for the state a reload that turns cluster mode on
   * or off opens in its place, just before this one closes (the points a
   * Redis state counted that Redis never got go with them, no longer shared).
   */
  rateWindows(): Promise<CarriedWindows[]>;
  /** Adds the windows another state counted to this one's (a Redis state's: to the fleet's counters). */
  carryRateWindows(carried: readonly CarriedWindows[]): Promise<void>;
  /** service.usage.retention in ms, which a reload may change without reopening the state (rate windows live in it). */
  setRetention(retentionMs: number): void;
  close(): Promise<void>;
}
