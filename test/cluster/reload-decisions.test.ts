// A reload that changes service.cluster reopens the shared state; a sampling
// processor's trace decisions go on into the new one, as across any reload.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { builtinRegistry } from '../../src/components.js';
import { parseConfigText } from '../../src/config/load.js';
import { Service } from '../../src/service.js';
import { Telemetry } from '../../src/shared/telemetry.js';
import { freePort } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

let redis: TestRedis;
let directory: string;
let sink: OtlpSink;
let telemetry: Telemetry;
let service: Service;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'sluice-reload-decisions-'));
  sink = await startOtlpSink({ tls: false });
  telemetry = new Telemetry({ defaultMetrics: false });
  service = new Service({ logger: pino({ level: 'silent' }), version: 'test', telemetry });
});
afterEach(async () => {
  await service.shutdown();
  await sink.close();
  rmSync(directory, { recursive: true, force: true });
});

const TRACE_ID = '5b8efff798038103d269b633813fc60d';

/** `cluster`: the service.cluster YAML, or undefined for none; `processor`: the sampling processor's id. */
function config(otlpPort: number, cluster: string | undefined, processor = 'sampling/api') {
  const text = `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlpPort} } } }
processors:
  ${processor}: { decision_wait: 200ms, rules: [{ environment: production, path_prefix: /api, percentage: 100 }, { environment: production, percentage: 0 }] }
exporters:
  otlphttp: { endpoint: ${sink.url}, compression: none }
service:
  storage: { directory: "${join(directory, 'data')}" }
  admin: { endpoint: "127.0.0.1:0" }
${cluster === undefined ? '' : `  cluster: ${cluster}\n`}  pipelines: { traces: { receivers: [otlp], processors: [${processor}], exporters: [otlphttp] } }
`;
  return parseConfigText(text, { registry: builtinRegistry(), env: {} });
}

async function post(otlpPort: number, span: Record<string, unknown>): Promise<number> {
  const resource = { attributes: [{ key: 'deployment.environment.name', value: { stringValue: 'production' } }] };
  const body = { resourceSpans: [{ resource, scopeSpans: [{ scope: {}, spans: [{ traceId: TRACE_ID, kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2', ...span }] }] }] };
  return (await fetch(`http://127.0.0.1:${otlpPort}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status;
}

async function droppedSpans(): Promise<number> {
  const metric = await telemetry.registry.getSingleMetric('sluice_sampling_dropped_spans_total')?.get();
  return (metric?.values ?? []).reduce((sum, value) => sum + value.value, 0);
}

/** Keeps a trace by its root under `before`, reloads to `after`, and sends the root's child. */
async function childAfterReload(before: string | undefined, after: string | undefined): Promise<void> {
  const otlpPort = await freePort();
  await service.start(config(otlpPort, before));
  expect(await post(otlpPort, { spanId: 'eee19b7ec3c1b174', name: 'root', kind: 2, attributes: [{ key: 'url.path', value: { stringValue: '/api/cart' } }] })).toBe(200);
  await sink.waitForSpans(1);
  expect(await service.reload(() => config(otlpPort, after))).toBe(true);
  // The child alone has no path: only the root's decision keeps it.
  expect(await post(otlpPort, { spanId: 'eee19b7ec3c1b175', parentSpanId: 'eee19b7ec3c1b174', name: 'child' })).toBe(200);
  expect(await droppedSpans()).toBe(0);
  await sink.waitForSpans(2);
  expect(sink.spans().map(({ span }) => span.name)).toEqual(['root', 'child']);
}

describe("a reload that changes service.cluster keeps a sampling processor's decisions", () => {
  it('keeps a trace decided before the reload that turns cluster mode on: a child span after it follows its root', async () => {
    await childAfterReload(undefined, `{ redis: { url: "${redis.url}", key_prefix: "on:" } }`);
  });

  it('keeps a trace decided before the reload that moves it to another key prefix: a child span after it follows its root', async () => {
    await childAfterReload(`{ redis: { url: "${redis.url}", key_prefix: "one:" } }`, `{ redis: { url: "${redis.url}", key_prefix: "two:" } }`);
  });

  it('keeps a trace decided before the reload that turns cluster mode off: a child span after it follows its root', async () => {
    await childAfterReload(`{ redis: { url: "${redis.url}", key_prefix: "off:" } }`, undefined);
  });
});

describe('a reload that takes a sampling processor out', () => {
  it("lets go of its decisions: one of that id added back later decides a trace's later spans afresh", async () => {
    const otlpPort = await freePort();
    await service.start(config(otlpPort, undefined));
    expect(await post(otlpPort, { spanId: 'eee19b7ec3c1b174', name: 'root', kind: 2, attributes: [{ key: 'url.path', value: { stringValue: '/api/cart' } }] })).toBe(200);
    await sink.waitForSpans(1);
    expect(await service.reload(() => config(otlpPort, undefined, 'sampling/web'))).toBe(true);
    expect(await service.reload(() => config(otlpPort, undefined))).toBe(true);
    // The child alone has no path: with the root's decision gone, the production rule of 0% drops it.
    expect(await post(otlpPort, { spanId: 'eee19b7ec3c1b175', parentSpanId: 'eee19b7ec3c1b174', name: 'child' })).toBe(200);
    expect(await droppedSpans()).toBe(1);
  });

  it('keeps them when that reload fails to start and the previous config is restored', async () => {
    const otlpPort = await freePort();
    await service.start(config(otlpPort, undefined));
    expect(await post(otlpPort, { spanId: 'eee19b7ec3c1b174', name: 'root', kind: 2, attributes: [{ key: 'url.path', value: { stringValue: '/api/cart' } }] })).toBe(200);
    await sink.waitForSpans(1);
    // Its receiver's port is held by another server: the new graph fails to start.
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      expect(await service.reload(() => config((holder.address() as AddressInfo).port, undefined, 'sampling/web'))).toBe(false);
    } finally {
      holder.close();
    }
    expect(await post(otlpPort, { spanId: 'eee19b7ec3c1b175', parentSpanId: 'eee19b7ec3c1b174', name: 'child' })).toBe(200);
    expect(await droppedSpans()).toBe(0);
    await sink.waitForSpans(2);
  });
});
