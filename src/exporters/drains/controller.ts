// What the drains API needs from the running `drains` exporter. The exporter
// offers itself under DRAINS_CONTROLLER at start; the admin endpoint looks
// it up per request, so the exporter never imports the admin layer.
import { ServiceKey } from '../../core/host-services.js';
import type { DeliveryStats } from './delivery-stats.js';
import type { DrainDefinition, DrainDelivery } from './definition.js';

export interface DrainState {
  readonly definition: DrainDefinition;
  readonly stats: DeliveryStats;
  /** Why the drain is not running although enabled (bad CA file, ...). */
  readonly startError: string | undefined;
}

export interface DrainChanges {
  readonly name: string;
  readonly enabled: boolean;
  readonly delivery: DrainDelivery;
  readonly sampling: DrainDefinition['sampling'];
}

export interface TestDeliveryResult {
  readonly ok: boolean;
  readonly status: number | null;
  readonly latencyMs: number;
  readonly error?: string;
}

export interface DrainsController {
  list(): DrainState[];
  get(id: string): DrainState | undefined;
  create(changes: DrainChanges): Promise<DrainState>;
  update(id: string, changes: DrainChanges): Promise<DrainState>;
  remove(id: string): Promise<void>;
  testDelivery(delivery: DrainDelivery): Promise<TestDeliveryResult>;
}

export const DRAINS_CONTROLLER = new ServiceKey<DrainsController>('drains-controller');
