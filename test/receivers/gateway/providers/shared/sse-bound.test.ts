// The SSE parser's bound on one event, made small: what each data line
// holds is counted, the line break joining it to the next included.
import { describe, expect, it, vi } from 'vitest';
import { SseParser } from '../../../../../src/receivers/gateway/providers/shared/sse.js';
import { UpstreamStreamError } from '../../../../../src/receivers/gateway/providers/shared/types.js';

vi.mock('../../../../../src/receivers/gateway/providers/shared/answer-limits.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../../../../src/receivers/gateway/providers/shared/answer-limits.js')>()),
  MAX_EVENT_CHARS: 1024,
}));

describe('an SSE event past a small bound', () => {
  it('stops the parser when an event that never ends holds only empty data lines', () => {
    const parser = new SseParser();
    // Each line is an empty value and a line break of the event's data ('\n'.repeat(n - 1) once joined).
    expect(() => parser.push(Buffer.from('data:\n'.repeat(2048)))).toThrow(UpstreamStreamError);
  });

  it('lets an event of empty data lines within the bound through', () => {
    const parser = new SseParser();
    expect(parser.push(Buffer.from(`${'data:\n'.repeat(512)}\n`))).toEqual([{ event: undefined, data: '\n'.repeat(511) }]);
  });
});
