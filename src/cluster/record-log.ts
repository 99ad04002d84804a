// An append-only file of framed, CRC-checked records (the queue's framing),
// for state that may lose its last second in a crash: appends are buffered in
// memory and written together with one fdatasync at most FLUSH_INTERVAL_MS
// after the first of them (group commit on a timer), so a kill -9 loses at
// most that interval. Recovery keeps every whole record, passes over a
// corrupt one between whole ones (a damaged byte that left its length
// intact), and cuts a torn or corrupt tail.
import { open, readFile, truncate, type FileHandle } from 'node:fs/promises';
import type { Logger } from 'pino';
import { decodeFrame, FRAME_OVERHEAD_BYTES, frameInPlace, offsetAfterCorrupt } from '../queue/framing.js';
import { appendWhole } from '../shared/append-whole.js';

/** ms between the first buffered append and its write; the loss bound after a kill -9. */
export const FLUSH_INTERVAL_MS = 200;
/** ms before records a failed write kept (a full or read-only disk) are tried again. */
const RETRY_INTERVAL_MS = 1_000;
/** Bytes of records kept through failed writes; beyond it they are dropped, so a long outage cannot exhaust memory. */
const MAX_UNWRITTEN_BYTES = 32 * 1024 * 1024;

export type RecordVisitor = (data: Buffer, writtenAtMs: number) => void;

/** Reads every whole record of `path` in order; passes over a corrupt one between whole ones, truncates a torn or corrupt tail. Returns the records read. */
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
  let skipped = 0;
  while (pos < buf.length) {
    const result = decodeFrame(buf, pos);
    if (result.kind === 'frame') {
      visit(Buffer.from(result.frame.data.buffer, result.frame.data.byteOffset, result.frame.data.byteLength), result.frame.enqueuedAtMs);
      count += 1;
      pos += result.frame.frameBytes;
      continue;
    }
    const next = result.kind === 'corrupt' ? offsetAfterCorrupt(buf, pos) : undefined;
    if (next === undefined) {
      await truncate(path, pos);
      logger.warn({ file: path, keptRecords: count, discardedBytes: buf.length - pos, reason: result.kind === 'corrupt' ? result.reason : 'torn record' }, 'record file ends in a torn or corrupt record; truncated it');
      break;
    }
    skipped += 1;
    pos = next;
  }
  if (skipped > 0) logger.warn({ file: path, corruptRecords: skipped, keptRecords: count }, 'record file holds corrupt records between whole ones; passed over them and kept every whole record');
  return count;
}

/** Bytes of a buffer that framed records are written into; a record larger than this gets a buffer of its own. */
const CHUNK_BYTES = 64 * 1024;
/** The most UTF-8 bytes one UTF-16 code unit becomes. */
const MAX_UTF8_PER_UNIT = 3;

export class RecordLog {
  readonly path: string;
  readonly #logger: Logger;
  #handle: Promise<FileHandle> | undefined;
  /**
   * Records appended since the last flush, framed as they arrive: the text
   * is encoded at once rather than held until the write, so it dies young
   * instead of living out the flush interval in the old generation.
   */
  #filled: Buffer[] = [];
  #chunk: Buffer | undefined;
  #used = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  /** Writes failed in a row; the first is logged, and the write that ends the run. */
  #failedWrites = 0;
  #closed = false;

  constructor(path: string, logger: Logger) {
    this.path = path;
    this.#logger = logger;
  }

  /** Buffers one record (UTF-8 text); it is durable within FLUSH_INTERVAL_MS (or at flush()/close()). */
  append(text: string, atMs: number): void {
    if (this.#closed) throw new Error(`record log ${this.path} is closed`);
    // Written straight into the chunk when it surely fits, which saves measuring the text first.
    const room = FRAME_OVERHEAD_BYTES + text.length * MAX_UTF8_PER_UNIT;
    let chunk = this.#chunk;
    if (chunk === undefined || chunk.length - this.#used < room) {
      this.#retireChunk();
      chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, room));
      this.#chunk = chunk;
    }
    const size = chunk.write(text, this.#used + FRAME_OVERHEAD_BYTES, 'utf8');
    frameInPlace(chunk, this.#used, size, 0, atMs);
    this.#used += FRAME_OVERHEAD_BYTES + size;
    this.#timer ??= this.#scheduleFlush(FLUSH_INTERVAL_MS);
  }

  /**
   * Writes and syncs everything appended so far. Writes happen one at a time,
   * in order. Records a write could not store (a full or read-only disk) are
   * kept and go first in the next write, tried again every RETRY_INTERVAL_MS;
   * what a failed write stored of them is cut off, so the file never holds a
   * torn record that later ones would follow.
   */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#retireChunk();
    const write = this.#writing.then(() => this.#writeFilled());
    this.#writing = write.catch(() => undefined);
    return write;
  }

  #scheduleFlush(delayMs: number): NodeJS.Timeout {
    return setTimeout(() => void this.flush().catch(() => undefined), delayMs);
  }

  async #writeFilled(): Promise<void> {
    const filled = this.#filled;
    this.#filled = [];
    if (filled.length === 0) return;
    const bytes = filled.length === 1 ? (filled[0] as Buffer) : Buffer.concat(filled);
    try {
      const handle = await this.#open();
      await appendWhole(handle, [bytes], true);
    } catch (err) {
      this.#keepUnwritten(bytes, err);
      throw err;
    }
    if (this.#failedWrites > 0) this.#logger.warn({ file: this.path, failedWrites: this.#failedWrites }, 'record log written again');
    this.#failedWrites = 0;
  }

  /** Opens the file; a failed open is tried again by the next write (a directory made writable again). */
  #open(): Promise<FileHandle> {
    // Owner-only, as queues and the file exporter's output: records name keys and models.
    const handle = (this.#handle ??= open(this.path, 'a', 0o600));
    handle.catch(() => {
      if (this.#handle === handle) this.#handle = undefined;
    });
    return handle;
  }

  #keepUnwritten(bytes: Buffer, err: unknown): void {
    this.#failedWrites += 1;
    if (this.#failedWrites === 1) this.#logger.error({ err: String(err), file: this.path }, 'record log write failed; its records are kept and tried again');
    if (bytes.length > MAX_UNWRITTEN_BYTES) {
      this.#logger.error({ file: this.path, droppedBytes: bytes.length }, 'record log dropped records that failed writes kept too long');
    } else {
      this.#filled.unshift(bytes);
    }
    if (!this.#closed) this.#timer ??= this.#scheduleFlush(RETRY_INTERVAL_MS);
  }

  /** The current chunk's framed records join those waiting for the write. */
  #retireChunk(): void {
    if (this.#chunk !== undefined && this.#used > 0) this.#filled.push(this.#chunk.subarray(0, this.#used));
    this.#chunk = undefined;
    this.#used = 0;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.flush();
    } finally {
      this.#closed = true;
      clearTimeout(this.#timer);
      this.#timer = undefined;
      const handle = this.#handle;
      this.#handle = undefined;
      if (handle !== undefined) await (await handle.catch(() => undefined))?.close();
    }
  }
}
