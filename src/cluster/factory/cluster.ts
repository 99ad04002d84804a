// The cluster as the service runs it: the Redis connection and this
// instance's heartbeats, or, with no `service.cluster`, a one-instance view.
// The shared stores themselves are RedisState's (redis/state.ts).
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { ClusterConfig } from '../config.js';
import { RedisConnection } from '../redis/connection.js';
import { Heartbeats, type InstanceInfo } from '../redis/heartbeats.js';

export interface ClusterStatus {
  readonly mode: 'local' | 'redis';
  /** This instance's id. */
  readonly instance: string;
  readonly redis: { readonly url: string; readonly status: 'up' | 'down' } | null;
  readonly instances: ReadonlyArray<InstanceInfo & { readonly self: boolean }>;
}

export interface ClusterOptions {
  readonly logger: Logger;
  /** The service's Telemetry (typed through RedisConnection so this folder needs nothing from core). */
  readonly telemetry: ConstructorParameters<typeof RedisConnection>[1]['telemetry'];
  readonly version: string;
  /** Where this instance's admin endpoint is reached. */
  readonly address: () => string;
}

export function newInstanceId(): string {
  return `sluice-${randomBytes(6).toString('hex')}`;
}

export class Cluster {
  readonly id: string;
  /** The connection shared stores use; undefined without service.cluster. */
  readonly redis: RedisConnection | undefined;
  readonly #options: ClusterOptions;
  readonly #heartbeats: Heartbeats | undefined;
  readonly #startedAt = Date.now();

  /** `config` undefined: one instance, local state. */
  constructor(config: ClusterConfig | undefined, id: string, options: ClusterOptions) {
    this.id = id;
    this.#options = options;
    if (config === undefined) return;
    this.redis = new RedisConnection(config.redis, { logger: options.logger, telemetry: options.telemetry });
    this.#heartbeats = new Heartbeats(this.redis, () => this.#self());
  }

  get redisUrl(): string | undefined {
    return this.redis?.url;
  }

  start(): void {
    this.redis?.connect();
    this.#heartbeats?.start();
  }

  async status(): Promise<ClusterStatus> {
    const redis = this.redis;
    const self = { ...this.#self(), lastHeartbeat: Date.now() };
    if (redis === undefined) return { mode: 'local', instance: this.id, redis: null, instances: [{ ...self, self: true }] };
    let instances: InstanceInfo[] = [];
    if (redis.up) {
      try {
        instances = await this.#heartbeats?.live() ?? [];
      } catch {
        instances = [];
      }
    }
    // While Redis is down (or before the first beat), this instance still knows itself.
    if (!instances.some((i) => i.id === this.id)) instances = [...instances, self];
    return {
      mode: 'redis',
      instance: this.id,
      redis: { url: redis.url, status: redis.up ? 'up' : 'down' },
      instances: instances.map((i) => ({ ...i, self: i.id === this.id })),
    };
  }

  async close(): Promise<void> {
    await this.#heartbeats?.stop();
    await this.redis?.close();
  }

  #self(): Omit<InstanceInfo, 'lastHeartbeat'> {
    return { id: this.id, version: this.#options.version, address: this.#options.address(), startedAt: this.#startedAt };
  }
}
