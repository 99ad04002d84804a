// Spend shared by the fleet: one Redis hash per key and budget period
// (`<prefix>spend:<key>:<period id>`), added to with HINCRBY by one Lua
// script per addition. Costs are exact integers of 10^-15 USD, too large
// for one 64-bit counter, so each is split into `hi` (10^-6 USD) and `lo`
// (the rest) and summed back exactly on read. The local ledger records
// everything too: it answers while Redis is down.
//
// Additions leave in order from the local ledger's outbox (on disk, so an
// instance that dies while Redis is down sends them after its next start),
// at most SEND_BATCH to a round trip; one Redis does not take stays at the
// outbox's head (with all after it) and is sent again when Redis is back, or
// after RETRY_MS while the connection holds. A write that times out may
// still have run in Redis, so each addition carries its ledger's sequence
// number (a ledger per process, named in the outbox), and the script adds
// only a number above the last one it added for that ledger
// (`<prefix>spend-seq:<ledger>`, one small key per process, kept
// SEQUENCE_TTL_MS), and only when Redis already has the addition sent before
// it: sent twice, even by the next process on the same storage, an addition
// counts once, and one Redis refused is never skipped by a later one that
// ran (that one answers "gap" and waits). A gap before the first addition
// after the last one Redis took means Redis went back in time (restored from
// an older snapshot, or a lagging replica took over): what it lost stays
// lost, and the chain starts again from the outbox.
import type { Logger } from 'pino';
import type { Cost } from '../../shared/money.js';
import { BUDGET_PERIODS, periodId, type BudgetPeriod } from '../../shared/periods.js';
import type { LocalSpendLedger, SpendLedger, UnsharedSpend } from '../spend-ledger.js';
import type { RedisConnection } from './connection.js';

const SPLIT = 1_000_000_000n;
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

/** The last addition Redis has of one ledger. */
interface Confirmed {
  readonly ledger: string;
  readonly seq: number;
}

export class RedisSpendLedger implements SpendLedger {
  readonly #redis: RedisConnection;
  readonly #local: LocalSpendLedger;
  readonly #logger: Logger;
  /** The running send loop, if any: an addition queued meanwhile goes out with it. */
  #sending: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  /** Whether the last batch failed: the queue then waits for Redis. */
  #behind = false;
  /** Additions Redis took since the outbox last emptied (logged when it catches up after falling behind). */
  #sentSinceEmpty = 0;
  /** The last addition Redis has (added now or before): the one the next sent follows. */
  #confirmed: Confirmed | undefined;
  readonly #stopReplay: () => void;
  /** Closed: the local ledger's log may be closed too, so nothing is sent again (the next start sends what is left). */
  #closed = false;

  /** `local` is opened with its outbox. */
  constructor(redis: RedisConnection, local: LocalSpendLedger, logger: Logger) {
    this.#redis = redis;
    this.#local = local;
    this.#logger = logger;
    // Left by an earlier run, the outbox is behind from the start.
    this.#behind = local.outbox.length > 0;
    if (!(ADD_COMMAND in redis.client)) redis.client.defineCommand(ADD_COMMAND, { lua: ADD_SCRIPT });
    this.#stopReplay = redis.onUp(() => {
      clearTimeout(this.#retry);
      this.#retry = undefined;
      void this.#send();
    });
    if (redis.up) void this.#send();
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
    await this.#send();
  }

  flush(): Promise<void> {
    return this.#local.flush();
  }

  /** The local ledger is LocalState's to close. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopReplay();
    clearTimeout(this.#retry);
    this.#retry = undefined;
    // A batch in flight (bounded by redis.timeout) notes what Redis took in the local log before LocalState closes it.
    await this.#sending;
    await this.#local.flush();
  }

  #sequenceKey(ledger: string): string {
    return this.#redis.key('spend-seq', ledger);
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
    if (this.#local.outbox.length === 0 || this.#retry !== undefined) return Promise.resolve();
    // #sendAll awaits before it can finish, so #sending is set before it is cleared.
    this.#sending = this.#sendAll();
    return this.#sending;
  }

  async #sendAll(): Promise<void> {
    for (;;) {
      const batch = this.#local.outbox.slice(0, SEND_BATCH);
      const { done, rewound } = await this.#sendBatch(batch);
      if (rewound) {
        // What Redis lost is lost, as when it restarts empty (budgets still count this instance's own spend).
        this.#logger.warn('the cluster Redis lacks spend additions it had taken (restored from an older snapshot, or a lagging replica took over); sharing goes on from here');
        this.#confirmed = undefined;
        continue;
      }
      const lastDone = batch[done - 1];
      if (lastDone !== undefined) {
        this.#confirmed = { ledger: lastDone.ledger, seq: lastDone.seq };
        // The outbox is in sequence order (its cap may have let the oldest go meanwhile).
        this.#local.markShared(lastDone.seq);
        this.#sentSinceEmpty += done;
      }
      if (done < batch.length) {
        this.#sending = undefined;
        this.#behind = true;
        this.#scheduleRetry();
        return;
      }
      // Checked and cleared in one step, so an addition queued after this starts a loop of its own.
      if (this.#local.outbox.length === 0) break;
    }
    this.#sending = undefined;
    // Counted over every loop since it fell behind: one that Redis cut short (a timeout) is not the whole catch-up.
    if (this.#behind) this.#logger.info({ additions: this.#sentSinceEmpty }, 'spend counted while Redis was down is now shared');
    this.#behind = false;
    this.#sentSinceEmpty = 0;
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retry !== undefined || !this.#redis.up) return;
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
  async #sendBatch(additions: readonly UnsharedSpend[]): Promise<{ done: number; rewound: boolean }> {
    if (!this.#redis.up) return { done: 0, rewound: false };
    const pipeline = this.#redis.client.pipeline();
    const add = pipeline as unknown as AddCommand;
    let before = this.#confirmed;
    for (const { ledger, seq, key, cost, atMs } of additions) {
      const counters = BUDGET_PERIODS.map((period) => this.#counter(key, period, atMs));
      const expiries = BUDGET_PERIODS.map((period) => {
        const length = PERIOD_LENGTH_MS[period];
        return length === undefined ? 0 : length + PERIOD_GRACE_MS;
      });
      // The first of a ledger (an earlier run's, or this one's first) follows none that is known.
      const previous = before?.ledger === ledger ? before.seq : -1;
      add[ADD_COMMAND](1 + counters.length, this.#sequenceKey(ledger), ...counters, seq, previous, SEQUENCE_TTL_MS, (cost / SPLIT).toString(), (cost % SPLIT).toString(), ...expiries);
      before = { ledger, seq };
    }
    let results: Array<[Error | null, unknown]>;
    try {
      results = (await pipeline.exec()) ?? [];
    } catch {
      return { done: 0, rewound: false };
    }
    let done = 0;
    while (done < additions.length && results[done]?.[0] === null && (results[done]?.[1] === 1 || results[done]?.[1] === 0)) done += 1;
    const rewound = done === 0 && this.#confirmed !== undefined && results[0]?.[0] === null && results[0][1] === -1;
    return { done, rewound };
  }
}
