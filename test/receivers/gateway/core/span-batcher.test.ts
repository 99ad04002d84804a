import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Span } from '../../../../src/otlp/model.js';
import { decodeRequest } from '../../../../src/otlp/proto-codec.js';
import { SPAN_BATCH_MAX, SPAN_FLUSH_DELAY_MS, SpanBatcher } from '../../../../src/receivers/gateway/core/span-batcher.js';
import { startServerSpan, type SpanRecord } from '../../../../src/receivers/gateway/core/spans.js';

function ended(name: string): SpanRecord {
  const span = startServerSpan(name, undefined);
  span.end();
  return span;
}

interface Emitted {
  readonly names: string[];
  readonly count: number;
}

function collect(): { batches: Emitted[]; spans: Span[]; dropped: unknown[]; batcher: SpanBatcher } {
  const batches: Emitted[] = [];
  const spans: Span[] = [];
  const dropped: unknown[] = [];
  const batcher = new SpanBatcher({
    resource: [['service.name', 'sluice']],
    emit(request, count) {
      const decoded = decodeRequest(request);
      expect(decoded.resourceSpans).toHaveLength(1);
      expect(decoded.resourceSpans[0]?.resource?.attributes).toEqual([{ key: 'service.name', value: { stringValue: 'sluice' } }]);
      const batch = decoded.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
      spans.push(...batch);
      batches.push({ names: batch.map((s) => s.name), count });
    },
    dropped: (err) => dropped.push(err),
  });
  return { batches, spans, dropped, batcher };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const attr = (span: Span | undefined, key: string): unknown => span?.attributes?.find((a) => a.key === key)?.value;

afterEach(() => {
  vi.useRealTimers();
});

describe('span batcher', () => {
  it('hands a full batch downstream at the end of the turn', async () => {
    const { batches, batcher } = collect();
    batcher.add(Array.from({ length: SPAN_BATCH_MAX }, (_, i) => ended(`s${i}`)));
    expect(batches).toHaveLength(0);
    await turn();
    expect(batches.map((b) => [b.names.length, b.count])).toEqual([[SPAN_BATCH_MAX, SPAN_BATCH_MAX]]);
    expect(batches[0]?.names.slice(0, 3)).toEqual(['s0', 's1', 's2']);
    batcher.flush();
    expect(batches).toHaveLength(1);
  });

  it('holds a partial batch until its delay is over, then sends the spans of several requests together, in order', () => {
    vi.useFakeTimers();
    const { batches, batcher } = collect();
    batcher.add([ended('a'), ended('b')]);
    batcher.add([ended('c')]);
    vi.advanceTimersByTime(SPAN_FLUSH_DELAY_MS - 1);
    expect(batches).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(batches).toEqual([{ names: ['a', 'b', 'c'], count: 3 }]);
  });

  it('keeps what the request records on its spans in the turn it closes in', async () => {
    const { spans, batcher } = collect();
    const server = ended('server');
    batcher.add([server]);
    server.str('sluice.provider', 'acme');
    await turn();
    batcher.flush();
    expect(attr(spans[0], 'sluice.provider')).toEqual({ stringValue: 'acme' });
  });

  it('keeps every span of a request with one still open until the batch goes, with what was recorded after', async () => {
    const { batches, spans, batcher } = collect();
    const server = ended('server');
    const attempt = startServerSpan('attempt', undefined);
    batcher.add([server, attempt]);
    await turn();
    attempt.fail('cancelled');
    attempt.end();
    server.str('sluice.provider', 'acme');
    batcher.flush();
    expect(batches).toEqual([{ names: ['server', 'attempt'], count: 2 }]);
    expect(attr(spans[0], 'sluice.provider')).toEqual({ stringValue: 'acme' });
    expect(spans[1]).toMatchObject({ name: 'attempt', attributes: [{ key: 'error.type', value: { stringValue: 'cancelled' } }], status: { code: 2, message: 'cancelled' } });
  });

  it('leaves out a span that cannot be encoded, reports it, and sends the rest of its batch intact', async () => {
    const { batches, dropped, batcher } = collect();
    const bad = ended('bad');
    bad.strings('gen_ai.response.finish_reasons', [7 as unknown as string]);
    batcher.add([ended('before'), bad, ended('after')]);
    await turn();
    batcher.flush();
    expect(dropped).toHaveLength(1);
    expect(batches).toEqual([{ names: ['before', 'after'], count: 2 }]);
  });

  it('starts each batch over: nothing of one is sent again with the next', () => {
    const { batches, batcher } = collect();
    batcher.add([ended('one')]);
    batcher.flush();
    batcher.add([ended('two'), ended('three')]);
    batcher.flush();
    expect(batches).toEqual([
      { names: ['one'], count: 1 },
      { names: ['two', 'three'], count: 2 },
    ]);
  });

  it('emits nothing when flushed empty', () => {
    const { batches, batcher } = collect();
    batcher.flush();
    expect(batches).toHaveLength(0);
  });
});
