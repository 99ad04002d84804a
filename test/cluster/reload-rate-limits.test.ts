// A reload that changes service.cluster and a key's requests_per_minute
// window: one that keeps the Redis connection's identity (a new instance_id
// or redis.timeout) keeps the connection and the state on it; one that turns
// cluster mode on or off carries the open windows across.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { builtinRegistry } from '../../src/components.js';
import { parseConfigText } from '../../src/config/load.js';
import { Service } from '../../src/service.js';
import { Telemetry } from '../../src/shared/telemetry.js';
import { freePort, waitUntil } from '../helpers/daemon.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { completion, sendJson, startUpstream, type Upstream } from '../receivers/gateway/harness.js';

const ADMIN_KEY = 'admin-reload';
const LIMIT = 2;

let redis: TestRedis;
let client: Redis;
let upstream: Upstream;
let directory: string;
let service: Service;

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
  upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('ok')));
});
afterAll(async () => {
  client?.disconnect();
  await upstream?.close();
  await redis?.stop();
});
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'sluice-reload-limits-'));
  service = new Service({ logger: pino({ level: 'silent' }), version: 'test', telemetry: new Telemetry({ defaultMetrics: false }) });
});
afterEach(async () => {
  await service.shutdown();
  rmSync(directory, { recursive: true, force: true });
});

/** `cluster`: the service.cluster YAML, or undefined for none; `failing`: a port another server holds, which an OTLP receiver fails to listen on. */
function config(port: number, cluster: string | undefined, failing?: number) {
  const text = `
receivers:
  gateway:
    endpoint: 127.0.0.1:${port}
    api_keys: [{ key: sk-limited, name: limited, requests_per_minute: ${LIMIT} }]
    providers:
      fake: { type: openai, base_url: ${upstream.url}, api_key: sk-upstream }
    models:
      - id: fake/model
        endpoints: [{ provider: fake, model: upstream-model }]
${failing === undefined ? '' : `  otlp: { protocols: { http: { endpoint: "127.0.0.1:${failing}" } } }\n`}exporters:
  debug: { verbosity: basic }
service:
  storage: { directory: "${join(directory, 'data')}" }
  admin: { endpoint: "127.0.0.1:0", api_key: ${ADMIN_KEY} }
  telemetry: { logs: { level: error } }
${cluster === undefined ? '' : `  cluster: ${cluster}\n`}  pipelines: { traces: { receivers: [gateway${failing === undefined ? '' : ', otlp'}], exporters: [debug] } }
`;
  return parseConfigText(text, { registry: builtinRegistry(), env: {} });
}

/** A server holding a port, so a receiver configured on it fails to start. */
async function holdPort(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

async function ask(port: number): Promise<number> {
  const body = { model: 'fake/model', messages: [{ role: 'user', content: 'hi' }] };
  const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-limited', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  return response.status;
}

interface ClusterView {
  instance: string;
  redis: { status: string } | null;
  instances: Array<{ id: string; startedAt: number; self: boolean }>;
}

async function clusterView(): Promise<ClusterView> {
  const address = service.admin.address();
  const response = await fetch(`http://127.0.0.1:${address?.port ?? 0}/v1/cluster`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  return (await response.json()) as ClusterView;
}

async function redisUp(): Promise<void> {
  await waitUntil(async () => (await clusterView()).redis?.status === 'up', 10_000, 'the cluster Redis connection');
}

/** Connections Redis has accepted since it started. */
async function connectionsAccepted(): Promise<number> {
  const stats = await client.info('stats');
  return Number(/total_connections_received:(\d+)/.exec(stats)?.[1]);
}

describe('a reload that changes service.cluster and the rate-limit windows', () => {
  it('keeps the connection and a key at its limit limited when only instance_id and redis.timeout change', async () => {
    const port = await freePort();
    await service.start(config(port, `{ redis: { url: "${redis.url}", key_prefix: "same:" }, instance_id: one }`));
    await redisUp();
    expect([await ask(port), await ask(port)]).toEqual([200, 200]);
    const accepted = await connectionsAccepted();

    expect(await service.reload(() => config(port, `{ redis: { url: "${redis.url}", key_prefix: "same:", timeout: 3s }, instance_id: two }`))).toBe(true);
    expect(await ask(port)).toBe(429);
    expect(await connectionsAccepted()).toBe(accepted);
    // The old id left the instance list with the reload, the new one is in it.
    const view = await clusterView();
    expect(view.instance).toBe('two');
    expect((await client.zrange('same:instances', 0, -1))).toEqual(['two']);
    expect(await client.exists('same:instance:one')).toBe(0);
  });

  it('keeps the instance\'s startedAt in GET /v1/cluster through reloads that reopen the cluster: the process did not restart', async () => {
    const port = await freePort();
    await service.start(config(port, `{ redis: { url: "${redis.url}", key_prefix: "started:" } }`));
    await redisUp();
    const startedAt = (await clusterView()).instances.find((i) => i.self)?.startedAt;
    expect(startedAt).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 50));

    expect(await service.reload(() => config(port, `{ redis: { url: "${redis.url}", key_prefix: "started-moved:" } }`))).toBe(true);
    await redisUp();
    await waitUntil(async () => (await clusterView()).instances.some((i) => i.self), 10_000, 'the heartbeat under the new prefix');
    expect((await clusterView()).instances.find((i) => i.self)?.startedAt).toBe(startedAt);
    expect(await service.reload(() => config(port, undefined))).toBe(true);
    expect((await clusterView()).instances.find((i) => i.self)?.startedAt).toBe(startedAt);
  });

  it('adds the local window to the fleet\'s counter when a reload turns cluster mode on', async () => {
    const port = await freePort();
    await service.start(config(port, undefined));
    expect([await ask(port), await ask(port)]).toEqual([200, 200]);

    expect(await service.reload(() => config(port, `{ redis: { url: "${redis.url}", key_prefix: "on:" } }`))).toBe(true);
    await redisUp();
    await waitUntil(async () => Number(await client.get('on:rate:rpm:limited')) === LIMIT, 10_000, 'the carried points in Redis');
    expect(await client.pttl('on:rate:rpm:limited')).toBeGreaterThan(0);
    expect(await ask(port)).toBe(429);
  });

  it('keeps the fleet\'s count of a key locally when a reload turns cluster mode off', async () => {
    const port = await freePort();
    await service.start(config(port, `{ redis: { url: "${redis.url}", key_prefix: "off:" } }`));
    await redisUp();
    expect(await ask(port)).toBe(200);
    // Another instance's request in the same window.
    expect(await client.incrby('off:rate:rpm:limited', 1)).toBe(LIMIT);

    expect(await service.reload(() => config(port, undefined))).toBe(true);
    expect(await ask(port)).toBe(429);
  });

  it("leaves the fleet's counter as it was when a reload that turns cluster mode off fails and cluster mode comes back", async () => {
    const port = await freePort();
    const cluster = `{ redis: { url: "${redis.url}", key_prefix: "failed-off:" } }`;
    await service.start(config(port, cluster));
    await redisUp();
    expect(await ask(port)).toBe(200);

    const holder = await holdPort();
    try {
      expect(await service.reload(() => config(port, undefined, (holder.address() as AddressInfo).port))).toBe(false);
    } finally {
      holder.close();
    }
    await redisUp();
    // The fleet's one point came back to Redis with the restored config: it was never taken out.
    expect(await ask(port)).toBe(200);
    expect(Number(await client.get('failed-off:rate:rpm:limited'))).toBe(LIMIT);
  });

  it('keeps its own count of a key, made through Redis, when a reload turns cluster mode off while Redis is down', async () => {
    const own = await startRedis();
    try {
      const port = await freePort();
      await service.start(config(port, `{ redis: { url: "${own.url}", key_prefix: "own:" } }`));
      await redisUp();
      // The key's window is used up through Redis, which then goes away.
      expect([await ask(port), await ask(port)]).toEqual([200, 200]);
      await own.stop();
      await waitUntil(async () => (await clusterView()).redis?.status === 'down', 10_000, 'the outage');

      expect(await service.reload(() => config(port, undefined))).toBe(true);
      expect(await ask(port)).toBe(429);
    } finally {
      await own.remove();
    }
  });

  it('keeps the window it carried into Redis as its own count when a reload turns cluster mode off again while Redis is down', async () => {
    const own = await startRedis();
    try {
      const port = await freePort();
      // The key's window is used up locally, then carried into Redis, which goes away.
      await service.start(config(port, undefined));
      expect([await ask(port), await ask(port)]).toEqual([200, 200]);
      expect(await service.reload(() => config(port, `{ redis: { url: "${own.url}", key_prefix: "carried:" } }`))).toBe(true);
      await redisUp();
      await own.stop();
      await waitUntil(async () => (await clusterView()).redis?.status === 'down', 10_000, 'the outage');

      expect(await service.reload(() => config(port, undefined))).toBe(true);
      expect(await ask(port)).toBe(429);
    } finally {
      await own.remove();
    }
  });

  it('keeps all its own count when cluster mode is turned off during an outage, on again, and off during another', async () => {
    const own = await startRedis({ persistent: true });
    try {
      const port = await freePort();
      const cluster = `{ redis: { url: "${own.url}", key_prefix: "twice:" } }`;
      const outage = async () => {
        await own.stop();
        await waitUntil(async () => (await clusterView()).redis?.status === 'down', 10_000, 'the outage');
      };
      await service.start(config(port, cluster));
      await redisUp();
      expect(await ask(port)).toBe(200);
      await outage();
      expect(await service.reload(() => config(port, undefined))).toBe(true);
      await own.start();
      expect(await service.reload(() => config(port, cluster))).toBe(true);
      await redisUp();
      // This instance's second point in the window, through Redis.
      expect(await ask(port)).toBe(200);
      await outage();

      expect(await service.reload(() => config(port, undefined))).toBe(true);
      expect(await ask(port)).toBe(429);
    } finally {
      await own.remove();
    }
  });

  it('adds the points counted while Redis was down to the fleet\'s counter when cluster mode is turned off and on again', async () => {
    const own = await startRedis({ persistent: true });
    const ownClient = new Redis(own.url);
    ownClient.on('error', () => undefined);
    try {
      const port = await freePort();
      const cluster = `{ redis: { url: "${own.url}", key_prefix: "outage:" } }`;
      await service.start(config(port, cluster));
      await redisUp();
      expect(await ask(port)).toBe(200);
      await own.stop();
      await waitUntil(async () => (await clusterView()).redis?.status === 'down', 10_000, 'the outage');
      // Counted by this instance alone: Redis never had it.
      expect(await ask(port)).toBe(200);
      expect(await service.reload(() => config(port, undefined))).toBe(true);
      await own.start();

      expect(await service.reload(() => config(port, cluster))).toBe(true);
      await redisUp();
      await waitUntil(async () => Number(await ownClient.get('outage:rate:rpm:limited').catch(() => null)) === LIMIT, 10_000, 'the outage\'s point in Redis');
      expect(await ask(port)).toBe(429);
    } finally {
      ownClient.disconnect();
      await own.remove();
    }
  });

  it('adds nothing twice when cluster mode is turned off during an outage and on again: what an earlier outage counted was shared already', async () => {
    const own = await startRedis({ persistent: true });
    const ownClient = new Redis(own.url);
    ownClient.on('error', () => undefined);
    const redisStatus = async (status: string) => waitUntil(async () => (await clusterView()).redis?.status === status, 10_000, `Redis ${status}`);
    try {
      const port = await freePort();
      const cluster = `{ redis: { url: "${own.url}", key_prefix: "outages:" } }`;
      await service.start(config(port, cluster));
      await redisStatus('up');
      await own.stop();
      await redisStatus('down');
      expect(await ask(port)).toBe(200);
      await own.start();
      await redisStatus('up');
      await waitUntil(async () => Number(await ownClient.get('outages:rate:rpm:limited').catch(() => null)) === 1, 10_000, 'the first outage\'s point in Redis');
      await own.stop();
      await redisStatus('down');
      expect(await service.reload(() => config(port, undefined))).toBe(true);
      await own.start();

      expect(await service.reload(() => config(port, cluster))).toBe(true);
      await redisStatus('up');
      expect(await ask(port)).toBe(200);
      expect(Number(await ownClient.get('outages:rate:rpm:limited'))).toBe(LIMIT);
    } finally {
      ownClient.disconnect();
      await own.remove();
    }
  });
});
