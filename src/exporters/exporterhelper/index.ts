export {
  createDefaultQueuedSenderConfig,
  createDefaultRetryConfig,
  createDefaultSendingQueueConfig,
  DEFAULT_RETRY_ON_FAILURE,
  DEFAULT_SENDING_QUEUE,
  queuedSenderConfigSchema,
  queuedSenderConfigShape,
  retryOnFailureSchema,
  sendingQueueSchema,
  type QueuedSenderConfig,
  type RetryConfig,
  type SendingQueueConfig,
} from './config.js';
export { BACKOFF_MULTIPLIER, JITTER, MIN_RETRY_DELAY_MS, retryDelayMs, sleep, type BackoffPolicy } from './backoff.js';
export { createSendingQueue, queueDirectory } from './create-queue.js';
export { findOrphanedQueues, readsDiskQueue, type OrphanedQueue } from './orphaned-queues.js';
export {
  createQueuedSender,
  DEFAULT_SHUTDOWN_GRACE_MS,
  DROP_REASONS,
  FULL_QUEUE_RETRY_AFTER_MS,
  type DropReason,
  type QueuedSender,
  type QueuedSenderOptions,
} from './queued-sender.js';
export type { SendResult, Transport } from './transport.js';
