// On-disk record framing. Every record is
//   u32 LE length of what follows the prefix | u32 LE CRC32 of it
//   | u8 version | 3 reserved | u32 LE span count | f64 LE enqueued-at ms | data
// so a reader can validate a record, and recovery can find a torn tail,
// without decoding the protobuf inside. zlib.crc32 ships with Node >= 20.15.
import { crc32 } from 'node:zlib';
import { LoopSlices } from '../shared/loop-slices.js';

export const FRAME_PREFIX_BYTES = 8;
export const FRAME_META_BYTES = 16;
export const FRAME_OVERHEAD_BYTES = FRAME_PREFIX_BYTES + FRAME_META_BYTES;
const FRAME_VERSION = 1;

export interface DecodedFrame {
  readonly data: Uint8Array;
  readonly spans: number;
  readonly enqueuedAtMs: number;
  /** Prefix, meta and data together. */
  readonly frameBytes: number;
}

/** The header (prefix + meta) for `data`; written next to it with writev, so data is never copied. */
export function encodeFrameHeader(data: Uint8Array, spans: number, enqueuedAtMs: number): Buffer {
  const header = Buffer.alloc(FRAME_OVERHEAD_BYTES);
  writeHeader(header, 0, data, spans, enqueuedAtMs);
  return header;
}

/**
 * Frames a record whose `dataBytes` of data are already at
 * `target[offset + FRAME_OVERHEAD_BYTES ...]`, by writing its header in front
 * of them: many records framed in one buffer without a buffer each.
 */
export function frameInPlace(target: Buffer, offset: number, dataBytes: number, spans: number, enqueuedAtMs: number): void {
  const data = offset + FRAME_OVERHEAD_BYTES;
  writeHeader(target, offset, target.subarray(data, data + dataBytes), spans, enqueuedAtMs);
}

/** Writes the header for `data` into `target` at `offset` (the reserved bytes zeroed). */
function writeHeader(target: Buffer, offset: number, data: Uint8Array, spans: number, enqueuedAtMs: number): void {
  const meta = offset + FRAME_PREFIX_BYTES;
  target.writeUInt32LE(FRAME_META_BYTES + data.byteLength, offset);
  target.writeUInt8(FRAME_VERSION, meta);
  target.fill(0, meta + 1, meta + 4);
  target.writeUInt32LE(spans, meta + 4);
  target.writeDoubleLE(enqueuedAtMs, meta + 8);
  const metaCrc = crc32(target.subarray(meta, meta + FRAME_META_BYTES));
  target.writeUInt32LE(crc32(data, metaCrc), offset + 4);
}

export type FrameResult =
  | { readonly kind: 'frame'; readonly frame: DecodedFrame }
  /** Not enough bytes in the buffer; `needBytes` is the whole frame's size when known. */
  | { readonly kind: 'incomplete'; readonly needBytes: number }
  | { readonly kind: 'corrupt'; readonly reason: string };

/** Decodes the frame starting at `offset` of `buf`; the data is a view into `buf`. */
export function decodeFrame(buf: Buffer, offset: number): FrameResult {
  const located = locateFrame(buf, offset);
  if (located.kind !== 'located') return located;
  return checkedFrame(located, crc32(located.body));
}

/**
 * The whole size a frame at `offset` claims in its length field, or undefined
 * when fewer than its prefix's bytes are there or the length is impossible.
 * A corrupt record's claim is only a guess: see offsetAfterCorrupt.
 */
export function claimedFrameBytes(buf: Buffer, offset: number): number | undefined {
  if (buf.length - offset < FRAME_PREFIX_BYTES) return undefined;
  const bodyLength = buf.readUInt32LE(offset);
  return bodyLength < FRAME_META_BYTES ? undefined : FRAME_PREFIX_BYTES + bodyLength;
}

/** Damaged records in a row that a chain of intact lengths may pass over to reach a whole record. */
export const MAX_CORRUPT_RUN = 16;

/**
 * Where the record after a corrupt one at `offset` starts, when the corrupt
 * one can be skipped alone: a damaged byte in its data or CRC left its length
 * intact, which only a whole, valid record proves, right after it or after
 * further damaged records whose lengths lead to it (at most MAX_CORRUPT_RUN
 * in a row). Otherwise (an impossible length, the last record, a chain that
 * ends torn, past the buffer or nowhere) undefined: nothing says where the
 * next record starts.
 */
export function offsetAfterCorrupt(buf: Buffer, offset: number): number | undefined {
  const claimed = claimedFrameBytes(buf, offset);
  if (claimed === undefined) return undefined;
  const next = offset + claimed;
  let pos = next;
  for (let run = 1; run <= MAX_CORRUPT_RUN && pos < buf.length; run++) {
    const result = decodeFrame(buf, pos);
    if (result.kind === 'frame') return next;
    if (result.kind === 'incomplete') return undefined;
    const hop = claimedFrameBytes(buf, pos);
    if (hop === undefined) return undefined;
    pos += hop;
  }
  return undefined;
}

/** Bodies up to this size are checked in one call (about 55 µs); larger ones in pieces. */
const SLICED_CHECK_BYTES = 256 * 1024;
/** Bytes checked between two looks at the clock. */
const CHECK_PIECE_BYTES = 64 * 1024;

/**
 * As decodeFrame, with a large record's CRC computed in pieces of at most
 * `sliceMs` of work and a turn of the event loop between them (issue 10): a
 * 16 MiB record took about 3.5 ms in one call. A small record is decoded at
 * once, without a promise.
 */
export function decodeFrameSliced(buf: Buffer, offset: number, sliceMs: number): FrameResult | Promise<FrameResult> {
  const located = locateFrame(buf, offset);
  if (located.kind !== 'located') return located;
  if (located.body.byteLength <= SLICED_CHECK_BYTES) return checkedFrame(located, crc32(located.body));
  return crc32Sliced(located.body, sliceMs).then((crc) => checkedFrame(located, crc));
}

async function crc32Sliced(body: Buffer, sliceMs: number): Promise<number> {
  const slices = await LoopSlices.start(sliceMs);
  let crc = 0;
  await slices.eachPiece(body, CHECK_PIECE_BYTES, (piece) => {
    crc = crc32(piece, crc);
  });
  return crc;
}

interface LocatedFrame {
  readonly kind: 'located';
  readonly body: Buffer;
  readonly expectedCrc: number;
  readonly frameBytes: number;
}

/** The frame's body and recorded CRC, once the buffer holds all of it. */
function locateFrame(buf: Buffer, offset: number): LocatedFrame | Exclude<FrameResult, { kind: 'frame' }> {
  const available = buf.length - offset;
  if (available < FRAME_PREFIX_BYTES) return { kind: 'incomplete', needBytes: FRAME_OVERHEAD_BYTES };
  const bodyLength = buf.readUInt32LE(offset);
  if (bodyLength < FRAME_META_BYTES) return { kind: 'corrupt', reason: `bad length ${bodyLength}` };
  const frameBytes = FRAME_PREFIX_BYTES + bodyLength;
  if (available < frameBytes) return { kind: 'incomplete', needBytes: frameBytes };
  return { kind: 'located', body: buf.subarray(offset + FRAME_PREFIX_BYTES, offset + frameBytes), expectedCrc: buf.readUInt32LE(offset + 4), frameBytes };
}

function checkedFrame({ body, expectedCrc, frameBytes }: LocatedFrame, crc: number): FrameResult {
  if (crc !== expectedCrc) return { kind: 'corrupt', reason: 'crc mismatch' };
  if (body.readUInt8(0) !== FRAME_VERSION) return { kind: 'corrupt', reason: `unknown version ${body.readUInt8(0)}` };
  return {
    kind: 'frame',
    frame: {
      data: body.subarray(FRAME_META_BYTES),
      spans: body.readUInt32LE(4),
      enqueuedAtMs: body.readDoubleLE(8),
      frameBytes,
    },
  };
}
