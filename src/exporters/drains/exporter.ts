// The `drains` exporter: every enabled drain (from the YAML `drains:` list and
// from the drains API) as its own unit, fed the same batches. consume()
// resolves once every drain has queued its share. It also is the controller
// behind the drains API: it offers itself to the host at start, and keeps
// API drains in the host's drain store (a local file, or Redis shared by
// every instance, whose changes it applies as they are announced).
import { rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { DrainStore } from '../../cluster/drain-store.js';
import type { SharedState } from '../../cluster/state.js';
import type { CreateSettings, Exporter, Host } from '../../core/component.js';
import { ClusterUnavailableError, DrainLimitError, DrainNotFoundError, DrainsStoppingError, errorMessage, StorageWriteError } from '../../shared/errors.js';
import { hostService, provideService, SHUTDOWN_DEADLINE } from '../../core/host-services.js';
import type { ShutdownDeadline } from '../../core/shutdown-deadline.js';
import type { TraceBatch } from '../../otlp/batch.js';
import { encodeRequest } from '../../otlp/proto-codec.js';
import type { DrainsExporterConfig } from './config.js';
import { DRAINS_CONTROLLER, type DrainChanges, type DrainEdit, type DrainsController, type DrainState, type DrainUpdate, type TestDeliveryResult } from './controller.js';
import { parseStoredDrain } from './definition-schema.js';
import { definitionFromConfig, newDrainId, sameDefinition, type DrainDefinition, type DrainDelivery } from './definition.js';
import type { DeliveryStats } from './delivery-stats.js';
import { DRAIN_MEMORY, DrainMemory } from './drain-memory.js';
import { createTransport } from './drain-sender.js';
import { drainDirectory, drainLabel, DrainUnit } from './drain-unit.js';
import { MAX_DRAINS } from './limits.js';
import { sampleTrace } from './sample-trace.js';

/** In-flight deliveries of a drain being removed or replaced get this long (ms); at shutdown, what is left of service.shutdown_grace. */
const SHUTDOWN_GRACE_MS = 5_000;
/** Times an update is made again over a version another instance wrote meanwhile before it gives up. */
const MAX_EDIT_ATTEMPTS = 3;

export class DrainsExporter implements Exporter, DrainsController {
  readonly #settings: CreateSettings;
  readonly #config: DrainsExporterConfig;
  readonly #logger: Logger;
  readonly #definitions = new Map<string, DrainDefinition>();
  #memory = new DrainMemory();
  readonly #units = new Map<string, DrainUnit>();
  readonly #startErrors = new Map<string, string>();
  #store: DrainStore<DrainDefinition> | undefined;
  #shared: SharedState | undefined;
  #withdraw: (() => void) | undefined;
  #deadline: ShutdownDeadline | undefined;
  /** A resync is queued and has not started: further announcements fold into it. */
  #resyncQueued = false;
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
    this.#deadline = hostService(host, SHUTDOWN_DEADLINE);
    this.#shared = host.state;
    this.#memory = hostService(host, DRAIN_MEMORY) ?? this.#memory;
    this.#store = this.#shared.drainStore(parseStoredDrain);
    const loadedAt = Date.now();
    for (const drain of this.#config.drains) {
      const definition = this.#memory.configDrain(definitionFromConfig(drain, loadedAt));
      this.#definitions.set(definition.id, definition);
    }
    for (const drain of await this.#store.load()) {
      // A config drain of the same id wins: the file says how it runs.
      if (!this.#definitions.has(drain.id)) this.#definitions.set(drain.id, drain);
    }
    // A drain gone from the config since the last start keeps its queue on disk, but not its series.
    for (const id of this.#memory.retain(new Set(this.#definitions.keys()))) await this.#forgetSeries(id);
    // Config drains must start (a bad YAML drain is a start error); API drains are reported per drain.
    for (const definition of this.#definitions.values()) {
      if (definition.source === 'config') await this.#startUnit(definition);
    }
    await Promise.all([...this.#definitions.values()].filter((d) => d.source === 'api').map((d) => this.#startUnitReporting(d)));
    this.#withdraw = provideService(host, DRAINS_CONTROLLER, this);
    this.#store.watch(() => this.#scheduleResync());
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
    return this.#change(async () => {
      // Counted in turn, so creates sent at once cannot pass the limit together; a shared
      // store counts again as it adds, so creates on several instances cannot either.
      if (this.#definitions.size >= MAX_DRAINS) throw drainLimitReached();
      const now = Date.now();
      const definition: DrainDefinition = { id: newDrainId(), source: 'api', createdAt: now, updatedAt: now, ...changes };
      const configDrains = this.#config.drains.length;
      if (!(await this.#requiredStore().put(definition, MAX_DRAINS - configDrains))) throw drainLimitReached();
      this.#definitions.set(definition.id, definition);
      await this.#startUnitReporting(definition);
      return this.#required(definition.id);
    });
  }

  update(id: string, edit: DrainEdit): Promise<DrainUpdate> {
    return this.#change(async () => {
      for (let attempt = 1; ; attempt++) {
        const previous = this.#definitions.get(id);
        if (previous === undefined) throw new DrainNotFoundError(id);
        const edited = edit(previous);
        if (!edited.ok) return edited;
        const definition: DrainDefinition = { ...previous, ...edited.changes, updatedAt: Math.max(Date.now(), previous.updatedAt + 1) };
        const outcome = await this.#requiredStore().update(definition, previous.updatedAt);
        if (outcome === 'applied') {
          await this.#apply(definition);
          return { ok: true, state: this.#required(id) };
        }
        if (outcome === 'missing') {
          await this.#forget(id);
          throw new DrainNotFoundError(id);
        }
        // Another instance changed the drain after this one last read it: edit that version instead.
        if (attempt === MAX_EDIT_ATTEMPTS) throw new ClusterUnavailableError(`drain ${id} kept changing on other instances while this change was made; nothing was changed, try again`);
        await this.#resync();
      }
    });
  }

  remove(id: string): Promise<void> {
    return this.#change(async () => {
      if (!this.#definitions.has(id)) throw new DrainNotFoundError(id);
      const outcome = await this.#requiredStore().remove(id);
      await this.#forget(id);
      if (outcome === 'missing') throw new DrainNotFoundError(id);
    });
  }

  /** Applies a definition changed here or on another instance. */
  async #apply(definition: DrainDefinition): Promise<void> {
    const id = definition.id;
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
    // Listed once it runs: a drain the API shows is one that takes data.
    this.#definitions.set(id, definition);
  }

  async #forget(id: string): Promise<void> {
    this.#definitions.delete(id);
    this.#memory.forget(id);
    this.#startErrors.delete(id);
    await this.#stopUnit(id);
    // A deleted drain's queued data has nowhere to go, and its series nothing more to count.
    await rm(drainDirectory(this.#storageDirectory, id), { recursive: true, force: true });
    await this.#forgetSeries(id);
  }

  async #forgetSeries(id: string): Promise<void> {
    const label = drainLabel(id);
    await this.#settings.telemetry.forgetSeries((value) => value === label || value.startsWith(`${label}/`));
  }

  #scheduleResync(): void {
    if (this.#resyncQueued || this.#shutdown !== undefined) return;
    this.#resyncQueued = true;
    void this.#serially(async () => {
      this.#resyncQueued = false;
      if (this.#shutdown !== undefined) return;
      await this.#resync();
    }).catch((err: unknown) => this.#logger.error({ err: errorMessage(err) }, 'shared drains could not be applied'));
  }

  /** Brings API drains in line with the store: another instance created, changed or deleted some. */
  async #resync(): Promise<void> {
    const shared = new Map((await this.#requiredStore().load()).map((drain) => [drain.id, drain] as const));
    for (const drain of this.#apiDrains()) {
      if (!shared.has(drain.id)) {
        this.#logger.info({ drain: drain.id }, 'drain deleted on another instance');
        await this.#forget(drain.id);
      }
    }
    for (const drain of shared.values()) {
      const known = this.#definitions.get(drain.id);
      if (known?.source === 'config') continue;
      if (known !== undefined && sameDefinition(known, drain)) continue;
      this.#logger.info({ drain: drain.id }, known === undefined ? 'drain created on another instance' : 'drain changed on another instance');
      await this.#apply(drain);
    }
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
      // The transport times the request out itself, after the drains `timeout`, and says so in its error.
      const outcome = await transport.send([encodeRequest(sampleTrace())], 1, new AbortController().signal);
      const latencyMs = Math.round(performance.now() - started);
      // A partial success that rejects the one span delivered nothing (one that rejects none is the OTLP spec's warning).
      if (outcome.status === 'success' && outcome.rejectedSpans > 0) {
        return { ok: false, status: outcome.httpStatus, latencyMs, error: `the destination rejected the test span: ${outcome.rejectedMessage ?? 'no reason given'}` };
      }
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
    return this.#memory.stats(id);
  }

  #apiDrains(): DrainDefinition[] {
    return [...this.#definitions.values()].filter((drain) => drain.source === 'api');
  }

  #requiredShared(): SharedState {
    if (this.#shared === undefined) throw new Error('the drains exporter is not started');
    return this.#shared;
  }

  #requiredStore(): DrainStore<DrainDefinition> {
    if (this.#store === undefined) throw new Error('the drains exporter is not started');
    return this.#store;
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
      state: this.#requiredShared(),
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
    this.#withdraw?.();
    this.#withdraw = undefined;
    // A change already running finishes against the open store; queued and later ones are refused (#change).
    await this.#changes;
    await this.#store?.close();
    const units = [...this.#units.values()];
    this.#units.clear();
    const graceMs = this.#deadline?.remainingMs() ?? SHUTDOWN_GRACE_MS;
    await Promise.all(units.map((unit) => unit.shutdown(graceMs)));
  }

  /**
   * An API change, in turn. Refused once the exporter is stopping: a reload's
   * next exporter reads the store when it starts, and a change written after
   * that by this one would be lost to it or overwrite what it wrote.
   */
  #change<T>(task: () => Promise<T>): Promise<T> {
    const refuse = () => new DrainsStoppingError('the drains exporter is stopping (the config is being reloaded or the daemon is stopping); nothing was changed, try again');
    if (this.#shutdown !== undefined || !this.#started) return Promise.reject(refuse());
    const run = this.#serially(() => (this.#shutdown === undefined ? task() : Promise.reject(refuse())));
    // The caller is told; the operator, who has to make room, is told here.
    run.catch((err: unknown) => {
      if (err instanceof StorageWriteError) this.#logger.error({ err: err.message }, 'a drain change could not be stored');
    });
    return run;
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#changes.then(task, task);
    this.#changes = run.catch(() => undefined);
    return run;
  }
}

function drainLimitReached(): DrainLimitError {
  return new DrainLimitError(`drains: at most ${MAX_DRAINS} drains may exist; delete one first`);
}
