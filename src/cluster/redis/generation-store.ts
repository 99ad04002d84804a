// Generation records and daily rollups shared by the fleet, so every
// instance answers GET /v1/generation and /v1/report the same. A rollup
// reads the larger of Redis's count and this instance's, so a Redis that
// lost its data does not make the report forget this instance's records. Each record
// is `<prefix>generation:<id>` (kept for the retention), and each day's
// rollups one hash `<prefix>rollup:<day>` of HINCRBY counters per key, model
// and provider (cost split in two exact integers, as in the spend ledger).
// Writes leave in one pipeline per event-loop turn, at most WRITE_BATCH
// records to a round trip. The local store records everything too: it
// answers while Redis is down, and what Redis missed is sent again when it
// is back, or a second later while the connection holds. Records Redis
// missed are also appended to `usage/generations-unshared.log` (the record
// log's framing, a record's usual text), emptied once Redis has every one,
// so an instance that dies before Redis is back sends them after its next
// start.
//
// A write that times out may still run in Redis, and is then sent again:
// one Lua script per record sets the record's key only if it is absent
// (SET NX, kept for the retention) and adds to the rollups only then, so a
// record sent twice counts once.
import { unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { generationIdTime, isGenerationId } from '../../shared/generation-id.js';
import { addToTotals, emptyTotals, rollupKeyOf, serializeGeneration, parseGeneration, type GenerationRecord, type RollupRow } from '../../shared/generation.js';
import { addDays } from '../../shared/periods.js';
import type { GenerationStore } from '../generation-store.js';
import { RecordLog, replayRecordFile } from '../record-log.js';
import type { RedisConnection } from './connection.js';

const SPLIT = 1_000_000_000n;
const MAX_MISSED = 100_000;
const MS_PER_DAY = 86_400_000;
const SEPARATOR = '\u0000';
const COUNTERS = ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning', 'requests'] as const;
/** Records per round trip, so a long outage's replay fits in redis.timeout. */
export const WRITE_BATCH = 500;
/** Records Redis refused on a live connection are sent again after this long (ms). */
const RETRY_MS = 1_000;
/** How long a lookup waits for a recent record that another instance may still be writing (ms). */
const LATE_RECORD_WAIT_MS = 500;
const LATE_RECORD_POLL_MS = 20;
/** Ids made longer ago than this are not waited for: requests rarely run so long (ms). */
const RECENT_ID_MS = 15 * 60_000;

const ADD_COMMAND = 'sluiceAddGeneration';
// KEYS: record, day's rollup hash; ARGV: record JSON, retention (ms), rollup expiry (ms), then field, increment, ...
const ADD_SCRIPT = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
for i = 4, #ARGV, 2 do redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1`;

interface AddCommand {
  [ADD_COMMAND](keys: number, ...args: Array<string | number>): unknown;
}

export interface RedisGenerationStoreOptions {
  readonly retentionMs: number;
  readonly logger: Logger;
  /** Where records Redis missed wait across restarts. */
  readonly unsharedPath: string;
}

export class RedisGenerationStore implements GenerationStore {
  readonly #redis: RedisConnection;
  readonly #local: GenerationStore;
  readonly #logger: Logger;
  #retentionMs: number;
  #pending: GenerationRecord[] = [];
  #missed: GenerationRecord[] = [];
  #scheduled = false;
  #sending: Promise<void> = Promise.resolve();
  #retry: NodeJS.Timeout | undefined;
  readonly #stopReplay: () => void;
  /** Closed: the file of records Redis lacks is the next store's, so nothing is sent again. */
  #closed = false;
  /** Records Redis missed, on disk until it has them all; only the send chain writes or empties it. */
  #unshared: RecordLog;
  /** Ids of the records in #unshared Redis has not taken yet (each written once, however often it is sent again). */
  readonly #unsharedIds = new Set<string>();
  /** Whether #unshared holds records (an earlier run's, or this one's). */
  #unsharedWritten = false;

  private constructor(redis: RedisConnection, local: GenerationStore, options: RedisGenerationStoreOptions) {
    this.#redis = redis;
    this.#local = local;
    this.#logger = options.logger;
    this.#retentionMs = options.retentionMs;
    this.#unshared = new RecordLog(options.unsharedPath, options.logger);
    if (!(ADD_COMMAND in redis.client)) redis.client.defineCommand(ADD_COMMAND, { lua: ADD_SCRIPT });
    this.#stopReplay = redis.onUp(() => this.#replayMissed());
  }

  /** Reads the records an earlier run could not share (within the retention) and sends them once Redis is reachable. */
  static async open(redis: RedisConnection, local: GenerationStore, options: RedisGenerationStoreOptions): Promise<RedisGenerationStore> {
    const store = new RedisGenerationStore(redis, local, options);
    const oldest = Date.now() - options.retentionMs;
    const earlier: GenerationRecord[] = [];
    await replayRecordFile(
      options.unsharedPath,
      function replay(data) {
        const record = parseGeneration(data.toString('utf8'));
        if (record.createdAt < oldest || store.#unsharedIds.has(record.id)) return;
        store.#unsharedIds.add(record.id);
        earlier.push(record);
      },
      options.logger,
    );
    store.#unsharedWritten = earlier.length > 0;
    if (earlier.length > 0) {
      options.logger.info({ records: earlier.length }, 'generation records the cluster Redis had not taken before the last stop are sent once it is reachable');
      store.#missed.push(...earlier);
      if (redis.up) store.#replayMissed();
    }
    return store;
  }

  /** For the records shared from now on (a reload's new service.usage.retention). */
  setRetention(retentionMs: number): void {
    this.#retentionMs = retentionMs;
  }

  add(record: GenerationRecord): void {
    this.#local.add(record);
    // A request that settled after the state closed: the file of what Redis lacks is closed (or the next store's).
    if (this.#closed) return;
    this.#enqueue([record]);
  }

  /**
   * The instance that served a request writes its record to Redis just
   * after the response ends, so a client that asks another instance at
   * once can be a few ms ahead of it: a recent id Redis answers it does not
   * have yet is looked for again until it arrives or LATE_RECORD_WAIT_MS has
   * passed. One Redis did not answer (down, or slow past redis.timeout) is
   * not waited for: each new look would wait out redis.timeout again.
   */
  async get(id: string): Promise<GenerationRecord | undefined> {
    const { record, answered } = await this.#find(id);
    if (record !== undefined || !answered || !isGenerationId(id) || Date.now() - generationIdTime(id) > RECENT_ID_MS) return record;
    for (const deadline = Date.now() + LATE_RECORD_WAIT_MS; Date.now() < deadline; ) {
      await sleep(LATE_RECORD_POLL_MS);
      const late = await this.#find(id);
      if (late.record !== undefined || !late.answered) return late.record;
    }
    return undefined;
  }

  /** The record from Redis, else this instance's own; `answered`: Redis said whether it has it. */
  async #find(id: string): Promise<{ record: GenerationRecord | undefined; answered: boolean }> {
    if (this.#redis.up) {
      try {
        const text = await this.#redis.client.get(this.#redis.key('generation', id));
        if (text !== null) return { record: parseGeneration(text), answered: true };
        return { record: await this.#local.get(id), answered: true };
      } catch {
        // Answer from this instance's own records.
      }
    }
    return { record: await this.#local.get(id), answered: false };
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
      return withLocal(rows, await this.#local.rollups(fromDay, toDay));
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
    this.#closed = true;
    this.#stopReplay();
    clearTimeout(this.#retry);
    this.#retry = undefined;
    await this.#send();
    await this.#sending.then(() => this.#unshared.close());
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
    for (let from = 0; from < records.length; from += WRITE_BATCH) {
      const batch = records.slice(from, from + WRITE_BATCH);
      if (!(await this.#writeBatch(batch))) return this.#remember(records.slice(from));
      for (const record of batch) this.#unsharedIds.delete(record.id);
    }
    if (this.#unsharedWritten && this.#unsharedIds.size === 0) await this.#emptyUnshared();
  }

  /** Redis has every record the file holds: it starts afresh. */
  async #emptyUnshared(): Promise<void> {
    const path = this.#unshared.path;
    await this.#unshared.close();
    await unlink(path).catch(() => undefined);
    this.#unshared = new RecordLog(path, this.#logger);
    this.#unsharedWritten = false;
  }

  /** One script call per record: each is atomic and counts once, so a batch need not be. */
  async #writeBatch(records: readonly GenerationRecord[]): Promise<boolean> {
    if (!this.#redis.up) return false;
    const pipeline = this.#redis.client.pipeline();
    const add = pipeline as unknown as AddCommand;
    for (const record of records) {
      const rollup = rollupKeyOf(record);
      const field = [rollup.key, rollup.model, rollup.provider].join(SEPARATOR) + SEPARATOR;
      const totals = emptyTotals();
      // The same arithmetic as the local rollups.
      addToTotals(totals, record);
      const increments: string[] = [];
      for (const counter of COUNTERS) if (totals[counter] !== 0) increments.push(field + counter, String(totals[counter]));
      increments.push(`${field}costHi`, (totals.cost / SPLIT).toString(), `${field}costLo`, (totals.cost % SPLIT).toString());
      add[ADD_COMMAND](2, this.#redis.key('generation', record.id), this.#redis.key('rollup', rollup.day), serializeGeneration(record), this.#retentionMs, this.#retentionMs + MS_PER_DAY, ...increments);
    }
    try {
      const results = (await pipeline.exec()) ?? [];
      return results.length === records.length && results.every(([err]) => err === null);
    } catch {
      return false;
    }
  }

  #remember(records: readonly GenerationRecord[]): void {
    this.#missed.push(...records);
    for (const record of records) {
      if (this.#unsharedIds.has(record.id)) continue;
      this.#unsharedIds.add(record.id);
      this.#unshared.append(serializeGeneration(record), record.createdAt);
      this.#unsharedWritten = true;
    }
    if (this.#missed.length > MAX_MISSED) {
      for (const given of this.#missed.splice(0, this.#missed.length - MAX_MISSED)) this.#unsharedIds.delete(given.id);
      this.#logger.warn('generation records missed by the cluster Redis exceed what is kept for it; the oldest stay local only');
    }
    // Refused on a live connection (an error reply, a timeout): tried again in a second; down: at the reconnection.
    if (this.#closed || this.#retry !== undefined || !this.#redis.up) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#replayMissed();
    }, RETRY_MS);
    this.#retry.unref();
  }

  #replayMissed(): void {
    const missed = this.#missed;
    this.#missed = [];
    this.#enqueue(missed);
  }
}

/**
 * Each counter of a row is the larger of Redis's and this instance's: both
 * only grow, so Redis's is the larger unless it lost its data (restarted
 * empty, flushed), and then this instance's own records still count.
 */
function withLocal(shared: RollupRow[], local: readonly RollupRow[]): RollupRow[] {
  const rows = new Map(shared.map((row) => [[row.day, row.key, row.model, row.provider].join(SEPARATOR), row] as const));
  for (const row of local) {
    const id = [row.day, row.key, row.model, row.provider].join(SEPARATOR);
    const known = rows.get(id);
    if (known === undefined) {
      rows.set(id, row);
      continue;
    }
    if (row.totals.cost > known.totals.cost) known.totals.cost = row.totals.cost;
    for (const counter of COUNTERS) known.totals[counter] = Math.max(known.totals[counter], row.totals[counter]);
  }
  return [...rows.values()];
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
