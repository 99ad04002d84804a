// The `drains` exporter: every enabled drain (from the YAML `drains:` list and
// from the drains API) as its own unit, fed the same batches. consume()
// resolves once every drain has queued its share. It also is the controller
// behind the drains API, mounted on the admin endpoint at start.
import { rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import { mountDrainsApi } from '../../admin/drains/routes.js';
import { adminRoutesOf } from '../../admin/routes.js';
import type { CreateSettings, Exporter, Host } from '../../core/component.js';
import { errorMessage } from '../../core/errors.js';
import type { TraceBatch } from '../../otlp/batch.js';
import { encodeRequest } from '../../otlp/proto-codec.js';
import type { DrainsExporterConfig } from './config.js';
import { definitionFromConfig, newDrainId, type DrainDefinition, type DrainDelivery } from './definition.js';
import { DeliveryStats } from './delivery-stats.js';
import { createTransport } from './drain-sender.js';
import { drainDirectory, DrainUnit } from './drain-unit.js';
import { sampleTrace } from './sample-trace.js';
import { DrainStore } from './store.js';

const SHUTDOWN_GRACE_MS = 5_000;

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

/** What the drains API needs from the running exporter. */
export interface DrainsController {
  list(): DrainState[];
  get(id: string): DrainState | undefined;
  create(changes: DrainChanges): Promise<DrainState>;
  update(id: string, changes: DrainChanges): Promise<DrainState>;
  remove(id: string): Promise<void>;
  testDelivery(delivery: DrainDelivery): Promise<TestDeliveryResult>;
}

export class DrainsExporter implements Exporter, DrainsController {
  readonly #settings: CreateSettings;
  readonly #config: DrainsExporterConfig;
  readonly #logger: Logger;
  readonly #definitions = new Map<string, DrainDefinition>();
  readonly #stats = new Map<string, DeliveryStats>();
  readonly #units = new Map<string, DrainUnit>();
  readonly #startErrors = new Map<string, string>();
  #store: DrainStore | undefined;
  #unmount: (() => void) | undefined;
  #storageDirectory: string;
  // API changes apply one at a time, in order.
  #changes: Promise<unknown> = Promise.resolve();
  #started = false;
  #shutdown: Promise<void> | undefined;

  constructor(settings: CreateSettings, config: DrainsExporterConfig) {
    this.#settings = settings;
    this.#config = config;
    this.#logger = settings.logger;
    this.#storageDirectory = settings.storageDirectory;
  }

  async start(host: Host): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#storageDirectory = host.storageDirectory;
    this.#store = new DrainStore(this.#storageDirectory);
    const loadedAt = Date.now();
    for (const drain of this.#config.drains) this.#definitions.set(definitionFromConfig(drain, loadedAt).id, definitionFromConfig(drain, loadedAt));
    for (const drain of await this.#store.load()) this.#definitions.set(drain.id, drain);
    // Config drains must start (a bad YAML drain is a start error); API drains are reported per drain.
    for (const definition of this.#definitions.values()) {
      if (definition.source === 'config') await this.#startUnit(definition);
    }
    await Promise.all([...this.#definitions.values()].filter((d) => d.source === 'api').map((d) => this.#startUnitReporting(d)));
    const routes = adminRoutesOf(host);
    if (routes !== undefined) this.#unmount = mountDrainsApi(routes, this);
  }

  async consume(batch: TraceBatch): Promise<void> {
    if (this.#units.size === 0) return;
    const index = batch.wire();
    await Promise.all([...this.#units.values()].map((unit) => unit.consume(index)));
  }

  shutdown(): Promise<void> {
    this.#shutdown ??= this.#stopAll();
    return this.#shutdown;
  }

  list(): DrainState[] {
    return [...this.#definitions.keys()].map((id) => this.#state(id)).filter((state): state is DrainState => state !== undefined);
  }

  get(id: string): DrainState | undefined {
    return this.#state(id);
  }

  create(changes: DrainChanges): Promise<DrainState> {
    return this.#serially(async () => {
      const now = Date.now();
      const definition: DrainDefinition = { id: newDrainId(), source: 'api', createdAt: now, updatedAt: now, ...changes };
      await this.#persist([...this.#apiDrains(), definition]);
      this.#definitions.set(definition.id, definition);
      await this.#startUnitReporting(definition);
      return this.#required(definition.id);
    });
  }

  update(id: string, changes: DrainChanges): Promise<DrainState> {
    return this.#serially(async () => {
      const previous = this.#definitions.get(id);
      if (previous === undefined) throw new Error(`drain ${id} does not exist`);
      const definition: DrainDefinition = { ...previous, ...changes, updatedAt: Math.max(Date.now(), previous.updatedAt + 1) };
      await this.#persist(this.#apiDrains().map((drain) => (drain.id === id ? definition : drain)));
      this.#definitions.set(id, definition);
      const unit = this.#units.get(id);
      if (!definition.enabled) {
        await this.#stopUnit(id);
      } else if (unit !== undefined) {
        try {
          unit.update(definition);
          this.#startErrors.delete(id);
        } catch (err) {
          this.#startErrors.set(id, errorMessage(err));
        }
      } else {
        await this.#startUnitReporting(definition);
      }
      return this.#required(id);
    });
  }

  remove(id: string): Promise<void> {
    return this.#serially(async () => {
      await this.#persist(this.#apiDrains().filter((drain) => drain.id !== id));
      this.#definitions.delete(id);
      this.#stats.delete(id);
      this.#startErrors.delete(id);
      await this.#stopUnit(id);
      // A deleted drain's queued data has nowhere to go.
      await rm(drainDirectory(this.#storageDirectory, id), { recursive: true, force: true });
    });
  }

  async testDelivery(delivery: DrainDelivery): Promise<TestDeliveryResult> {
    const probe: DrainDefinition = { id: 'drn_test', name: 'test', source: 'api', enabled: true, createdAt: 0, updatedAt: 0, delivery, sampling: [] };
    const started = performance.now();
    let transport;
    try {
      transport = createTransport(probe, this.#config.timeout, this.#userAgent());
    } catch (err) {
      return { ok: false, status: null, latencyMs: 0, error: errorMessage(err) };
    }
    try {
      const outcome = await transport.send([encodeRequest(sampleTrace())], 1, AbortSignal.timeout(this.#config.timeout));
      const latencyMs = Math.round(performance.now() - started);
      if (outcome.status === 'success') return { ok: true, status: outcome.httpStatus, latencyMs };
      return { ok: false, status: outcome.httpStatus, latencyMs, error: outcome.error };
    } catch (err) {
      return { ok: false, status: null, latencyMs: Math.round(performance.now() - started), error: errorMessage(err) };
    } finally {
      await transport.close();
    }
  }

  #userAgent(): string {
    return `sluice/${this.#settings.version}`;
  }

  #state(id: string): DrainState | undefined {
    const definition = this.#definitions.get(id);
    if (definition === undefined) return undefined;
    return { definition, stats: this.#statsOf(id), startError: this.#startErrors.get(id) };
  }

  #required(id: string): DrainState {
    const state = this.#state(id);
    if (state === undefined) throw new Error(`drain ${id} vanished`);
    return state;
  }

  #statsOf(id: string): DeliveryStats {
    let stats = this.#stats.get(id);
    if (stats === undefined) {
      stats = new DeliveryStats();
      this.#stats.set(id, stats);
    }
    return stats;
  }

  #apiDrains(): DrainDefinition[] {
    return [...this.#definitions.values()].filter((drain) => drain.source === 'api');
  }

  async #persist(drains: readonly DrainDefinition[]): Promise<void> {
    if (this.#store === undefined) throw new Error('the drains exporter is not started');
    await this.#store.save(drains);
  }

  async #startUnit(definition: DrainDefinition): Promise<void> {
    if (!definition.enabled || this.#shutdown !== undefined) return;
    const unit = new DrainUnit(definition, {
      storageDirectory: this.#storageDirectory,
      config: this.#config,
      telemetry: this.#settings.telemetry,
      stats: this.#statsOf(definition.id),
      logger: this.#logger,
      userAgent: this.#userAgent(),
    });
    await unit.start();
    this.#units.set(definition.id, unit);
    this.#startErrors.delete(definition.id);
  }

  async #startUnitReporting(definition: DrainDefinition): Promise<void> {
    try {
      await this.#startUnit(definition);
    } catch (err) {
      this.#startErrors.set(definition.id, errorMessage(err));
      this.#logger.error({ drain: definition.id, err: errorMessage(err) }, 'drain failed to start');
    }
  }

  async #stopUnit(id: string): Promise<void> {
    const unit = this.#units.get(id);
    if (unit === undefined) return;
    this.#units.delete(id);
    await unit.shutdown(SHUTDOWN_GRACE_MS);
  }

  async #stopAll(): Promise<void> {
    this.#unmount?.();
    this.#unmount = undefined;
    await this.#changes;
    const units = [...this.#units.values()];
    this.#units.clear();
    await Promise.all(units.map((unit) => unit.shutdown(SHUTDOWN_GRACE_MS)));
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#changes.then(task, task);
    this.#changes = run.catch(() => undefined);
    return run;
  }
}
