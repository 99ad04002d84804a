import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { SpanKind } from '../../../src/otlp/model.js';
import { scanRequest } from '../../../src/otlp/wire.js';
import type { SamplingRule } from '../../../src/processors/sampling/rules.js';
import { Sampler, SamplerStoppedError } from '../../../src/processors/sampling/sampler.js';
import { randomSpanId, requestOf, spanIdsOf, trace, traceIdWithR, type TestSpan } from './helpers.js';

const HIGH = (1n << 56n) - 1n; // kept by any percentage > 0
const LOW = 0n; // dropped by any percentage < 100

const samplers: Sampler[] = [];
afterEach(() => {
  for (const sampler of samplers.splice(0)) sampler.stop();
});

function makeSampler(rules: SamplingRule[], options: Partial<{ decisionWaitMs: number; maxPendingSpans: number; excludeEdge: boolean; telemetry: Telemetry }> = {}): Sampler {
  const sampler = new Sampler({
    name: 'test',
    rules,
    decisionWaitMs: options.decisionWaitMs ?? 2000,
    maxPendingSpans: options.maxPendingSpans ?? 100_000,
    excludeEdge: options.excludeEdge ?? true,
    telemetry: options.telemetry ?? new Telemetry({ defaultMetrics: false }),
  });
  samplers.push(sampler);
  return sampler;
}

function sample(sampler: Sampler, spans: TestSpan[]) {
  return sampler.sample(scanRequest(requestOf(spans)));
}

describe('sampler', () => {
  it('keeps a whole trace whose root path matches a 100% rule and drops one matching none', () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    const api = trace({ path: '/api/cart' });
    const web = trace({ path: '/web' });
    const result = sample(sampler, [...api, ...web]);
    expect(result.kept?.spanCount).toBe(3);
    expect(spanIdsOf(result.kept?.buf).sort()).toEqual(api.map((s) => s.spanId ?? '').filter((id) => id !== '').concat(spanIdsOf(result.kept?.buf).filter((id) => !api.some((s) => s.spanId === id))).sort());
    expect(result.sampledOutSpans).toBe(3);
    expect(result.pending).toBeUndefined();
  });

  it('takes a span whose parent_span_id is all zeros (no valid span id: no parent) as its trace\'s root, as exporters of root spans sometimes send', () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    const traceId = traceIdWithR(LOW);
    const rootId = randomSpanId();
    const root: TestSpan = { traceId, spanId: rootId, parent: '0000000000000000', kind: SpanKind.INTERNAL, attributes: { 'url.path': '/api/cart' } };
    const result = sample(sampler, [root, { traceId, parent: rootId }]);
    expect(result.pending).toBeUndefined();
    expect(result.kept?.spanCount).toBe(2);
  });

  it('reads the environment from deployment.environment when deployment.environment.name is absent', () => {
    const sampler = makeSampler([{ environment: 'staging', percentage: 100 }]);
    const result = sample(sampler, trace({ resource: { 'deployment.environment': 'staging' } }));
    expect(result.kept?.spanCount).toBe(3);
  });

  it('reads the path from http.target without its query, then http.route', () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api/' }]);
    const target: TestSpan = { traceId: traceIdWithR(LOW), kind: SpanKind.SERVER, attributes: { 'http.target': '/api/x?q=1' } };
    const route: TestSpan = { traceId: traceIdWithR(LOW), kind: SpanKind.SERVER, attributes: { 'http.route': '/api/:id' } };
    const other: TestSpan = { traceId: traceIdWithR(LOW), kind: SpanKind.SERVER, attributes: { 'http.target': '/web?/api/' } };
    expect(sample(sampler, [target, route, other]).kept?.spanCount).toBe(2);
  });

  it('never forwards spans of an edge resource, while other spans of the trace go', () => {
    const sampler = makeSampler([]);
    const spans = trace({ children: 0 });
    const root = spans[0] as TestSpan;
    const edgeChild: TestSpan = { traceId: root.traceId, parent: root.spanId ?? '', resource: { 'deployment.environment.name': 'production', 'platform.runtime': 'edge' } };
    const result = sample(sampler, [root, edgeChild]);
    expect(result.kept?.spanCount).toBe(1);
    expect(result.edgeSpans).toBe(1);
    expect(spanIdsOf(result.kept?.buf)).toEqual([root.spanId]);
  });

  it('holds spans that arrive before their root and decides them by the root', async () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(LOW) });
    const first = sample(sampler, children);
    expect(first.kept).toBeUndefined();
    expect(first.pending?.spanCount).toBe(2);
    const held = sampler.hold(first.pending?.buf ?? new Uint8Array());
    const second = sample(sampler, [root as TestSpan]);
    expect(second.kept?.spanCount).toBe(1);
    expect((await held).kept?.spanCount).toBe(2);
  });

  it('decides at once, without waiting, when the path cannot change the outcome', () => {
    const sampler = makeSampler([
      { environment: 'production', percentage: 50, path_prefix: '/api' },
      { environment: 'production', percentage: 10 },
    ]);
    const [, ...children] = trace({ traceId: traceIdWithR(HIGH) });
    expect(sample(sampler, children).kept?.spanCount).toBe(2);
    const [, ...others] = trace({ traceId: traceIdWithR(LOW) });
    const dropped = sample(sampler, others);
    expect(dropped.kept).toBeUndefined();
    expect(dropped.pending).toBeUndefined();
  });

  it('holds children whose resource names no environment with rules for the root, which keeps the trace', async () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }, { environment: 'production', percentage: 100 }]);
    const traceId = traceIdWithR(HIGH);
    const [root] = trace({ traceId, path: '/api/x' });
    // A child from a service whose resource says nothing of the environment arrives first.
    const [, child] = trace({ traceId, resource: { 'service.name': 'db-proxy' } });
    const first = sample(sampler, [child as TestSpan]);
    expect(first.kept).toBeUndefined();
    expect(first.pending?.spanCount).toBe(1);
    const held = sampler.hold(first.pending?.buf ?? new Uint8Array());
    expect(sample(sampler, [root as TestSpan]).kept?.spanCount).toBe(1);
    expect((await held).kept?.spanCount).toBe(1);
  });

  it('decides a trace whose root never comes as one with no known path after decision_wait', async () => {
    const sampler = makeSampler(
      [
        { environment: 'production', percentage: 100, path_prefix: '/api' },
        { environment: 'production', percentage: 0 },
      ],
      { decisionWaitMs: 50 },
    );
    sampler.start();
    const [, ...children] = trace({ traceId: traceIdWithR(HIGH) });
    const first = sample(sampler, children);
    const started = Date.now();
    const held = await sampler.hold(first.pending?.buf ?? new Uint8Array());
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    expect(held.kept).toBeUndefined();
    expect(held.sampledOutSpans).toBe(2);
  });

  it('uses the first SERVER span for the path when the root never comes', async () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }], { decisionWaitMs: 20 });
    sampler.start();
    const traceId = traceIdWithR(LOW);
    const server: TestSpan = { traceId, parent: randomSpanId(), kind: SpanKind.SERVER, attributes: { 'url.path': '/api/remote-parent' } };
    const first = sample(sampler, [server, { traceId, parent: randomSpanId() }]);
    expect((await sampler.hold(first.pending?.buf ?? new Uint8Array())).kept?.spanCount).toBe(2);
  });

  it('decides a trace whose root never comes by the environment of a held span that names one, whichever arrived first', async () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    const traceId = traceIdWithR(LOW);
    // A span of a service whose resource names no environment is held first ...
    const worker: TestSpan = { traceId, parent: randomSpanId(), resource: { 'service.name': 'worker' } };
    const server: TestSpan = { traceId, parent: randomSpanId(), kind: SpanKind.SERVER, attributes: { 'url.path': '/api/remote-parent' } };
    const first = sampler.hold(sample(sampler, [worker]).pending?.buf ?? new Uint8Array());
    // ... then the production service's SERVER span, whose parent is in another system.
    const second = sampler.hold(sample(sampler, [server]).pending?.buf ?? new Uint8Array());
    sampler.flush();
    expect((await first).kept?.spanCount).toBe(1);
    expect((await second).kept?.spanCount).toBe(1);
  });

  it('decides spans that wait for their root by the rules in force when the root arrives', async () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    const [root, ...children] = trace({ traceId: traceIdWithR(HIGH), path: '/web' });
    const held = sampler.hold(sample(sampler, children).pending?.buf ?? new Uint8Array());
    sampler.setRules([{ environment: 'production', percentage: 100, path_prefix: '/web' }]);
    expect(sample(sampler, [root as TestSpan]).kept?.spanCount).toBe(1);
    expect((await held).kept?.spanCount).toBe(2);
  });

  it('keeps spans that wait for their root at once when the rules are removed', async () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    const [, ...children] = trace({ traceId: traceIdWithR(LOW) });
    const held = sampler.hold(sample(sampler, children).pending?.buf ?? new Uint8Array());
    sampler.setRules([]);
    expect((await held).kept?.spanCount).toBe(2);
  });

  it('decides the oldest waiting traces as path-unknown past max_pending_spans', async () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }], { maxPendingSpans: 3 });
    const [, ...a] = trace({ children: 2 });
    const [, ...b] = trace({ children: 2 });
    const heldA = sampler.hold(sample(sampler, a).pending?.buf ?? new Uint8Array());
    const heldB = sampler.hold(sample(sampler, b).pending?.buf ?? new Uint8Array());
    expect((await heldA).sampledOutSpans).toBe(2);
    expect(sampler.pendingSpans).toBe(2);
    sampler.flush();
    expect((await heldB).kept).toBeUndefined();
  });

  it('remembers a decision so later spans of the trace follow it', () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    const [root, ...children] = trace({ path: '/api', traceId: traceIdWithR(LOW) });
    expect(sample(sampler, [root as TestSpan]).kept?.spanCount).toBe(1);
    expect(sample(sampler, children).kept?.spanCount).toBe(2);
  });

  it('rejects holds when stopped, so durable callers keep the spans', async () => {
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    const [, ...children] = trace({});
    const held = sampler.hold(sample(sampler, children).pending?.buf ?? new Uint8Array());
    sampler.stop();
    await expect(held).rejects.toBeInstanceOf(SamplerStoppedError);
  });

  it('counts kept and dropped spans per rule', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const sampler = makeSampler([{ environment: 'production', percentage: 100, path_prefix: '/api' }], { telemetry });
    sample(sampler, [...trace({ path: '/api' }), ...trace({ path: '/web' })]);
    const text = await telemetry.registry.metrics();
    expect(text).toContain('sluice_sampling_kept_spans_total{sampler="test",rule="0"} 3');
    expect(text).toContain('sluice_sampling_dropped_spans_total{sampler="test",rule="no_rule"} 3');
  });

  it('keeps or drops all spans of a trace split over several requests in any order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: 0n, max: HIGH }),
        fc.constantFrom('/api/a', '/web', '/api'),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.infiniteStream(fc.nat()),
        async (r, path, children, parts, choices) => {
          const sampler = makeSampler([
            { environment: 'production', percentage: 30, path_prefix: '/api' },
            { environment: 'production', percentage: 60 },
          ]);
          const spans = trace({ traceId: traceIdWithR(r), path, children });
          const shuffled = [...spans];
          const it = choices[Symbol.iterator]();
          for (let i = shuffled.length - 1; i > 0; i--) {
            const j = (it.next().value as number) % (i + 1);
            [shuffled[i], shuffled[j]] = [shuffled[j] as TestSpan, shuffled[i] as TestSpan];
          }
          const groups: TestSpan[][] = Array.from({ length: parts }, () => []);
          shuffled.forEach((span, i) => groups[i % parts]?.push(span));
          let kept = 0;
          const holds: Promise<{ kept: { spanCount: number } | undefined }>[] = [];
          for (const group of groups.filter((g) => g.length > 0)) {
            const result = sample(sampler, group);
            kept += result.kept?.spanCount ?? 0;
            if (result.pending !== undefined) holds.push(sampler.hold(result.pending.buf));
          }
          for (const held of await Promise.all(holds)) kept += held.kept?.spanCount ?? 0;
          expect([0, spans.length]).toContain(kept);
          sampler.stop();
        },
      ),
      { numRuns: 300 },
    );
  });
});
