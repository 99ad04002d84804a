// The acknowledged position: the first sequence number not yet acknowledged.
// Written to a temporary file, fsynced, then renamed over the old one. The
// directory is not fsynced after the rename: if the rename is lost in a crash
// the older position survives, which only means duplicates (at-least-once).
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { FILE_MODE } from './file-mode.js';

const ACK_FILE = 'ack';
const ACK_TMP_FILE = 'ack.tmp';
const ACK_FILE_BYTES = 12; // u64 LE position + u32 LE CRC32 of it

export type AckFileRead = { readonly position: number } | { readonly problem: string };

export async function readAckFile(directory: string): Promise<AckFileRead> {
  let buf: Buffer;
  try {
    buf = await readFile(join(directory, ACK_FILE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { position: 0 };
    throw err;
  }
  if (buf.length !== ACK_FILE_BYTES) return { problem: `ack file has ${buf.length} bytes, expected ${ACK_FILE_BYTES}` };
  if (crc32(buf.subarray(0, 8)) !== buf.readUInt32LE(8)) return { problem: 'ack file crc mismatch' };
  return { position: Number(buf.readBigUInt64LE(0)) };
}

export async function writeAckFile(directory: string, position: number): Promise<void> {
  const buf = Buffer.alloc(ACK_FILE_BYTES);
  buf.writeBigUInt64LE(BigInt(position), 0);
  buf.writeUInt32LE(crc32(buf.subarray(0, 8)), 8);
  const tmp = join(directory, ACK_TMP_FILE);
  const handle = await open(tmp, 'w', FILE_MODE);
  try {
    await handle.writeFile(buf);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(tmp, join(directory, ACK_FILE));
}
