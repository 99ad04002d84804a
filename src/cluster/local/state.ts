// LocalState: every piece of shared state kept in this process and under
// service.storage.directory (the single-instance SharedState).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { lockDirectory, type DirectoryLock } from '../../queue/directory-lock.js';
import type { DrainParser, StoredDrain } from '../drain-store.js';
import { LocalGenerationStore, type GenerationStore } from '../generation-store.js';
import { limiterId, LocalRateLimiter, type CarriedWindows, type RateLimitOptions } from '../rate-limiter.js';
import { LocalSpendLedger } from '../spend-ledger.js';
import type { DecisionStoreOptions, SharedState } from '../state.js';
import { LocalDecisionStore } from './decision-store.js';
import { LocalDrainStore } from './drain-store.js';

export interface LocalStateOptions {
  /** service.storage.directory (absolute, writable). */
  readonly storageDirectory: string;
  /** service.usage.retention in ms. */
  readonly retentionMs: number;
  readonly logger: Logger;
  /** Carried from the state this one replaces (a reload that changes service.cluster); default: none yet. */
  readonly memoryDecisions?: MemoryDecisions;
}

/**
 * Memory-only decision stores (sampling processors) by name, kept across
 * reloads: a processor's next graph would otherwise
 * forget every trace its roots decided, and drop the later spans of a kept
 * trace as traces with no known path. Each holds at most DECISION_ENTRIES.
 * The service keeps one for its life and hands it to each state it opens:
 * what this instance decided stays true wherever its shared state lives
 * (RedisDecisionStore answers from this local store first). A reload that
 * succeeds lets go of the stores of the processors it took out.
 */
export class MemoryDecisions {
  readonly #stores = new Map<string, LocalDecisionStore>();

  store(name: string, logger: Logger): LocalDecisionStore {
    let store = this.#stores.get(name);
    if (store === undefined) {
      store = new LocalDecisionStore({ logger });
      this.#stores.set(name, store);
    }
    return store;
  }

  /** Lets go of the stores of processors a reload took out (`names`: the running config's processors). */
  keepOnly(names: ReadonlySet<string>): void {
    for (const name of this.#stores.keys()) if (!names.has(name)) this.#stores.delete(name);
  }
}

export class LocalState implements SharedState {
  readonly mode = 'local';
  readonly #options: LocalStateOptions;
  #retentionMs: number;
  /**
   * One limiter per family and allowance, kept across reloads (a reload that
   * built new ones would open every key's window afresh) and shared by a key
   * on two gateways under one name.
   */
  readonly #limiters = new Map<string, LocalRateLimiter>();
  readonly #memoryDecisions: MemoryDecisions;
  #lock: Promise<DirectoryLock> | undefined;
  #ledger: Promise<LocalSpendLedger> | undefined;
  #generations: Promise<LocalGenerationStore> | undefined;

  constructor(options: LocalStateOptions) {
    this.#options = options;
    this.#retentionMs = options.retentionMs;
    this.#memoryDecisions = options.memoryDecisions ?? new MemoryDecisions();
  }

  rateLimiter(options: RateLimitOptions): LocalRateLimiter {
    const id = limiterId(options);
    let limiter = this.#limiters.get(id);
    if (limiter === undefined) {
      limiter = new LocalRateLimiter(options);
      this.#limiters.set(id, limiter);
    }
    return limiter;
  }

  rateWindows(): Promise<CarriedWindows[]> {
    return Promise.all([...this.#limiters.values()].map((limiter) => limiter.windows()));
  }

  async carryRateWindows(carried: readonly CarriedWindows[]): Promise<void> {
    for (const { options, windows } of carried) await this.rateLimiter(options).carry(windows);
  }

  /** `outbox`: for RedisState, which shares the additions (the first call decides). */
  spendLedger(options: { outbox: boolean } = { outbox: false }): Promise<LocalSpendLedger> {
    this.#ledger ??= this.#usageDirectory().then((directory) => LocalSpendLedger.open(directory, this.#options.logger, options));
    return this.#ledger;
  }

  generationStore(): Promise<GenerationStore> {
    this.#generations ??= this.#usageDirectory().then((directory) =>
      LocalGenerationStore.open({ directory: join(directory, 'generations'), retentionMs: this.#retentionMs, logger: this.#options.logger }),
    );
    return this.#generations;
  }

  drainStore<D extends StoredDrain>(parse: DrainParser<D>): LocalDrainStore<D> {
    return new LocalDrainStore(this.#options.storageDirectory, parse, this.#options.logger);
  }

  decisionStore(options: DecisionStoreOptions): LocalDecisionStore {
    // A drain's decisions are on disk, and read again by its next unit.
    if (options.directory !== undefined) return new LocalDecisionStore({ directory: options.directory, logger: options.logger });
    return this.#memoryDecisions.store(options.name, options.logger);
  }

  setRetention(retentionMs: number): void {
    this.#retentionMs = retentionMs;
    void this.#generations?.then((generations) => generations.setRetention(retentionMs), function notOpened() {});
  }

  async close(): Promise<void> {
    const ledger = this.#ledger;
    const generations = this.#generations;
    const lock = this.#lock;
    this.#ledger = undefined;
    this.#generations = undefined;
    this.#lock = undefined;
    await Promise.all([ledger?.then((l) => l.close()), generations?.then((g) => g.close())]);
    await lock?.then((l) => l.release());
  }

  /** `<storage>/usage`, held by this process alone (two writers would interleave records). */
  usageDirectory(): Promise<string> {
    return this.#usageDirectory();
  }

  async #usageDirectory(): Promise<string> {
    const directory = join(this.#options.storageDirectory, 'usage');
    this.#lock ??= mkdir(directory, { recursive: true, mode: 0o700 }).then(() => lockDirectory(directory));
    await this.#lock;
    return directory;
  }
}
