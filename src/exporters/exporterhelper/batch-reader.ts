// Batching happens when reading from the queue: take what is there, then top
// the batch up for at most flush_timeout while it is below its limits. With
// several workers, a record another worker took first is not a full batch:
// this one keeps waiting for the next record until its flush_timeout.
import type { Queue, QueueRecord } from '../../queue/index.js';
import { Deadline } from '../../shared/abort-callbacks.js';

export interface BatchLimits {
  readonly maxSpans: number;
  readonly maxBytes: number;
  readonly flushTimeoutMs: number;
}

/** Resolves [] if nothing is unread. Stops waiting early when `signal` aborts. */
export async function collectBatch(queue: Queue, limits: BatchLimits, signal: AbortSignal): Promise<QueueRecord[]> {
  const batch = await queue.read({ maxSpans: limits.maxSpans, maxBytes: limits.maxBytes });
  if (batch.length === 0) return batch;
  let spans = 0;
  let bytes = 0;
  for (const record of batch) {
    spans += record.spans;
    bytes += record.data.byteLength;
  }
  // One deadline for the whole batch: it ends the top-up at flush_timeout, or when `signal` aborts.
  const deadline = new Deadline(signal, limits.flushTimeoutMs);
  try {
    while (spans < limits.maxSpans && bytes < limits.maxBytes && !deadline.signal.aborted) {
      if (!(await queue.waitForUnread(deadline.signal))) break;
      const more = await queue.read({ maxSpans: limits.maxSpans - spans, maxBytes: limits.maxBytes - bytes, strict: true });
      if (more.length === 0) {
        if (queue.stats().unreadRecords > 0) break; // the next record does not fit: the batch is as full as it gets
        continue; // another worker took what arrived
      }
      for (const record of more) {
        batch.push(record);
        spans += record.spans;
        bytes += record.data.byteLength;
      }
    }
  } finally {
    deadline.end();
  }
  return batch;
}
