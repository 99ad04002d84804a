import { describe, expect, it } from 'vitest';
import { FRAME_OVERHEAD_BYTES, decodeFrame, decodeFrameSliced, encodeFrameHeader } from '../../src/queue/framing.js';
import { turnsDuring } from '../helpers/turns.js';

function frameOf(data: Buffer, spans: number): Buffer {
  return Buffer.concat([encodeFrameHeader(data, spans, 1_700_000_000_000), data]);
}

describe('decodeFrameSliced', () => {
  it('checks a large record in pieces, with turns of the event loop between them, and decodes what decodeFrame does', async () => {
    const data = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    const frame = frameOf(data, 7);
    // A zero-length slice yields after every 64 KiB piece: 16 pieces.
    const { value, turns } = await turnsDuring(async () => decodeFrameSliced(frame, 0, 0));
    expect(turns).toBeGreaterThanOrEqual(15);
    const whole = decodeFrame(frame, 0);
    if (value.kind !== 'frame' || whole.kind !== 'frame') throw new Error(`not decoded: ${value.kind}, ${whole.kind}`);
    expect({ spans: value.frame.spans, enqueuedAtMs: value.frame.enqueuedAtMs, frameBytes: value.frame.frameBytes }).toEqual({ spans: 7, enqueuedAtMs: 1_700_000_000_000, frameBytes: frame.length });
    expect(Buffer.compare(value.frame.data, data)).toBe(0);
    expect(Buffer.compare(whole.frame.data, data)).toBe(0);
  });

  it('finds a damaged byte anywhere in a large record', async () => {
    const frame = frameOf(Buffer.alloc(700 * 1024, 5), 1);
    frame[FRAME_OVERHEAD_BYTES + 500 * 1024] = 6;
    expect(await decodeFrameSliced(frame, 0, 0)).toEqual({ kind: 'corrupt', reason: 'crc mismatch' });
  });

  it('decodes a small record at once, without a promise', () => {
    const frame = frameOf(Buffer.from('small'), 2);
    const result = decodeFrameSliced(frame, 0, 0);
    expect(result).not.toBeInstanceOf(Promise);
    expect(result).toEqual(decodeFrame(frame, 0));
  });
});
