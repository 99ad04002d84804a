// One Redis connection for commands and one for pub/sub, shared by every
// Redis store. Nothing here may hang a caller: commands time out
// (redis.timeout), and while the connection is down they fail at once
// instead of queueing (no offline queue), so callers fall back to local
// state. `sluice_cluster_redis_up` follows the connection and whether Redis
// answers on it (a Redis that stalls keeps the connection ready while every
// command times out), and each outage is logged once when it starts and once
// when it ends.
import { Redis, ReplyError, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { errorMessage } from '../../shared/errors.js';
import { redactUrl } from '../../shared/redact-url.js';
import type { Telemetry } from '../../shared/telemetry.js';
import type { ClusterConfig } from '../config.js';

/** Reconnect backoff: 100 ms, 200 ms, ... up to this. */
const MAX_RECONNECT_DELAY_MS = 2_000;
const RECONNECT_STEP_MS = 100;

/** What ioredis rejects a command with once redis.timeout has passed. */
const COMMAND_TIMED_OUT = 'Command timed out';

/** ioredis's timeouts for redis.timeout: a connection attempt gets at least a second. */
function timeouts(timeoutMs: number): Pick<RedisOptions, 'commandTimeout' | 'connectTimeout'> {
  return { commandTimeout: timeoutMs, connectTimeout: Math.max(timeoutMs, 1_000) };
}

export class RedisConnection {
  readonly client: Redis;
  readonly prefix: string;
  readonly url: string;
  readonly #logger: Logger;
  readonly #upGauge;
  readonly #onUp = new Set<() => void>();
  #subscriber: Redis | undefined;
  #up = false;
  /** The last probe (see `probe`) timed out on a ready connection; cleared by one Redis answers, or a reconnection. */
  #stalled = false;
  /** Counts the connection's readies: a probe sent before the latest one says nothing of the connection now. */
  #readies = 0;
  /** True from the first failure of an outage until the connection is back. */
  #inOutage = false;
  #closed = false;

  constructor(config: ClusterConfig['redis'], options: { logger: Logger; telemetry: Telemetry }) {
    this.prefix = config.key_prefix;
    this.url = redactUrl(config.url);
    this.#logger = options.logger;
    this.#upGauge = options.telemetry.gauge('sluice_cluster_redis_up', '1 while the cluster Redis connection is ready, else 0.', []);
    this.#upGauge.set(0);
    const redisOptions: RedisOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      // No auto-pipelining: it holds every new command back until the pipeline
      // in flight settles, so behind a stalled command a request waited up to
      // twice redis.timeout. Each command is written at once and its own timer
      // bounds it; batches that belong together use pipeline() or multi().
      enableAutoPipelining: false,
      ...timeouts(config.timeout),
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * RECONNECT_STEP_MS, MAX_RECONNECT_DELAY_MS),
      ...(new URL(config.url).protocol === 'rediss:' ? { tls: {} } : {}),
    };
    this.client = new Redis(config.url, redisOptions);
    this.client.on('ready', () => this.#ready());
    this.client.on('close', () => this.#down('connection closed'));
    this.client.on('error', (err: unknown) => {
      // Redis refused a command of the connection's setup: a SELECT of a
      // database it does not have, after which ioredis would carry on in
      // database 0, beside whatever else lives there. Dropped, and tried again.
      if (err instanceof ReplyError) this.client.disconnect(true);
      this.#down(errorMessage(err));
    });
  }

  /** Starts connecting; never waits for Redis (an instance starts while it is down). */
  connect(): void {
    this.client.connect().catch((err: unknown) => this.#down(errorMessage(err)));
  }

  /** The connection is ready (commands are sent, not failed at once); Redis may still be stalled behind it. */
  get up(): boolean {
    return this.#up;
  }

  /** Ready, and Redis answered the last probe in time. */
  get answering(): boolean {
    return this.#up && !this.#stalled;
  }

  /**
   * Runs a command that tells whether Redis answers (a heartbeat, the status's
   * read): one that times out marks Redis stalled, one Redis answers (even with
   * an error reply) marks it answering again.
   */
  async probe<T>(command: Promise<T>): Promise<T> {
    const readies = this.#readies;
    try {
      const answer = await command;
      this.#answered();
      return answer;
    } catch (err) {
      // A command sent on the connection before it was re-established (and resent by ioredis) keeps its first timer: its timeout is no stall of the new one.
      if (err instanceof Error && err.message === COMMAND_TIMED_OUT && readies === this.#readies) this.#stall();
      else if (err instanceof ReplyError) this.#answered();
      throw err;
    }
  }

  key(...parts: string[]): string {
    return `${this.prefix}${parts.join(':')}`;
  }

  /** Runs after every (re)connection, so stores reconcile what changed during an outage. */
  onUp(listener: () => void): () => void {
    this.#onUp.add(listener);
    return () => this.#onUp.delete(listener);
  }

  /** A reload's new redis.timeout: ioredis reads it for each command and each connection attempt. */
  setTimeout(timeoutMs: number): void {
    for (const client of [this.client, this.#subscriber]) if (client !== undefined) Object.assign(client.options, timeouts(timeoutMs));
  }

  /** The pub/sub connection (subscriptions are renewed after each reconnection). */
  subscriber(): Redis {
    if (this.#subscriber === undefined) {
      // Its only commands are SUBSCRIBE, queued until connected: they cannot hang a caller.
      const subscriber = this.client.duplicate({ enableOfflineQueue: true, lazyConnect: false });
      subscriber.on('error', () => undefined);
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#onUp.clear();
    for (const client of [this.client, this.#subscriber]) {
      if (client === undefined) continue;
      await client.quit().catch(() => client.disconnect());
    }
    this.#up = false;
    this.#upGauge.set(0);
  }

  #ready(): void {
    this.#readies += 1;
    this.#up = true;
    this.#stalled = false;
    this.#upGauge.set(1);
    if (this.#inOutage) this.#logger.info({ redis: this.url }, 'cluster Redis is reachable again; shared state reconciles');
    this.#inOutage = false;
    for (const listener of this.#onUp) listener();
  }

  #down(reason: string): void {
    if (this.#closed) return;
    this.#up = false;
    this.#upGauge.set(0);
    this.#outage(reason);
  }

  #stall(): void {
    if (this.#closed || !this.#up || this.#stalled) return;
    this.#stalled = true;
    this.#upGauge.set(0);
    this.#outage('Redis answered no command within redis.timeout');
  }

  #answered(): void {
    if (this.#closed || !this.#up || !this.#stalled) return;
    this.#stalled = false;
    this.#upGauge.set(1);
    this.#logger.info({ redis: this.url }, 'cluster Redis answers again');
    this.#inOutage = false;
  }

  #outage(reason: string): void {
    if (this.#inOutage) return;
    this.#inOutage = true;
    this.#logger.warn({ redis: this.url, err: reason }, 'cluster Redis is unreachable; serving from local state until it is back');
  }
}
