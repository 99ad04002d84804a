// Issue 11, Redis failing under a fleet: Redis is killed in the middle of
// load and restarted empty (no persistence). Every instance keeps answering
// and delivering on its last drain definitions, nothing acknowledged is
// lost, sluice_cluster_redis_up shows the outage and one warning is logged
// per instance; when Redis is back the shared drains are put back and
// changes flow between instances again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { adminCall, drainIds, makeTrace, metric, requestOf, send, startFleet, type Member } from './cluster-kit.js';

let redis: TestRedis;
let fleet: Member[];
let configSink: OtlpSink;
let apiSink: OtlpSink;

beforeAll(async () => {
  redis = await startRedis();
  [configSink, apiSink] = await Promise.all([startOtlpSink({ tls: false }), startOtlpSink({ tls: false })]);
  fleet = await startFleet({
    redisUrl: redis.url,
    keyPrefix: 'outage-test:',
    drainsYaml: `  - { name: everything, url: "${configSink.url}", insecure: true, compression: none }\n`,
  });
}, 60_000);

afterAll(async () => {
  await Promise.all((fleet ?? []).map((m) => m.daemon.cleanup()));
  await Promise.all([configSink?.close(), apiSink?.close()]);
  await redis?.stop();
});

const OUTAGE_WARNING = 'cluster Redis is unreachable';

describe('cluster mode when Redis fails', () => {
  it('keeps serving through a Redis outage, loses nothing acknowledged, and reconciles after', async () => {
    const [a, b, c] = fleet as [Member, Member, Member];
    const created = await adminCall(a, 'POST', '/v1/drains', { name: 'api-drain', delivery: { endpoint: { traces: apiSink.url }, insecure: true, compression: 'none' } });
    expect(created.status).toBe(201);
    const drainId = String(created.json['id']);
    await waitUntil(async () => (await Promise.all(fleet.map(drainIds))).every((ids) => ids.includes(drainId)), 5_000, 'the API drain on every instance');

    const acknowledged: string[] = [];
    let loading = true;
    const load = Promise.all(
      fleet.map(async (member) => {
        while (loading) {
          const trace = makeTrace('/api/load', 1);
          if ((await send(member.otlpUrl, requestOf([trace.root, ...trace.children]))) === 200) acknowledged.push(trace.root.spanId, trace.children[0]!.spanId);
          await new Promise((r) => setTimeout(r, 20));
        }
      }),
    );

    await new Promise((r) => setTimeout(r, 500));
    await redis.kill();
    for (const member of fleet) await waitUntil(async () => (await metric(member, 'sluice_cluster_redis_up')) === 0, 10_000, `${member.name} to see the outage`);

    // During the outage: every instance answers, reads work, changes are refused plainly.
    for (const member of fleet) {
      const { status, json } = await adminCall(member, 'GET', '/v1/cluster');
      expect(status).toBe(200);
      expect(json['redis']).toMatchObject({ status: 'down' });
      expect(await drainIds(member)).toContain(drainId);
    }
    const refused = await adminCall(b, 'POST', '/v1/drains', { name: 'during-outage', delivery: { endpoint: { traces: apiSink.url }, insecure: true } });
    expect(refused.status).toBe(503);
    expect((refused.json['error'] as { code: string }).code).toBe('cluster_unavailable');
    const acknowledgedDuringOutage = acknowledged.length;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(acknowledged.length).toBeGreaterThan(acknowledgedDuringOutage);

    await redis.start();
    for (const member of fleet) await waitUntil(async () => (await metric(member, 'sluice_cluster_redis_up')) === 1, 15_000, `${member.name} to reconnect`);
    await new Promise((r) => setTimeout(r, 500));
    loading = false;
    await load;

    // Nothing acknowledged is lost, through either drain.
    const ids = new Set(acknowledged);
    for (const sink of [configSink, apiSink]) {
      await waitUntil(() => new Set(sink.spans().map(({ span }) => span.spanId)).size >= ids.size, 20_000, 'every acknowledged span delivered');
      const delivered = new Set(sink.spans().map(({ span }) => span.spanId));
      expect([...ids].filter((id) => !delivered.has(id))).toEqual([]);
    }

    // Shared state is back: the drain survived the empty Redis, and changes flow again.
    for (const member of fleet) expect(await drainIds(member)).toContain(drainId);
    const patched = await adminCall(c, 'PATCH', `/v1/drains/${drainId}`, { name: 'renamed-after-outage' });
    expect(patched.status).toBe(200);
    await waitUntil(async () => (await adminCall(a, 'GET', `/v1/drains/${drainId}`)).json['name'] === 'renamed-after-outage', 2_500, 'A to see the change');
    await waitUntil(async () => ((await adminCall(b, 'GET', '/v1/cluster')).json['instances'] as unknown[]).length === 3, 10_000, 'the heartbeats to return');

    // One warning per instance for the one outage.
    for (const member of fleet) expect(member.daemon.logs.filter((line) => line.includes(OUTAGE_WARNING))).toHaveLength(1);
  });
});
