import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Span } from '../../../../src/otlp/model.js';
import { decodeRequest } from '../../../../src/otlp/proto-codec.js';
import { SPAN_BATCH_MAX, SPAN_FLUSH_DELAY_MS, SpanBatcher } from '../../../../src/receivers/gateway/core/span-batcher.js';
import { startServerSpan, type SpanRecord } from '../../../../src/receivers/gateway/core/spans.js';
import type { ResourcePairs } from '../../../../src/receivers/gateway/core/span-export.js';

const RESOURCE: ResourcePairs = [['service.name', 'sluice']];

function ended(name: string): SpanRecord {
  const span = startServerSpan(name, undefined);
  span.end();
  return span;
}

interface Emitted {
  readonly names: string[];
  readonly count: number;
}

function collect(): { batches: Emitted[]; spans: Span[]; batcher: SpanBatcher } {
  const batches: Emitted[] = [];
  const spans: Span[] = [];
  const batcher = new SpanBatcher(RESOURCE, (request, count) => {
    const decoded = decodeRequest(request);
    expect(decoded.resourceSpans).toHaveLength(1);
    expect(decoded.resourceSpans[0]?.resource?.attributes).toEqual([{ key: 'service.name', value: { stringValue: 'sluice' } }]);
    const batch = decoded.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    spans.push(...batch);
    batches.push({ names: batch.map((s) => s.name), count });
  });
  return { batches, spans, batcher };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('span batcher', () => {
  it('hands a full batch downstream at once', () => {
    const { batches, batcher } = collect();
    batcher.add(Array.from({ length: SPAN_BATCH_MAX }, (_, i) => ended(`s${i}`)));
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

  it('writes a span still open when handed over once its batch goes, with what was recorded after', () => {
    const { batches, spans, batcher } = collect();
    const open = startServerSpan('attempt', undefined);
    batcher.add([ended('server'), open]);
    open.fail('cancelled');
    open.end();
    batcher.flush();
    expect(batches).toEqual([{ names: ['server', 'attempt'], count: 2 }]);
    expect(spans[1]).toMatchObject({ name: 'attempt', attributes: [{ key: 'error.type', value: { stringValue: 'cancelled' } }], status: { code: 2, message: 'cancelled' } });
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
