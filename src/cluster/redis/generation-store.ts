// Generation records and daily rollups shared by the fleet, so every
// instance answers GET /v1/generation and /v1/report the same. Each record
// is `<prefix>generation:<id>` (kept for the retention), and each day's
// rollups one hash `<prefix>rollup:<day>` of HINCRBY counters per key, model
// and provider (cost split in two exact integers, as in the spend ledger).
// Writes leave in one pipeline per event-loop turn. The local store records
// everything too: it answers while Redis is down, and what Redis missed is
// sent again when it is back.
import type { Logger } from 'pino';
import { addToTotals, emptyTotals, rollupKeyOf, serializeGeneration, parseGeneration, type GenerationRecord, type RollupRow } from '../../shared/generation.js';
import { addDays } from '../../shared/periods.js';
import type { GenerationStore } from '../generation-store.js';
import type { RedisConnection } from './connection.js';

const SPLIT = 1_000_000_000n;
const MAX_MISSED = 100_000;
const MS_PER_DAY = 86_400_000;
const SEPARATOR = '\u0000';
const COUNTERS = ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning', 'requests'] as const;

export class RedisGenerationStore implements GenerationStore {
  readonly #redis: RedisConnection;
  readonly #local: GenerationStore;
  readonly #logger: Logger;
  readonly #retentionMs: number;
  #pending: GenerationRecord[] = [];
  #missed: GenerationRecord[] = [];
  #scheduled = false;
  #sending: Promise<void> = Promise.resolve();
  readonly #stopReplay: () => void;

  constructor(redis: RedisConnection, local: GenerationStore, options: { retentionMs: number; logger: Logger }) {
    this.#redis = redis;
    this.#local = local;
    this.#logger = options.logger;
    this.#retentionMs = options.retentionMs;
    this.#stopReplay = redis.onUp(() => {
      const missed = this.#missed;
      this.#missed = [];
      this.#enqueue(missed);
    });
  }

  add(record: GenerationRecord): void {
    this.#local.add(record);
    this.#enqueue([record]);
  }

  async get(id: string): Promise<GenerationRecord | undefined> {
    if (this.#redis.up) {
      try {
        const text = await this.#redis.client.get(this.#redis.key('generation', id));
        if (text !== null) return parseGeneration(text);
      } catch {
        // Answer from this instance's own records.
      }
    }
    return this.#local.get(id);
  }

  async rollups(fromDay: string, toDay: string): Promise<RollupRow[]> {
    if (!this.#redis.up) return this.#local.rollups(fromDay, toDay);
    const days: string[] = [];
    for (let day = fromDay; day <= toDay && days.length <= 3_660; day = addDays(day, 1)) days.push(day);
    try {
      const pipeline = this.#redis.client.pipeline();
      for (const day of days) pipeline.hgetall(this.#redis.key('rollup', day));
      const results = (await pipeline.exec()) ?? [];
      const rows: RollupRow[] = [];
      results.forEach(([err, value], i) => {
        if (err !== null) throw err;
        rows.push(...rowsOf(days[i] ?? '', value as Record<string, string>));
      });
      return rows;
    } catch {
      return this.#local.rollups(fromDay, toDay);
    }
  }

  async flush(): Promise<void> {
    await this.#send();
    await this.#local.flush();
  }

  /** The local store is LocalState's to close. */
  async close(): Promise<void> {
    this.#stopReplay();
    await this.#send();
    await this.#local.flush();
  }

  #enqueue(records: readonly GenerationRecord[]): void {
    if (records.length === 0) return;
    this.#pending.push(...records);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => void this.#send());
  }

  #send(): Promise<void> {
    this.#sending = this.#sending.then(() => this.#write());
    return this.#sending;
  }

  async #write(): Promise<void> {
    this.#scheduled = false;
    const records = this.#pending;
    if (records.length === 0) return;
    this.#pending = [];
    if (!this.#redis.up) return this.#remember(records);
    const pipeline = this.#redis.client.multi();
    for (const record of records) {
      pipeline.set(this.#redis.key('generation', record.id), serializeGeneration(record), 'PX', this.#retentionMs);
      const rollup = rollupKeyOf(record);
      const hash = this.#redis.key('rollup', rollup.day);
      const field = [rollup.key, rollup.model, rollup.provider].join(SEPARATOR) + SEPARATOR;
      const totals = emptyTotals();
      // The same arithmetic as the local rollups.
      addToTotals(totals, record);
      for (const counter of COUNTERS) if (totals[counter] !== 0) pipeline.hincrby(hash, field + counter, totals[counter]);
      pipeline.hincrby(hash, `${field}costHi`, (totals.cost / SPLIT).toString()).hincrby(hash, `${field}costLo`, (totals.cost % SPLIT).toString());
      pipeline.pexpire(hash, this.#retentionMs + MS_PER_DAY);
    }
    try {
      const results = (await pipeline.exec()) ?? [];
      if (results.some(([err]) => err !== null)) this.#remember(records);
    } catch {
      this.#remember(records);
    }
  }

  #remember(records: readonly GenerationRecord[]): void {
    this.#missed.push(...records);
    if (this.#missed.length > MAX_MISSED) {
      this.#missed.splice(0, this.#missed.length - MAX_MISSED);
      this.#logger.warn('generation records missed by the cluster Redis exceed what is kept for it; the oldest stay local only');
    }
  }
}

function rowsOf(day: string, hash: Record<string, string>): RollupRow[] {
  const rows = new Map<string, RollupRow & { totals: ReturnType<typeof emptyTotals> }>();
  for (const [field, value] of Object.entries(hash)) {
    const parts = field.split(SEPARATOR);
    const [key = '', model = '', provider = '', counter = ''] = parts;
    const id = parts.slice(0, 3).join(SEPARATOR);
    let row = rows.get(id);
    if (row === undefined) {
      row = { day, key, model, provider, totals: emptyTotals() };
      rows.set(id, row);
    }
    if (counter === 'costHi') row.totals.cost += BigInt(value) * SPLIT;
    else if (counter === 'costLo') row.totals.cost += BigInt(value);
    else if ((COUNTERS as readonly string[]).includes(counter)) row.totals[counter as (typeof COUNTERS)[number]] = Number(value);
  }
  return [...rows.values()];
}
