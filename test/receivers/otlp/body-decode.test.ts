// Large OTLP bodies are checked on a worker thread. The compiled module is
// loaded from dist (npm test builds first): the TypeScript sources have no
// compiled worker and decode every body inline.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { TraceBatch } from '../../../src/otlp/batch.js';
import { decodeRequest, encodeRequest } from '../../../src/otlp/proto-codec.js';
import { parseJsonRequest } from '../../../src/otlp/json-codec.js';
import { MalformedDataError } from '../../../src/shared/errors.js';
import { turnsDuring } from '../../helpers/turns.js';

const COMPILED = fileURLToPath(new URL('../../../dist/src/receivers/otlp/body-decode.js', import.meta.url));
const { decodeBody, INLINE_BYTES } = (await import(COMPILED)) as { decodeBody(encoding: 'json' | 'protobuf', body: Uint8Array): Promise<TraceBatch>; INLINE_BYTES: number };
const { MalformedDataError: CompiledMalformed } = (await import(fileURLToPath(new URL('../../../dist/src/shared/errors.js', import.meta.url)))) as { MalformedDataError: typeof MalformedDataError };

function request(spans: number, traceIdOf: (i: number) => string = () => '0af7651916cd43dd8448eb211c80319c'): Uint8Array {
  const list = Array.from({ length: spans }, (_, i) => ({
    traceId: traceIdOf(i),
    spanId: (i + 1).toString(16).padStart(16, '0'),
    name: `GET /items/${i}`,
    kind: 2,
    startTimeUnixNano: '1700000000000000000',
    endTimeUnixNano: '1700000000005000000',
    attributes: [{ key: 'http.route', value: { stringValue: '/items/:id' } }, { key: 'item', value: { intValue: String(i) } }],
  }));
  return Buffer.from(JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'shop' } }] }, scopeSpans: [{ spans: list }] }] }));
}

describe('OTLP/JSON bodies past INLINE_BYTES', () => {
  it('are decoded off the event loop into the same spans', async () => {
    const body = request(5_000);
    expect(body.byteLength).toBeGreaterThan(INLINE_BYTES);
    // A body decoded on the loop would let it take no turn meanwhile.
    const { value: batch, turns } = await turnsDuring(() => decodeBody('json', body));
    expect(turns).toBeGreaterThan(0);
    expect(batch.spanCount).toBe(5_000);
    const decoded = decodeRequest(batch.toProto());
    const spans = decoded.resourceSpans[0]?.scopeSpans[0]?.spans ?? [];
    expect(spans[4_999]).toMatchObject({ name: 'GET /items/4999', spanId: '0000000000001388' });
    expect(spans[4_999]?.attributes).toEqual([{ key: 'http.route', value: { stringValue: '/items/:id' } }, { key: 'item', value: { intValue: '4999' } }]);
    expect(decoded.resourceSpans[0]?.resource?.attributes).toEqual([{ key: 'service.name', value: { stringValue: 'shop' } }]);
  });

  it('are refused as malformed, naming the field, and the next body is decoded', async () => {
    const badId = request(5_000, (i) => (i === 2_345 ? 'xyz' : '0af7651916cd43dd8448eb211c80319c'));
    const refused = await decodeBody('json', badId).then(() => undefined, (err: unknown) => err);
    expect(refused).toBeInstanceOf(CompiledMalformed);
    expect((refused as Error).message).toContain('resourceSpans[0].scopeSpans[0].spans[2345].traceId');
    const notJson = Buffer.concat([request(5_000), Buffer.from('}')]);
    await expect(decodeBody('json', notJson)).rejects.toThrow(/malformed JSON/);
    expect((await decodeBody('json', request(5_000))).spanCount).toBe(5_000);
  });
});

describe('OTLP/protobuf bodies past INLINE_BYTES', () => {
  it('are checked off the event loop, and the batch holds the same bytes', async () => {
    const proto = encodeRequest(parseJsonRequest(request(5_000)));
    expect(proto.byteLength).toBeGreaterThan(INLINE_BYTES);
    const body = Buffer.from(proto); // the worker takes the body over
    const { value: batch, turns } = await turnsDuring(() => decodeBody('protobuf', body));
    expect(turns).toBeGreaterThan(0);
    expect(batch.spanCount).toBe(5_000);
    expect(Buffer.from(batch.toProto()).equals(Buffer.from(proto))).toBe(true);
  });

  it('are refused as malformed, naming the field, and a body that is a view into a larger buffer is decoded', async () => {
    const model = parseJsonRequest(request(5_000));
    const bad = model.resourceSpans[0]?.scopeSpans[0]?.spans[2_345];
    if (bad === undefined) throw new Error('no span 2345');
    bad.traceId = bad.traceId.slice(0, 30); // 15 bytes on the wire
    const badId = encodeRequest(model);
    const refused = await decodeBody('protobuf', badId).then(() => undefined, (err: unknown) => err);
    expect(refused).toBeInstanceOf(CompiledMalformed);
    expect((refused as Error).message).toMatch(/trace_?id/i);
    const good = encodeRequest(parseJsonRequest(request(5_000)));
    const framed = Buffer.concat([Buffer.alloc(5), good, Buffer.alloc(7)]);
    expect((await decodeBody('protobuf', framed.subarray(5, 5 + good.byteLength))).spanCount).toBe(5_000);
    expect(framed.byteLength).toBe(good.byteLength + 12); // the larger buffer stays whole
  });
});
