// Live instances: each writes `<prefix>instance:<id>` (its description, with
// a TTL) and its time in the `<prefix>instances` sorted set every
// HEARTBEAT_INTERVAL_MS. An instance that stops writing disappears from the
// list once HEARTBEAT_TTL_MS has passed, whether it stopped cleanly or not.
import type { RedisConnection } from './connection.js';

export const HEARTBEAT_INTERVAL_MS = 2_000;
export const HEARTBEAT_TTL_MS = 10_000;

export interface InstanceInfo {
  readonly id: string;
  readonly version: string;
  /** The admin endpoint as other instances and operators reach it. */
  readonly address: string;
  /** ms since the epoch */
  readonly startedAt: number;
  readonly lastHeartbeat: number;
}

export class Heartbeats {
  readonly #redis: RedisConnection;
  readonly #describe: () => Omit<InstanceInfo, 'lastHeartbeat'>;
  readonly #setKey: string;
  #timer: NodeJS.Timeout | undefined;

  constructor(redis: RedisConnection, describe: () => Omit<InstanceInfo, 'lastHeartbeat'>) {
    this.#redis = redis;
    this.#describe = describe;
    this.#setKey = redis.key('instances');
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.beat(), HEARTBEAT_INTERVAL_MS);
    this.#timer.unref();
    this.#redis.onUp(() => void this.beat());
  }

  async beat(): Promise<void> {
    if (!this.#redis.up) return;
    const info: InstanceInfo = { ...this.#describe(), lastHeartbeat: Date.now() };
    try {
      await this.#redis.client
        .multi()
        .set(this.#redis.key('instance', info.id), JSON.stringify(info), 'PX', HEARTBEAT_TTL_MS)
        .zadd(this.#setKey, info.lastHeartbeat, info.id)
        .zremrangebyscore(this.#setKey, '-inf', info.lastHeartbeat - HEARTBEAT_TTL_MS)
        .exec();
    } catch {
      // Reported by the connection; the next beat tries again.
    }
  }

  /** The instances whose heartbeat is younger than the TTL; throws when Redis cannot answer. */
  async live(): Promise<InstanceInfo[]> {
    const ids = await this.#redis.client.zrangebyscore(this.#setKey, Date.now() - HEARTBEAT_TTL_MS, '+inf');
    if (ids.length === 0) return [];
    const values = await this.#redis.client.mget(ids.map((id) => this.#redis.key('instance', id)));
    const live: InstanceInfo[] = [];
    for (const value of values) if (value !== null) live.push(JSON.parse(value) as InstanceInfo);
    return live.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (!this.#redis.up) return;
    const id = this.#describe().id;
    // A clean stop leaves the list at once.
    await this.#redis.client.multi().del(this.#redis.key('instance', id)).zrem(this.#setKey, id).exec().catch(() => undefined);
  }
}
