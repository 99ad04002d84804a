import { describe, expect, it } from 'vitest';
import { decodeRequest } from '../../../../src/otlp/proto-codec.js';
import { SpanRequestWriter, type ResourcePairs } from '../../../../src/receivers/gateway/core/span-export.js';
import { startClientSpan, startServerSpan, type SpanRecord } from '../../../../src/receivers/gateway/core/spans.js';

function records() {
  const server = startServerSpan('POST /v1/chat/completions', { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), flags: 1, traceState: 'k=v' });
  server.str('url.path', '/v1/chat/completions').int('http.response.status_code', 200).str('sluice.model', 'ünïcode/model');
  const client = startClientSpan('chat m', server);
  client.int('gen_ai.usage.input_tokens', 12).int('negative', -3).int('nan', Number.NaN).strings('gen_ai.response.finish_reasons', ['stop', '']).strings('empty', []).double('ratio', 1.5);
  client.fail('timeout', 'Provider x went silent.');
  client.str('big', 'x'.repeat(70_000));
  client.end();
  server.end();
  return [server, client] as const;
}

/** The spans as one request, written in one go. */
function encodeSpanRequest(resource: ResourcePairs, spans: readonly SpanRecord[]): Uint8Array {
  const writer = new SpanRequestWriter(resource);
  for (const span of spans) writer.add(span);
  return writer.finish();
}

describe('gateway span export', () => {
  it('encodes the spans, the resource and the scope as OTLP decodes them', () => {
    const [server, client] = records();
    const decoded = decodeRequest(
      encodeSpanRequest(
        [
          ['service.name', 'sluice'],
          ['deployment.environment.name', 'test'],
        ],
        [server, client],
      ),
    );
    expect(decoded.resourceSpans).toHaveLength(1);
    const rs = decoded.resourceSpans[0];
    expect(rs?.resource?.attributes).toEqual([
      { key: 'service.name', value: { stringValue: 'sluice' } },
      { key: 'deployment.environment.name', value: { stringValue: 'test' } },
    ]);
    expect(rs?.scopeSpans.map((ss) => ss.scope)).toEqual([{ name: 'sluice.gateway' }]);
    const [first, second] = rs?.scopeSpans[0]?.spans ?? [];
    expect(first).toMatchObject({
      traceId: 'ab'.repeat(16),
      spanId: server.spanId,
      parentSpanId: 'cd'.repeat(8),
      traceState: 'k=v',
      flags: 1,
      name: 'POST /v1/chat/completions',
      kind: 2,
      attributes: [
        { key: 'url.path', value: { stringValue: '/v1/chat/completions' } },
        { key: 'http.response.status_code', value: { intValue: '200' } },
        { key: 'sluice.model', value: { stringValue: 'ünïcode/model' } },
      ],
      // UNSET is an empty Status on the wire.
      status: {},
    });
    expect(second).toMatchObject({
      traceId: 'ab'.repeat(16),
      spanId: client.spanId,
      parentSpanId: server.spanId,
      flags: 1,
      name: 'chat m',
      kind: 3,
      attributes: [
        { key: 'gen_ai.usage.input_tokens', value: { intValue: '12' } },
        { key: 'negative', value: { intValue: '-3' } },
        { key: 'nan', value: { intValue: '0' } },
        { key: 'gen_ai.response.finish_reasons', value: { arrayValue: { values: [{ stringValue: 'stop' }, { stringValue: '' }] } } },
        { key: 'empty', value: { arrayValue: { values: [] } } },
        { key: 'ratio', value: { doubleValue: 1.5 } },
        { key: 'error.type', value: { stringValue: 'timeout' } },
        { key: 'big', value: { stringValue: 'x'.repeat(70_000) } },
      ],
      status: { code: 2, message: 'Provider x went silent.' },
    });
    for (const span of [first, second]) expect(BigInt(span?.endTimeUnixNano ?? 0)).toBeGreaterThanOrEqual(BigInt(span?.startTimeUnixNano ?? 1));
  });

  it('starts over cleanly for the next request, on the same writer', () => {
    const writer = new SpanRequestWriter([['service.name', 'sluice']]);
    for (const span of records()) writer.add(span);
    expect(writer.spans).toBe(2);
    const first = writer.finish();
    expect(writer.spans).toBe(0);
    for (const span of records()) writer.add(span);
    const second = writer.finish();
    expect(decodeRequest(second).resourceSpans).toHaveLength(1);
    expect(decodeRequest(second).resourceSpans[0]?.scopeSpans[0]?.spans).toHaveLength(2);
    expect(second.length).toBe(first.length);
  });
});
