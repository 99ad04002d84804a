// The queue interface shared by the durable (disk) and in-memory queues.

export interface QueueRecord {
  /** Sequence number, unique within the queue; pass it back to ack(). */
  readonly id: number;
  /** The opaque record bytes (an encoded ExportTraceServiceRequest). */
  readonly data: Uint8Array;
  readonly spans: number;
  /** When the record was appended (ms since the epoch), for max_age. */
  readonly enqueuedAtMs: number;
}

export interface ReadLimits {
  /** Stop before a record that would take the batch past this many spans. */
  readonly maxSpans: number;
  /** Stop before a record that would take the payload bytes past this. */
  readonly maxBytes: number;
  /** Never exceed the limits, not even with the first record (for topping up a batch). */
  readonly strict?: boolean;
}

export interface QueueStats {
  /** Bytes the queue holds against its capacity (on disk for the disk queue). */
  readonly sizeBytes: number;
  /** Records appended and not yet acknowledged. */
  readonly records: number;
  /** Records appended and not yet handed out by read(). */
  readonly unreadRecords: number;
  readonly capacityBytes: number;
  /** Durable writes made for appends (one O_DSYNC write, or write + fsync; group commit shares one per batch). */
  readonly fsyncs: number;
}

/**
 * A FIFO of records with a read cursor separate from the acknowledged
 * position: read() hands each record out once per open(), ack() marks it
 * delivered, in any order. What is unacknowledged at close is handed out
 * again after the next open() (at-least-once).
 */
export interface Queue {
  readonly name: string;
  /** Idempotent. Recovers what a previous run left behind. */
  open(): Promise<void>;
  /** Resolves once the record is durable; rejects with QueueFullError when full. */
  append(data: Uint8Array, spans: number): Promise<void>;
  /** The next unread records within limits (at least one if any, unless strict), or [] if none. */
  read(limits: ReadLimits): Promise<QueueRecord[]>;
  /** Resolves true once unread records exist, false if the signal aborts or the queue closes. */
  waitForUnread(signal: AbortSignal): Promise<boolean>;
  ack(ids: readonly number[]): Promise<void>;
  stats(): QueueStats;
  /** Idempotent. Waits for pending appends; unacknowledged records stay. */
  close(): Promise<void>;
}
