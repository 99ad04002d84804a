import { describe, expect, it } from 'vitest';
import type { Span } from '../../../../src/otlp/model.js';
import { SPAN_BATCH_MAX, SpanBatcher } from '../../../../src/receivers/gateway/core/span-batcher.js';

function span(i: number): Span {
  return { traceId: '1'.repeat(32), spanId: i.toString(16).padStart(16, '0'), name: 's', startTimeUnixNano: '1', endTimeUnixNano: '2' };
}

describe('span batcher', () => {
  it('hands a full batch downstream at once', () => {
    const emitted: Span[][] = [];
    const batcher = new SpanBatcher((spans) => emitted.push(spans));
    batcher.add(Array.from({ length: SPAN_BATCH_MAX }, (_, i) => span(i)));
    expect(emitted.map((b) => b.length)).toEqual([SPAN_BATCH_MAX]);
    batcher.flush();
  });

  it('holds a partial batch until flushed, then sends the spans of several requests together', () => {
    const emitted: Span[][] = [];
    const batcher = new SpanBatcher((spans) => emitted.push(spans));
    batcher.add([span(1), span(2)]);
    batcher.add([span(3)]);
    expect(emitted).toHaveLength(0);
    batcher.flush();
    expect(emitted.map((b) => b.map((s) => s.spanId))).toEqual([[span(1).spanId, span(2).spanId, span(3).spanId]]);
  });

  it('emits nothing when flushed empty', () => {
    const emitted: Span[][] = [];
    new SpanBatcher((spans) => emitted.push(spans)).flush();
    expect(emitted).toHaveLength(0);
  });
});
