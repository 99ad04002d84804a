// Instance heartbeats against a real redis-server: which instances are live
// is Redis's to tell (its own clock and key expiry), so an instance whose
// clock is off by more than the heartbeat TTL neither prunes the others nor
// is pruned by them.
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { Heartbeats, HEARTBEAT_TTL_MS } from '../../../src/cluster/redis/heartbeats.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { waitUntil } from '../../helpers/daemon.js';
import { connectRedis, startRedis, type TestRedis } from '../../helpers/redis.js';
import { stallingRedisProxy } from '../../helpers/stalling-redis-proxy.js';

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
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function instance(id: string): Promise<Heartbeats> {
  const connection = await connectRedis(redis.url, 'beats:', 1_000, { logger });
  const heartbeats = new Heartbeats(connection, () => ({ id, version: 'test', address: `${id}:8888`, startedAt: 0 }));
  cleanups.push(async () => {
    await heartbeats.stop();
    await connection.close();
  });
  return heartbeats;
}

/** Runs `fn` with this process's clock moved by `skewMs`. */
async function withClockSkew<T>(skewMs: number, fn: () => Promise<T>): Promise<T> {
  const realNow = Date.now.bind(Date);
  const spy = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skewMs);
  try {
    return await fn();
  } finally {
    spy.mockRestore();
  }
}

describe('instance heartbeats', () => {
  it('lists every instance when one clock runs ahead of the others by more than the heartbeat TTL', async () => {
    const [a, ahead] = await Promise.all([instance('a'), instance('ahead')]);
    await a.beat();
    await withClockSkew(3 * HEARTBEAT_TTL_MS, () => ahead.beat());
    expect((await a.live()).map((i) => i.id)).toEqual(['a', 'ahead']);
    expect((await withClockSkew(3 * HEARTBEAT_TTL_MS, () => ahead.live())).map((i) => i.id)).toEqual(['a', 'ahead']);
  });

  it('lists every instance when one clock runs behind the others by more than the heartbeat TTL', async () => {
    const [a, behind] = await Promise.all([instance('a'), instance('behind')]);
    await withClockSkew(-3 * HEARTBEAT_TTL_MS, () => behind.beat());
    await a.beat();
    expect((await a.live()).map((i) => i.id)).toEqual(['a', 'behind']);
    expect((await withClockSkew(-3 * HEARTBEAT_TTL_MS, () => behind.live())).map((i) => i.id)).toEqual(['a', 'behind']);
  });

  it('drops an instance that stopped cleanly at once', async () => {
    const [a, b] = await Promise.all([instance('a'), instance('b')]);
    await Promise.all([a.beat(), b.beat()]);
    await b.stop();
    expect((await a.live()).map((i) => i.id)).toEqual(['a']);
  });

  it('beats no more at a reconnection once stopped, though its connection stays', async () => {
    const connection = await connectRedis(redis.url, 'beats-kept:', 1_000, { logger });
    const operator = new Redis(redis.url);
    cleanups.push(async () => {
      operator.disconnect();
      await connection.close();
    });
    const about = (id: string) => () => ({ id, version: 'test', address: `${id}:8888`, startedAt: 0 });
    const stopped = new Heartbeats(connection, about('stopped'));
    stopped.start();
    await stopped.stop();
    const running = new Heartbeats(connection, about('running'));
    running.start();
    cleanups.push(() => running.stop());
    let reconnected = false;
    const stopWatching = connection.onUp(() => {
      reconnected = true;
    });
    await operator.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await waitUntil(() => reconnected && connection.up, 10_000, 'the reconnection');
    stopWatching();
    // Listeners run in order at the reconnection and each beat is written at once, so these reads come after them.
    expect(await connection.client.exists('beats-kept:instance:running')).toBe(1);
    expect(await connection.client.exists('beats-kept:instance:stopped')).toBe(0);
    expect(await running.live()).toEqual([expect.objectContaining({ id: 'running' })]);
  });

  it('reads the live instances in one command, so a Redis that stalls after answering one still lists them', async () => {
    const [a, b] = await Promise.all([instance('a'), instance('b')]);
    await Promise.all([a.beat(), b.beat()]);
    const proxy = await stallingRedisProxy(redis.port);
    cleanups.push(() => proxy.close());
    const connection = await connectRedis(proxy.url, 'beats:', 1_000, { logger });
    cleanups.push(() => connection.close());
    const reader = new Heartbeats(connection, () => ({ id: 'reader', version: 'test', address: 'reader:8888', startedAt: 0 }));
    const before = proxy.forwarded.length;

    proxy.stallAfter(1);
    expect((await reader.live()).map((i) => i.id)).toEqual(['a', 'b']);
    expect(proxy.forwarded.length - before).toBe(1);
    expect(proxy.held).toEqual([]);
  });

  it('fails the read of a stalled Redis after sending it one command', async () => {
    const a = await instance('a');
    await a.beat();
    const proxy = await stallingRedisProxy(redis.port);
    cleanups.push(() => proxy.close());
    const connection = await connectRedis(proxy.url, 'beats:', 300, { logger });
    cleanups.push(() => connection.close());
    const reader = new Heartbeats(connection, () => ({ id: 'reader', version: 'test', address: 'reader:8888', startedAt: 0 }));

    proxy.stall();
    const outcome = await reader.live().then(
      () => 'answered',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(outcome).toBe('Command timed out');
    expect(proxy.held).toHaveLength(1);
  });

  it('counts Redis down while it leaves a heartbeat unanswered, though the connection holds, and up at the next it answers', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const redisUp = async () => (await telemetry.registry.getSingleMetricAsString('sluice_cluster_redis_up')).trim().split('\n').at(-1);
    const connection = await connectRedis(redis.url, 'beats-paused:', 300, { logger, telemetry });
    const operator = new Redis(redis.url);
    cleanups.push(async () => {
      operator.disconnect();
      await connection.close();
    });
    const heartbeats = new Heartbeats(connection, () => ({ id: 'paused', version: 'test', address: 'paused:8888', startedAt: 0 }));
    await heartbeats.beat();
    expect(await redisUp()).toBe('sluice_cluster_redis_up 1');

    // Redis holds every client's commands for a while, as a stalled Redis does, then answers them.
    await operator.call('CLIENT', 'PAUSE', '1500', 'ALL');
    await heartbeats.beat();
    expect(connection.up).toBe(true);
    expect(connection.answering).toBe(false);
    expect(await redisUp()).toBe('sluice_cluster_redis_up 0');

    await waitUntil(async () => {
      await heartbeats.beat();
      return connection.answering;
    }, 10_000, 'Redis to answer a heartbeat again');
    expect(await redisUp()).toBe('sluice_cluster_redis_up 1');
  });
});
