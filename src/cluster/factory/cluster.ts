// The cluster as the service runs it: the Redis connection and this
// instance's heartbeats, or, with no `service.cluster`, a one-instance view.
// The shared stores themselves are RedisState's (redis/state.ts). A reload
// keeps it, and the stores on its connection, while the connection's
// identity (connectionIdentity) stays: a new instance_id or timeout is set on
// the running one.
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
  /** When the instance started (ms since the epoch): a reload that opens a new Cluster keeps it. */
  readonly startedAt: number;
  /** Where this instance's admin endpoint is reached. */
  readonly address: () => string;
}

/**
 * What makes a connection (and the state shared through it) another one:
 * where it connects (the URL, TLS with rediss://, credentials, database) and
 * the key prefix every shared key is under. Undefined: no cluster.
 */
export function connectionIdentity(config: ClusterConfig | undefined): string | undefined {
  return config === undefined ? undefined : JSON.stringify([config.redis.url, config.redis.key_prefix]);
}

export function newInstanceId(): string {
  return `sluice-${randomBytes(6).toString('hex')}`;
}

export class Cluster {
  /** See connectionIdentity. */
  readonly connection: string | undefined;
  /** The connection shared stores use; undefined without service.cluster. */
  readonly redis: RedisConnection | undefined;
  #id: string;
  readonly #options: ClusterOptions;
  readonly #heartbeats: Heartbeats | undefined;

  /** `config` undefined: one instance, local state. */
  constructor(config: ClusterConfig | undefined, id: string, options: ClusterOptions) {
    this.#id = id;
    this.connection = connectionIdentity(config);
    this.#options = options;
    if (config === undefined) return;
    this.redis = new RedisConnection(config.redis, { logger: options.logger, telemetry: options.telemetry });
    this.#heartbeats = new Heartbeats(this.redis, () => this.#self());
  }

  /** This instance's id. */
  get id(): string {
    return this.#id;
  }

  get redisUrl(): string | undefined {
    return this.redis?.url;
  }

  start(): void {
    this.redis?.connect();
    this.#heartbeats?.start();
  }

  /**
   * Applies a reload's settings of the same connection identity: the command
   * timeout, and the instance id (the old id leaves the instance list at
   * once and the new one beats at once, as at a stop and a start).
   */
  async reconfigure(config: ClusterConfig | undefined, id: string): Promise<void> {
    if (config !== undefined) this.redis?.setTimeout(config.redis.timeout);
    if (id === this.#id) return;
    await this.#heartbeats?.stop();
    this.#id = id;
    this.#heartbeats?.start();
    await this.#heartbeats?.beat();
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
    // While Redis is down or stalled (or before the first beat), this instance still knows itself.
    if (!instances.some((i) => i.id === this.id)) instances = [...instances, self];
    return {
      mode: 'redis',
      instance: this.id,
      // Read after the instances: a read Redis left unanswered says it is down, though the connection holds.
      redis: { url: redis.url, status: redis.answering ? 'up' : 'down' },
      instances: instances.map((i) => ({ ...i, self: i.id === this.id })),
    };
  }

  async close(): Promise<void> {
    await this.#heartbeats?.stop();
    await this.redis?.close();
  }

  #self(): Omit<InstanceInfo, 'lastHeartbeat'> {
    return { id: this.id, version: this.#options.version, address: this.#options.address(), startedAt: this.#options.startedAt };
  }
}
