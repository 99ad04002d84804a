export type { Queue, QueueRecord, QueueStats, ReadLimits } from './types.js';
export { DiskQueue, DEFAULT_SEGMENT_BYTES, type DiskQueueOptions } from './disk-queue.js';
export { MemoryQueue, type MemoryQueueOptions } from './memory-queue.js';
export { QueueClosedError, QueueDirectoryError, QueueFullError, QueueLockedError, QueueWriteError, RecordTooLargeError } from './errors.js';
export { FRAME_OVERHEAD_BYTES } from './framing.js';
export { queueMetrics, updateQueueGauges, type QueueMetrics } from './metrics.js';
export { undeliveredBytes, undeliveredFolders, type FolderBacklog } from './segment-files.js';
