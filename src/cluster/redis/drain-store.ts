// API-managed drains shared through Redis: a hash of drain id -> JSON, a
// version counter bumped by every change, and a channel that announces it.
// Instances apply a change when the announcement arrives, and a poll of the
// version every second catches announcements missed while a subscriber
// reconnected. The local file is kept as this instance's copy, so it starts
// and serves on its last definitions while Redis is down. Changes need Redis
// (ClusterUnavailableError otherwise): two halves of a fleet never edit
// diverging copies. When Redis comes back empty (restarted without
// persistence, or flushed), the first instance with drains to reach it puts
// its copy back, and for SEED_MERGE_MS the others add the drains they have
// that Redis lacks; an instance with no drains never seeds, so an empty
// copy (a new pod) cannot empty the fleet.
import type { Logger } from 'pino';
import { ClusterUnavailableError, errorMessage, StorageWriteError } from '../../shared/errors.js';
import type { ChangeOutcome, DrainParser, DrainStore, StoredDrain } from '../drain-store.js';
import type { LocalDrainStore } from '../local/drain-store.js';
import type { RedisConnection } from './connection.js';

export const RESYNC_INTERVAL_MS = 1_000;
/**
 * After Redis gains its version key anew, how long instances add the drains
 * of their copies to it (ms). Every live instance re-reads the drains within
 * about 3 s of Redis returning (reconnection backoff up to 2 s, or the 1 s
 * poll after a flush); an API change ends the window sooner, so a drain
 * deleted through the API is not put back by a late copy.
 */
export const SEED_MERGE_MS = 30_000;
/** Reads of a drain after its change failed, each bounded by redis.timeout, before the outcome is called unknown. */
const READ_BACK_ATTEMPTS = 3;

// KEYS: version, hash, channel, merging; ARGV: merge window (ms), the
// version this instance last read (0: none), id, json, id, json, ...
// Returns the number of drains added (0: Redis kept what it had). A version
// below the one last read means Redis went back in time (restored from an
// older snapshot, or a lagging replica took over): as on an emptied Redis,
// the copy's drains Redis lacks go back, and so do those it changed since
// (a later updatedAt), instead of every instance deleting them; the version
// moves past the one read, so the others re-read and merge theirs too.
const SEED_SCRIPT = `
local stored = redis.call('GET', KEYS[1])
local fresh = not stored
local rewound = not fresh and tonumber(stored) < tonumber(ARGV[2])
if #ARGV < 4 or (not fresh and not rewound and redis.call('EXISTS', KEYS[4]) == 0) then return 0 end
local added = 0
for i = 3, #ARGV, 2 do
  local current = rewound and redis.call('HGET', KEYS[2], ARGV[i])
  if current then
    local ok, theirs = pcall(cjson.decode, current)
    local mine = tonumber(cjson.decode(ARGV[i + 1]).updatedAt) or 0
    if not ok or type(theirs) ~= 'table' or not tonumber(theirs.updatedAt) or mine > tonumber(theirs.updatedAt) then
      redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
      added = added + 1
    end
  else
    added = added + redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
  end
end
if fresh or rewound then
  redis.call('SET', KEYS[1], math.max(tonumber(stored) or 0, tonumber(ARGV[2])) + 1)
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[1])
elseif added > 0 then
  redis.call('INCR', KEYS[1])
end
if fresh or rewound or added > 0 then redis.call('PUBLISH', KEYS[3], 'seed') end
return added`;

// KEYS: version, hash, channel, merging; ARGV: merge window (ms), op (create,
// update, delete), id, json (update and create), the updatedAt the update was
// made from, the version this instance last read (0: none), the most drains
// a create may find ('full' when the hash holds that many). An update or
// delete applies only to a drain still in the hash, an update only to the
// version it was made from (else 'missing' or 'changed'); neither applies to
// a Redis without the version key, or with one below the version last read
// ('unseeded': this instance's copy goes back first, or the change would be
// undone, or a deleted drain put back, by copies merged after it). A create
// on a Redis without the version key opens the merge window, so instances
// with drains still add theirs; any other change closes it.
const CHANGE_SCRIPT = `
local stored = redis.call('GET', KEYS[1])
local fresh = not stored
local op, id = ARGV[2], ARGV[3]
local limit = tonumber(ARGV[7])
if op == 'create' and limit and redis.call('HLEN', KEYS[2]) >= limit then return 'full' end
if op ~= 'create' then
  if fresh or tonumber(stored) < tonumber(ARGV[6]) then return 'unseeded' end
  local current = redis.call('HGET', KEYS[2], id)
  if not current then return 'missing' end
  if op == 'update' then
    local ok, drain = pcall(cjson.decode, current)
    if not ok or type(drain) ~= 'table' or drain.updatedAt ~= tonumber(ARGV[5]) then return 'changed' end
  end
end
if fresh then redis.call('SET', KEYS[4], '1', 'PX', ARGV[1]) else redis.call('DEL', KEYS[4]) end
if op == 'delete' then redis.call('HDEL', KEYS[2], id) else redis.call('HSET', KEYS[2], id, ARGV[4]) end
redis.call('INCR', KEYS[1])
redis.call('PUBLISH', KEYS[3], id)
return 'applied'`;

type ScriptOutcome = ChangeOutcome | 'unseeded' | 'full';

export class RedisDrainStore<D extends StoredDrain> implements DrainStore<D> {
  readonly #redis: RedisConnection;
  readonly #local: LocalDrainStore<D>;
  readonly #parse: DrainParser<D>;
  readonly #logger: Logger;
  readonly #hash: string;
  readonly #versionKey: string;
  readonly #channel: string;
  readonly #mergingKey: string;
  #seenVersion: string | null | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopWatching: Array<() => void> = [];

  constructor(redis: RedisConnection, local: LocalDrainStore<D>, parse: DrainParser<D>, logger: Logger) {
    this.#redis = redis;
    this.#local = local;
    this.#parse = parse;
    this.#logger = logger;
    this.#hash = redis.key('drains');
    this.#versionKey = redis.key('drains', 'version');
    this.#channel = redis.key('drains', 'changed');
    this.#mergingKey = redis.key('drains', 'merging');
  }

  async load(): Promise<D[]> {
    const mine = await this.#local.load();
    if (!this.#redis.up) return mine;
    try {
      await this.#seed(mine);
      const client = this.#redis.client;
      const results = (await client.multi().get(this.#versionKey).hgetall(this.#hash).exec()) ?? [];
      const failed = results.find(([err]) => err !== null);
      if (failed !== undefined || results.length !== 2) throw failed?.[0] ?? new Error('the transaction was discarded');
      const version = results[0]?.[1];
      const all = results[1]?.[1];
      // No version: Redis is new or lost its data, and this instance had no
      // drains to put back. Its copy stands until one that has drains does.
      if (version === null) {
        this.#seenVersion = null;
        return mine;
      }
      const drains = this.#parseAll(all as Record<string, string>);
      if (JSON.stringify(drains) !== JSON.stringify(byId(mine))) await this.#keepCopy(() => this.#local.replace(drains));
      this.#seenVersion = version as string | null;
      return drains;
    } catch (err) {
      this.#logger.warn({ err: errorMessage(err) }, 'shared drains could not be read; using the local copy');
      return mine;
    }
  }

  async put(drain: D, limit = Infinity): Promise<boolean> {
    const outcome = await this.#change({ op: 'create', id: drain.id, json: JSON.stringify(drain), limit });
    if (outcome === 'full') return false;
    await this.#keepCopy(() => this.#local.put(drain));
    return true;
  }

  async update(drain: D, previousUpdatedAt: number): Promise<ChangeOutcome> {
    const outcome = await this.#changeSeeded({ op: 'update', id: drain.id, json: JSON.stringify(drain), previousUpdatedAt });
    if (outcome === 'applied') await this.#keepCopy(() => this.#local.put(drain));
    if (outcome === 'missing') await this.#keepCopy(() => this.#local.remove(drain.id));
    return outcome;
  }

  async remove(id: string): Promise<'applied' | 'missing'> {
    const outcome = await this.#changeSeeded({ op: 'delete', id });
    await this.#keepCopy(() => this.#local.remove(id));
    return outcome === 'missing' ? 'missing' : 'applied';
  }

  watch(onChange: () => void): void {
    const subscriber = this.#redis.subscriber();
    const channel = this.#channel;
    const onMessage = function onMessage(from: string) {
      if (from === channel) onChange();
    };
    subscriber.on('message', onMessage);
    subscriber.subscribe(channel).catch(() => undefined);
    this.#stopWatching.push(
      () => subscriber.off('message', onMessage),
      () => void subscriber.unsubscribe(channel).catch(() => undefined),
      this.#redis.onUp(onChange),
    );
    this.#timer = setInterval(() => void this.#poll(onChange), RESYNC_INTERVAL_MS);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    for (const stop of this.#stopWatching.splice(0)) stop();
  }

  /**
   * Writes this instance's copy after Redis has the change. A write the disk
   * refuses (full) leaves the copy behind without undoing the shared change,
   * which was made and must be answered as made (a client told it failed
   * would create the drain again); the next read of Redis writes the copy again.
   */
  async #keepCopy(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (err) {
      if (!(err instanceof StorageWriteError)) throw err;
      this.#logger.error({ err: err.message }, 'the local copy of the shared drains could not be written; it is written again when the shared drains are next read');
    }
  }

  async #poll(onChange: () => void): Promise<void> {
    if (!this.#redis.up) return;
    try {
      const version = await this.#redis.client.get(this.#versionKey);
      if (version !== this.#seenVersion) onChange();
    } catch {
      // The connection's own handler reports the outage.
    }
  }

  /**
   * A change to an existing drain. On a Redis that lost its drains, this
   * instance's copy (which has the drain) is put back first, as load() does.
   */
  async #changeSeeded(change: Change): Promise<ChangeOutcome> {
    let outcome = await this.#change(change);
    if (outcome === 'unseeded') {
      await this.load();
      outcome = await this.#change(change);
    }
    if (outcome === 'unseeded') throw new ClusterUnavailableError('the cluster Redis lost its drains and this instance could not put its copy back yet; nothing was changed, try again');
    if (outcome === 'full') throw new Error('only a create can find the drains full');
    return outcome;
  }

  /**
   * Runs one change. A change that fails may still have run (a timeout
   * leaves it queued in Redis), so the drain is read back before answering:
   * a client told 503 retries, and a retried create would make a second drain.
   */
  async #change(change: Change): Promise<ScriptOutcome> {
    if (!this.#redis.up) throw new ClusterUnavailableError('the cluster Redis is unreachable; drains cannot be changed until it is back (they keep running)');
    const { op, id } = change;
    const json = change.json ?? '';
    const previous = change.previousUpdatedAt === undefined ? '' : String(change.previousUpdatedAt);
    try {
      const limit = change.limit === undefined || !Number.isFinite(change.limit) ? '' : String(change.limit);
      const outcome = await this.#redis.client.eval(CHANGE_SCRIPT, 4, this.#versionKey, this.#hash, this.#channel, this.#mergingKey, SEED_MERGE_MS, op, id, json, previous, this.#lastRead(), limit);
      return outcome as ScriptOutcome;
    } catch (err) {
      const applied = await this.#applied(id, change.json ?? null);
      if (applied === true) {
        this.#logger.warn({ drain: id, err: errorMessage(err) }, 'the cluster Redis answered a drain change late; read back, it was applied');
        return 'applied';
      }
      if (applied === false) throw new ClusterUnavailableError(`the cluster Redis did not take the change: ${errorMessage(err)}`, { cause: err });
      throw new ClusterUnavailableError(`the cluster Redis did not answer in time (${errorMessage(err)}) and the outcome is unknown: the change may have been applied; list the drains before retrying`, { cause: err });
    }
  }

  /**
   * Whether the drain now reads as `json` (null: absent), or undefined when
   * Redis does not say. Commands on one connection run in order, so a read
   * that answers comes after the write: each try waits behind it for up to
   * redis.timeout.
   */
  async #applied(id: string, json: string | null): Promise<boolean | undefined> {
    for (let attempt = 0; attempt < READ_BACK_ATTEMPTS; attempt++) {
      if (!this.#redis.up) return undefined;
      try {
        return (await this.#redis.client.hget(this.#hash, id)) === json;
      } catch {
        // Still behind the write, or the connection failed: try again.
      }
    }
    return undefined;
  }

  /**
   * A Redis without our version key is new or lost its data: it gets this
   * instance's copy, unless that copy is empty. While the merge window is
   * open, drains of this copy that Redis lacks are added. One script, so no
   * instance ever reads the emptied hash between the version key appearing
   * and the drains being put back.
   */
  async #seed(mine: readonly D[]): Promise<void> {
    if (mine.length === 0) return;
    const args = mine.flatMap((drain) => [drain.id, JSON.stringify(drain)]);
    const added = await this.#redis.client.eval(SEED_SCRIPT, 4, this.#versionKey, this.#hash, this.#channel, this.#mergingKey, SEED_MERGE_MS, this.#lastRead(), ...args);
    if (typeof added === 'number' && added > 0) this.#logger.info({ drains: added }, 'cluster Redis lacked drains of the local copy; put them back');
  }

  /** The drains version this instance last read (0: none yet, or Redis had none). */
  #lastRead(): number {
    return Number(this.#seenVersion ?? 0);
  }

  #parseAll(all: Record<string, string>): D[] {
    const drains: D[] = [];
    for (const [id, text] of Object.entries(all)) {
      try {
        drains.push(this.#parse(JSON.parse(text) as unknown, ['redis', id]));
      } catch (err) {
        this.#logger.error({ drain: id, err: errorMessage(err) }, 'a shared drain is not valid; it is skipped');
      }
    }
    return byId(drains);
  }
}

interface Change {
  readonly op: 'create' | 'update' | 'delete';
  readonly id: string;
  /** The drain's JSON (create and update). */
  readonly json?: string;
  /** The version the update was made from (update). */
  readonly previousUpdatedAt?: number;
  /** The most drains a create may find (create; none: no limit). */
  readonly limit?: number;
}

function byId<D extends StoredDrain>(drains: readonly D[]): D[] {
  return [...drains].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
