// The queue an exporter or drain gets from its sending_queue config.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DiskQueue, MemoryQueue, type Queue } from '../../queue/index.js';
import type { SendingQueueConfig } from './config.js';

export const QUEUES_FOLDER = 'queues';

/** `<storage>/queues/<id>`, with the id escaped so `otlphttp/acme` or `..` stay one folder. */
export function queueDirectory(storageDirectory: string, id: string): string {
  const safe = id.replace(/[^A-Za-z0-9_-]/g, function escape(c) {
    return c === '.' ? '%2E' : encodeURIComponent(c);
  });
  return join(storageDirectory, QUEUES_FOLDER, safe);
}

export function createSendingQueue(options: {
  readonly id: string;
  readonly storageDirectory: string;
  readonly config: SendingQueueConfig;
  readonly logger: Logger;
}): Queue {
  const { id, config } = options;
  if (config.storage === 'memory') return new MemoryQueue({ name: id, maxSizeBytes: config.max_size });
  return new DiskQueue({ name: id, directory: queueDirectory(options.storageDirectory, id), maxSizeBytes: config.max_size, logger: options.logger });
}
