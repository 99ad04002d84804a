// A Host for components started by tests outside a Service: local shared
// state under the given storage directory, no admin key unless one is given.
import type { Logger } from 'pino';
import { LocalState } from '../../src/cluster/local/state.js';
import type { Host } from '../../src/core/component.js';
import type { Telemetry } from '../../src/shared/telemetry.js';

const DAY_MS = 86_400_000;

export function testHost(options: { logger: Logger; telemetry: Telemetry; storageDirectory: string; version?: string; adminApiKey?: string; retentionMs?: number }): Host {
  return {
    logger: options.logger,
    telemetry: options.telemetry,
    storageDirectory: options.storageDirectory,
    version: options.version ?? '0.0.0-test',
    state: new LocalState({ storageDirectory: options.storageDirectory, retentionMs: options.retentionMs ?? 30 * DAY_MS, logger: options.logger }),
    adminApiKey: () => options.adminApiKey,
  };
}
