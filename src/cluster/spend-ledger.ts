// Spend per key and budget period. The local ledger keeps every counter in
// memory and appends each addition, numbered, to a record log (durable
// within a second). At open, and whenever the log passes COMPACT_BYTES, the
// counters are folded into a snapshot (`spend.json`, written to a temporary
// file and renamed, naming the last entry it includes) and the log starts
// afresh. Periods that are over are dropped then, except `total`.
//
// In cluster mode (`outbox`), each addition also waits in an outbox until the
// cluster's Redis has it: its entry names the ledger it is shared under (one
// per process, so a sequence number lost with the log's last second is never
// used twice under one name), a mark `{a: n}` is appended once Redis has
// every addition up to n, and the snapshot keeps the outbox. An instance that
// dies before Redis takes its spend sends it after its next start.
import { randomBytes } from 'node:crypto';
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
  /** Cluster mode: the ledger it is shared under; it waits in the outbox until a mark covers it. */
  s?: string;
}

/** Cluster mode: the cluster has every addition numbered up to `a`. */
interface SharedMark {
  a: number;
  /** Always 0: an earlier version, which passes over entries at or below its snapshot, passes over a mark too (a rollback still starts). */
  n: 0;
}

/** An addition the cluster has not confirmed yet, oldest first in the outbox. */
export interface UnsharedSpend {
  /** The ledger it is shared under: the process that made it. */
  readonly ledger: string;
  readonly seq: number;
  readonly key: string;
  readonly cost: Cost;
  readonly atMs: number;
}

/** Key name -> period id -> decimal USD. */
type Counters = Record<string, Record<string, string>>;

interface Snapshot {
  /** The last entry sequence number the counters include. */
  upTo: number;
  keys: Counters;
  /** Cluster mode: the outbox (entries at or below `upTo` the cluster has not confirmed). */
  outbox?: SpendEntry[];
}

/** Outbox entries kept for the cluster while it is unreachable; beyond this the oldest are given up (logged). */
export const MAX_UNSHARED = 100_000;

export interface LocalSpendLedgerOptions {
  readonly nowMs?: number;
  /** Log bytes that trigger a fold into the snapshot (tests make it small). */
  readonly compactBytes?: number;
  /** Cluster mode: keep the additions the cluster has not confirmed, across restarts. */
  readonly outbox?: boolean;
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
  /** The ledger this process's additions are shared under; undefined: no outbox (local mode). */
  readonly #ledgerId: string | undefined;
  #outbox: UnsharedSpend[] = [];

  private constructor(directory: string, logger: Logger, compactBytes: number, outbox: boolean) {
    this.#directory = directory;
    this.#logger = logger;
    this.#compactBytes = compactBytes;
    this.#ledgerId = outbox ? randomBytes(9).toString('base64url') : undefined;
    this.#log = new RecordLog(join(directory, LOG_FILES[0]), logger);
  }

  /**
   * Loads the snapshot, replays the logs' entries it does not include (a
   * crash can leave both logs, or a log already folded), writes a new
   * snapshot and starts an empty log. With `outbox`, the additions of earlier
   * runs that no mark covers are kept for the cluster (in sequence order:
   * the two logs may hold them either way round).
   */
  static async open(directory: string, logger: Logger, options: LocalSpendLedgerOptions = {}): Promise<LocalSpendLedger> {
    const ledger = new LocalSpendLedger(directory, logger, options.compactBytes ?? COMPACT_BYTES, options.outbox ?? false);
    const snapshot = await readSnapshot(join(directory, SNAPSHOT_FILE));
    ledger.#load(snapshot.keys);
    ledger.#seq = snapshot.upTo;
    const unshared = (snapshot.outbox ?? []).flatMap(unsharedOf);
    let sharedUpTo = 0;
    for (const name of [LEGACY_LOG_FILE, ...LOG_FILES]) {
      await replayRecordFile(
        join(directory, name),
        function replay(data) {
          const record = JSON.parse(data.toString('utf8')) as SpendEntry | SharedMark;
          if ('a' in record) {
            sharedUpTo = Math.max(sharedUpTo, record.a);
            return;
          }
          if (record.n !== undefined && record.n <= snapshot.upTo) return;
          ledger.#apply(record.k, parseUsd(record.c), record.t);
          if (record.n !== undefined && record.n > ledger.#seq) ledger.#seq = record.n;
          unshared.push(...unsharedOf(record));
        },
        logger,
      );
    }
    if (ledger.#ledgerId !== undefined) {
      ledger.#outbox = unshared.filter((addition) => addition.seq > sharedUpTo).sort((x, y) => x.seq - y.seq);
      if (ledger.#outbox.length > 0) logger.info({ additions: ledger.#outbox.length }, 'spend the cluster Redis had not taken before the last stop is sent once it is reachable');
    }
    ledger.#dropPastPeriods(options.nowMs ?? Date.now());
    try {
      await ledger.#writeSnapshot(ledger.#snapshotNow());
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
    if (this.#ledgerId !== undefined) {
      entry.s = this.#ledgerId;
      this.#outbox.push({ ledger: this.#ledgerId, seq: this.#seq, key, cost, atMs });
      const oldest = this.#outbox.length > MAX_UNSHARED ? this.#outbox[0] : undefined;
      if (oldest !== undefined) {
        this.#logger.warn('spend missed by the cluster Redis exceeds what is kept for it; the oldest addition is counted locally only');
        this.markShared(oldest.seq);
      }
    }
    try {
      this.#append(JSON.stringify(entry), atMs);
    } catch (err) {
      // A closed ledger (a request that settled after a reload closed it): the caller's catch says so.
      return Promise.reject(err);
    }
    return Promise.resolve();
  }

  /** Cluster mode: the additions the cluster has not confirmed, oldest first (markShared() takes them off). */
  get outbox(): readonly UnsharedSpend[] {
    return this.#outbox;
  }

  /** Cluster mode: the cluster has every addition up to `seq` (or gives them up); durable as an addition is. */
  markShared(seq: number): void {
    let taken = 0;
    while (taken < this.#outbox.length && (this.#outbox[taken]?.seq ?? Infinity) <= seq) taken += 1;
    if (taken === 0) return;
    this.#outbox.splice(0, taken);
    const mark: SharedMark = { a: seq, n: 0 };
    this.#append(JSON.stringify(mark), Date.now());
  }

  #append(text: string, atMs: number): void {
    this.#log.append(text, atMs);
    this.#logBytes += text.length;
    if (this.#logBytes >= this.#compactBytes && this.#compacting === undefined) {
      this.#compacting = this.#compact()
        .catch((err: unknown) => this.#logger.warn({ err: String(err) }, 'folding the spend log into its snapshot failed; the log keeps growing until the next start'))
        .finally(() => {
          this.#compacting = undefined;
        });
    }
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
    const snapshot = this.#snapshotNow();
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

  #snapshotNow(): Snapshot {
    const keys: Counters = {};
    for (const [key, periods] of this.#counters) {
      keys[key] = Object.fromEntries([...periods].map(([id, cost]) => [id, formatUsd(cost)]));
    }
    if (this.#ledgerId === undefined) return { upTo: this.#seq, keys };
    const outbox = this.#outbox.map(({ ledger, seq, key, cost, atMs }): SpendEntry => ({ k: key, c: formatUsd(cost), t: atMs, n: seq, s: ledger }));
    return { upTo: this.#seq, keys, outbox };
  }
}

/** The outbox addition an entry stands for; none for an entry not meant for the cluster. */
function unsharedOf(entry: SpendEntry): UnsharedSpend[] {
  if (entry.s === undefined || entry.n === undefined) return [];
  return [{ ledger: entry.s, seq: entry.n, key: entry.k, cost: parseUsd(entry.c), atMs: entry.t }];
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
