// API-managed drains shared through Redis: a hash of drain id -> JSON, a
// version counter bumped by every change, and a channel that announces it.
// Instances apply a change when the announcement arrives, and a poll of the
// version every second catches announcements missed while a subscriber
// reconnected. The local file is kept as this instance's copy, so it starts
// and serves on its last definitions while Redis is down. Changes need Redis
// (ClusterUnavailableError otherwise): two halves of a fleet never edit
// diverging copies. When Redis comes back empty (restarted without
// persistence), the first instance to reach it puts its copy back.
import type { Logger } from 'pino';
import { ClusterUnavailableError, errorMessage } from '../../shared/errors.js';
import type { DrainParser, DrainStore, StoredDrain } from '../drain-store.js';
import type { LocalDrainStore } from '../local/drain-store.js';
import type { RedisConnection } from './connection.js';

export const RESYNC_INTERVAL_MS = 1_000;

// KEYS: version, hash, channel; ARGV: id, json, id, json, ...
const SEED_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for i = 1, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('SET', KEYS[1], '1')
redis.call('PUBLISH', KEYS[3], 'seed')
return 1`;

export class RedisDrainStore<D extends StoredDrain> implements DrainStore<D> {
  readonly #redis: RedisConnection;
  readonly #local: LocalDrainStore<D>;
  readonly #parse: DrainParser<D>;
  readonly #logger: Logger;
  readonly #hash: string;
  readonly #versionKey: string;
  readonly #channel: string;
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
      const drains = this.#parseAll(all as Record<string, string>);
      if (JSON.stringify(drains) !== JSON.stringify(byId(mine))) await this.#local.replace(drains);
      this.#seenVersion = version as string | null;
      return drains;
    } catch (err) {
      this.#logger.warn({ err: errorMessage(err) }, 'shared drains could not be read; using the local copy');
      return mine;
    }
  }

  async put(drain: D): Promise<void> {
    await this.#change((multi) => multi.hset(this.#hash, drain.id, JSON.stringify(drain)), drain.id);
    await this.#local.put(drain);
  }

  async remove(id: string): Promise<void> {
    await this.#change((multi) => multi.hdel(this.#hash, id), id);
    await this.#local.remove(id);
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

  async #poll(onChange: () => void): Promise<void> {
    if (!this.#redis.up) return;
    try {
      const version = await this.#redis.client.get(this.#versionKey);
      if (version !== this.#seenVersion) onChange();
    } catch {
      // The connection's own handler reports the outage.
    }
  }

  async #change(write: (multi: ReturnType<RedisConnection['client']['multi']>) => unknown, id: string): Promise<void> {
    if (!this.#redis.up) throw new ClusterUnavailableError('the cluster Redis is unreachable; drains cannot be changed until it is back (they keep running)');
    const multi = this.#redis.client.multi();
    write(multi);
    multi.incr(this.#versionKey).publish(this.#channel, id);
    try {
      const results = (await multi.exec()) ?? [];
      const failed = results.find(([err]) => err !== null && err !== undefined);
      if (failed !== undefined) throw failed[0];
    } catch (err) {
      throw new ClusterUnavailableError(`the cluster Redis did not take the change: ${errorMessage(err)}`, { cause: err });
    }
  }

  /**
   * A Redis without our version key is new or lost its data: it gets this
   * instance's copy. One script, so no instance ever reads the emptied hash
   * between the version key appearing and the drains being put back.
   */
  async #seed(mine: readonly D[]): Promise<void> {
    const args = mine.flatMap((drain) => [drain.id, JSON.stringify(drain)]);
    const seeded = await this.#redis.client.eval(SEED_SCRIPT, 3, this.#versionKey, this.#hash, this.#channel, ...args);
    if (seeded === 1) this.#logger.info({ drains: mine.length }, 'cluster Redis had no drains; seeded it from the local copy');
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

function byId<D extends StoredDrain>(drains: readonly D[]): D[] {
  return [...drains].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
