// Shared exporter config: the sending queue and retries. Sizes accept
// `512MiB` or a byte count, durations `200ms`, `24h` or a number of ms; both
// parse to numbers here. Defaults live here only.
import { z } from 'zod';
import { keysParsed } from '../../config/when-parsed.js';
import { positiveByteSize, positiveTimerDuration, timerDuration } from '../../shared/units.js';

const MIB = 1024 * 1024;

export const DEFAULT_SENDING_QUEUE = {
  enabled: true,
  storage: 'disk',
  max_size: 512 * MIB, // bytes
  on_full: 'drop',
  num_consumers: 2,
  max_batch_spans: 8192,
  max_batch_bytes: 8 * MIB, // bytes
  flush_timeout: 200, // ms
} as const satisfies SendingQueueConfig;

export const DEFAULT_RETRY_ON_FAILURE = {
  enabled: true,
  initial_interval: 1_000, // ms
  max_interval: 30_000, // ms
  max_age: 24 * 60 * 60 * 1_000, // ms, measured from enqueue
} as const satisfies RetryConfig;

const positiveInt = z.number().int().positive();

export const sendingQueueSchema = z
  .object({
    enabled: z.boolean().default(DEFAULT_SENDING_QUEUE.enabled),
    storage: z.enum(['disk', 'memory']).default(DEFAULT_SENDING_QUEUE.storage),
    max_size: positiveByteSize().default(DEFAULT_SENDING_QUEUE.max_size),
    on_full: z.enum(['drop', 'refuse']).default(DEFAULT_SENDING_QUEUE.on_full),
    num_consumers: positiveInt.default(DEFAULT_SENDING_QUEUE.num_consumers),
    max_batch_spans: positiveInt.default(DEFAULT_SENDING_QUEUE.max_batch_spans),
    // Left out, it is 8MiB or max_size, whichever is smaller: a small queue needs no batch size of its own.
    max_batch_bytes: positiveByteSize().optional(),
    flush_timeout: timerDuration().default(DEFAULT_SENDING_QUEUE.flush_timeout),
  })
  .strict()
  .refine((q) => q.max_batch_bytes === undefined || q.max_batch_bytes <= q.max_size, {
    message: 'max_batch_bytes must be <= max_size',
    path: ['max_batch_bytes'],
    // Beside the other keys' problems, not only once they are fixed.
    when: keysParsed('max_batch_bytes', 'max_size'),
  })
  .transform(({ max_batch_bytes, ...q }): SendingQueueConfig => ({
    ...q,
    max_batch_bytes: max_batch_bytes ?? Math.min(DEFAULT_SENDING_QUEUE.max_batch_bytes, q.max_size),
  }));

export const retryOnFailureSchema = z
  .object({
    enabled: z.boolean().default(DEFAULT_RETRY_ON_FAILURE.enabled),
    initial_interval: positiveTimerDuration().default(DEFAULT_RETRY_ON_FAILURE.initial_interval),
    max_interval: positiveTimerDuration().default(DEFAULT_RETRY_ON_FAILURE.max_interval),
    max_age: positiveTimerDuration().default(DEFAULT_RETRY_ON_FAILURE.max_age),
  })
  .strict()
  .refine((r) => r.max_interval >= r.initial_interval, {
    message: 'max_interval must be >= initial_interval',
    path: ['max_interval'],
    when: keysParsed('initial_interval', 'max_interval'),
  });

export interface SendingQueueConfig {
  readonly enabled: boolean;
  readonly storage: 'disk' | 'memory';
  readonly max_size: number;
  readonly on_full: 'drop' | 'refuse';
  readonly num_consumers: number;
  readonly max_batch_spans: number;
  readonly max_batch_bytes: number;
  readonly flush_timeout: number;
}

export interface RetryConfig {
  readonly enabled: boolean;
  readonly initial_interval: number;
  readonly max_interval: number;
  readonly max_age: number;
}

export interface QueuedSenderConfig {
  readonly sending_queue: SendingQueueConfig;
  readonly retry_on_failure: RetryConfig;
}

/** Spread into an exporter's config object: `z.object({ ...queuedSenderConfigShape, endpoint: ... })`. */
export const queuedSenderConfigShape = {
  sending_queue: sendingQueueSchema.default(createDefaultSendingQueueConfig),
  retry_on_failure: retryOnFailureSchema.default(createDefaultRetryConfig),
};

export const queuedSenderConfigSchema = z.object(queuedSenderConfigShape);

export function createDefaultSendingQueueConfig(): SendingQueueConfig {
  return { ...DEFAULT_SENDING_QUEUE };
}

export function createDefaultRetryConfig(): RetryConfig {
  return { ...DEFAULT_RETRY_ON_FAILURE };
}

export function createDefaultQueuedSenderConfig(): QueuedSenderConfig {
  return { sending_queue: createDefaultSendingQueueConfig(), retry_on_failure: createDefaultRetryConfig() };
}
