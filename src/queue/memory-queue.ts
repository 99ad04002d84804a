// The in-memory queue: the same interface and accounting as the disk queue,
// without durability. For tests, for `storage: memory`, and as the baseline
// in the durable-vs-in-memory benchmark. Unacknowledged records are lost on
// close.
import { QueueClosedError, QueueFullError, RecordTooLargeError } from './errors.js';
import { FRAME_OVERHEAD_BYTES } from './framing.js';
import type { Queue, QueueRecord, QueueStats, ReadLimits } from './types.js';
import { UnreadWaiters } from './unread-waiters.js';

// Compact the unread array once this many entries have been handed out.
const COMPACT_AFTER = 1024;

export interface MemoryQueueOptions {
  readonly name: string;
  readonly maxSizeBytes: number;
}

export class MemoryQueue implements Queue {
  readonly name: string;
  readonly #maxSizeBytes: number;
  readonly #waiters = new UnreadWaiters();
  #state: 'new' | 'open' | 'closed' = 'new';
  #unread: QueueRecord[] = [];
  #readIndex = 0;
  /** Unacknowledged records (read or not): id -> accounted bytes. */
  readonly #unacked = new Map<number, number>();
  #sizeBytes = 0;
  #nextId = 0;

  constructor(options: MemoryQueueOptions) {
    this.name = options.name;
    this.#maxSizeBytes = options.maxSizeBytes;
  }

  open(): Promise<void> {
    if (this.#state === 'new') this.#state = 'open';
    return Promise.resolve();
  }

  append(data: Uint8Array, spans: number): Promise<void> {
    if (this.#state !== 'open') return Promise.reject(new QueueClosedError(this.name));
    // Accounted like a disk frame, so both queues fill at the same point.
    const size = FRAME_OVERHEAD_BYTES + data.byteLength;
    if (size > this.#maxSizeBytes) {
      return Promise.reject(new RecordTooLargeError(`queue ${this.name}: a record of ${size} bytes exceeds max_size ${this.#maxSizeBytes}`));
    }
    if (this.#sizeBytes + size > this.#maxSizeBytes) return Promise.reject(new QueueFullError(this.name, this.#sizeBytes, this.#maxSizeBytes));
    const id = this.#nextId++;
    this.#unread.push({ id, data, spans, enqueuedAtMs: Date.now() });
    this.#unacked.set(id, size);
    this.#sizeBytes += size;
    this.#waiters.notify(true);
    return Promise.resolve();
  }

  read(limits: ReadLimits): Promise<QueueRecord[]> {
    const out: QueueRecord[] = [];
    let spans = 0;
    let bytes = 0;
    while (this.#state === 'open') {
      const record = this.#unread[this.#readIndex];
      if (record === undefined) break;
      if ((out.length > 0 || limits.strict === true) && (spans + record.spans > limits.maxSpans || bytes + record.data.byteLength > limits.maxBytes)) break;
      out.push(record);
      this.#readIndex += 1;
      spans += record.spans;
      bytes += record.data.byteLength;
      if (spans >= limits.maxSpans || bytes >= limits.maxBytes) break;
    }
    if (this.#readIndex >= COMPACT_AFTER) {
      this.#unread = this.#unread.slice(this.#readIndex);
      this.#readIndex = 0;
    }
    return Promise.resolve(out);
  }

  waitForUnread(signal: AbortSignal): Promise<boolean> {
    if (this.#state === 'closed') return Promise.resolve(false);
    if (this.#readIndex < this.#unread.length) return Promise.resolve(true);
    return this.#waiters.wait(signal);
  }

  ack(ids: readonly number[]): Promise<void> {
    for (const id of ids) {
      const size = this.#unacked.get(id);
      if (size === undefined) continue;
      this.#unacked.delete(id);
      this.#sizeBytes -= size;
    }
    return Promise.resolve();
  }

  stats(): QueueStats {
    return {
      sizeBytes: this.#sizeBytes,
      records: this.#unacked.size,
      unreadRecords: this.#unread.length - this.#readIndex,
      capacityBytes: this.#maxSizeBytes,
      fsyncs: 0,
    };
  }

  close(): Promise<void> {
    this.#state = 'closed';
    this.#waiters.notify(false);
    return Promise.resolve();
  }
}
