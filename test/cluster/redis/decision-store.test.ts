// The Redis decision store against a real redis-server: a root decision made
// on one instance is found by another; with Redis gone, lookups answer
// (empty) at once instead of hanging, and local decisions still hold.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDecisionStore } from '../../../src/cluster/local/decision-store.js';
import { RedisConnection } from '../../../src/cluster/redis/connection.js';
import { RedisDecisionStore } from '../../../src/cluster/redis/decision-store.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { waitUntil } from '../../helpers/daemon.js';
import { connectRedis, startRedis, type TestRedis } from '../../helpers/redis.js';

const logger = pino({ level: 'silent' });
let redis: TestRedis;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

function connected(telemetry = new Telemetry({ defaultMetrics: false })): Promise<RedisConnection> {
  return connectRedis(redis.url, 'unit:', 300, { logger, telemetry });
}

describe('the Redis decision store', () => {
  it('lets another instance find a decision made with the root', async () => {
    const [one, two] = await Promise.all([connected(), connected()]);
    const a = new RedisDecisionStore(one, new LocalDecisionStore(), 'drn_x', logger);
    const b = new RedisDecisionStore(two, new LocalDecisionStore(), 'drn_x', logger);
    const other = new RedisDecisionStore(two, new LocalDecisionStore(), 'drn_y', logger);
    a.set('c'.repeat(32), { keep: true, rule: '0' }, true);
    a.set('d'.repeat(32), { keep: false, rule: '1' }, false);
    await waitUntil(async () => (await b.lookup(['c'.repeat(32)])).size === 1, 5_000, 'the shared decision');
    const found = await b.lookup(['c'.repeat(32), 'd'.repeat(32), 'e'.repeat(32)]);
    expect(found).toEqual(new Map([['c'.repeat(32), { keep: true, rule: '0' }]]));
    // Decisions are per drain.
    expect((await other.lookup(['c'.repeat(32)])).size).toBe(0);
    await Promise.all([a.close(), b.close(), other.close()]);
    await Promise.all([one.close(), two.close()]);
  });

  it('answers lookups at once while Redis is down and keeps local decisions', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const connection = await connected(telemetry);
    const store = new RedisDecisionStore(connection, new LocalDecisionStore(), 'drn_z', logger);
    await redis.kill();
    await waitUntil(() => !connection.up, 5_000, 'the connection to notice');
    expect((await telemetry.registry.getSingleMetricAsString('sluice_cluster_redis_up')).trim().endsWith(' 0')).toBe(true);
    store.set('f'.repeat(32), { keep: true, rule: '3' }, true);
    expect(await store.lookup(['f'.repeat(32)])).toEqual(new Map());
    expect(store.get('f'.repeat(32))).toEqual({ keep: true, rule: '3' });
    await redis.start();
    await waitUntil(() => connection.up, 10_000, 'the connection to come back');
    expect((await telemetry.registry.getSingleMetricAsString('sluice_cluster_redis_up')).trim().endsWith(' 1')).toBe(true);
    await store.close();
    await connection.close();
  });
});
