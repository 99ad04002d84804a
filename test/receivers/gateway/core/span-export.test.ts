import { describe, expect, it } from 'vitest';
import { decodeRequest } from '../../../../src/otlp/proto-codec.js';
import { StatusCode } from '../../../../src/otlp/model.js';
import { encodeSpanRequest } from '../../../../src/receivers/gateway/core/span-export.js';
import { startClientSpan, startServerSpan, toRequest } from '../../../../src/receivers/gateway/core/spans.js';

function records() {
  const server = startServerSpan('POST /v1/chat/completions', { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), flags: 1, traceState: 'k=v' });
  server.str('url.path', '/v1/chat/completions').int('http.response.status_code', 200).str('sluice.model', 'ünïcode/model');
  const client = startClientSpan('chat m', server);
  client.int('gen_ai.usage.input_tokens', 12).int('negative', -3).int('nan', Number.NaN).strings('gen_ai.response.finish_reasons', ['stop', '']).strings('empty', []);
  client.fail('timeout', 'Provider x went silent.');
  client.str('big', 'x'.repeat(70_000));
  client.end();
  server.end();
  return [server, client];
}

describe('gateway span export', () => {
  it('encodes the same spans, resource and scope the model holds', () => {
    const spans = records();
    const decoded = decodeRequest(encodeSpanRequest([['service.name', 'sluice'], ['deployment.environment.name', 'test']], spans));
    const model = toRequest(
      [
        { key: 'service.name', value: { stringValue: 'sluice' } },
        { key: 'deployment.environment.name', value: { stringValue: 'test' } },
      ],
      spans.map((s) => s.toSpan()),
    );
    const expected = model.resourceSpans[0]?.scopeSpans[0]?.spans.map(function asDecoded(span) {
      // The decoder leaves out UNSET status codes and turns NaN into 0.
      const status = span.status?.code === StatusCode.UNSET ? {} : span.status;
      const attributes = span.attributes?.map((kv) => (kv.value?.intValue === 'NaN' ? { key: kv.key, value: { intValue: '0' } } : kv));
      return { ...span, status, attributes };
    });
    expect(decoded.resourceSpans[0]?.resource).toEqual(model.resourceSpans[0]?.resource);
    expect(decoded.resourceSpans[0]?.scopeSpans[0]?.scope).toEqual(model.resourceSpans[0]?.scopeSpans[0]?.scope);
    expect(decoded.resourceSpans[0]?.scopeSpans[0]?.spans).toEqual(expected);
  });

  it('starts over cleanly for the next batch', () => {
    const first = encodeSpanRequest([], records());
    const second = encodeSpanRequest([], records());
    expect(decodeRequest(second).resourceSpans).toHaveLength(1);
    expect(second.length).toBe(first.length);
  });
});
