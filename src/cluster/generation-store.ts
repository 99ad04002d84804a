// Generation records and their daily rollups. The local store writes one
// record log per UTC day (`generations/<day>.log`, by the day the record was
// written), keeps rollups per day, key, model and provider in memory, and
// saves a finished day's rollups beside its log (`<day>.rollup.json`) so a
// restart reads only today's records. Days older than the retention are
// deleted. Lookups by id read recent records from memory and older ones
// from the log of the day the id was made (its ULID time) or the next.
import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { generationIdTime, isGenerationId } from '../shared/generation-id.js';
import { addToTotals, emptyTotals, mergeTotals, parseGeneration, rollupKeyOf, serializeGeneration, type GenerationRecord, type RollupRow, type RollupTotals } from '../shared/generation.js';
import { formatUsd, parseUsd } from '../shared/money.js';
import { addDays, dayOf, dayStart } from '../shared/periods.js';
import { RecentGenerations } from './recent-generations.js';
import { RecordLog, replayRecordFile } from './record-log.js';

export interface GenerationStore {
  /** Records one answered request; durable within a second. */
  add(record: GenerationRecord): void;
  get(id: string): Promise<GenerationRecord | undefined>;
  /** Rollup rows of the UTC days from `fromDay` to `toDay`, both included. */
  rollups(fromDay: string, toDay: string): Promise<RollupRow[]>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface LocalGenerationStoreOptions {
  readonly directory: string;
  readonly retentionMs: number;
  readonly logger: Logger;
}

/** Recent records answered from memory without reading a log: between this many and twice as many. */
const RECENT_RECORDS = 10_000;
const LOG_NAME = /^(\d{4}-\d{2}-\d{2})\.log$/;
const MS_PER_DAY = 86_400_000;
/** ms between retention sweeps. */
const PRUNE_INTERVAL_MS = 3_600_000;

interface Rollup {
  readonly key: string;
  readonly model: string;
  readonly provider: string;
  readonly totals: RollupTotals;
}

type SerializedRollup = Omit<RollupRow, 'totals'> & { totals: Omit<RollupTotals, 'cost'> & { cost: string } };

export class LocalGenerationStore implements GenerationStore {
  readonly #directory: string;
  #retentionMs: number;
  readonly #logger: Logger;
  /** day -> `key\0model\0provider` -> rollup. */
  readonly #rollups = new Map<string, Map<string, Rollup>>();
  /** The newest records by id, as their serialized text (recent-generations.ts). */
  readonly #recent = new RecentGenerations(RECENT_RECORDS);
  #log: RecordLog | undefined;
  #logDay = '';
  /** The current log's UTC day as ms, [starts, ends): the day is worked out only when a record falls outside it. */
  #logDayStarts = 0;
  #logDayEnds = 0;
  #pruneTimer: NodeJS.Timeout | undefined;
  /**
   * Records added since the last turn of the loop, written together on the
   * next (and before any read): one request's record at a time, the code
   * that writes it was cold in the CPU's caches, and the gateway's CPU per
   * request was 2-4% higher (bench/RESULTS.md, gateway maximum notes).
   */
  #pending: GenerationRecord[] = [];
  /** Date.now() when each pending record was added. */
  #pendingAt: number[] = [];
  /** The previous day's log closing and its rollups being saved. */
  #rotating: Promise<void> = Promise.resolve();
  #closing: Promise<void> | undefined;

  private constructor(options: LocalGenerationStoreOptions) {
    this.#directory = options.directory;
    this.#retentionMs = options.retentionMs;
    this.#logger = options.logger;
  }

  static async open(options: LocalGenerationStoreOptions): Promise<LocalGenerationStore> {
    const store = new LocalGenerationStore(options);
    await mkdir(options.directory, { recursive: true, mode: 0o700 });
    await store.#prune(Date.now());
    await store.#load(dayOf(Date.now()));
    store.#pruneTimer = setInterval(() => void store.#prune(Date.now()).catch((err: unknown) => options.logger.warn({ err: String(err) }, 'pruning generation records failed')), PRUNE_INTERVAL_MS);
    store.#pruneTimer.unref();
    return store;
  }

  /** From the next sweep on (a reload's new service.usage.retention). */
  setRetention(retentionMs: number): void {
    this.#retentionMs = retentionMs;
  }

  add(record: GenerationRecord): void {
    this.#pendingAt.push(Date.now());
    if (this.#pending.push(record) === 1) setImmediate(this.#writeAdded);
  }

  /** Writes the records added since the last turn of the loop, each in the log of the day it was added. */
  readonly #writeAdded = (): void => {
    const pending = this.#pending;
    if (pending.length === 0) return;
    const addedAt = this.#pendingAt;
    this.#pending = [];
    this.#pendingAt = [];
    try {
      for (let i = 0; i < pending.length; i++) {
        const record = pending[i] as GenerationRecord;
        const at = addedAt[i] as number;
        if (at >= this.#logDayEnds || at < this.#logDayStarts) this.#rotate(dayOf(at));
        const text = serializeGeneration(record);
        (this.#log as RecordLog).append(text, at);
        this.#recent.add(record.id, text);
        this.#count(record);
      }
    } catch (err) {
      // Only a closed log refuses a record: the store was closed under a gateway still answering.
      this.#logger.error({ err: String(err), records: pending.length }, 'generation records not written');
    }
  };

  async get(id: string): Promise<GenerationRecord | undefined> {
    this.#writeAdded();
    const recent = this.#recent.get(id);
    if (recent !== undefined) return parseGeneration(recent);
    if (!isGenerationId(id)) return undefined;
    const made = dayOf(generationIdTime(id));
    // An id from the future or from before the retention has no log to read.
    const now = Date.now();
    if (made > dayOf(now) || made < dayOf(now - this.#retentionMs)) return undefined;
    const needle = Buffer.from(`"id":"${id}"`);
    for (const day of [made, addDays(made, 1)]) {
      let found: GenerationRecord | undefined;
      await replayRecordFile(
        join(this.#directory, `${day}.log`),
        function match(data) {
          if (found === undefined && data.includes(needle)) found = parseGeneration(data.toString('utf8'));
        },
        this.#logger,
      );
      if (found !== undefined) return found;
    }
    return undefined;
  }

  rollups(fromDay: string, toDay: string): Promise<RollupRow[]> {
    this.#writeAdded();
    const rows: RollupRow[] = [];
    for (let day = fromDay; day <= toDay; day = addDays(day, 1)) {
      for (const rollup of this.#rollups.get(day)?.values() ?? []) rows.push({ day, ...rollup, totals: { ...rollup.totals } });
    }
    return Promise.resolve(rows);
  }

  flush(): Promise<void> {
    this.#writeAdded();
    return this.#log?.flush() ?? Promise.resolve();
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#writeAdded();
      clearInterval(this.#pruneTimer);
      await this.#log?.close();
      await this.#rotating;
    })();
    return this.#closing;
  }

  #rotate(day: string): void {
    const previous = this.#log;
    const previousDay = this.#logDay;
    this.#log = new RecordLog(join(this.#directory, `${day}.log`), this.#logger);
    this.#logDay = day;
    this.#logDayStarts = dayStart(day) ?? 0;
    this.#logDayEnds = this.#logDayStarts + MS_PER_DAY;
    if (previous === undefined) return;
    this.#rotating = previous
      .close()
      .then(() => this.#saveRollups(previousDay, this.#rowsWrittenOn(previousDay)))
      .catch((err: unknown) => this.#logger.warn({ err: String(err), day: previousDay }, 'closing a day of generation records failed'));
  }

  #count(record: GenerationRecord): void {
    const at = record.createdAt;
    const dayName = at >= this.#logDayStarts && at < this.#logDayEnds ? this.#logDay : dayOf(at);
    let day = this.#rollups.get(dayName);
    if (day === undefined) {
      day = new Map();
      this.#rollups.set(dayName, day);
    }
    const id = `${record.key}\u0000${record.model}\u0000${record.provider}`;
    let rollup = day.get(id);
    if (rollup === undefined) {
      rollup = { key: record.key, model: record.model, provider: record.provider, totals: emptyTotals() };
      day.set(id, rollup);
    }
    addToTotals(rollup.totals, record);
  }

  /**
   * Finished days come from their saved rollups, or are read once and saved;
   * today's log is read whole (its records also fill the recent cache).
   */
  async #load(today: string): Promise<void> {
    const names = (await readdir(this.#directory)).filter((name) => LOG_NAME.test(name)).sort();
    for (const name of names) {
      const day = (LOG_NAME.exec(name) as RegExpExecArray)[1] as string;
      if (day !== today && (await this.#loadSavedRollups(day))) continue;
      const rows: RollupRow[] = [];
      const collect = new LocalRollupCollector(rows);
      await replayRecordFile(
        join(this.#directory, name),
        (data) => {
          const text = data.toString('utf8');
          const record = parseGeneration(text);
          collect.add(record);
          if (day === today) this.#recent.add(record.id, text);
        },
        this.#logger,
      );
      for (const row of rows) this.#merge(row);
      if (day !== today) await this.#saveRollups(day, rows);
    }
  }

  async #loadSavedRollups(day: string): Promise<boolean> {
    let text: string;
    try {
      text = await readFile(join(this.#directory, `${day}.rollup.json`), 'utf8');
    } catch {
      return false;
    }
    for (const row of JSON.parse(text) as SerializedRollup[]) this.#merge({ ...row, totals: { ...row.totals, cost: parseUsd(row.totals.cost) } });
    return true;
  }

  #merge(row: RollupRow): void {
    let day = this.#rollups.get(row.day);
    if (day === undefined) {
      day = new Map();
      this.#rollups.set(row.day, day);
    }
    const id = `${row.key}\u0000${row.model}\u0000${row.provider}`;
    const existing = day.get(id);
    if (existing === undefined) {
      day.set(id, { key: row.key, model: row.model, provider: row.provider, totals: { ...row.totals } });
      return;
    }
    mergeTotals(existing.totals, row.totals);
  }

  /** The rollups of the records written on `day` (read back from its log, which is closed). */
  async #rowsWrittenOn(day: string): Promise<RollupRow[]> {
    const rows: RollupRow[] = [];
    const collect = new LocalRollupCollector(rows);
    await replayRecordFile(join(this.#directory, `${day}.log`), (data) => collect.add(parseGeneration(data.toString('utf8'))), this.#logger);
    return rows;
  }

  async #saveRollups(day: string, rows: RollupRow[] | Promise<RollupRow[]>): Promise<void> {
    const serialized: SerializedRollup[] = (await rows).map((row) => ({ ...row, totals: { ...row.totals, cost: formatUsd(row.totals.cost) } }));
    const path = join(this.#directory, `${day}.rollup.json`);
    await writeFile(`${path}.tmp`, JSON.stringify(serialized), { mode: 0o600, flush: true });
    await rename(`${path}.tmp`, path);
  }

  async #prune(nowMs: number): Promise<void> {
    const oldestKept = dayOf(nowMs - this.#retentionMs + MS_PER_DAY);
    for (const name of await readdir(this.#directory)) {
      const day = name.slice(0, 10);
      if (/^\d{4}-\d{2}-\d{2}\./.test(name) && day < oldestKept && day !== this.#logDay) await unlink(join(this.#directory, name)).catch(() => undefined);
    }
    for (const day of this.#rollups.keys()) if (day < oldestKept) this.#rollups.delete(day);
  }
}

/** Sums records into rollup rows (one per day, key, model and provider). */
class LocalRollupCollector {
  readonly #rows: RollupRow[];
  readonly #index = new Map<string, RollupRow>();

  constructor(rows: RollupRow[]) {
    this.#rows = rows;
  }

  add(record: GenerationRecord): void {
    const key = rollupKeyOf(record);
    const id = `${key.day}\u0000${key.key}\u0000${key.model}\u0000${key.provider}`;
    let row = this.#index.get(id);
    if (row === undefined) {
      row = { ...key, totals: emptyTotals() };
      this.#index.set(id, row);
      this.#rows.push(row);
    }
    addToTotals(row.totals, record);
  }
}
