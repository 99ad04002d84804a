// Batching happens when reading from the queue: take what is there, then top
// the batch up for at most flush_timeout while it is below its limits.
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
  const deadline = Date.now() + limits.flushTimeoutMs;
  while (spans < limits.maxSpans && bytes < limits.maxBytes && !signal.aborted) {
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) break;
    if (!(await waitForUnreadUntil(queue, remainingMs, signal))) break;
    const more = await queue.read({ maxSpans: limits.maxSpans - spans, maxBytes: limits.maxBytes - bytes, strict: true });
    if (more.length === 0) break; // the next record does not fit: the batch is as full as it gets
    for (const record of more) {
      batch.push(record);
      spans += record.spans;
      bytes += record.data.byteLength;
    }
  }
  return batch;
}

async function waitForUnreadUntil(queue: Queue, ms: number, signal: AbortSignal): Promise<boolean> {
  const deadline = new Deadline(signal, ms);
  try {
    return await queue.waitForUnread(deadline.signal);
  } finally {
    deadline.end();
  }
}
