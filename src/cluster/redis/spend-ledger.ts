// Spend shared by the fleet: one Redis hash per key and budget period
// (`<prefix>spend:<key>:<period id>`), added to with HINCRBY by one Lua
// script per addition. Costs are exact integers of 10^-15 USD, too large
// for one 64-bit counter, so each is split into `hi` (10^-6 USD) and `lo`
// (the rest) and summed back exactly on read. The local ledger records
// everything too: it answers while Redis is down.
//
// Additions leave in order, from one queue, at most SEND_BATCH to a round
// trip; one Redis does not take stays at the queue's head (with all after
// it) and is sent again when Redis is back, or after RETRY_MS while the
// connection holds. A write that times out may still have run in Redis, so
// each addition carries this ledger's sequence number, and the script adds
// only a number above the last one it added for the ledger
// (`<prefix>spend-seq:<ledger>`, one small key per process, kept
// SEQUENCE_TTL_MS), and only when Redis already has the addition sent before
// it: sent twice, an addition counts once, and one Redis refused is never
// skipped by a later one that ran (that one answers "gap" and waits). A gap
// before the first addition after the last one Redis took means Redis went
// back in time (restored from an older snapshot, or a lagging replica took
// over): what it lost stays lost, and the chain starts again from the queue.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Cost } from '../../shared/money.js';
import { BUDGET_PERIODS, periodId, type BudgetPeriod } from '../../shared/periods.js';
import type { SpendLedger } from '../spend-ledger.js';
import type { RedisConnection } from './connection.js';

const SPLIT = 1_000_000_000n;
/** Additions kept for Redis while it is down; beyond this the oldest are given up (logged). */
const MAX_MISSED = 100_000;
/** Period counters outlive their period by this much (the `total` period never expires). */
const PERIOD_GRACE_MS = 2 * 86_400_000;
const PERIOD_LENGTH_MS: Readonly<Record<BudgetPeriod, number | undefined>> = { day: 86_400_000, week: 7 * 86_400_000, month: 31 * 86_400_000, total: undefined };
/** How long Redis keeps a ledger's last sequence number after its last addition (ms). */
export const SEQUENCE_TTL_MS = 7 * 86_400_000;
/** Additions per round trip, so a long outage's backlog goes out in pieces that each fit in redis.timeout. */
export const SEND_BATCH = 500;
/** A batch Redis refused on a live connection is tried again after this long (ms). */
const RETRY_MS = 1_000;

const ADD_COMMAND = 'sluiceAddSpend';
// KEYS: the ledger's sequence key, then one counter per period;
// ARGV: sequence number, the number of the addition sent before it (-1: none),
// sequence TTL (ms), hi, lo, then each counter's expiry (ms, 0: none).
// Returns 1 added, 0 added before, -1 an earlier addition is missing (a gap:
// send again from the first not added). No sequence key (a new ledger, or
// Redis lost its data) takes any number.
const ADD_SCRIPT = `
local stored = redis.call('GET', KEYS[1])
local seq = tonumber(ARGV[1])
if stored then
  local last = tonumber(stored)
  if seq <= last then return 0 end
  if last < tonumber(ARGV[2]) then return -1 end
end
for i = 2, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'hi', ARGV[4])
  redis.call('HINCRBY', KEYS[i], 'lo', ARGV[5])
  local expiry = tonumber(ARGV[i + 4])
  if expiry > 0 then redis.call('PEXPIRE', KEYS[i], expiry) end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1`;

interface AddCommand {
  [ADD_COMMAND](keys: number, ...args: Array<string | number>): unknown;
}

interface Addition {
  readonly seq: number;
  readonly key: string;
  readonly cost: Cost;
  readonly atMs: number;
}

export class RedisSpendLedger implements SpendLedger {
  readonly #redis: RedisConnection;
  readonly #local: SpendLedger;
  readonly #logger: Logger;
  /** Additions not yet taken by Redis, oldest first. */
  #queue: Addition[] = [];
  /** The running send loop, if any: an addition queued meanwhile goes out with it. */
  #sending: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  /** Whether the last batch failed: the queue then waits for Redis. */
  #behind = false;
  readonly #sequenceKey: string;
  #nextSeq = 0;
  /** The last addition Redis has (added now or before): the one the next sent follows. */
  #confirmed = -1;
  readonly #stopReplay: () => void;

  constructor(redis: RedisConnection, local: SpendLedger, logger: Logger) {
    this.#redis = redis;
    this.#local = local;
    this.#logger = logger;
    this.#sequenceKey = redis.key('spend-seq', randomBytes(9).toString('base64url'));
    if (!(ADD_COMMAND in redis.client)) redis.client.defineCommand(ADD_COMMAND, { lua: ADD_SCRIPT });
    this.#stopReplay = redis.onUp(() => {
      clearTimeout(this.#retry);
      this.#retry = undefined;
      void this.#send();
    });
  }

  /**
   * The larger of the fleet's figure and this instance's own: Redis's is the
   * larger unless Redis lost its data (restarted empty, flushed), and then
   * what this instance spent still counts against the budget. What other
   * instances spent before the loss is not restored.
   */
  async spent(key: string, period: BudgetPeriod, atMs: number): Promise<Cost> {
    if (!this.#redis.up) return this.#local.spent(key, period, atMs);
    let shared: Cost;
    try {
      const [hi, lo] = await this.#redis.client.hmget(this.#counter(key, period, atMs), 'hi', 'lo');
      shared = BigInt(hi ?? '0') * SPLIT + BigInt(lo ?? '0');
    } catch {
      return this.#local.spent(key, period, atMs);
    }
    const own = await this.#local.spent(key, period, atMs);
    return shared > own ? shared : own;
  }

  async add(key: string, cost: Cost, atMs: number): Promise<void> {
    if (cost <= 0n) return;
    await this.#local.add(key, cost, atMs);
    this.#queue.push({ seq: this.#nextSeq++, key, cost, atMs });
    if (this.#queue.length > MAX_MISSED) {
      this.#queue.shift();
      this.#logger.warn('spend missed by the cluster Redis exceeds what is kept for it; the oldest addition is counted locally only');
    }
    await this.#send();
  }

  flush(): Promise<void> {
    return this.#local.flush();
  }

  /** The local ledger is LocalState's to close. */
  async close(): Promise<void> {
    this.#stopReplay();
    clearTimeout(this.#retry);
    this.#retry = undefined;
    await this.#local.flush();
  }

  #counter(key: string, period: BudgetPeriod, atMs: number): string {
    return this.#redis.key('spend', key, periodId(period, atMs));
  }

  /**
   * Sends the queue in order, SEND_BATCH at a time, until it is empty or
   * Redis does not take a batch. One loop at a time: an addition queued while
   * it runs goes out with it, and its add() settles when the loop does.
   */
  #send(): Promise<void> {
    if (this.#sending !== undefined) return this.#sending;
    // Refused on a live connection: the queue goes with the retry, not again with every addition.
    if (this.#queue.length === 0 || this.#retry !== undefined) return Promise.resolve();
    // #sendAll awaits before it can finish, so #sending is set before it is cleared.
    this.#sending = this.#sendAll();
    return this.#sending;
  }

  async #sendAll(): Promise<void> {
    const wasBehind = this.#behind;
    let sent = 0;
    for (;;) {
      const batch = this.#queue.slice(0, SEND_BATCH);
      const { done, rewound } = await this.#sendBatch(batch);
      if (rewound) {
        // What Redis lost is lost, as when it restarts empty (budgets still count this instance's own spend).
        this.#logger.warn('the cluster Redis lacks spend additions it had taken (restored from an older snapshot, or a lagging replica took over); sharing goes on from here');
        this.#confirmed = -1;
        continue;
      }
      const lastDone = batch[done - 1];
      if (lastDone !== undefined) {
        this.#confirmed = lastDone.seq;
        // The queue is in sequence order (the cap may have let its oldest go meanwhile): drop what Redis has.
        let taken = 0;
        while (taken < this.#queue.length && (this.#queue[taken]?.seq ?? Infinity) <= lastDone.seq) taken += 1;
        this.#queue.splice(0, taken);
        sent += done;
      }
      if (done < batch.length) {
        this.#sending = undefined;
        this.#behind = true;
        this.#scheduleRetry();
        return;
      }
      // Checked and cleared in one step, so an addition queued after this starts a loop of its own.
      if (this.#queue.length === 0) break;
    }
    this.#sending = undefined;
    this.#behind = false;
    if (wasBehind) this.#logger.info({ additions: sent }, 'spend counted while Redis was down is now shared');
  }

  #scheduleRetry(): void {
    if (this.#retry !== undefined || !this.#redis.up) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#send();
    }, RETRY_MS);
    this.#retry.unref();
  }

  /**
   * One script call per addition, in one pipeline; `done` is how many of the
   * first ones Redis has (added now or before). One refused, or a gap behind
   * it, ends the count: it and those after it are sent again. `rewound`: the
   * first one found a gap, so Redis lacks an addition it had taken (its
   * sequence number only grows otherwise): its data went back in time.
   */
  async #sendBatch(additions: readonly Addition[]): Promise<{ done: number; rewound: boolean }> {
    if (!this.#redis.up) return { done: 0, rewound: false };
    const pipeline = this.#redis.client.pipeline();
    const add = pipeline as unknown as AddCommand;
    let previous = this.#confirmed;
    for (const { seq, key, cost, atMs } of additions) {
      const counters = BUDGET_PERIODS.map((period) => this.#counter(key, period, atMs));
      const expiries = BUDGET_PERIODS.map((period) => {
        const length = PERIOD_LENGTH_MS[period];
        return length === undefined ? 0 : length + PERIOD_GRACE_MS;
      });
      add[ADD_COMMAND](1 + counters.length, this.#sequenceKey, ...counters, seq, previous, SEQUENCE_TTL_MS, (cost / SPLIT).toString(), (cost % SPLIT).toString(), ...expiries);
      previous = seq;
    }
    let results: Array<[Error | null, unknown]>;
    try {
      results = (await pipeline.exec()) ?? [];
    } catch {
      return { done: 0, rewound: false };
    }
    let done = 0;
    while (done < additions.length && results[done]?.[0] === null && (results[done]?.[1] === 1 || results[done]?.[1] === 0)) done += 1;
    const rewound = done === 0 && this.#confirmed !== -1 && results[0]?.[0] === null && results[0][1] === -1;
    return { done, rewound };
  }
}
