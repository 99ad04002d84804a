import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TraceBatch } from '../../../src/otlp/batch.js';
import { configDrainId } from '../../../src/exporters/drains/definition.js';
import { requestOf, trace, traceIdWithR, type TestSpan } from '../../processors/sampling/helpers.js';
import { exporterConfig, makeHarness, type Harness } from './harness.js';
import { startSink, waitFor, type Sink } from './sink.js';
import { testTls, type TestTls } from '../../helpers/tls.js';

const HIGH = (1n << 56n) - 1n;
let pki: TestTls;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  pki = testTls();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sinkFor(): Promise<Sink> {
  const sink = await startSink();
  cleanups.push(() => sink.close());
  return sink;
}

async function started(drains: unknown[], overrides: Record<string, unknown> = {}, storage?: string): Promise<Harness> {
  const harness = makeHarness(exporterConfig(drains, overrides), storage);
  await harness.exporter.start(harness.host);
  cleanups.push(async () => {
    await harness.exporter.shutdown();
    if (storage === undefined) rmSync(harness.storageDirectory, { recursive: true, force: true });
  });
  return harness;
}

function drain(name: string, sink: Sink, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, url: sink.url, tls: { ca_file: pki.caFile }, ...extra };
}

const batch = (spans: TestSpan[]) => TraceBatch.fromProto(requestOf(spans));

/** Rules under which a trace with R = 0 is kept only for its root's /api path, so its children wait for the root; a small refusing queue. */
const STRICT = {
  sampling: [
    { environment: 'production', percentage: 100, path_prefix: '/api' },
    { environment: 'production', percentage: 0 },
  ],
  sending_queue: { max_size: '4KiB', on_full: 'refuse' },
};
const HOLDING = { decision_wait: '30s', retry_on_failure: { initial_interval: '50ms', max_interval: '100ms' } };

/** Consumes kept roots until the drain's main queue refuses one, so it refuses any root of that size. */
async function fillUntilRefused(exporter: Harness['exporter']): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    const refused = await exporter.consume(batch(trace({ path: '/api/x', children: 0 }))).then(() => false, () => true);
    if (refused) return;
  }
  throw new Error('the main queue never refused');
}

/** Consumes `spans` again until the exporter accepts them (a full queue refuses until it drains). */
async function consumeOnceAccepted(exporter: Harness['exporter'], spans: TestSpan[]): Promise<void> {
  await waitUntilAsync(() => exporter.consume(batch(spans)).then(() => true, () => false), 'the batch accepted');
}

async function waitUntilAsync(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('drains exporter', () => {
  it('delivers each drain the whole traces its own rules select, in its format, signed', async () => {
    const jsonSink = await sinkFor();
    const protoSink = await sinkFor();
    const { exporter } = await started([
      drain('json', jsonSink, { format: 'json', compression: 'gzip', secret: 's3cret', headers: { 'x-team': 'blue' }, sampling: [{ environment: 'production', percentage: 100, path_prefix: '/api' }] }),
      drain('proto', protoSink, { format: 'protobuf', compression: 'none', sampling: [{ environment: 'preview', percentage: 100 }] }),
    ]);
    const api = trace({ path: '/api/cart', env: 'production' });
    const web = trace({ path: '/web', env: 'production' });
    const preview = trace({ path: '/api/x', env: 'preview' });
    await exporter.consume(batch([...api, ...web, ...preview]));
    await waitFor(() => jsonSink.spanIds().length === 3 && protoSink.spanIds().length === 3, 10_000, 'deliveries');
    expect(jsonSink.spanIds().sort()).toEqual(api.map((s) => s.spanId).sort());
    expect(jsonSink.traceIds()).toEqual(new Set([api[0]?.traceId]));
    expect(protoSink.traceIds()).toEqual(new Set([preview[0]?.traceId]));
    const jsonRequest = jsonSink.requests[0];
    expect(jsonRequest?.headers['content-type']).toBe('application/json');
    expect(jsonRequest?.headers['content-encoding']).toBe('gzip');
    expect(jsonRequest?.headers['x-team']).toBe('blue');
    expect(jsonRequest?.headers['user-agent']).toBe('sluice/0.1.0-test');
    expect(jsonRequest !== undefined && jsonSink.signatureValid(jsonRequest, 's3cret')).toBe(true);
    expect(jsonRequest?.request.resourceSpans[0]?.resource?.attributes).toContainEqual({ key: 'deployment.environment.name', value: { stringValue: 'production' } });
    expect(protoSink.requests[0]?.headers['content-type']).toBe('application/x-protobuf');
    expect(protoSink.requests[0]?.headers['x-sluice-signature']).toBeUndefined();
  });

  it('never delivers spans of edge resources', async () => {
    const sink = await sinkFor();
    const { exporter } = await started([drain('all', sink)]);
    const spans = trace({ children: 1 });
    const edge: TestSpan = { traceId: spans[0]?.traceId ?? '', parent: spans[0]?.spanId ?? '', resource: { 'platform.runtime': 'edge' } };
    await exporter.consume(batch([...spans, edge]));
    await waitFor(() => sink.spanIds().length === 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sink.spanIds()).toHaveLength(2);
    expect(exporter.list()[0]?.stats.counters.spansDropped.edge).toBe(1);
  });

  it('a drain whose sink never answers does not delay another drain', async () => {
    const dead = await sinkFor();
    dead.behaviour = 'hang';
    const live = await sinkFor();
    const { exporter } = await started([drain('dead', dead), drain('live', live)], { timeout: '30s' });
    // consume() settles once both queues hold the batch: were it waiting for the dead
    // drain's delivery (30 s timeout, never answered), the five rounds would outlast the test.
    for (let i = 0; i < 5; i++) {
      await exporter.consume(batch(trace({})));
      await waitFor(() => live.spanIds().length === 3 * (i + 1), 10_000, `live delivery ${i}`);
    }
    const counters = (name: string) => exporter.list().find((d) => d.definition.name === name)?.stats.counters;
    // The sink records a request when it arrives; the drain counts it once the answer is read.
    await waitFor(() => counters('live')?.spansSent === 15, 10_000, 'live counters');
    expect(counters('live')?.spansSent).toBe(15);
    expect(counters('dead')?.spansSent).toBe(0);
  });

  it('holds spans that arrive before their root durably, across a restart', async () => {
    const sink = await sinkFor();
    const rules = { sampling: [{ environment: 'production', percentage: 100, path_prefix: '/api' }] };
    const first = await started([drain('api', sink, rules)], { decision_wait: '30s' }, makeHarness(exporterConfig([])).storageDirectory);
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(0n) });
    await first.exporter.consume(batch(children));
    await first.exporter.shutdown();
    expect(sink.spanIds()).toHaveLength(0);
    const second = await started([drain('api', sink, rules)], { decision_wait: '30s' }, first.storageDirectory);
    await second.exporter.consume(batch([root as TestSpan]));
    await waitFor(() => sink.spanIds().length === 3, 10_000, 'held spans after restart');
    rmSync(first.storageDirectory, { recursive: true, force: true });
  });

  it('shows the pending queue in the queue gauges while spans wait there for their root', async () => {
    const sink = await sinkFor();
    const rules = { sampling: [{ environment: 'production', percentage: 100, path_prefix: '/api' }] };
    const { exporter, telemetry } = await started([drain('api', sink, rules)], { decision_wait: '30s' });
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(0n) });
    await exporter.consume(batch(children));
    const pending = `drain/${configDrainId('api')}/pending`;
    const metrics = await telemetry.registry.metrics();
    expect(metrics).toContain(`sluice_queue_records{queue="${pending}"} 1`);
    expect(metrics).toMatch(new RegExp(`sluice_queue_size_bytes\\{queue="${pending}"\\} [1-9]`));
    expect(metrics).toContain(`sluice_queue_capacity_bytes{queue="${pending}"} ${512 * 1024 * 1024}`);
    await exporter.consume(batch([root as TestSpan]));
    await waitFor(() => sink.spanIds().length === 3, 10_000, 'the trace');
    // Released and acknowledged: the gauge follows within its refresh.
    let after = '';
    for (let i = 0; i < 100 && !after.includes(`sluice_queue_records{queue="${pending}"} 0`); i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await telemetry.registry.metrics();
    }
    expect(after).toContain(`sluice_queue_records{queue="${pending}"} 0`);
  });

  it('answers a root only once the spans it released from the pending queue are queued, so a crash right after keeps them', async () => {
    const sink = await sinkFor();
    sink.behaviour = 503;
    const rules = { sampling: [{ environment: 'production', percentage: 100, path_prefix: '/api' }, { environment: 'production', percentage: 0 }] };
    // Segments of 8 KiB: the children's record (over 8 KiB) needs a new segment after the root's, so it is written only after the root's write.
    const queue = { sending_queue: { max_size: '64KiB' } };
    const storage = makeHarness(exporterConfig([])).storageDirectory;
    const crashed = makeHarness(exporterConfig([])).storageDirectory;
    cleanups.push(() => {
      rmSync(storage, { recursive: true, force: true });
      rmSync(crashed, { recursive: true, force: true });
    });
    const first = await started([drain('api', sink, { ...rules, ...queue })], { decision_wait: '30s' }, storage);
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(0n), children: 30 }).map((span) => ({ ...span, name: `${span.name} ${'x'.repeat(300)}` }));
    await first.exporter.consume(batch(children));
    await first.exporter.consume(batch([root as TestSpan]));
    // What a kill -9 at this moment leaves on disk; the root's decision reaches decisions.log only within a second.
    cpSync(storage, crashed, { recursive: true });
    const after = await sinkFor();
    await started([drain('api', after, { ...rules, ...queue })], { decision_wait: '100ms' }, crashed);
    const expected = [root, ...children].map((s) => s?.spanId ?? '');
    await waitFor(() => expected.every((id) => after.spanIds().includes(id)), 10_000, 'the root and the children it released');
  });

  it('spans arriving after a restart follow the decision their root made before it', async () => {
    const sink = await sinkFor();
    const rules = { sampling: [{ environment: 'production', percentage: 100, path_prefix: '/api' }] };
    const storage = makeHarness(exporterConfig([])).storageDirectory;
    // R = 0: kept only because of the root's path; as a trace with no known path it would be dropped.
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(0n) });
    const first = await started([drain('api', sink, rules)], { decision_wait: '30s' }, storage);
    await first.exporter.consume(batch([root as TestSpan]));
    await waitFor(() => sink.spanIds().length === 1, 10_000, 'the root');
    await first.exporter.shutdown();
    const second = await started([drain('api', sink, rules)], { decision_wait: '30s' }, storage);
    await second.exporter.consume(batch(children));
    // Without the remembered decision they would wait the whole 30 s decision_wait.
    await waitFor(() => sink.spanIds().length === 3, 10_000, 'the children after the restart');
    rmSync(storage, { recursive: true, force: true });
  });

  it('spans waiting for their root when the drain\'s rules change are decided by their root under the new rules', async () => {
    const sink = await sinkFor();
    const { exporter } = await started([], { decision_wait: '30s' });
    const delivery = { url: sink.url, encoding: 'protobuf', compression: 'none', headers: {}, ca: pki.ca, insecure: false } as const;
    const apiOnly = [{ environment: 'production', percentage: 100, path_prefix: '/api' }];
    const created = await exporter.create({ name: 'api', enabled: true, delivery, sampling: apiOnly });
    // R = 0: kept only because of the root's path; as a trace with no known path it would be dropped.
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(0n) });
    await exporter.consume(batch(children));
    // A rule added for another environment changes nothing for this trace.
    const withPreview = [...apiOnly, { environment: 'preview', percentage: 100 }];
    const updated = await exporter.update(created.definition.id, (current) => ({ ok: true, changes: { ...current, sampling: withPreview } }));
    expect(updated.ok).toBe(true);
    await exporter.consume(batch([root as TestSpan]));
    await waitFor(() => sink.spanIds().length === 3, 10_000, 'the whole trace');
  });

  it('a child without an environment, arriving after a restart, follows a root decided without its path', async () => {
    const sink = await sinkFor();
    const rules = { sampling: [{ environment: 'production', percentage: 100 }] };
    const storage = makeHarness(exporterConfig([])).storageDirectory;
    const [root] = trace({ path: '/home', traceId: traceIdWithR(0n), children: 0 });
    const first = await started([drain('prod', sink, rules)], { decision_wait: '30s' }, storage);
    await first.exporter.consume(batch([root as TestSpan]));
    await waitFor(() => sink.spanIds().length === 1, 10_000, 'the root');
    await first.exporter.shutdown();
    // Another service's span in the trace: its resource names no environment, so it cannot decide by itself.
    const child: TestSpan = { traceId: root?.traceId ?? '', parent: root?.spanId ?? '', resource: { 'service.name': 'worker' } };
    const second = await started([drain('prod', sink, rules)], { decision_wait: '30s' }, storage);
    await second.exporter.consume(batch([child]));
    // Without the remembered decision it would wait the whole 30 s decision_wait, then be dropped.
    await waitFor(() => sink.spanIds().length === 2, 10_000, 'the child after the restart');
    rmSync(storage, { recursive: true, force: true });
  });

  it('a root whose trace its children decided before it arrived still records the decision, for a child without an environment after a restart', async () => {
    const sink = await sinkFor();
    const rules = { sampling: [{ environment: 'production', percentage: 100 }] };
    const storage = makeHarness(exporterConfig([])).storageDirectory;
    const [root, ...children] = trace({ path: '/home', traceId: traceIdWithR(0n), children: 2 });
    const first = await started([drain('prod', sink, rules)], { decision_wait: '200ms' }, storage);
    // The children name an environment with rules, and the path cannot change the outcome: they decide at once.
    await first.exporter.consume(batch(children));
    await first.exporter.consume(batch([root as TestSpan]));
    await waitFor(() => sink.spanIds().length === 3, 10_000, 'the trace');
    await first.exporter.shutdown();
    const late: TestSpan = { traceId: root?.traceId ?? '', parent: root?.spanId ?? '', resource: { 'service.name': 'worker' } };
    const second = await started([drain('prod', sink, rules)], { decision_wait: '200ms' }, storage);
    await second.exporter.consume(batch([late]));
    // Without the root's decision on disk it waits 200 ms and is dropped as a trace of no environment.
    await waitFor(() => sink.spanIds().length === 4, 10_000, 'the late child after the restart');
    rmSync(storage, { recursive: true, force: true });
  });

  it('a drain that fails to start lets go of the queue that did open, so it starts once the fault is gone', async () => {
    const sink = await sinkFor();
    const storage = makeHarness(exporterConfig([])).storageDirectory;
    // The main queue's directory is a file: that queue cannot open, while the pending queue beside it can.
    const unitDirectory = join(storage, 'drains', configDrainId('api'));
    mkdirSync(unitDirectory, { recursive: true });
    writeFileSync(join(unitDirectory, 'queue'), 'not a directory');
    const failing = makeHarness(exporterConfig([drain('api', sink)]), storage);
    await expect(failing.exporter.start(failing.host)).rejects.toThrow(/queue/);
    await failing.exporter.shutdown();
    rmSync(join(unitDirectory, 'queue'));
    // Had the pending queue kept its directory locked, this start would fail with "another queue in this process".
    const { exporter } = await started([drain('api', sink)], {}, storage);
    await exporter.consume(batch(trace({})));
    await waitFor(() => sink.spanIds().length === 3, 10_000, 'delivery after the fault is gone');
    rmSync(storage, { recursive: true, force: true });
  });

  it('a drain with undecided spans on disk that fails to start fails at once, and keeps those spans for the next start', async () => {
    const sink = await sinkFor();
    const rules = { sampling: [{ environment: 'production', percentage: 100, path_prefix: '/api' }] };
    const storage = makeHarness(exporterConfig([])).storageDirectory;
    const first = await started([drain('api', sink, rules)], { decision_wait: '30s' }, storage);
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(0n) });
    await first.exporter.consume(batch(children));
    await first.exporter.shutdown();
    const queue = join(storage, 'drains', configDrainId('api'), 'queue');
    rmSync(queue, { recursive: true, force: true });
    writeFileSync(queue, 'not a directory');
    // The pending loop holds the replayed children; only a started sampler would ever decide them.
    const failing = makeHarness(exporterConfig([drain('api', sink, rules)], { decision_wait: '30s' }), storage);
    await expect(failing.exporter.start(failing.host)).rejects.toThrow(/queue/);
    await failing.exporter.shutdown();
    rmSync(queue);
    const second = await started([drain('api', sink, rules)], { decision_wait: '30s' }, storage);
    await second.exporter.consume(batch([root as TestSpan]));
    await waitFor(() => sink.spanIds().length === 3, 10_000, 'the children kept on disk, with their root');
    rmSync(storage, { recursive: true, force: true });
  });

  it('drops new data for a full drain only, counted', async () => {
    const small = await sinkFor();
    small.behaviour = 503;
    const other = await sinkFor();
    const { exporter, telemetry } = await started([drain('small', small, { sending_queue: { max_size: '4KiB' } }), drain('other', other)], { retry_on_failure: { initial_interval: '10s' } });
    for (let i = 0; i < 20; i++) await exporter.consume(batch(trace({ children: 5 })));
    await waitFor(() => other.spanIds().length === 120, 10_000, 'other drain');
    const smallState = exporter.list().find((state) => state.definition.name === 'small');
    expect(smallState?.stats.counters.spansDropped.queue_full).toBeGreaterThan(0);
    expect(await telemetry.registry.metrics()).toMatch(/sluice_exporter_dropped_spans_total\{exporter="drain\/drn_cfg_[0-9a-f]+",reason="queue_full"\} \d+/);
  });

  it('refuses with backpressure when a full drain is configured with on_full: refuse', async () => {
    const sink = await sinkFor();
    sink.behaviour = 503;
    const { exporter } = await started([drain('strict', sink, { sending_queue: { max_size: '4KiB', on_full: 'refuse' } })], { retry_on_failure: { initial_interval: '10s' } });
    let refused: unknown;
    for (let i = 0; i < 20 && refused === undefined; i++) await exporter.consume(batch(trace({ children: 5 }))).catch((err: unknown) => (refused = err));
    expect((refused as { code?: string } | undefined)?.code).toBe('SLUICE_ERR_RESOURCE_EXHAUSTED');
  });

  it('children released when their root arrives reach the destination after a full main queue refused them, once it has room', async () => {
    const sink = await sinkFor();
    sink.behaviour = 503;
    const { exporter } = await started([drain('strict', sink, STRICT)], HOLDING);
    await fillUntilRefused(exporter);
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(0n) });
    await exporter.consume(batch(children)); // held in the pending queue for their root
    await expect(exporter.consume(batch([root as TestSpan]))).rejects.toMatchObject({ code: 'SLUICE_ERR_RESOURCE_EXHAUSTED' });
    sink.behaviour = 200;
    await consumeOnceAccepted(exporter, [root as TestSpan]);
    const expected = [root, ...children].map((s) => s?.spanId ?? '');
    await waitFor(() => expected.every((id) => sink.spanIds().includes(id)), 10_000, 'the root and its children');
  });

  it('spans left pending by a refused hand-over are delivered after a restart, handed over only once the main queue is open', async () => {
    const sink = await sinkFor();
    sink.behaviour = 503;
    const storage = makeHarness(exporterConfig([])).storageDirectory;
    // 64 KiB: a backlog in eight segment files, which the main queue reads through as it opens.
    const first = await started([drain('strict', sink, { ...STRICT, sending_queue: { max_size: '64KiB', on_full: 'refuse' } })], HOLDING, storage);
    await fillUntilRefused(first.exporter);
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(0n) });
    await first.exporter.consume(batch(children));
    await expect(first.exporter.consume(batch([root as TestSpan]))).rejects.toMatchObject({ code: 'SLUICE_ERR_RESOURCE_EXHAUSTED' });
    await first.exporter.shutdown(); // the children stay pending; their trace's decision is on disk
    sink.behaviour = 200;

    // Room for them now: replayed and decided at once from the remembered decision, they go straight to the main queue.
    const second = await started([drain('strict', sink, { ...STRICT, sending_queue: { max_size: '1MiB', on_full: 'refuse' } })], HOLDING, storage);
    const expected = children.map((s) => s.spanId ?? '');
    await waitFor(() => expected.every((id) => sink.spanIds().includes(id)), 10_000, 'the children after the restart');
    expect(await second.telemetry.registry.metrics()).not.toMatch(/sluice_queue_enqueue_failed_spans_total\{queue="drain\/[^"]+"\} [1-9]/);
    rmSync(storage, { recursive: true, force: true });
  });

  it('drops a batch the destination refuses permanently and shows the drain as errored', async () => {
    const sink = await sinkFor();
    sink.behaviour = 400;
    const { exporter } = await started([drain('bad', sink)]);
    await exporter.consume(batch(trace({})));
    await waitFor(() => (exporter.list()[0]?.stats.counters.spansDropped.permanent ?? 0) === 3, 10_000, 'permanent drop');
    expect(exporter.list()[0]?.stats.errored).toBe(true);
  });

  it('counts spans given up at max_age in the drain\'s API counters, as in the metric', async () => {
    const sink = await sinkFor();
    sink.behaviour = 503;
    const { exporter, telemetry } = await started([drain('late', sink)], { retry_on_failure: { initial_interval: '50ms', max_interval: '50ms', max_age: '120ms' } });
    await exporter.consume(batch(trace({})));
    const state = exporter.list()[0];
    await waitFor(() => (state?.stats.counters.spansDropped.max_age ?? 0) === 3, 10_000, 'max_age drop');
    expect(state?.stats.counters.spansDropped.permanent).toBe(0);
    expect(await telemetry.registry.metrics()).toContain(`sluice_exporter_dropped_spans_total{exporter="drain/${state?.definition.id ?? ''}",reason="max_age"} 3`);
  });

  it('reports a test delivery to a destination that never answers as timed out after the drains timeout', async () => {
    const sink = await sinkFor();
    sink.behaviour = 'hang';
    const { exporter } = await started([], { timeout: '200ms' });
    const outcome = await exporter.testDelivery({ url: sink.url, encoding: 'protobuf', compression: 'gzip', headers: {}, ca: pki.ca, insecure: false });
    expect(outcome).toMatchObject({ ok: false, status: null });
    expect(outcome.error).toContain('timed out after 200ms');
  });

  it('retries retryable failures until the destination recovers', async () => {
    const sink = await sinkFor();
    sink.behaviour = 503;
    const { exporter } = await started([drain('flaky', sink)], { retry_on_failure: { initial_interval: '50ms', max_interval: '100ms' } });
    await exporter.consume(batch(trace({})));
    await new Promise((resolve) => setTimeout(resolve, 300));
    sink.behaviour = 200;
    await waitFor(() => sink.spanIds().length === 3, 10_000, 'recovery');
    expect(exporter.list()[0]?.stats.counters.deliveriesFailed).toBeGreaterThan(0);
  });
});
