// Benchmark payloads: OTLP protobuf requests of 100 spans with 10 attributes
// each, as DESIGN section 9 measures them. Every request has its own trace ids.
import { randomBytes } from 'node:crypto';
import type { KeyValue, Span } from '../../src/otlp/model.js';
import { encodeRequest } from '../../src/otlp/proto-codec.js';

export const SPANS_PER_REQUEST = 100;

function attributes(i: number): KeyValue[] {
  return [
    { key: 'http.request.method', value: { stringValue: 'GET' } },
    { key: 'url.path', value: { stringValue: `/api/items/${i}` } },
    { key: 'http.response.status_code', value: { intValue: '200' } },
    { key: 'server.address', value: { stringValue: 'shop.example.com' } },
    { key: 'server.port', value: { intValue: '443' } },
    { key: 'user_agent.original', value: { stringValue: 'Mozilla/5.0 (X11; Linux x86_64) bench' } },
    { key: 'network.protocol.version', value: { stringValue: '1.1' } },
    { key: 'db.system', value: { stringValue: 'postgresql' } },
    { key: 'app.cache_hit', value: { boolValue: i % 2 === 0 } },
    { key: 'app.latency_ratio', value: { doubleValue: i / 7 } },
  ];
}

export function makeRequest(environment = 'production'): Uint8Array {
  const spans: Span[] = [];
  const start = BigInt(Date.now()) * 1_000_000n;
  // 10 traces of 10 spans: one SERVER root and nine children.
  for (let t = 0; t < 10; t++) {
    const traceId = randomBytes(16).toString('hex');
    const rootId = randomBytes(8).toString('hex');
    for (let s = 0; s < 10; s++) {
      const span: Span = {
        traceId,
        spanId: s === 0 ? rootId : randomBytes(8).toString('hex'),
        name: s === 0 ? 'GET /api/items' : `child ${s}`,
        kind: s === 0 ? 2 : 1,
        startTimeUnixNano: (start + BigInt(s) * 1000n).toString(),
        endTimeUnixNano: (start + BigInt(s) * 1000n + 500_000n).toString(),
        attributes: attributes(s),
        status: { code: 1 },
      };
      if (s !== 0) span.parentSpanId = rootId;
      spans.push(span);
    }
  }
  return encodeRequest({
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'shop' } },
            { key: 'deployment.environment.name', value: { stringValue: environment } },
          ],
        },
        scopeSpans: [{ scope: { name: 'bench', version: '1.0.0' }, spans }],
      },
    ],
  });
}

export function makeRequests(count: number, environment?: string): Uint8Array[] {
  return Array.from({ length: count }, () => makeRequest(environment));
}
