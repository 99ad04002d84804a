// The durable queue: append-only segment files with group commit, a read
// cursor separate from the acknowledged position, and crash recovery.
//
// Delivery is at-least-once: a record handed out and delivered, whose ack was
// not yet persisted when the process died, is handed out again after restart.
// The ack position is persisted lazily (AckWriter), and records a reader
// takes soon after they were committed come from memory (RecentRecords), so
// the steady state costs one write + fsync per group of appends and nothing
// else on disk.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { readAckFile } from './ack-file.js';
import { AckWriter } from './ack-writer.js';
import { lockDirectory, type DirectoryLock } from './directory-lock.js';
import { QueueClosedError, QueueFullError, QueueWriteError, RecordTooLargeError } from './errors.js';
import { leftOutField, LogThrottle } from '../shared/log-throttle.js';
import { FRAME_OVERHEAD_BYTES, FRAME_PREFIX_BYTES, MAX_CORRUPT_RUN, claimedFrameBytes, decodeFrame, decodeFrameSliced, encodeFrameHeader } from './framing.js';
import { FILE_MODE } from './file-mode.js';
import { fsyncDirectory, prepareDirectory, recoverSegments, removeFile, segmentFileName } from './segment-files.js';
import { RecentRecords } from './recent-records.js';
import type { Queue, QueueRecord, QueueStats, ReadLimits } from './types.js';
import { UnreadWaiters } from './unread-waiters.js';

export const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
const MIN_SEGMENT_BYTES = 4 * 1024;
// A queue this small in total still rolls segments, so acked space is freed.
const SEGMENTS_PER_QUEUE = 8;
const READ_CHUNK_BYTES = 256 * 1024;
const CHECK_SLICE_MS = 0.5; // a large record's CRC check between two turns of the event loop
// O_DSYNC: a write returns once its data is durable, so a group commit is one
// trip to the thread pool instead of a write and then an fdatasync. Where the
// platform has no O_DSYNC (Windows), each write is followed by a datasync.
// No O_APPEND: writes go to reserved offsets, so two can be in flight.
const HAS_DSYNC = typeof (constants.O_DSYNC as number | undefined) === 'number';
const SEGMENT_OPEN_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (HAS_DSYNC ? constants.O_DSYNC : 0);
/**
 * Group commits in flight at once. With one, appends that arrive during a
 * write wait for it and then for their own; with two, they start at once.
 */
const MAX_WRITES_IN_FLIGHT = 2;
export const DEFAULT_ACK_INTERVAL_MS = 1_000;
export const DEFAULT_RECENT_BYTES = 8 * 1024 * 1024;
/** An idle, fully acknowledged write segment is closed (and deleted) once it holds this share of a segment... */
const RECYCLE_SEGMENT_SHARE = 0.25;
/** ...or the queue is this full: a new file per small batch would cost a create and a directory fsync each time. */
const RECYCLE_QUEUE_SHARE = 0.5;

export interface DiskQueueOptions {
  /** Names the queue in errors, logs and metrics (the exporter or drain id). */
  readonly name: string;
  readonly directory: string;
  readonly maxSizeBytes: number;
  /** A segment is closed and a new one started past this size. */
  readonly segmentBytes?: number;
  /** The ack position reaches disk at most this often, and on close (ms). */
  readonly ackIntervalMs?: number;
  /** Budget of just-committed records kept in memory for readers (bytes; 0 reads everything from disk). */
  readonly recentBytes?: number;
  /** Opens a new segment file (readable by its owner only); tests wrap it to inject write failures. */
  readonly openSegmentFile?: (path: string, flags: number) => Promise<FileHandle>;
  readonly logger: Logger;
}

interface Segment {
  readonly base: number;
  readonly path: string;
  /** Committed (durable) records and bytes. */
  count: number;
  bytes: number;
  /** Bytes written or being written: where the next write goes. */
  reserved: number;
  /** A write here failed: later writes in flight sit after a hole and fail too. */
  broken: boolean;
  /** No more appends go here; deletable once fully acknowledged. */
  sealed: boolean;
}

interface PendingAppend {
  readonly header: Buffer;
  readonly data: Uint8Array;
  readonly spans: number;
  readonly enqueuedAtMs: number;
  readonly frameBytes: number;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

interface ReadCursor {
  segment: Segment | undefined;
  offset: number;
  seq: number;
}

export class DiskQueue implements Queue {
  readonly name: string;
  readonly #directory: string;
  readonly #maxSizeBytes: number;
  readonly #segmentBytes: number;
  readonly #logger: Logger;
  /** A full disk fails every append: one line per interval says so. */
  readonly #failedAppends = new LogThrottle();
  readonly #ackIntervalMs: number;
  readonly #openSegmentFile: (path: string, flags: number) => Promise<FileHandle>;
  readonly #waiters = new UnreadWaiters();
  readonly #recent: RecentRecords<Segment>;

  #state: 'new' | 'open' | 'closed' = 'new';
  #opening: Promise<void> | undefined;
  #lock: DirectoryLock | undefined;
  #closing: Promise<void> | undefined;

  #segments: Segment[] = [];
  #diskBytes = 0;
  #records = 0;
  #unread = 0;
  #fsyncs = 0;

  #writeSegment: Segment | undefined;
  #writeHandle: FileHandle | undefined;
  #rollBeforeNextWrite = false;
  /**
   * A segment file that failed before it stored a record, still to delete.
   * The next segment starts at the same sequence number, so has the same name.
   */
  #discardedSegmentPath: string | undefined;
  #nextSeq = 0;
  #pending: PendingAppend[] = [];
  #pendingBytes = 0;
  #flushing: Promise<void> = Promise.resolve();
  /** Commits in flight, oldest first; each settles after the one before it (never rejects). */
  readonly #commits: Promise<void>[] = [];
  // Cleared in the same tick the loop sees nothing pending, so an append made
  // by a just-resolved caller starts the next flush instead of being stranded.
  #flushActive = false;

  #cursor: ReadCursor = { segment: undefined, offset: 0, seq: 0 };
  #readHandle: { segment: Segment; handle: FileHandle } | undefined;
  #readChain: Promise<unknown> = Promise.resolve();

  #ackPosition = 0;
  readonly #acked = new Set<number>();
  #ackWriter: AckWriter | undefined;
  #reclaiming: Promise<void> = Promise.resolve();

  constructor(options: DiskQueueOptions) {
    this.name = options.name;
    this.#directory = options.directory;
    this.#maxSizeBytes = options.maxSizeBytes;
    this.#segmentBytes =
      options.segmentBytes ??
      Math.max(MIN_SEGMENT_BYTES, Math.min(DEFAULT_SEGMENT_BYTES, Math.floor(options.maxSizeBytes / SEGMENTS_PER_QUEUE)));
    this.#logger = options.logger;
    this.#ackIntervalMs = options.ackIntervalMs ?? DEFAULT_ACK_INTERVAL_MS;
    this.#openSegmentFile = options.openSegmentFile ?? openOwnerOnly;
    this.#recent = new RecentRecords(options.recentBytes ?? DEFAULT_RECENT_BYTES);
  }

  open(): Promise<void> {
    this.#opening ??= this.#recover();
    return this.#opening;
  }

  async #recover(): Promise<void> {
    await prepareDirectory(this.#directory);
    this.#lock = await lockDirectory(this.#directory);
    try {
      await this.#recoverLocked();
    } catch (err) {
      await this.#lock.release();
      throw err;
    }
  }

  async #recoverLocked(): Promise<void> {
    const ack = await readAckFile(this.#directory);
    if ('problem' in ack) {
      this.#logger.warn({ queue: this.name, problem: ack.problem }, 'queue ack position unreadable; redelivering from the oldest record');
    }
    const ackPosition = 'position' in ack ? ack.position : 0;
    const recovered = await recoverSegments(this.#directory, ackPosition, this.#logger, this.name);
    this.#ackPosition = ackPosition;
    this.#ackWriter = new AckWriter({
      directory: this.#directory,
      position: ackPosition,
      intervalMs: this.#ackIntervalMs,
      onError: (err) => this.#logger.warn({ queue: this.name, err }, 'persisting the queue ack position failed; records may be delivered twice'),
    });
    this.#nextSeq = ackPosition;
    for (const r of recovered) {
      this.#segments.push({ base: r.base, path: r.path, count: r.count, bytes: r.bytes, reserved: r.bytes, broken: false, sealed: true });
      this.#diskBytes += r.bytes;
      const unacked = r.base + r.count - r.readSeq;
      this.#records += unacked;
      this.#unread += unacked;
      this.#nextSeq = Math.max(this.#nextSeq, r.base + r.count);
    }
    const first = recovered[0];
    const firstSegment = this.#segments[0];
    if (first !== undefined && firstSegment !== undefined) {
      this.#cursor = { segment: firstSegment, offset: first.readOffset, seq: first.readSeq };
    }
    if (this.#state === 'new') this.#state = 'open';
    if (this.#records > 0) {
      this.#logger.info({ queue: this.name, records: this.#records, bytes: this.#diskBytes }, 'queue recovered unacknowledged records');
    }
  }

  // --- append: group commit -------------------------------------------------

  append(data: Uint8Array, spans: number): Promise<void> {
    if (this.#state !== 'open') return Promise.reject(new QueueClosedError(this.name));
    const frameBytes = FRAME_OVERHEAD_BYTES + data.byteLength;
    if (frameBytes > this.#maxSizeBytes) {
      return Promise.reject(
        new RecordTooLargeError(`queue ${this.name}: a record of ${frameBytes} bytes exceeds max_size ${this.#maxSizeBytes}`),
      );
    }
    const size = this.#sizeBytes();
    if (size + frameBytes > this.#maxSizeBytes) {
      return Promise.reject(new QueueFullError(this.name, size, this.#maxSizeBytes));
    }
    const enqueuedAtMs = Date.now();
    const header = encodeFrameHeader(data, spans, enqueuedAtMs);
    this.#pendingBytes += frameBytes;
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ header, data, spans, enqueuedAtMs, frameBytes, resolve, reject });
      // No fixed window: whatever arrives while writes are in flight shares the next one.
      if (!this.#flushActive) {
        this.#flushActive = true;
        this.#flushing = this.#flushPending();
      }
    });
  }

  async #flushPending(): Promise<void> {
    // Not `finally`: the flag must drop in the tick the loop finds nothing pending.
    while (this.#pending.length > 0) {
      const oldest = this.#commits[0];
      if (this.#commits.length >= MAX_WRITES_IN_FLIGHT && oldest !== undefined) {
        await oldest;
        continue;
      }
      await this.#startWrite(this.#pending.splice(0));
    }
    this.#flushActive = false;
  }

  /** Starts one batch's durable write and queues its commit; never throws (failures reject the batch's appends). */
  async #startWrite(batch: PendingAppend[]): Promise<void> {
    let bytes = 0;
    for (const p of batch) bytes += p.frameBytes;
    let target: { segment: Segment; handle: FileHandle };
    try {
      target = await this.#writableSegment(bytes);
    } catch (err) {
      this.#failBatch(batch, bytes, err);
      return;
    }
    const { segment, handle } = target;
    const position = segment.reserved;
    segment.reserved += bytes;
    const written = this.#writeAt(handle, batch, bytes, position).then(
      () => undefined,
      (err: unknown) => err,
    );
    const previous = this.#commits[this.#commits.length - 1] ?? Promise.resolve();
    const commit = (async () => {
      const failure = await written;
      await previous;
      // Commits complete in order, so records are numbered and published in order.
      if (failure !== undefined || segment.broken) this.#failWrite(segment, batch, bytes, failure ?? new Error('an earlier write to this segment failed'));
      else this.#publish(segment, batch, bytes);
      this.#commits.shift();
    })();
    this.#commits.push(commit);
  }

  async #writeAt(handle: FileHandle, batch: readonly PendingAppend[], bytes: number, position: number): Promise<void> {
    const buffers = batch.flatMap((p) => [p.header, p.data]);
    const { bytesWritten } = await handle.writev(buffers, position);
    if (bytesWritten !== bytes) throw new Error(`short write: ${bytesWritten} of ${bytes} bytes`);
    if (!HAS_DSYNC) await handle.datasync();
  }

  #publish(segment: Segment, batch: readonly PendingAppend[], bytes: number): void {
    this.#fsyncs += 1;
    let offset = segment.bytes;
    let seq = this.#nextSeq;
    for (const p of batch) {
      offset += p.frameBytes;
      this.#recent.push({ seq, segment, endOffset: offset, data: p.data, spans: p.spans, enqueuedAtMs: p.enqueuedAtMs });
      seq += 1;
    }
    segment.bytes += bytes;
    segment.count += batch.length;
    this.#diskBytes += bytes;
    this.#nextSeq += batch.length;
    this.#records += batch.length;
    this.#unread += batch.length;
    this.#pendingBytes -= bytes;
    for (const p of batch) p.resolve();
    this.#waiters.notify(true);
  }

  #failWrite(segment: Segment, batch: readonly PendingAppend[], bytes: number, err: unknown): void {
    // The segment may now hold a partial frame or a hole: never append after it.
    segment.broken = true;
    if (segment === this.#writeSegment) this.#rollBeforeNextWrite = true;
    this.#failBatch(batch, bytes, err);
  }

  #failBatch(batch: readonly PendingAppend[], bytes: number, err: unknown): void {
    this.#pendingBytes -= bytes;
    const error = new QueueWriteError(this.name, err);
    const { name } = this;
    const logger = this.#logger;
    this.#failedAppends.run(function logFailure(leftOut) {
      logger.error({ queue: name, err: error, records: batch.length, ...leftOutField(leftOut) }, 'queue append failed');
    });
    for (const p of batch) p.reject(error);
  }

  /** Resolves once every write in flight has committed or failed. */
  async #settleWrites(): Promise<void> {
    for (let last = this.#commits[this.#commits.length - 1]; last !== undefined; last = this.#commits[this.#commits.length - 1]) await last;
  }

  async #writableSegment(bytes: number): Promise<{ segment: Segment; handle: FileHandle }> {
    const current = this.#writeSegment;
    if (current !== undefined && (this.#rollBeforeNextWrite || (current.reserved > 0 && current.reserved + bytes > this.#segmentBytes))) {
      // The handle closes with the segment, and the next one starts at the next sequence number: both need the writes done.
      await this.#settleWrites();
      await this.#sealWriteSegment();
    }
    if (this.#writeSegment !== undefined && this.#writeHandle !== undefined) {
      return { segment: this.#writeSegment, handle: this.#writeHandle };
    }
    this.#rollBeforeNextWrite = false;
    if (this.#discardedSegmentPath !== undefined) {
      // Throws while the file cannot go (failing this append); the next append tries again.
      await removeFile(this.#discardedSegmentPath);
      this.#discardedSegmentPath = undefined;
    }
    const segment: Segment = {
      base: this.#nextSeq,
      path: join(this.#directory, segmentFileName(this.#nextSeq)),
      count: 0,
      bytes: 0,
      reserved: 0,
      broken: false,
      sealed: false,
    };
    const handle = await this.#openSegmentFile(segment.path, SEGMENT_OPEN_FLAGS);
    try {
      await fsyncDirectory(this.#directory);
    } catch (err) {
      await handle.close();
      this.#discardedSegmentPath = segment.path;
      throw err;
    }
    this.#segments.push(segment);
    this.#writeSegment = segment;
    this.#writeHandle = handle;
    if (this.#cursor.segment === undefined) this.#cursor = { segment, offset: 0, seq: segment.base };
    return { segment, handle };
  }

  /** Callers settle the writes in flight first: a failed one's bytes are cut off here. */
  async #sealWriteSegment(): Promise<void> {
    const segment = this.#writeSegment;
    const handle = this.#writeHandle;
    this.#writeSegment = undefined;
    this.#writeHandle = undefined;
    if (segment === undefined || handle === undefined) return;
    segment.sealed = true;
    if (segment.count === 0) this.#discardEmptySegment(segment);
    else if (segment.broken) await this.#cutFailedWrites(segment, handle);
    await handle.close();
  }

  /**
   * A failed write can leave whole records of its group (a short write on a
   * full disk) past the last committed one. Their appends were refused, and
   * the next segment takes their sequence numbers, so they must not be
   * recovered: cut the file back to the committed bytes.
   */
  async #cutFailedWrites(segment: Segment, handle: FileHandle): Promise<void> {
    try {
      await handle.truncate(segment.bytes);
      await handle.datasync();
    } catch (err) {
      // Recovery drops records past the next segment's start, so this costs no acknowledged record.
      this.#logger.warn({ queue: this.name, segment: segment.path, err }, 'cutting a failed write off a segment failed');
    }
  }

  /** Forgets a write segment that never stored a record (its first write failed); its file goes before the next is created. */
  #discardEmptySegment(segment: Segment): void {
    const index = this.#segments.indexOf(segment);
    if (index !== -1) this.#segments.splice(index, 1);
    // It held nothing to read: the reader waits for the next segment, which starts at the same sequence number.
    if (this.#cursor.segment === segment) this.#cursor = { segment: undefined, offset: 0, seq: segment.base };
    this.#discardedSegmentPath = segment.path;
  }

  // --- read -----------------------------------------------------------------

  read(limits: ReadLimits): Promise<QueueRecord[]> {
    // One reader at a time: the cursor moves only once a chunk is parsed.
    const job = this.#readChain.then(() => this.#readRecords(limits));
    this.#readChain = job.catch(() => undefined);
    return job;
  }

  waitForUnread(signal: AbortSignal): Promise<boolean> {
    if (this.#state === 'closed') return Promise.resolve(false);
    if (this.#unread > 0) return Promise.resolve(true);
    return this.#waiters.wait(signal);
  }

  async #readRecords(limits: ReadLimits): Promise<QueueRecord[]> {
    const out: QueueRecord[] = [];
    let spans = 0;
    let bytes = 0;
    let want = READ_CHUNK_BYTES;
    while (this.#state === 'open') {
      const recent = this.#recent.get(this.#cursor.seq);
      if (recent !== undefined) {
        if ((out.length > 0 || limits.strict === true) && (spans + recent.spans > limits.maxSpans || bytes + recent.data.byteLength > limits.maxBytes)) break;
        out.push({ id: recent.seq, data: recent.data, spans: recent.spans, enqueuedAtMs: recent.enqueuedAtMs });
        spans += recent.spans;
        bytes += recent.data.byteLength;
        this.#cursor = { segment: recent.segment, offset: recent.endOffset, seq: recent.seq + 1 };
        this.#unread -= 1;
        if (spans >= limits.maxSpans || bytes >= limits.maxBytes) break;
        continue;
      }
      const segment = this.#readSegment();
      if (segment === undefined) break;
      const start = this.#cursor.offset;
      const available = segment.bytes - start;
      if (available <= 0) break;
      const length = Math.min(available, Math.max(want, READ_CHUNK_BYTES));
      const buf = await this.#readAt(segment, start, length);
      want = READ_CHUNK_BYTES;
      if (buf.length < length) {
        // Someone shortened the file under us; re-reading would never get further.
        this.#skipCorruptRest(segment, `segment file shorter than its ${segment.bytes} committed bytes`);
        continue;
      }
      let pos = 0;
      let full = false;
      while (pos < buf.length) {
        const decoded = decodeFrameSliced(buf, pos, CHECK_SLICE_MS);
        const result = decoded instanceof Promise ? await decoded : decoded;
        if (result.kind === 'incomplete') {
          if (start + pos + result.needBytes > segment.bytes) this.#skipCorruptRest(segment, 'record runs past the segment end');
          else want = result.needBytes;
          break;
        }
        if (result.kind === 'corrupt') {
          const next = await this.#recordAfterCorrupt(segment, start + pos);
          if (next === undefined) this.#skipCorruptRest(segment, result.reason);
          else this.#skipCorruptRecord(segment, next, result.reason);
          break;
        }
        const { frame } = result;
        if ((out.length > 0 || limits.strict === true) && (spans + frame.spans > limits.maxSpans || bytes + frame.data.byteLength > limits.maxBytes)) {
          full = true;
          break;
        }
        out.push({ id: this.#cursor.seq, data: frame.data, spans: frame.spans, enqueuedAtMs: frame.enqueuedAtMs });
        spans += frame.spans;
        bytes += frame.data.byteLength;
        pos += frame.frameBytes;
        this.#cursor.offset += frame.frameBytes;
        this.#cursor.seq += 1;
        this.#unread -= 1;
        if (spans >= limits.maxSpans || bytes >= limits.maxBytes) {
          full = true;
          break;
        }
      }
      if (full) break;
    }
    this.#recent.dropBefore(this.#cursor.seq);
    return out;
  }

  /** The segment the cursor reads from, moving past exhausted sealed ones. */
  #readSegment(): Segment | undefined {
    let segment = this.#cursor.segment;
    while (segment !== undefined && segment.sealed && this.#cursor.offset >= segment.bytes) {
      // Deleted segments are always at the front, so indexOf -1 leads to [0].
      const next = this.#segments[this.#segments.indexOf(segment) + 1];
      if (next === undefined) return undefined;
      this.#cursor = { segment: next, offset: 0, seq: next.base };
      segment = next;
    }
    return segment;
  }

  async #readAt(segment: Segment, offset: number, length: number): Promise<Buffer> {
    if (this.#readHandle?.segment !== segment) {
      await this.#closeReadHandle();
      this.#readHandle = { segment, handle: await open(segment.path, 'r') };
    }
    const buf = Buffer.allocUnsafe(length);
    const { bytesRead } = await this.#readHandle.handle.read(buf, 0, length, offset);
    return bytesRead === length ? buf : buf.subarray(0, bytesRead);
  }

  async #closeReadHandle(): Promise<void> {
    const current = this.#readHandle;
    this.#readHandle = undefined;
    await current?.handle.close();
  }

  /**
   * Where the record after the corrupt one at `offset` starts, when that one
   * can be skipped alone (see offsetAfterCorrupt); read from the file, since
   * the records after it may lie past the chunk in hand.
   */
  async #recordAfterCorrupt(segment: Segment, offset: number): Promise<number | undefined> {
    const claimed = await this.#claimAt(segment, offset);
    if (claimed === undefined) return undefined;
    const next = offset + claimed;
    let pos = next;
    for (let run = 1; run <= MAX_CORRUPT_RUN && pos < segment.bytes; run++) {
      const hop = await this.#claimAt(segment, pos);
      if (hop === undefined || pos + hop > segment.bytes) return undefined;
      if (decodeFrame(await this.#readAt(segment, pos, hop), 0).kind === 'frame') return next;
      pos += hop;
    }
    return undefined;
  }

  /** The whole size the record at `offset` claims (see claimedFrameBytes). */
  async #claimAt(segment: Segment, offset: number): Promise<number | undefined> {
    return claimedFrameBytes(await this.#readAt(segment, offset, FRAME_PREFIX_BYTES), 0);
  }

  /** A damaged record whose length held: skip it alone, and read on from the record after it at `next`. */
  #skipCorruptRecord(segment: Segment, next: number, reason: string): void {
    this.#acked.add(this.#cursor.seq);
    this.#records -= 1;
    this.#unread -= 1;
    this.#cursor.offset = next;
    this.#cursor.seq += 1;
    this.#logger.error({ queue: this.name, segment: segment.path, lostRecords: 1, reason }, 'queue record corrupt on read; skipped it and kept the records after it');
    this.#advanceAckPosition();
    this.#ackWriter?.update(this.#ackPosition);
  }

  /** Data damaged after recovery validated it, where the next record cannot be found: skip the rest of the segment so delivery goes on. */
  #skipCorruptRest(segment: Segment, reason: string): void {
    const end = segment.base + segment.count;
    const lost = end - this.#cursor.seq;
    for (let seq = this.#cursor.seq; seq < end; seq++) this.#acked.add(seq);
    this.#records -= lost;
    this.#unread -= lost;
    this.#cursor.offset = segment.bytes;
    this.#cursor.seq = end;
    if (segment === this.#writeSegment) this.#rollBeforeNextWrite = true;
    this.#logger.error({ queue: this.name, segment: segment.path, lostRecords: lost, reason }, 'queue segment corrupt on read; skipped the rest of it');
    this.#advanceAckPosition();
    this.#ackWriter?.update(this.#ackPosition);
  }

  // --- ack ------------------------------------------------------------------

  ack(ids: readonly number[]): Promise<void> {
    if (this.#state !== 'open') return Promise.resolve();
    for (const id of ids) {
      if (id < this.#ackPosition || id >= this.#cursor.seq || this.#acked.has(id)) continue;
      this.#acked.add(id);
      this.#records -= 1;
    }
    const before = this.#ackPosition;
    this.#advanceAckPosition();
    if (this.#ackPosition === before) return Promise.resolve();
    this.#ackWriter?.update(this.#ackPosition);
    return this.#reclaim();
  }

  /** Moves the ack position over the contiguous acknowledged prefix. */
  #advanceAckPosition(): void {
    for (const segment of this.#segments) {
      // A gap before a segment is a region recovery discarded.
      if (this.#ackPosition < segment.base) this.#ackPosition = segment.base;
      const end = segment.base + segment.count;
      while (this.#ackPosition < end && this.#acked.delete(this.#ackPosition)) this.#ackPosition += 1;
      if (this.#ackPosition < end) return;
      if (!segment.sealed) {
        // Fully acknowledged and idle: seal it so its space is freed.
        if (!this.#flushActive && this.#pending.length === 0 && this.#commits.length === 0 && this.#worthRecycling(segment)) {
          this.#sealWriteSegment().catch((err: unknown) => this.#logger.warn({ queue: this.name, err }, 'closing segment failed'));
        }
        return;
      }
    }
  }

  #worthRecycling(segment: Segment): boolean {
    return segment.bytes >= this.#segmentBytes * RECYCLE_SEGMENT_SHARE || this.#sizeBytes() >= this.#maxSizeBytes * RECYCLE_QUEUE_SHARE;
  }

  /**
   * Deletes sealed segments the ack position has passed. This need not wait
   * for the position to reach disk: their records were delivered, and
   * recovery treats a missing segment below the persisted position as a gap.
   */
  #reclaim(): Promise<void> {
    const first = this.#segments[0];
    if (first === undefined || !first.sealed || first.base + first.count > this.#ackPosition) return Promise.resolve();
    // Never rejects: a file that failed to go is logged; recovery removes it on the next start.
    this.#reclaiming = this.#reclaiming
      .then(() => this.#deleteAckedSegments())
      .catch((err: unknown) => this.#logger.warn({ queue: this.name, err }, 'deleting an acknowledged segment failed'));
    return this.#reclaiming;
  }

  async #deleteAckedSegments(): Promise<void> {
    for (;;) {
      const segment = this.#segments[0];
      if (segment === undefined || !segment.sealed || segment.base + segment.count > this.#ackPosition) return;
      this.#segments.shift();
      this.#diskBytes -= segment.bytes;
      if (this.#readHandle?.segment === segment) await this.#closeReadHandle();
      await removeFile(segment.path);
    }
  }

  // --- stats and close --------------------------------------------------------

  #sizeBytes(): number {
    return this.#diskBytes + this.#pendingBytes;
  }

  stats(): QueueStats {
    return {
      sizeBytes: this.#sizeBytes(),
      records: this.#records,
      unreadRecords: this.#unread,
      capacityBytes: this.#maxSizeBytes,
      fsyncs: this.#fsyncs,
    };
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    await this.#opening?.catch(() => undefined);
    this.#state = 'closed';
    this.#waiters.notify(false);
    await this.#flushing;
    await this.#settleWrites();
    await this.#readChain;
    await this.#reclaiming;
    await this.#ackWriter?.flush().catch((err: unknown) => this.#logger.warn({ queue: this.name, err }, 'persisting the ack position failed'));
    this.#recent.clear();
    await this.#sealWriteSegment();
    await this.#closeReadHandle();
    if (this.#discardedSegmentPath !== undefined) {
      // Recovery deletes an empty segment anyway, so a failure here is only logged.
      await removeFile(this.#discardedSegmentPath).catch((err: unknown) => this.#logger.warn({ queue: this.name, err }, 'deleting an empty segment failed'));
    }
    await this.#lock?.release();
  }
}

function openOwnerOnly(path: string, flags: number): Promise<FileHandle> {
  return open(path, flags, FILE_MODE);
}
