import { describe, expect, it } from 'vitest';
import { MAX_EVENT_CHARS } from '../../../../../src/receivers/gateway/providers/shared/answer-limits.js';
import { SseParser, type SseEvent } from '../../../../../src/receivers/gateway/providers/shared/sse.js';
import { UpstreamStreamError } from '../../../../../src/receivers/gateway/providers/shared/types.js';

/** Every event of a body arriving in `parts`, as the gateway feeds the parser. */
function all(parts: readonly (string | Uint8Array)[]): SseEvent[] {
  const parser = new SseParser();
  const out: SseEvent[] = [];
  for (const part of parts) out.push(...parser.push(typeof part === 'string' ? Buffer.from(part) : part));
  out.push(...parser.end());
  return out;
}

describe('SSE parsing', () => {
  it('reads data and event fields, joins multi-line data and skips comments, id and retry', () => {
    expect(all([': comment\nevent: delta\ndata: {"a":1}\nid: 7\nretry: 10\n\ndata: one\ndata: two\n\n'])).toEqual([
      { event: 'delta', data: '{"a":1}' },
      { event: undefined, data: 'one\ntwo' },
    ]);
  });

  it('accepts CRLF, CR and LF line endings, a CRLF split across chunks included', () => {
    expect(all(['data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r', '\n\r', '\n'])).toEqual([
      { event: undefined, data: 'a' },
      { event: undefined, data: 'b' },
      { event: undefined, data: 'c' },
      { event: undefined, data: 'd' },
    ]);
  });

  it('joins UTF-8 split across chunks and lines split across chunks', () => {
    const bytes = Buffer.from('data: héllo 日本\n\n');
    expect(all([bytes.subarray(0, 9), bytes.subarray(9, 15), bytes.subarray(15)])).toEqual([{ event: undefined, data: 'héllo 日本' }]);
  });

  it('decodes a character split at a chunk boundary between chunks that end in ASCII', () => {
    const bytes = Buffer.from('data: a\n\ndata: é!\n\ndata: b\n\n');
    const split = bytes.indexOf(0xa9); // the second byte of é
    expect(all([bytes.subarray(0, split), bytes.subarray(split, split + 4), bytes.subarray(split + 4)])).toEqual([
      { event: undefined, data: 'a' },
      { event: undefined, data: 'é!' },
      { event: undefined, data: 'b' },
    ]);
  });

  it('drops the byte order mark a stream opens with, and no other U+FEFF', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    expect(all([Buffer.concat([bom, Buffer.from('data: a\n\n')])])).toEqual([{ event: undefined, data: 'a' }]);
    // U+FEFF opening the first chunk that goes through the streaming decoder is content.
    const content = Buffer.concat([bom, Buffer.from('yé\n\n')]);
    const split = content.indexOf(0xa9);
    expect(all([Buffer.from('data: '), content.subarray(0, split), content.subarray(split)])).toEqual([{ event: undefined, data: '\ufeffyé' }]);
  });

  it('takes an empty chunk between the halves of a split character in its stride', () => {
    const bytes = Buffer.from('data: é!\n\n');
    const split = bytes.indexOf(0xa9);
    expect(all([bytes.subarray(0, split), Buffer.alloc(0), bytes.subarray(split)])).toEqual([{ event: undefined, data: 'é!' }]);
  });

  it('delivers the last event of a stream that ends without its blank line', () => {
    expect(all(['data: first\n\ndata: last'])).toEqual([
      { event: undefined, data: 'first' },
      { event: undefined, data: 'last' },
    ]);
  });

  it('keeps a field without a colon as an empty value and keeps a value without the space', () => {
    expect(all(['data\n\ndata:x\n\n'])).toEqual([
      { event: undefined, data: '' },
      { event: undefined, data: 'x' },
    ]);
  });

  it('hands out events per chunk synchronously from SseParser', () => {
    const parser = new SseParser();
    expect(parser.push(Buffer.from('data: a\n'))).toEqual([]);
    expect(parser.push(Buffer.from('\ndata: b\n\ndata: c'))).toEqual([
      { event: undefined, data: 'a' },
      { event: undefined, data: 'b' },
    ]);
    expect(parser.end()).toEqual([{ event: undefined, data: 'c' }]);
  });

  it('joins a line that comes in many parts, a CR ending one part and its LF opening the next', () => {
    const image = 'A'.repeat(256 * 1024);
    const body = Buffer.from(`data: {"b64":"${image}"}\r\n\r\ndata: next\r\r`);
    const parts = [];
    for (let i = 0; i < body.length; i += 1000) parts.push(body.subarray(i, i + 1000));
    const crlf = body.indexOf('\r\n');
    expect(all([body.subarray(0, crlf + 1), body.subarray(crlf + 1, crlf + 2), body.subarray(crlf + 2)])).toEqual(all(parts));
    expect(all(parts)).toEqual([
      { event: undefined, data: `{"b64":"${image}"}` },
      { event: undefined, data: 'next' },
    ]);
  });
});

describe('SSE events past the bound', () => {
  const MiB = 1024 * 1024;
  // A data line holds its value and the line break joining it to the next: a MiB each.
  const line = `data: ${'x'.repeat(MiB - 1)}\n`;

  it('stop the parser when one event holds too much in many data lines, none too long', () => {
    const parser = new SseParser();
    // Exactly the bound is held; one line more is past it.
    for (let i = 0; i < MAX_EVENT_CHARS / MiB; i++) expect(parser.push(Buffer.from(line))).toEqual([]);
    expect(() => parser.push(Buffer.from(line))).toThrow(UpstreamStreamError);
  });

  it('count each event apart, so a long stream of events each under the bound goes through', () => {
    const parser = new SseParser();
    const event = `${line.repeat(MAX_EVENT_CHARS / MiB)}\n`;
    for (let i = 0; i < 3; i++) expect(parser.push(Buffer.from(event))).toHaveLength(1);
  });

  it('count a line that comes in many parts once, however long, up to the bound', () => {
    const parser = new SseParser();
    const long = Buffer.from(`data: ${'y'.repeat(MAX_EVENT_CHARS / 2 + MiB)}\n\n`);
    for (let event = 0; event < 2; event++) {
      const events = [];
      for (let i = 0; i < long.length; i += MiB) events.push(...parser.push(long.subarray(i, i + MiB)));
      expect(events).toHaveLength(1);
    }
  });
});
