// Spend shared by the fleet: one Redis hash per key and budget period
// (`<prefix>spend:<key>:<period id>`), added to with HINCRBY in one
// transaction per request. Costs are exact integers of 10^-15 USD, too
// large for one 64-bit counter, so each is split into `hi` (10^-6 USD) and
// `lo` (the rest) and summed back exactly on read. The local ledger records
// everything too: it answers while Redis is down, and additions Redis
// missed are sent again when it is back.
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

interface Addition {
  readonly key: string;
  readonly cost: Cost;
  readonly atMs: number;
}

export class RedisSpendLedger implements SpendLedger {
  readonly #redis: RedisConnection;
  readonly #local: SpendLedger;
  readonly #logger: Logger;
  #missed: Addition[] = [];
  readonly #stopReplay: () => void;

  constructor(redis: RedisConnection, local: SpendLedger, logger: Logger) {
    this.#redis = redis;
    this.#local = local;
    this.#logger = logger;
    this.#stopReplay = redis.onUp(() => void this.#replay());
  }

  async spent(key: string, period: BudgetPeriod, atMs: number): Promise<Cost> {
    if (!this.#redis.up) return this.#local.spent(key, period, atMs);
    try {
      const [hi, lo] = await this.#redis.client.hmget(this.#counter(key, period, atMs), 'hi', 'lo');
      return BigInt(hi ?? '0') * SPLIT + BigInt(lo ?? '0');
    } catch {
      return this.#local.spent(key, period, atMs);
    }
  }

  async add(key: string, cost: Cost, atMs: number): Promise<void> {
    if (cost <= 0n) return;
    await this.#local.add(key, cost, atMs);
    if (!(await this.#send([{ key, cost, atMs }]))) this.#remember({ key, cost, atMs });
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

  async #send(additions: readonly Addition[]): Promise<boolean> {
    if (!this.#redis.up) return false;
    const multi = this.#redis.client.multi();
    for (const { key, cost, atMs } of additions) {
      for (const period of BUDGET_PERIODS) {
        const counter = this.#counter(key, period, atMs);
        multi.hincrby(counter, 'hi', (cost / SPLIT).toString()).hincrby(counter, 'lo', (cost % SPLIT).toString());
        const length = PERIOD_LENGTH_MS[period];
        if (length !== undefined) multi.pexpire(counter, length + PERIOD_GRACE_MS);
      }
    }
    try {
      const results = (await multi.exec()) ?? [];
      return results.every(([err]) => err === null);
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

  async #replay(): Promise<void> {
    const missed = this.#missed;
    if (missed.length === 0) return;
    this.#missed = [];
    if (!(await this.#send(missed))) {
      this.#missed = [...missed, ...this.#missed];
      return;
    }
    this.#logger.info({ additions: missed.length }, 'spend counted while Redis was down is now shared');
  }
}
