// The one place that chooses between local and Redis-backed shared state. It
// sits above cluster/local and cluster/redis (its own folder, so neither
// cluster/*.ts nor they import it); only the service imports it.
import type { Logger } from 'pino';
import { LocalState } from '../local/state.js';
import type { RedisConnection } from '../redis/connection.js';
import { RedisState } from '../redis/state.js';
import type { SharedState } from '../state.js';

export interface CreateStateOptions {
  /** service.storage.directory (absolute, writable). */
  readonly storageDirectory: string;
  /** service.usage.retention in ms. */
  readonly retentionMs: number;
  readonly logger: Logger;
}

/** LocalState alone without a Redis connection; RedisState over it with one. */
export function createSharedState(redis: RedisConnection | undefined, options: CreateStateOptions): SharedState {
  const { storageDirectory, retentionMs, logger } = options;
  const local = new LocalState({ storageDirectory, retentionMs, logger });
  return redis === undefined ? local : new RedisState(redis, local, { logger, retentionMs });
}
