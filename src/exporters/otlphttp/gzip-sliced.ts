// gzip on the event loop, cut into slices, for delivery bodies. zlib's async
// API runs on libuv's pool, whose threads share the daemon's core with the
// loop: a pool thread doing a millisecond of compression either preempts the
// loop (SCHED_OTHER) or, as SCHED_BATCH, makes every other pool job (the
// queue's durable writes, on which OTLP acknowledgements wait) wait for the
// loop to yield. Compressing here leaves the pool with system calls only.
//
// The body is deflated in pieces of PIECE_BYTES, each piece a raw deflate run
// of its own that ends on a sync flush, the last one on a finish. Their
// concatenation is one deflate stream; the gzip header and trailer (CRC-32,
// length) wrap it as RFC 1952 says. A piece starts with an empty window, so
// the whole is a little larger than one run would make (about 2% on span
// batches) and costs more CPU (about a quarter more at 128 KiB pieces).
// Giving each piece the previous 32 KiB as its dictionary won the size back
// but took more CPU: on a 400 KB batch, 64 KiB pieces with dictionaries cost
// 1.5-1.6x one run's CPU, 128 KiB pieces without 1.25-1.3x. Node's public API
// has no way to keep one deflate stream across synchronous calls.
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { LoopSlices } from '../../shared/loop-slices.js';

/** Uncompressed bytes deflated between two checks of the clock: about 0.3-0.5 ms at level 1 here. */
const PIECE_BYTES = 128 * 1024;
const GZIP_ID1 = 0x1f;
const GZIP_ID2 = 0x8b;
const GZIP_DEFLATE = 8;
const GZIP_OS_UNIX = 3;

/** RFC 1952's XFL byte as zlib sets it: 2 for the slowest level, 4 for the fastest (and for none), 0 otherwise. */
function extraFlags(level: number): number {
  if (level === 9) return 2;
  if (level < 2) return 4;
  return 0;
}

function header(level: number): Buffer {
  // No flags, no modification time.
  return Buffer.from([GZIP_ID1, GZIP_ID2, GZIP_DEFLATE, 0, 0, 0, 0, 0, extraFlags(level), GZIP_OS_UNIX]);
}

function trailer(crc: number, length: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeUInt32LE(crc >>> 0, 0);
  out.writeUInt32LE(length % 2 ** 32, 4);
  return out;
}

/**
 * gzip of `body` at `level`, with a turn of the event loop whenever `sliceMs`
 * of compression have passed since the last one (checked between pieces).
 */
export async function gzipSliced(body: Uint8Array, level: number, sliceMs: number): Promise<Buffer> {
  const parts: Buffer[] = [header(level)];
  let crc = 0;
  const slices = await LoopSlices.start(sliceMs);
  for (let start = 0; ; start += PIECE_BYTES) {
    const end = Math.min(body.length, start + PIECE_BYTES);
    const piece = body.subarray(start, end);
    const last = end === body.length;
    parts.push(deflateRawSync(piece, { level, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH }));
    crc = crc32(piece, crc);
    if (last) break;
    if (slices.due) await slices.turn();
  }
  parts.push(trailer(crc, body.length));
  return Buffer.concat(parts);
}
