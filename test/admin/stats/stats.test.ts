import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdminServer } from '../../../src/admin/server.js';
import { mountStatsApi } from '../../../src/admin/stats/routes.js';
import { StatsSampler } from '../../../src/admin/stats/sampler.js';
import type { StatsView } from '../../../src/admin/stats/view.js';
import { exporterMetrics, receiverMetrics, Telemetry } from '../../../src/shared/telemetry.js';
import { gatewayMetrics } from '../../../src/receivers/gateway/core/metrics.js';
import { queueMetrics } from '../../../src/queue/index.js';
import { transportMetrics } from '../../../src/receivers/otlp/metrics.js';

const KEY = 'admin-secret';
let telemetry: Telemetry;
let admin: AdminServer;
let sampler: StatsSampler;
let base: string;
let now: number;

async function stats(): Promise<StatsView> {
  const res = await fetch(`${base}/v1/stats`, { headers: { authorization: `Bearer ${KEY}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as StatsView;
}

beforeEach(async () => {
  now = 1_000_000;
  telemetry = new Telemetry({ defaultMetrics: false });
  admin = new AdminServer({ telemetry, logger: pino({ level: 'silent' }), isReady: () => true, apiKey: () => KEY });
  // A 10 s window of 2 s samples: six samples, so old ones fall out quickly.
  sampler = new StatsSampler({ registry: telemetry.registry, intervalMs: 2_000, windowMs: 10_000, now: () => now });
  mountStatsApi(admin, sampler, { config: () => undefined, state: () => undefined });
  await admin.listen('127.0.0.1:0');
  base = `http://127.0.0.1:${admin.address()?.port ?? 0}`;
});

afterEach(async () => {
  sampler.stop();
  await admin.close();
});

describe('GET /v1/stats', () => {
  it('refuses a request without the admin key or with a wrong one', async () => {
    expect((await fetch(`${base}/v1/stats`)).status).toBe(401);
    const wrong = await fetch(`${base}/v1/stats`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 405 to a method other than GET', async () => {
    const res = await fetch(`${base}/v1/stats`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('reports receivers accepted and refused spans as /metrics counts them', async () => {
    const receivers = receiverMetrics(telemetry);
    receivers.accepted.inc({ receiver: 'otlp', transport: 'http' }, 120);
    receivers.refused.inc({ receiver: 'otlp', transport: 'http', reason: 'invalid' }, 3);
    receivers.refused.inc({ receiver: 'otlp', transport: 'http', reason: 'backpressure' }, 4);
    receivers.accepted.inc({ receiver: 'gateway', transport: 'internal' }, 2);
    const body = await stats();
    expect(body.receivers).toEqual([
      { receiver: 'gateway', transport: 'internal', accepted: 2, refused: 0, refusedByReason: {}, refusedRequests: 0, refusedRequestsByReason: {} },
      { receiver: 'otlp', transport: 'http', accepted: 120, refused: 7, refusedByReason: { backpressure: 4, invalid: 3 }, refusedRequests: 0, refusedRequestsByReason: {} },
    ]);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('sluice_receiver_accepted_spans_total{receiver="otlp",transport="http"} 120');
  });

  it('reports requests a receiver refused before it could count their spans, even when it accepted none', async () => {
    const http = transportMetrics(telemetry, 'otlp', 'http');
    http.refused('unauthenticated', 0);
    http.refused('unauthenticated', 0);
    http.refused('malformed', 0);
    http.refused('backpressure', 5);
    const body = await stats();
    expect(body.receivers).toEqual([
      { receiver: 'otlp', transport: 'http', accepted: 0, refused: 5, refusedByReason: { backpressure: 5 }, refusedRequests: 4, refusedRequestsByReason: { backpressure: 1, malformed: 1, unauthenticated: 2 } },
    ]);
  });

  it('reports each exporter with its queue, and drains apart with their pending queue', async () => {
    const exporters = exporterMetrics(telemetry);
    const queues = queueMetrics(telemetry);
    exporters.sent.inc({ exporter: 'otlphttp/acme' }, 50);
    exporters.retries.inc({ exporter: 'otlphttp/acme' }, 2);
    exporters.dropped.inc({ exporter: 'otlphttp/acme', reason: 'permanent' }, 5);
    queues.records.set({ queue: 'otlphttp/acme' }, 3);
    queues.sizeBytes.set({ queue: 'otlphttp/acme' }, 4096);
    queues.capacityBytes.set({ queue: 'otlphttp/acme' }, 1 << 20);
    exporters.sent.inc({ exporter: 'drain/drn_1' }, 9);
    exporters.failed.inc({ exporter: 'drain/drn_1' }, 1);
    queues.records.set({ queue: 'drain/drn_1' }, 1);
    queues.records.set({ queue: 'drain/drn_1/pending' }, 7);
    const body = await stats();
    expect(body.exporters).toEqual([
      { exporter: 'otlphttp/acme', sent: 50, failed: 0, retries: 2, dropped: 5, droppedByReason: { permanent: 5 }, queue: { records: 3, bytes: 4096, capacityBytes: 1 << 20 } },
    ]);
    expect(body.drains).toEqual([
      {
        id: 'drn_1',
        sent: 9,
        failed: 1,
        retries: 0,
        dropped: 0,
        droppedByReason: {},
        queue: { records: 1, bytes: 0, capacityBytes: 0 },
        pendingQueue: { records: 7, bytes: 0, capacityBytes: 0 },
      },
    ]);
  });

  it('draws spans per second from consecutive samples', async () => {
    const accepted = receiverMetrics(telemetry).accepted;
    const sent = exporterMetrics(telemetry).sent;
    await sampler.sample();
    now += 2_000;
    accepted.inc({ receiver: 'otlp', transport: 'grpc' }, 300);
    sent.inc({ exporter: 'file' }, 100);
    await sampler.sample();
    now += 2_000;
    await sampler.sample();
    const body = await stats();
    expect(body.series).toEqual([
      { at: 1_002_000, acceptedPerSecond: 150, sentPerSecond: 50 },
      { at: 1_004_000, acceptedPerSecond: 0, sentPerSecond: 0 },
    ]);
  });

  it('counts provider attempts, failures and latency over the window only', async () => {
    const gateway = gatewayMetrics(telemetry);
    // Before the window: must not count.
    gateway.attempts.inc({ receiver: 'gateway', provider: 'openai', outcome: 'success' }, 1000);
    gateway.attemptDuration.observe({ receiver: 'gateway', provider: 'openai' }, 20);
    await sampler.sample();
    for (let i = 0; i < 6; i += 1) {
      now += 2_000;
      await sampler.sample();
    }
    for (let i = 0; i < 98; i += 1) gateway.attemptDuration.observe({ receiver: 'gateway', provider: 'openai' }, 0.03);
    gateway.attemptDuration.observe({ receiver: 'gateway', provider: 'openai' }, 0.7);
    gateway.attemptDuration.observe({ receiver: 'gateway', provider: 'openai' }, 0.7);
    gateway.attempts.inc({ receiver: 'gateway', provider: 'openai', outcome: 'success' }, 97);
    gateway.attempts.inc({ receiver: 'gateway', provider: 'openai', outcome: 'http_error' }, 2);
    gateway.attempts.inc({ receiver: 'gateway', provider: 'openai', outcome: 'timeout' }, 1);
    // Clients that left are not the provider failing.
    gateway.attempts.inc({ receiver: 'gateway', provider: 'openai', outcome: 'cancelled' }, 4);
    now += 1_000;
    const body = await stats();
    expect(body.windowMs).toBe(10_000);
    const [openai] = body.gateway.providers;
    expect(openai).toMatchObject({ provider: 'openai', attempts: 104, failures: 3, failuresByType: { http_error: 2, timeout: 1 } });
    // 98 of 100 in the 25-50 ms bucket: p50 interpolates inside it, p99 lands in the 0.5-1 s bucket.
    expect(openai?.latencyMs.p50).toBeGreaterThan(25);
    expect(openai?.latencyMs.p50).toBeLessThanOrEqual(50);
    expect(openai?.latencyMs.p99).toBeGreaterThan(500);
    expect(openai?.latencyMs.p99).toBeLessThanOrEqual(1000);
  });

  it('reports tokens and spend per key name when the gateway counts them', async () => {
    telemetry.counter('sluice_gateway_tokens_total', 'tokens', ['model', 'provider', 'key', 'type']).inc({ model: 'm', provider: 'p', key: 'team-a', type: 'input' }, 10);
    telemetry.counter('sluice_gateway_tokens_total', 'tokens', ['model', 'provider', 'key', 'type']).inc({ model: 'm', provider: 'p', key: 'team-a', type: 'output' }, 5);
    // Parts of input and output, not tokens of their own.
    telemetry.counter('sluice_gateway_tokens_total', 'tokens', ['model', 'provider', 'key', 'type']).inc({ model: 'm', provider: 'p', key: 'team-a', type: 'cache_read' }, 6);
    telemetry.counter('sluice_gateway_tokens_total', 'tokens', ['model', 'provider', 'key', 'type']).inc({ model: 'm', provider: 'p', key: 'team-a', type: 'reasoning' }, 2);
    telemetry.counter('sluice_gateway_cost_usd_total', 'cost', ['model', 'provider', 'key']).inc({ model: 'm', provider: 'p', key: 'team-a' }, 0.25);
    const body = await stats();
    expect(body.gateway.keys).toEqual([{ key: 'team-a', tokens: 15, tokensByType: { input: 10, output: 5, cache_read: 6, reasoning: 2 }, costUsd: 0.25 }]);
  });

  it('keeps only the window in memory', async () => {
    for (let i = 0; i < 20; i += 1) {
      await sampler.sample();
      now += 2_000;
    }
    // 10 s of 2 s samples, plus the one a full window back.
    expect(sampler.snapshots()).toHaveLength(6);
    expect(sampler.snapshots()[0]?.at).toBe(1_000_000 + 14 * 2_000);
  });

  it('keeps in the window only the metrics read over it, however many keys and models the rest have', async () => {
    const tokens = telemetry.counter('sluice_gateway_tokens_total', 'tokens', ['model', 'provider', 'key', 'type']);
    for (let i = 0; i < 200; i += 1) tokens.inc({ model: `m${i}`, provider: 'p', key: 'team-a', type: 'input' }, 1);
    gatewayMetrics(telemetry).attempts.inc({ receiver: 'gateway', provider: 'openai', outcome: 'success' }, 1);
    await sampler.sample();
    const kept = [...(sampler.snapshots()[0]?.metrics.keys() ?? [])];
    expect(kept).toContain('sluice_gateway_attempts_total');
    expect(kept).not.toContain('sluice_gateway_tokens_total');
    // The answer still has them, read when asked.
    expect((await stats()).gateway.keys).toMatchObject([{ key: 'team-a', tokens: 200 }]);
  });
});
