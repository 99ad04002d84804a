// The state instances must share in cluster mode, behind one interface per
// kind: rate limiters, the spend ledger, generation records, API drains and
// sampling decisions. The service builds one SharedState and hands it to
// components at start(host); LocalState (local/state.ts) keeps everything in this process and
// under service.storage.directory, RedisState (redis/state.ts) shares it.
import type { Logger } from 'pino';
import type { DecisionStore } from './decision-store.js';
import type { DrainParser, DrainStore, StoredDrain } from './drain-store.js';
import type { GenerationStore } from './generation-store.js';
import type { RateLimiter, RateLimitOptions } from './rate-limiter.js';
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
  /** service.usage.retention in ms, which a reload may change without reopening the state (rate windows live in it). */
  setRetention(retentionMs: number): void;
  close(): Promise<void>;
}
