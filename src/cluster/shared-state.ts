// The host service through which components get state that may be shared
// across instances. Without `service.cluster` every store is local; with it,
// the Redis implementations. Components ask for it at start(host).
import type { Logger } from 'pino';
import type { Host } from '../core/component.js';
import { hostService, ServiceKey } from '../core/host-services.js';
import type { DecisionStore } from './decision-store.js';
import type { DrainParser, DrainStore, StoredDrain } from './drain-store.js';
import { LocalDecisionStore } from './local/decision-store.js';
import { LocalDrainStore } from './local/drain-store.js';

export interface DecisionStoreOptions {
  /** Stable across instances (a drain id), so every instance reads the same decisions. */
  readonly name: string;
  /** Where decisions made with a root are kept across restarts; undefined: memory only. */
  readonly directory: string | undefined;
  readonly logger: Logger;
}

export interface SharedState {
  readonly mode: 'local' | 'redis';
  drainStore<D extends StoredDrain>(storageDirectory: string, parse: DrainParser<D>): DrainStore<D>;
  decisionStore(options: DecisionStoreOptions): DecisionStore;
}

export const SHARED_STATE = new ServiceKey<SharedState>('shared-state');

export const localSharedState: SharedState = {
  mode: 'local',
  drainStore(storageDirectory, parse) {
    return new LocalDrainStore(storageDirectory, parse);
  },
  decisionStore(options) {
    return new LocalDecisionStore({ directory: options.directory, logger: options.logger });
  },
};

/** The host's shared state, or local state when the host offers none (tests, one instance). */
export function sharedStateOf(host: Host): SharedState {
  return hostService(host, SHARED_STATE) ?? localSharedState;
}
