// The cluster Redis connection against a real redis-server behind a proxy
// that can stall (as a hung Redis or a dead network path does): a command
// issued while another waits on the stalled Redis goes out at once and is
// bounded by its own redis.timeout, never queued behind the first one's.
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnection } from '../../../src/cluster/redis/connection.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { waitUntil } from '../../helpers/daemon.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { stallingRedisProxy, type StallingRedisProxy } from '../../helpers/stalling-redis-proxy.js';

const logger = pino({ level: 'silent' });
let redis: TestRedis;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function stallingProxy(redisPort: number): Promise<StallingRedisProxy> {
  const proxy = await stallingRedisProxy(redisPort);
  cleanups.push(() => proxy.close());
  return proxy;
}

describe('the cluster Redis connection', () => {
  it('sends a command issued while another waits on a stalled Redis at once, and times it out on its own', async () => {
    const proxy = await stallingProxy(redis.port);
    const connection = new RedisConnection({ url: proxy.url, key_prefix: 'conn:', timeout: 2_000 }, { logger, telemetry: new Telemetry({ defaultMetrics: false }) });
    cleanups.push(() => connection.close());
    connection.connect();
    await waitUntil(() => connection.up, 5_000, 'redis connection');

    proxy.stall();
    const events: string[] = [];
    const secondSent = new Promise<void>((resolve) => {
      proxy.onHeld((text) => {
        if (text.includes('second-key')) {
          events.push('second sent');
          resolve();
        }
      });
    });
    const first = connection.client.get('first-key').then(
      () => events.push('first answered'),
      () => events.push('first failed'),
    );
    // A later turn of the event loop, as a second request's command would be.
    await new Promise((resolve) => setImmediate(resolve));
    const second = connection.client.get('second-key').then(
      () => 'answered',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    await Promise.race([secondSent, first]);
    expect(events[0]).toBe('second sent');
    await first;
    expect(events).toEqual(['second sent', 'first failed']);
    expect(await second).toBe('Command timed out');
  });

  it('takes the timeout of a probe sent before the connection was re-established for no stall of the new one, and that of one sent after for a stall', async () => {
    const connection = new RedisConnection({ url: redis.url, key_prefix: 'conn:', timeout: 2_000 }, { logger, telemetry: new Telemetry({ defaultMetrics: false }) });
    cleanups.push(() => connection.close());
    connection.connect();
    await waitUntil(() => connection.up, 5_000, 'redis connection');
    // A command ioredis resends after a reconnection keeps its first timer, which may run out just after.
    const timedOut = () => new Error('Command timed out');
    let failBefore: (err: Error) => void = () => undefined;
    const before = connection.probe(new Promise<never>((_resolve, reject) => (failBefore = reject))).catch(() => undefined);
    const readyAgain = new Promise<void>((resolve) => connection.client.once('ready', () => resolve()));
    connection.client.disconnect(true);
    await readyAgain;
    failBefore(timedOut());
    await before;
    expect(connection.answering).toBe(true);
    await connection.probe(Promise.reject(timedOut())).catch(() => undefined);
    expect(connection.answering).toBe(false);
  });

  it('bounds commands by a new redis.timeout set on the running connection (a reload that changes only it)', async () => {
    const proxy = await stallingProxy(redis.port);
    const connection = new RedisConnection({ url: proxy.url, key_prefix: 'conn:', timeout: 60_000 }, { logger, telemetry: new Telemetry({ defaultMetrics: false }) });
    cleanups.push(() => connection.close());
    connection.connect();
    await waitUntil(() => connection.up, 5_000, 'redis connection');

    connection.setTimeout(200);
    proxy.stall();
    const outcome = await connection.client.get('stalled-key').then(
      () => 'answered',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(outcome).toBe('Command timed out');
  });

  it('stays down, naming the reason, when Redis has no database of the URL\'s number', async () => {
    const lines: Array<{ msg?: string; err?: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string; err?: string }) });
    // redis-server has 16 databases: SELECT 99 is refused.
    const connection = new RedisConnection({ url: `redis://127.0.0.1:${redis.port}/99`, key_prefix: 'conn:', timeout: 500 }, { logger: log, telemetry: new Telemetry({ defaultMetrics: false }) });
    cleanups.push(() => connection.close());
    connection.connect();
    await waitUntil(() => lines.some((line) => line.err?.includes('DB index is out of range') === true), 5_000, 'the refused SELECT');
    // Long enough for the connection to become ready, were it carrying on in database 0.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(connection.up).toBe(false);
  });
});
