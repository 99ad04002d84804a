// Spend per key and budget period. The local ledger keeps every counter in
// memory and appends each addition, numbered, to a record log (durable
// within a second). At open, and whenever the log passes COMPACT_BYTES, the
// counters are folded into a snapshot (`spend.json`, written to a temporary
// file and renamed, naming the last entry it includes) and the log starts
// afresh. Periods that are over are dropped then, except `total`.
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { formatUsd, parseUsd, type Cost } from '../shared/money.js';
import { BUDGET_PERIODS, periodId, type BudgetPeriod } from '../shared/periods.js';
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
/** The log alternates between two files: a compaction starts the other one. */
const LOG_FILES = ['spend-a.log', 'spend-b.log'] as const;
/** Written by earlier versions (folded at open); replayed once, then deleted. */
const LEGACY_LOG_FILE = 'spend.log';
/** Bytes appended to the log before it is folded into the snapshot while running. */
const COMPACT_BYTES = 16 * 1024 * 1024;

interface SpendEntry {
  /** Key name. */
  k: string;
  /** Cost as exact decimal USD. */
  c: string;
  /** Ms since epoch. */
  t: number;
  /** Sequence number: entries at or below the snapshot's `upTo` are already in it. */
  n?: number;
}

/** Key name -> period id -> decimal USD. */
type Counters = Record<string, Record<string, string>>;

interface Snapshot {
  /** The last entry sequence number the counters include. */
  upTo: number;
  keys: Counters;
}

export interface LocalSpendLedgerOptions {
  readonly nowMs?: number;
  /** Log bytes that trigger a fold into the snapshot (tests make it small). */
  readonly compactBytes?: number;
}

export class LocalSpendLedger implements SpendLedger {
  readonly #counters = new Map<string, Map<string, Cost>>();
  readonly #directory: string;
  readonly #logger: Logger;
  readonly #compactBytes: number;
  #log: RecordLog;
  #logIndex = 0;
  #logBytes = 0;
  #seq = 0;
  #compacting: Promise<void> | undefined;

  private constructor(directory: string, logger: Logger, compactBytes: number) {
    this.#directory = directory;
    this.#logger = logger;
    this.#compactBytes = compactBytes;
    this.#log = new RecordLog(join(directory, LOG_FILES[0]), logger);
  }

  /**
   * Loads the snapshot, replays the logs' entries it does not include (a
   * crash can leave both logs, or a log already folded), writes a new
   * snapshot and starts an empty log.
   */
  static async open(directory: string, logger: Logger, options: LocalSpendLedgerOptions = {}): Promise<LocalSpendLedger> {
    const ledger = new LocalSpendLedger(directory, logger, options.compactBytes ?? COMPACT_BYTES);
    const snapshot = await readSnapshot(join(directory, SNAPSHOT_FILE));
    ledger.#load(snapshot.keys);
    ledger.#seq = snapshot.upTo;
    for (const name of [LEGACY_LOG_FILE, ...LOG_FILES]) {
      await replayRecordFile(
        join(directory, name),
        function replay(data) {
          const entry = JSON.parse(data.toString('utf8')) as SpendEntry;
          if (entry.n !== undefined && entry.n <= snapshot.upTo) return;
          ledger.#apply(entry.k, parseUsd(entry.c), entry.t);
          if (entry.n !== undefined && entry.n > ledger.#seq) ledger.#seq = entry.n;
        },
        logger,
      );
    }
    ledger.#dropPastPeriods(options.nowMs ?? Date.now());
    try {
      await ledger.#writeSnapshot({ upTo: ledger.#seq, keys: ledger.#snapshot() });
    } catch (err) {
      // On a full disk the gateway must still start: the logs stay (their
      // entries carry sequence numbers), new entries follow them, and the
      // next fold or start writes the snapshot.
      logger.warn({ err: String(err) }, 'the spend snapshot could not be written; keeping the spend logs as they are');
      return ledger;
    }
    for (const name of [LEGACY_LOG_FILE, ...LOG_FILES]) await unlink(join(directory, name)).catch(() => undefined);
    return ledger;
  }

  spent(key: string, period: BudgetPeriod, atMs: number): Promise<Cost> {
    return Promise.resolve(this.#counters.get(key)?.get(periodId(period, atMs)) ?? 0n);
  }

  add(key: string, cost: Cost, atMs: number): Promise<void> {
    if (cost <= 0n) return Promise.resolve();
    this.#apply(key, cost, atMs);
    this.#seq += 1;
    const entry: SpendEntry = { k: key, c: formatUsd(cost), t: atMs, n: this.#seq };
    const text = JSON.stringify(entry);
    this.#log.append(text, atMs);
    this.#logBytes += text.length;
    if (this.#logBytes >= this.#compactBytes && this.#compacting === undefined) {
      this.#compacting = this.#compact()
        .catch((err: unknown) => this.#logger.warn({ err: String(err) }, 'folding the spend log into its snapshot failed; the log keeps growing until the next start'))
        .finally(() => {
          this.#compacting = undefined;
        });
    }
    return Promise.resolve();
  }

  async flush(): Promise<void> {
    await this.#compacting;
    await this.#log.flush();
  }

  async close(): Promise<void> {
    await this.#compacting;
    await this.#log.close();
  }

  /**
   * Counters and sequence are taken and the other log file started in one
   * synchronous step, so the snapshot holds exactly the entries up to `upTo`
   * and every later entry goes to the new log.
   */
  async #compact(): Promise<void> {
    this.#dropPastPeriods(Date.now());
    const snapshot: Snapshot = { upTo: this.#seq, keys: this.#snapshot() };
    const old = this.#log;
    this.#logIndex = 1 - this.#logIndex;
    this.#log = new RecordLog(join(this.#directory, LOG_FILES[this.#logIndex] as string), this.#logger);
    this.#logBytes = 0;
    await old.close();
    await this.#writeSnapshot(snapshot);
    await unlink(old.path).catch(() => undefined);
    // Left by a start whose snapshot could not be written; this one holds its entries.
    await unlink(join(this.#directory, LEGACY_LOG_FILE)).catch(() => undefined);
  }

  async #writeSnapshot(snapshot: Snapshot): Promise<void> {
    const path = join(this.#directory, SNAPSHOT_FILE);
    try {
      await writeFile(`${path}.tmp`, JSON.stringify(snapshot), { mode: 0o600, flush: true });
      await rename(`${path}.tmp`, path);
    } catch (err) {
      await unlink(`${path}.tmp`).catch(() => undefined);
      throw err;
    }
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

  #load(counters: Counters): void {
    for (const [key, periods] of Object.entries(counters)) {
      this.#counters.set(key, new Map(Object.entries(periods).map(([id, usd]) => [id, parseUsd(usd)])));
    }
  }

  #dropPastPeriods(nowMs: number): void {
    const current = new Set(BUDGET_PERIODS.map((period) => periodId(period, nowMs)));
    for (const periods of this.#counters.values()) {
      for (const id of periods.keys()) if (!current.has(id)) periods.delete(id);
    }
  }

  #snapshot(): Counters {
    const out: Counters = {};
    for (const [key, periods] of this.#counters) {
      out[key] = Object.fromEntries([...periods].map(([id, cost]) => [id, formatUsd(cost)]));
    }
    return out;
  }
}

async function readSnapshot(path: string): Promise<Snapshot> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { upTo: 0, keys: {} };
    throw err;
  }
  // Earlier versions wrote the counters alone.
  if (typeof parsed === 'object' && parsed !== null && 'keys' in parsed && 'upTo' in parsed) return parsed as Snapshot;
  return { upTo: 0, keys: parsed as Counters };
}
