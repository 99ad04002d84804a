// The rest of a delivery body's batch work, sliced as its JSON and gzip are:
// joining a batch's records into one body and signing it. A batch can hold
// up to 8 MiB; copying it into a fresh buffer (every page faulted in) took
// 5-7 ms of the loop in one stretch at the pipeline's maximum, and HMAC-SHA256
// over it some milliseconds more.
import { createHmac } from 'node:crypto';
import { LoopSlices } from '../../shared/loop-slices.js';

/** Bytes copied or hashed between two checks of the clock. */
const PIECE_BYTES = 64 * 1024;

/** The records' bytes as one buffer (repeated fields concatenate on the wire), with turns of the loop between pieces. */
export async function concatSliced(records: readonly Uint8Array[], sliceMs: number): Promise<Uint8Array> {
  if (records.length === 1 && records[0] !== undefined) return records[0];
  let total = 0;
  for (const record of records) total += record.byteLength;
  const out = Buffer.allocUnsafe(total);
  const slices = await LoopSlices.start(sliceMs);
  let at = 0;
  for (const record of records) {
    await slices.eachPiece(record, PIECE_BYTES, (piece) => {
      out.set(piece, at);
      at += piece.byteLength;
    });
  }
  return out;
}

/** Hex HMAC-SHA256 of `body` under `secret`, with turns of the loop between pieces. */
export async function signSliced(secret: string, body: Uint8Array, sliceMs: number): Promise<string> {
  const hmac = createHmac('sha256', secret);
  const slices = await LoopSlices.start(sliceMs);
  await slices.eachPiece(body, PIECE_BYTES, (piece) => hmac.update(piece));
  return hmac.digest('hex');
}
