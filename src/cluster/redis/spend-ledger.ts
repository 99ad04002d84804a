// Spend shared by the fleet: one Redis hash per key and budget period
// (`<prefix>spend:<key>:<period id>`), added to with HINCRBY by one Lua
// script per request. Costs are exact integers of 10^-15 USD, too large for
// one 64-bit counter, so each is split into `hi` (10^-6 USD) and `lo` (the
// rest) and summed back exactly on read. The local ledger records
// everything too: it answers while Redis is down, and additions Redis
// missed are sent again when it is back, in batches of REPLAY_BATCH.
//
// A write that times out may still run in Redis, and is then sent again:
// each addition carries an id, and the script adds it only if it can first
// create the addition's marker (`<prefix>spend-added:<id>`, SET NX, kept
// MARKER_TTL_MS), so an addition sent twice counts once.
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
/**
 * How long Redis remembers that an addition was counted (ms): a copy sent
 * later than this (after an outage or a late write of more than a day)
 * would count again. About 100 bytes of Redis per request.
 */
export const MARKER_TTL_MS = 86_400_000;
/** Missed additions sent per round trip when Redis is back, so a long outage's replay fits in redis.timeout. */
export const REPLAY_BATCH = 500;

const ADD_COMMAND = 'sluiceAddSpend';
// KEYS: marker, then one counter per period; ARGV: marker TTL (ms), hi, lo, then each counter's expiry (ms, 0: none).
const ADD_SCRIPT = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
for i = 2, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'hi', ARGV[2])
  redis.call('HINCRBY', KEYS[i], 'lo', ARGV[3])
  local expiry = tonumber(ARGV[i + 2])
  if expiry > 0 then redis.call('PEXPIRE', KEYS[i], expiry) end
end
return 1`;

interface AddCommand {
  [ADD_COMMAND](keys: number, ...args: Array<string | number>): unknown;
}

interface Addition {
  readonly id: string;
  readonly key: string;
  readonly cost: Cost;
  readonly atMs: number;
}

export class RedisSpendLedger implements SpendLedger {
  readonly #redis: RedisConnection;
  readonly #local: SpendLedger;
  readonly #logger: Logger;
  #missed: Addition[] = [];
  #replaying = false;
  /** Addition ids: this ledger's random prefix and a count. */
  readonly #idPrefix = randomBytes(9).toString('base64url');
  #idCount = 0;
  readonly #stopReplay: () => void;

  constructor(redis: RedisConnection, local: SpendLedger, logger: Logger) {
    this.#redis = redis;
    this.#local = local;
    this.#logger = logger;
    if (!(ADD_COMMAND in redis.client)) redis.client.defineCommand(ADD_COMMAND, { lua: ADD_SCRIPT });
    this.#stopReplay = redis.onUp(() => void this.#replay());
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
    const addition = { id: `${this.#idPrefix}.${(this.#idCount++).toString(36)}`, key, cost, atMs };
    if (!(await this.#send([addition]))) this.#remember(addition);
  }

  flush(): Promise<void> {
    return this.#local.flush();
  }

  /** The local ledger is LocalState's to close. */
  async close(): Promise<void> {
    this.#stopReplay();
    await this.#local.flush();
  }

  #counter(key: string, period: BudgetPeriod, atMs: number): string {
    return this.#redis.key('spend', key, periodId(period, atMs));
  }

  /** One script call per addition, in one pipeline: each is atomic and counts once, so a batch need not be. */
  async #send(additions: readonly Addition[]): Promise<boolean> {
    if (!this.#redis.up) return false;
    const pipeline = this.#redis.client.pipeline();
    const add = pipeline as unknown as AddCommand;
    for (const { id, key, cost, atMs } of additions) {
      const counters = BUDGET_PERIODS.map((period) => this.#counter(key, period, atMs));
      const expiries = BUDGET_PERIODS.map((period) => {
        const length = PERIOD_LENGTH_MS[period];
        return length === undefined ? 0 : length + PERIOD_GRACE_MS;
      });
      add[ADD_COMMAND](1 + counters.length, this.#redis.key('spend-added', id), ...counters, MARKER_TTL_MS, (cost / SPLIT).toString(), (cost % SPLIT).toString(), ...expiries);
    }
    try {
      const results = (await pipeline.exec()) ?? [];
      return results.length === additions.length && results.every(([err]) => err === null);
    } catch {
      return false;
    }
  }

  #remember(addition: Addition): void {
    this.#missed.push(addition);
    if (this.#missed.length > MAX_MISSED) {
      this.#missed.shift();
      this.#logger.warn('spend missed by the cluster Redis exceeds what is kept for it; the oldest addition is counted locally only');
    }
  }

  /** Sends what Redis missed, oldest first, REPLAY_BATCH at a time; stops at the first batch Redis does not take. */
  async #replay(): Promise<void> {
    if (this.#replaying) return;
    this.#replaying = true;
    let sent = 0;
    try {
      while (this.#missed.length > 0) {
        const batch = this.#missed.slice(0, REPLAY_BATCH);
        if (!(await this.#send(batch))) break;
        // Additions remembered meanwhile were appended behind the batch, unless the cap let the oldest go.
        if (this.#missed[0] === batch[0]) this.#missed.splice(0, batch.length);
        else this.#missed = this.#missed.filter((addition) => !batch.includes(addition));
        sent += batch.length;
      }
    } finally {
      this.#replaying = false;
    }
    if (sent > 0) this.#logger.info({ additions: sent, left: this.#missed.length }, 'spend counted while Redis was down is now shared');
  }
}
