import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mountClusterApi } from '../../src/admin/cluster.js';
import { AdminServer } from '../../src/admin/server.js';
import { Cluster } from '../../src/cluster/factory/cluster.js';
import { Telemetry } from '../../src/shared/telemetry.js';
import { waitUntil } from '../helpers/daemon.js';
import { startRedis } from '../helpers/redis.js';
import { stallingRedisProxy } from '../helpers/stalling-redis-proxy.js';

const KEY = 'admin-key';
let admin: AdminServer;
let base: string;
let unmountLocalCluster: () => void;

beforeEach(async () => {
  const telemetry = new Telemetry({ defaultMetrics: false });
  const logger = pino({ level: 'silent' });
  admin = new AdminServer({ telemetry, logger, isReady: () => true, apiKey: () => KEY });
  await admin.listen('127.0.0.1:0');
  base = `http://127.0.0.1:${admin.address()?.port ?? 0}`;
  const cluster = new Cluster(undefined, 'solo', { logger, telemetry, version: '1.2.3', startedAt: Date.now(), address: () => `127.0.0.1:${admin.address()?.port ?? 0}` });
  unmountLocalCluster = mountClusterApi(admin, () => cluster.status());
});
afterEach(() => admin.close());

describe('GET /v1/cluster without service.cluster', () => {
  it('lists this instance alone, in local mode', async () => {
    const res = await fetch(`${base}/v1/cluster`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { mode: string; instance: string; redis: unknown; instances: Array<Record<string, unknown>> };
    expect(body.mode).toBe('local');
    expect(body.instance).toBe('solo');
    expect(body.redis).toBeNull();
    expect(body.instances).toHaveLength(1);
    expect(body.instances[0]).toMatchObject({ id: 'solo', version: '1.2.3', self: true });
  });

  it('needs the admin key and answers only GET', async () => {
    expect((await fetch(`${base}/v1/cluster`)).status).toBe(401);
    expect((await fetch(`${base}/v1/cluster`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` } })).status).toBe(405);
  });
});

describe('GET /v1/cluster with a stalled Redis', () => {
  it('answers 200 with this instance alone and redis.status down once the one command it sends Redis times out, as the metric says', async () => {
    const redis = await startRedis();
    const proxy = await stallingRedisProxy(redis.port);
    const telemetry = new Telemetry({ defaultMetrics: false });
    const logger = pino({ level: 'silent' });
    const cluster = new Cluster({ redis: { url: proxy.url, key_prefix: 'stalled:', timeout: 300 }, instance_id: 'stuck' }, 'stuck', { logger, telemetry, version: '1.2.3', startedAt: Date.now(), address: () => 'stuck:8888' });
    try {
      const redisConnection = cluster.redis;
      if (redisConnection === undefined) throw new Error('no cluster connection');
      // Connected but not beating, so the status's commands are the only ones sent.
      redisConnection.connect();
      await waitUntil(() => redisConnection.up, 5_000, 'redis connection');
      unmountLocalCluster();
      mountClusterApi(admin, () => cluster.status());

      proxy.stall();
      const res = await fetch(`${base}/v1/cluster`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { mode: string; redis: { status: string }; instances: Array<Record<string, unknown>> };
      expect(body.mode).toBe('redis');
      // The connection holds, but Redis answers nothing: shared reads fail, so it is down.
      expect(body.redis.status).toBe('down');
      expect(body.instances).toEqual([expect.objectContaining({ id: 'stuck', self: true })]);
      expect(proxy.held).toEqual([expect.stringMatching(/^eval(sha)? /i)]);
      expect((await telemetry.registry.getSingleMetricAsString('sluice_cluster_redis_up')).trim().split('\n').at(-1)).toBe('sluice_cluster_redis_up 0');
    } finally {
      await cluster.close();
      await proxy.close();
      await redis.stop();
    }
  });
});
