// Issue 11, whole-trace sampling across a fleet: 1,000 traces whose root
// spans go to A and whose children go to B and C, with drains whose rules
// depend on the request path (which only the root carries). B and C look up
// the decision A recorded in Redis, so every drain receives each trace whole
// or not at all, exactly as its rules decide from the root's path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToBytes } from '../../src/otlp/ids.js';
import { RuleSet, type SamplingRule } from '../../src/processors/sampling/rules.js';
import { waitUntil } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { makeTrace, requestOf, send, startFleet, type Member, type TraceSpans } from './cluster-kit.js';

const TRACES = 1_000;
const PER_REQUEST = 50;
const API_RULES: SamplingRule[] = [
  { environment: 'production', percentage: 100, path_prefix: '/api' },
  { environment: 'production', percentage: 20 },
];
const CHECKOUT_RULES: SamplingRule[] = [{ environment: 'production', percentage: 50, path_prefix: '/checkout' }];

function yamlDrain(name: string, url: string, rules: SamplingRule[]): string {
  const lines = rules.map((r) => `        - { environment: ${r.environment}, percentage: ${r.percentage}${r.path_prefix === undefined ? '' : `, path_prefix: ${r.path_prefix}`} }`);
  return `  - name: ${name}\n    url: ${url}\n    insecure: true\n    compression: none\n    sampling:\n${lines.join('\n')}\n`;
}

let redis: TestRedis;
let fleet: Member[];
let apiSink: OtlpSink;
let checkoutSink: OtlpSink;

beforeAll(async () => {
  redis = await startRedis();
  [apiSink, checkoutSink] = await Promise.all([startOtlpSink({ tls: false }), startOtlpSink({ tls: false })]);
  fleet = await startFleet({
    redisUrl: redis.url,
    keyPrefix: 'sampling-test:',
    decisionWait: '3s',
    drainsYaml: yamlDrain('api', apiSink.url, API_RULES) + yamlDrain('checkout', checkoutSink.url, CHECKOUT_RULES),
  });
}, 60_000);

afterAll(async () => {
  await Promise.all((fleet ?? []).map((m) => m.daemon.cleanup()));
  await Promise.all([apiSink?.close(), checkoutSink?.close()]);
  await redis?.stop();
});

function expectedKept(traces: readonly TraceSpans[], rules: SamplingRule[]): Set<string> {
  const ruleSet = new RuleSet(rules);
  return new Set(traces.filter((t) => ruleSet.decide(hexToBytes(t.traceId), 'production', t.path).keep).map((t) => t.traceId));
}

function spansPerTrace(sink: OtlpSink): Map<string, Set<string>> {
  const byTrace = new Map<string, Set<string>>();
  for (const { span } of sink.spans()) {
    const spans = byTrace.get(span.traceId) ?? new Set<string>();
    spans.add(span.spanId);
    byTrace.set(span.traceId, spans);
  }
  return byTrace;
}

/** Spans the drains' samplers of one member have decided, kept or dropped. */
async function decidedSpans(member: Member): Promise<number> {
  const text = await (await fetch(`${member.admin}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (/^sluice_sampling_(kept|dropped)_spans_total\{[^}]*sampler="drain\//.test(line)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

async function sendAll(member: Member, requests: Uint8Array[]): Promise<void> {
  for (const body of requests) expect(await send(member.otlpUrl, body)).toBe(200);
}

describe('whole-trace sampling across instances', () => {
  it('delivers each trace whole or not at all to every drain, as the root path decides', async () => {
    const paths = ['/api/orders', '/checkout/pay', '/home'];
    const traces = Array.from({ length: TRACES }, (_, i) => makeTrace(paths[i % paths.length] ?? '/', 2));
    const chunks: TraceSpans[][] = [];
    for (let at = 0; at < traces.length; at += PER_REQUEST) chunks.push(traces.slice(at, at + PER_REQUEST));
    const [a, b, c] = fleet as [Member, Member, Member];
    // Children first on B and C, roots on A at the same time: most children arrive before their root.
    await Promise.all([
      sendAll(b, chunks.map((chunk) => requestOf(chunk.map((t) => t.children[0]!), 'cart'))),
      sendAll(c, chunks.map((chunk) => requestOf(chunk.map((t) => t.children[1]!), 'payments'))),
      sendAll(a, chunks.map((chunk) => requestOf(chunk.map((t) => t.root), 'web'))),
    ]);

    // Every span of both drains decided (kept or dropped) somewhere in the fleet.
    await waitUntil(async () => (await Promise.all(fleet.map(decidedSpans))).reduce((x, y) => x + y, 0) === TRACES * 3 * 2, 30_000, 'every span to be decided');
    for (const [sink, rules] of [[apiSink, API_RULES], [checkoutSink, CHECKOUT_RULES]] as const) {
      const kept = expectedKept(traces, rules);
      expect(kept.size).toBeGreaterThan(0);
      expect(kept.size).toBeLessThan(TRACES);
      await waitUntil(() => sink.spans().length >= kept.size * 3, 20_000, `${kept.size * 3} spans at the drain`);
      const received = spansPerTrace(sink);
      const partial = [...received].filter(([, spans]) => spans.size !== 3).map(([traceId]) => traceId);
      expect(partial).toEqual([]);
      expect(new Set(received.keys())).toEqual(kept);
    }
  });
});
