// Large OTLP/JSON bodies are decoded on a worker thread. The compiled module
// is loaded from dist (npm test builds first): the TypeScript sources have no
// compiled worker and decode every body inline.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { TraceBatch } from '../../../src/otlp/batch.js';
import { decodeRequest } from '../../../src/otlp/proto-codec.js';
import { MalformedDataError } from '../../../src/shared/errors.js';
import { turnsDuring } from '../../helpers/turns.js';

const COMPILED = fileURLToPath(new URL('../../../dist/src/receivers/otlp/json-decode.js', import.meta.url));
const { decodeJsonBody, INLINE_BYTES } = (await import(COMPILED)) as { decodeJsonBody(body: Uint8Array): Promise<TraceBatch>; INLINE_BYTES: number };
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
    const { value: batch, turns } = await turnsDuring(() => decodeJsonBody(body));
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
    const refused = await decodeJsonBody(badId).then(() => undefined, (err: unknown) => err);
    expect(refused).toBeInstanceOf(CompiledMalformed);
    expect((refused as Error).message).toContain('resourceSpans[0].scopeSpans[0].spans[2345].traceId');
    const notJson = Buffer.concat([request(5_000), Buffer.from('}')]);
    await expect(decodeJsonBody(notJson)).rejects.toThrow(/malformed JSON/);
    expect((await decodeJsonBody(request(5_000))).spanCount).toBe(5_000);
  });
});
