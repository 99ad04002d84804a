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

/** A drain's new settings, computed from its current definition, or the problems that refuse the change. */
export type DrainEdit = (current: DrainDefinition) => { readonly ok: true; readonly changes: DrainChanges } | { readonly ok: false; readonly problems: string[] };

export type DrainUpdate = { readonly ok: true; readonly state: DrainState } | { readonly ok: false; readonly problems: string[] };

export interface TestDeliveryResult {
  readonly ok: boolean;
  readonly status: number | null;
  readonly latencyMs: number;
  readonly error?: string;
}

export interface DrainsController {
  list(): DrainState[];
  get(id: string): DrainState | undefined;
  /** Rejects with DrainLimitError when MAX_DRAINS drains exist by the time the change runs. */
  create(changes: DrainChanges): Promise<DrainState>;
  /**
   * Applies `edit` to the drain as it is when the change runs, after every
   * change before it (on any instance): a partial update changes only what it
   * names. Rejects with DrainNotFoundError when the drain is gone by then.
   */
  update(id: string, edit: DrainEdit): Promise<DrainUpdate>;
  /** Rejects with DrainNotFoundError when the drain is gone by the time the change runs. */
  remove(id: string): Promise<void>;
  testDelivery(delivery: DrainDelivery): Promise<TestDeliveryResult>;
}

export const DRAINS_CONTROLLER = new ServiceKey<DrainsController>('drains-controller');
