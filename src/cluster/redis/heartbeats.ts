// Live instances: each writes `<prefix>instance:<id>` (its description, with
// a TTL) and its id in the `<prefix>instances` sorted set (the index of
// instance keys) every HEARTBEAT_INTERVAL_MS. An instance that stops writing
// disappears from the list once HEARTBEAT_TTL_MS has passed, whether it
// stopped cleanly or not. Liveness is Redis's to tell: its key expiry and its
// own clock (TIME) for the index's scores, never the instances' clocks, so
// one whose clock is off neither prunes the others nor is pruned by them.
// Beats and reads are the connection's probes: one Redis leaves unanswered
// marks it stalled (see RedisConnection.probe).
import type { RedisConnection } from './connection.js';

export const HEARTBEAT_INTERVAL_MS = 2_000;
export const HEARTBEAT_TTL_MS = 10_000;

const BEAT_COMMAND = 'sluiceHeartbeat';
// KEYS: the instance's key, the index; ARGV: the description, the id, the TTL (ms).
// The index is scored and pruned by Redis's clock.
const BEAT_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]))
return 1`;

const LIVE_COMMAND = 'sluiceLiveInstances';
// KEYS: the index; ARGV: the prefix of instance keys. One round trip, so a
// stalled Redis costs the status one redis.timeout, not one per command. The
// instance keys are named from the index (standalone Redis runs such scripts).
const LIVE_SCRIPT = `
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
if #ids == 0 then return {} end
for i, id in ipairs(ids) do ids[i] = ARGV[1] .. id end
return redis.call('MGET', unpack(ids))`;

interface HeartbeatCommands {
  [BEAT_COMMAND](keys: 2, instanceKey: string, index: string, info: string, id: string, ttlMs: number): Promise<unknown>;
  [LIVE_COMMAND](keys: 1, index: string, instanceKeyPrefix: string): Promise<Array<string | null>>;
}

export interface InstanceInfo {
  readonly id: string;
  readonly version: string;
  /** The admin endpoint as other instances and operators reach it. */
  readonly address: string;
  /** ms since the epoch */
  readonly startedAt: number;
  /** ms since the epoch, by the instance's own clock (shown, never compared). */
  readonly lastHeartbeat: number;
}

export class Heartbeats {
  readonly #redis: RedisConnection;
  readonly #describe: () => Omit<InstanceInfo, 'lastHeartbeat'>;
  readonly #setKey: string;
  #timer: NodeJS.Timeout | undefined;
  #stopBeatingOnUp: (() => void) | undefined;

  constructor(redis: RedisConnection, describe: () => Omit<InstanceInfo, 'lastHeartbeat'>) {
    this.#redis = redis;
    this.#describe = describe;
    this.#setKey = redis.key('instances');
    if (!(BEAT_COMMAND in redis.client)) redis.client.defineCommand(BEAT_COMMAND, { lua: BEAT_SCRIPT });
    if (!(LIVE_COMMAND in redis.client)) redis.client.defineCommand(LIVE_COMMAND, { lua: LIVE_SCRIPT });
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.beat(), HEARTBEAT_INTERVAL_MS);
    this.#timer.unref();
    this.#stopBeatingOnUp = this.#redis.onUp(() => void this.beat());
  }

  async beat(): Promise<void> {
    if (!this.#redis.up) return;
    const info: InstanceInfo = { ...this.#describe(), lastHeartbeat: Date.now() };
    const client = this.#redis.client as unknown as HeartbeatCommands;
    try {
      await this.#redis.probe(client[BEAT_COMMAND](2, this.#redis.key('instance', info.id), this.#setKey, JSON.stringify(info), info.id, HEARTBEAT_TTL_MS));
    } catch {
      // Reported by the connection; the next beat tries again.
    }
  }

  /** The instances whose heartbeat is younger than the TTL (their key has not expired); throws when Redis cannot answer. */
  async live(): Promise<InstanceInfo[]> {
    const client = this.#redis.client as unknown as HeartbeatCommands;
    const values = await this.#redis.probe(client[LIVE_COMMAND](1, this.#setKey, this.#redis.key('instance', '')));
    const live: InstanceInfo[] = [];
    for (const value of values) if (value !== null) live.push(JSON.parse(value) as InstanceInfo);
    return live.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopBeatingOnUp?.();
    this.#stopBeatingOnUp = undefined;
    if (!this.#redis.up) return;
    const id = this.#describe().id;
    // A clean stop leaves the list at once.
    await this.#redis.client.multi().del(this.#redis.key('instance', id)).zrem(this.#setKey, id).exec().catch(() => undefined);
  }
}
