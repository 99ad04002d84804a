// Delivery bodies are gzipped on the event loop in pieces: what comes out must
// be one valid gzip member that any gunzip reads back byte for byte, about as
// small as one zlib run at the same level, and the work must give the loop
// turns in between when asked to.
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipSliced } from '../../../src/exporters/otlphttp/gzip-sliced.js';

const PIECE = 128 * 1024;

/** OTLP/JSON-like text: repetitive keys, a trace id per 20 spans, varying span ids and numbers. */
function spansText(bytes: number): Buffer {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const span = JSON.stringify({
      traceId: (Math.floor(i / 20) * 2_654_435_761).toString(16).padStart(32, '0'),
      spanId: (i * 7_919).toString(16).padStart(16, '0'),
      name: `chat openai/gpt-4o-mini ${i % 7}`,
      startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i) * 1_000n),
      attributes: [{ key: 'gen_ai.usage.input_tokens', value: { intValue: String(i * 13) } }],
    });
    parts.push(span);
    size += span.length + 1;
  }
  return Buffer.from(parts.join(',').slice(0, bytes));
}

describe('gzipSliced', () => {
  it.each([
    ['empty', Buffer.alloc(0)],
    ['one byte', Buffer.from('x')],
    ['exactly one piece', spansText(PIECE)],
    ['one piece and a byte', spansText(PIECE + 1)],
    ['many pieces of text', spansText(5 * PIECE + 123)],
    ['incompressible bytes', randomBytes(3 * PIECE + 7)],
  ])('gives a gzip member that gunzips to the body: %s', async (_name, body) => {
    const out = await gzipSliced(body, 1, 0.5);
    expect(out.subarray(0, 3)).toEqual(Buffer.from([0x1f, 0x8b, 8]));
    expect(out[8]).toBe(4); // XFL: the fastest level
    expect(gunzipSync(out).equals(body)).toBe(true);
    expect(out.readUInt32LE(out.length - 4)).toBe(body.length);
  });

  it('marks the level in the header as zlib does, and any level gunzips', async () => {
    const body = spansText(PIECE + 99);
    for (const [level, xfl] of [[9, 2], [6, 0], [0, 4]] as const) {
      // As zlib's own gzip header says.
      expect(gzipSync(body, { level })[8]).toBe(xfl);
      const out = await gzipSliced(body, level, 0.5);
      expect(out[8]).toBe(xfl);
      expect(gunzipSync(out).equals(body)).toBe(true);
    }
  });

  it('compresses about as well as one zlib run', async () => {
    const body = spansText(4 * PIECE);
    for (const level of [1, 6]) {
      const sliced = await gzipSliced(body, level, 0.5);
      const whole = gzipSync(body, { level });
      expect(gunzipSync(sliced).equals(body)).toBe(true);
      // Each piece starts with an empty window: a few per cent larger.
      expect(sliced.length).toBeLessThan(whole.length * 1.05);
    }
  });

  it('gives the event loop a turn between pieces once its slice is spent', async () => {
    const body = spansText(4 * PIECE);
    let settled = false;
    let turnsBeforeDone = 0;
    const count = (): void => {
      if (settled) return;
      turnsBeforeDone += 1;
      setImmediate(count);
    };
    setImmediate(count);
    const out = await gzipSliced(body, 1, 0);
    settled = true;
    expect(gunzipSync(out).equals(body)).toBe(true);
    // A zero slice yields after every piece but the last: three turns for four pieces.
    expect(turnsBeforeDone).toBeGreaterThanOrEqual(3);
  });
});
