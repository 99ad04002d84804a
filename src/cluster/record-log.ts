// An append-only file of framed, CRC-checked records (the queue's framing),
// for state that may lose its last second in a crash: appends are buffered in
// memory and written together with one fdatasync at most FLUSH_INTERVAL_MS
// after the first of them (group commit on a timer), so a kill -9 loses at
// most that interval. Recovery keeps every whole record and cuts a torn or
// corrupt tail.
import { open, readFile, truncate, type FileHandle } from 'node:fs/promises';
import type { Logger } from 'pino';
import { decodeFrame, FRAME_OVERHEAD_BYTES, frameInPlace } from '../queue/framing.js';

/** ms between the first buffered append and its write; the loss bound after a kill -9. */
export const FLUSH_INTERVAL_MS = 200;

export type RecordVisitor = (data: Buffer, writtenAtMs: number) => void;

/** Reads every whole record of `path` in order; truncates a torn or corrupt tail. Returns the records read. */
export async function replayRecordFile(path: string, visit: RecordVisitor, logger: Logger): Promise<number> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let pos = 0;
  let count = 0;
  while (pos < buf.length) {
    const result = decodeFrame(buf, pos);
    if (result.kind !== 'frame') {
      await truncate(path, pos);
      logger.warn({ file: path, keptRecords: count, discardedBytes: buf.length - pos, reason: result.kind === 'corrupt' ? result.reason : 'torn record' }, 'record file ends in a torn or corrupt record; truncated it');
      break;
    }
    visit(Buffer.from(result.frame.data.buffer, result.frame.data.byteOffset, result.frame.data.byteLength), result.frame.enqueuedAtMs);
    count += 1;
    pos += result.frame.frameBytes;
  }
  return count;
}

/** The records framed one after another in one buffer (one write, however many records). */
function framed(texts: readonly string[], times: readonly number[]): Buffer {
  let total = 0;
  const sizes = new Array<number>(texts.length);
  for (let i = 0; i < texts.length; i++) {
    sizes[i] = Buffer.byteLength(texts[i] as string);
    total += FRAME_OVERHEAD_BYTES + (sizes[i] as number);
  }
  const out = Buffer.allocUnsafe(total);
  let offset = 0;
  for (let i = 0; i < texts.length; i++) {
    const size = sizes[i] as number;
    out.write(texts[i] as string, offset + FRAME_OVERHEAD_BYTES, size, 'utf8');
    frameInPlace(out, offset, size, 0, times[i] as number);
    offset += FRAME_OVERHEAD_BYTES + size;
  }
  return out;
}

export class RecordLog {
  readonly path: string;
  readonly #logger: Logger;
  #handle: Promise<FileHandle> | undefined;
  /** Records appended since the last flush, as text, and when each was appended. */
  #pending: string[] = [];
  #pendingAt: number[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(path: string, logger: Logger) {
    this.path = path;
    this.#logger = logger;
  }

  /** Buffers one record (UTF-8 text); it is durable within FLUSH_INTERVAL_MS (or at flush()/close()). */
  append(text: string, atMs: number): void {
    if (this.#closed) throw new Error(`record log ${this.path} is closed`);
    this.#pending.push(text);
    this.#pendingAt.push(atMs);
    this.#timer ??= setTimeout(() => void this.flush().catch((err: unknown) => this.#logger.error({ err: String(err), file: this.path }, 'record log write failed')), FLUSH_INTERVAL_MS);
  }

  /** Writes and syncs everything appended so far. Writes happen one at a time, in order. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const bytes = framed(this.#pending, this.#pendingAt);
    this.#pending = [];
    this.#pendingAt = [];
    const write = this.#writing.then(async () => {
      if (bytes.length === 0) return;
      this.#handle ??= open(this.path, 'a');
      const handle = await this.#handle;
      await handle.write(bytes);
      await handle.datasync();
    });
    this.#writing = write.catch(() => undefined);
    return write;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#closed = true;
    const handle = this.#handle;
    this.#handle = undefined;
    if (handle !== undefined) await (await handle).close();
  }
}
