// Appends to a file that holds whole lines or records only, on a disk that
// may refuse part of a write.
import type { FileHandle } from 'node:fs/promises';

/** What appendWhole needs of a file handle. */
export type AppendTarget = Pick<FileHandle, 'stat' | 'writev' | 'truncate' | 'datasync'>;

/**
 * Appends the buffers whole or not at all: a write that fails part way (a
 * full disk) is cut back to where the file ended before it, so the half line
 * or record it left does not join the next one written (an acknowledged
 * request inside an unreadable line). The file's end is read before each
 * write, as another writer (a rotation that truncates) may have moved it.
 * With `datasync`, a failed sync (a delayed allocation the disk could not
 * give) cuts the write back too: its caller keeps the data to write again.
 */
export async function appendWhole(handle: AppendTarget, buffers: Uint8Array[], datasync = false): Promise<void> {
  const { size } = await handle.stat();
  try {
    await writeAll(handle, buffers, size);
    if (datasync) await handle.datasync();
  } catch (err) {
    await handle.truncate(size).catch(() => undefined);
    throw err;
  }
}

/**
 * Writes every buffer, in order, from `position`, however many calls the
 * kernel takes. Positioned, since a file not opened for appending keeps its
 * offset past a write that was cut back, and would write after a hole.
 */
async function writeAll(handle: Pick<FileHandle, 'writev'>, buffers: Uint8Array[], position: number): Promise<void> {
  let rest = buffers;
  let at = position;
  for (;;) {
    const total = rest.reduce((sum, b) => sum + b.byteLength, 0);
    const { bytesWritten } = await handle.writev(rest, at);
    if (bytesWritten >= total) return;
    rest = remainder(rest, bytesWritten);
    at += bytesWritten;
  }
}

function remainder(buffers: readonly Uint8Array[], written: number): Uint8Array[] {
  let skip = written;
  const out: Uint8Array[] = [];
  for (const b of buffers) {
    if (skip >= b.byteLength) {
      skip -= b.byteLength;
      continue;
    }
    out.push(skip > 0 ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
}
