// The one place that chooses between local and Redis-backed shared state. It
// sits above cluster/local and cluster/redis (its own folder, so neither
// cluster/*.ts nor they import it); only the service imports it.
import type { Logger } from 'pino';
import { LocalState, type MemoryDecisions } from '../local/state.js';
import type { RedisConnection } from '../redis/connection.js';
import { RedisState } from '../redis/state.js';
import type { SharedState } from '../state.js';

export interface CreateStateOptions {
  /** service.storage.directory (absolute, writable). */
  readonly storageDirectory: string;
  /** service.usage.retention in ms. */
  readonly retentionMs: number;
  readonly logger: Logger;
  /** The sampling processors' decisions, which the service carries into every state it opens. */
  readonly memoryDecisions?: MemoryDecisions;
}

// The service holds one for its life, through this folder as it holds everything of cluster/.
export { MemoryDecisions } from '../local/state.js';

/** LocalState alone without a Redis connection; RedisState over it with one. */
export function createSharedState(redis: RedisConnection | undefined, options: CreateStateOptions): SharedState {
  const local = new LocalState(options);
  return redis === undefined ? local : new RedisState(redis, local, { logger: options.logger, retentionMs: options.retentionMs });
}
