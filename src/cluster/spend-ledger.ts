// Spend per key and budget period. The local ledger keeps every counter in
// memory, appends each addition to a record log (durable within a second)
// and, on open, folds the log into a snapshot (`spend.json`, written to a
// temporary file and renamed) and starts the log afresh. Periods that are
// over are dropped then, except `total`.
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { formatUsd, parseUsd, type Cost } from '../usage/money.js';
import { BUDGET_PERIODS, periodId, type BudgetPeriod } from '../usage/periods.js';
import { RecordLog, replayRecordFile } from './record-log.js';

export interface SpendLedger {
  /** What `key` spent in the `period` that holds `atMs`. */
  spent(key: string, period: BudgetPeriod, atMs: number): Promise<Cost>;
  /** Adds a request's cost to every period of `key` holding `atMs`. */
  add(key: string, cost: Cost, atMs: number): Promise<void>;
  /** Writes out what is buffered (for tests and shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const SNAPSHOT_FILE = 'spend.json';
const LOG_FILE = 'spend.log';

interface SpendEntry {
  /** Key name. */
  k: string;
  /** Cost as exact decimal USD. */
  c: string;
  /** Ms since epoch. */
  t: number;
}

/** Snapshot: key name -> period id -> decimal USD. */
type Snapshot = Record<string, Record<string, string>>;

export class LocalSpendLedger implements SpendLedger {
  readonly #counters = new Map<string, Map<string, Cost>>();
  readonly #log: RecordLog;

  private constructor(log: RecordLog) {
    this.#log = log;
  }

  static async open(directory: string, logger: Logger, nowMs: number = Date.now()): Promise<LocalSpendLedger> {
    const snapshotPath = join(directory, SNAPSHOT_FILE);
    const logPath = join(directory, LOG_FILE);
    const ledger = new LocalSpendLedger(new RecordLog(logPath, logger));
    ledger.#load(await readSnapshot(snapshotPath));
    await replayRecordFile(
      logPath,
      function replay(data) {
        const entry = JSON.parse(data.toString('utf8')) as SpendEntry;
        ledger.#apply(entry.k, parseUsd(entry.c), entry.t);
      },
      logger,
    );
    ledger.#dropPastPeriods(nowMs);
    const temporary = `${snapshotPath}.tmp`;
    await writeFile(temporary, JSON.stringify(ledger.#snapshot()), { mode: 0o600, flush: true });
    await rename(temporary, snapshotPath);
    await unlink(logPath).catch(() => undefined);
    return ledger;
  }

  spent(key: string, period: BudgetPeriod, atMs: number): Promise<Cost> {
    return Promise.resolve(this.#counters.get(key)?.get(periodId(period, atMs)) ?? 0n);
  }

  add(key: string, cost: Cost, atMs: number): Promise<void> {
    if (cost <= 0n) return Promise.resolve();
    this.#apply(key, cost, atMs);
    const entry: SpendEntry = { k: key, c: formatUsd(cost), t: atMs };
    this.#log.append(Buffer.from(JSON.stringify(entry)), atMs);
    return Promise.resolve();
  }

  flush(): Promise<void> {
    return this.#log.flush();
  }

  close(): Promise<void> {
    return this.#log.close();
  }

  #apply(key: string, cost: Cost, atMs: number): void {
    let periods = this.#counters.get(key);
    if (periods === undefined) {
      periods = new Map();
      this.#counters.set(key, periods);
    }
    for (const period of BUDGET_PERIODS) {
      const id = periodId(period, atMs);
      periods.set(id, (periods.get(id) ?? 0n) + cost);
    }
  }

  #load(snapshot: Snapshot): void {
    for (const [key, periods] of Object.entries(snapshot)) {
      this.#counters.set(key, new Map(Object.entries(periods).map(([id, usd]) => [id, parseUsd(usd)])));
    }
  }

  #dropPastPeriods(nowMs: number): void {
    const current = new Set(BUDGET_PERIODS.map((period) => periodId(period, nowMs)));
    for (const periods of this.#counters.values()) {
      for (const id of periods.keys()) if (!current.has(id)) periods.delete(id);
    }
  }

  #snapshot(): Snapshot {
    const out: Snapshot = {};
    for (const [key, periods] of this.#counters) {
      out[key] = Object.fromEntries([...periods].map(([id, cost]) => [id, formatUsd(cost)]));
    }
    return out;
  }
}

async function readSnapshot(path: string): Promise<Snapshot> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Snapshot;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}
