// The running daemon: storage, admin endpoint and the component graph, with
// reload. A reload validates first and keeps the running graph when the new
// config is invalid or fails to start. Stopping a graph (shutdown or reload)
// is bounded by service.shutdown_grace: its listeners stop accepting at once,
// and whatever connection is still open when the grace is over is destroyed.
import type { Logger } from 'pino';
import type { ValidatedConfig } from './config/validate.js';
import { UNSTAMPED_WARNING } from './config/platform-check.js';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { mountClusterApi } from './admin/cluster.js';
import { drainsControllerOn, mountDrainsApi } from './admin/drains/routes.js';
import { DRAINS_CONTROLLER } from './exporters/drains/controller.js';
import { DRAIN_MEMORY, DrainMemory } from './exporters/drains/drain-memory.js';
import { findOrphanedDrains } from './exporters/drains/orphaned-drains.js';
import { findOrphanedQueues, readsDiskQueue } from './exporters/exporterhelper/index.js';
import { AdminServer } from './admin/server.js';
import { attachAdminRoutes } from './admin/routes.js';
import { Cluster, connectionIdentity, newInstanceId } from './cluster/factory/cluster.js';
import { createSharedState, MemoryDecisions } from './cluster/factory/create-state.js';
import type { CarriedWindows } from './cluster/rate-limiter.js';
import type { SharedState } from './cluster/state.js';
import { mountConsole } from './admin/console/serve.js';
import { StatsSampler } from './admin/stats/sampler.js';
import { mountStatsApi } from './admin/stats/routes.js';
import type { Host } from './core/component.js';
import { BOUND_PORTS, hostService, LISTENER_GROUP, provideService, SHUTDOWN_DEADLINE } from './core/host-services.js';
import { ConfigError, errorMessage } from './shared/errors.js';
import { Graph } from './core/graph.js';
import { forgetRemovedSeries } from './core/removed-series.js';
import { formatEndpoint, listenEndpoint } from './core/listener/endpoint.js';
import { PortKeeper } from './core/listener/bound-ports.js';
import { ListenerGroup } from './core/listener/group.js';
import { ShutdownDeadline } from './core/shutdown-deadline.js';
import { ensureStorageDirectory, lockStorageDirectory } from './core/storage.js';
import type { DirectoryLock } from './queue/directory-lock.js';
import { Telemetry } from './shared/telemetry.js';

/**
 * After the grace period, forced closes and the last flushes get this long
 * before shutdown() resolves anyway (ms): acknowledged data is on disk
 * already, so nothing acknowledged is lost by not waiting longer.
 */
const AFTER_GRACE_MS = 800;

interface WaitingReload {
  /** The config loader of the latest call: the file is read when the reload begins. */
  load: () => ValidatedConfig | Promise<ValidatedConfig>;
  applied: Promise<boolean>;
}

export interface ServiceOptions {
  readonly logger: Logger;
  readonly version: string;
  readonly telemetry?: Telemetry;
}

export class Service {
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  readonly admin: AdminServer;
  readonly stats: StatsSampler;
  readonly #version: string;
  #config: ValidatedConfig | undefined;
  #graph: Graph | undefined;
  #host: Host | undefined;
  /** The config being started: its shutdown_grace bounds a stop that comes before it runs. */
  #starting: ValidatedConfig | undefined;
  /** Drain counters and config drains' times, kept across reloads. */
  readonly #drainMemory = new DrainMemory();
  #cluster: Cluster | undefined;
  /** Without service.cluster.instance_id, one random id for the process's life (reloads keep it). */
  readonly #defaultInstanceId = newInstanceId();
  /** When this process's service was made: GET /v1/cluster's startedAt, which a reload that reopens the cluster keeps. */
  readonly #startedAt = Date.now();
  #listeners: ListenerGroup | undefined;
  /** The receivers' bound ports: a reload hands them from the old listeners to the new ones. */
  readonly #ports = new PortKeeper();
  #deadline: ShutdownDeadline | undefined;
  /** Opened with #cluster, on its connection (the storage directory never changes: #storageMove). */
  #state: SharedState | undefined;
  /** The sampling processors' trace decisions, kept across reloads, one that reopens the shared state included. */
  readonly #memoryDecisions = new MemoryDecisions();
  /** The storage directory this process holds, from the first start to the end of the shutdown. */
  #storage: { readonly directory: string; readonly lock: DirectoryLock } | undefined;
  #stopping = false;
  #shutdown: Promise<void> | undefined;
  // Starts and reloads run one at a time, in order.
  #queue: Promise<unknown> = Promise.resolve();
  /** The reload queued behind the running start or reload, not begun yet. */
  #waitingReload: WaitingReload | undefined;

  constructor(options: ServiceOptions) {
    this.logger = options.logger;
    this.#version = options.version;
    this.telemetry = options.telemetry ?? new Telemetry();
    this.admin = new AdminServer({
      telemetry: this.telemetry,
      logger: this.logger.child({ component: 'admin' }),
      isReady: () => this.ready,
      apiKey: () => this.#config?.service.admin.api_key,
    });
    // Host-level APIs: each finds what it serves in the running graph per request.
    mountDrainsApi(this.admin, drainsControllerOn(() => this.#host, () => !this.ready));
    mountClusterApi(this.admin, () => this.#cluster?.status());
    this.stats = new StatsSampler({ registry: this.telemetry.registry });
    mountStatsApi(this.admin, this.stats, { config: () => this.#config, state: () => this.#state });
    mountConsole(this.admin);
  }

  /** True once every component has started, false while reloading or stopping. */
  get ready(): boolean {
    return !this.#stopping && this.#graph?.started === true;
  }

  /** The config the running graph was built from. */
  get config(): ValidatedConfig | undefined {
    return this.#config;
  }

  start(config: ValidatedConfig): Promise<void> {
    this.#starting = config;
    return this.#serially(async () => {
      if (this.#stopping) throw new Error('the service is shutting down');
      try {
        await this.#apply(config);
        this.stats.start();
      } catch (err) {
        this.#ports.closeAll();
        await this.admin.close();
        throw err;
      }
      // The bound address: with port 0 in the endpoint, the port the OS chose.
      const admin = this.admin.address();
      this.logger.info({ pipelines: Object.keys(config.service.pipelines), admin: admin === undefined ? config.service.admin.endpoint : formatEndpoint(admin.address, admin.port) }, 'sluice started');
    });
  }

  /**
   * Loads a new config and swaps the graph. Returns false when the new
   * config is refused (invalid, or failed to start: the previous one is
   * restored) and true when it runs.
   */
  reload(load: () => ValidatedConfig | Promise<ValidatedConfig>): Promise<boolean> {
    // A reload still waiting its turn has loaded nothing yet: it takes this
    // one's place, so a burst of SIGHUPs swaps the graph once more, not once each.
    const waiting = this.#waitingReload;
    if (waiting !== undefined) {
      waiting.load = load;
      return waiting.applied;
    }
    const reload: WaitingReload = { load, applied: Promise.resolve(false) };
    this.#waitingReload = reload;
    reload.applied = this.#serially(async () => {
      this.#waitingReload = undefined;
      return this.#reloadNow(reload.load);
    });
    return reload.applied;
  }

  async #reloadNow(load: () => ValidatedConfig | Promise<ValidatedConfig>): Promise<boolean> {
    if (this.#stopping) return false;
    let next: ValidatedConfig;
    try {
      next = await load();
    } catch (err) {
      const problems = err instanceof ConfigError ? err.problems : [errorMessage(err)];
      this.logger.error({ problems }, 'config reload refused; the running config stays');
      return false;
    }
    const moved = this.#storageMove(next);
    if (moved !== undefined) {
      this.logger.error({ problems: [moved] }, 'config reload refused; the running config stays');
      return false;
    }
    const previous = this.#config;
    await this.#stopGraph();
    // A stop signalled while the old graph was stopping: start nothing more (no listener may open after it).
    if (this.#stopping) {
      this.logger.info('config reload abandoned: the daemon is stopping');
      return false;
    }
    try {
      await this.#apply(next, () => this.#stopping);
      // The old listeners' ports the new config does not listen on.
      this.#ports.settle();
      if (previous !== undefined) await forgetRemovedSeries(this.telemetry, previous, next);
      // Not before: a failed start restores the previous config, whose processors go on with their decisions.
      this.#memoryDecisions.keepOnly(new Set(next.processors.keys()));
      this.logger.info({ pipelines: Object.keys(next.service.pipelines) }, 'config reloaded');
      return true;
    } catch (err) {
      if (this.#stopping) {
        this.logger.info({ err: errorMessage(err) }, 'config reload abandoned: the daemon is stopping');
        return false;
      }
      this.logger.error({ err: errorMessage(err) }, 'new config failed to start; restoring the previous one');
      if (previous === undefined) throw err;
      await this.#apply(previous);
      this.#ports.settle();
      await forgetRemovedSeries(this.telemetry, next, previous);
      // The failed graph's new processors' stores; the previous config's go on.
      this.#memoryDecisions.keepOnly(new Set(previous.processors.keys()));
      return false;
    }
  }

  /**
   * Stops receivers first, drains, stops the admin endpoint. Idempotent, safe
   * before start. Settles within shutdown_grace + 1 s of the call, counted
   * from now: a start or reload still running (the stop waits its turn
   * behind it) does not hold the process past that.
   */
  shutdown(): Promise<void> {
    this.#stopping = true;
    // At once, not when the stop's turn comes: a reload stopping the old
    // graph would hold every connection made meanwhile for a graph that never comes.
    this.#ports.closeAll();
    this.#shutdown ??= this.#stopInTime();
    return this.#shutdown;
  }

  async #stopInTime(): Promise<void> {
    const graceMs = (this.#config ?? this.#starting)?.service.shutdown_grace ?? 0;
    let backstop: NodeJS.Timeout | undefined;
    const outOfTime = new Promise<boolean>(function wait(resolve) {
      backstop = setTimeout(() => resolve(false), graceMs + AFTER_GRACE_MS);
    });
    const stopped = this.#serially(async () => {
      this.stats.stop();
      await this.#stopGraph({ closePorts: true });
      await this.#state?.close();
      await this.#cluster?.close();
      await this.admin.close();
      await this.#storage?.lock.release();
      this.#storage = undefined;
      return true;
    });
    let inTime: boolean;
    try {
      inTime = await Promise.race([stopped, outOfTime]);
    } finally {
      clearTimeout(backstop);
    }
    if (inTime) this.logger.info('sluice stopped');
    else this.logger.warn({ graceMs }, 'sluice stopped with work still running (exporters flushing, or a start not finished): what was not acknowledged as delivered is delivered again after the next start');
  }

  /**
   * Stops the running graph: accept nothing new, give in-flight requests the
   * grace, then destroy every connection left. The ports stay bound for the
   * next graph's listeners unless `closePorts` (a shutdown).
   */
  async #stopGraph({ closePorts = false } = {}): Promise<void> {
    const graph = this.#graph;
    const listeners = this.#listeners;
    if (graph === undefined) return;
    const graceMs = this.#config?.service.shutdown_grace ?? 0;
    this.#deadline?.begin(graceMs);
    listeners?.stopAccepting();
    if (closePorts) this.#ports.closeAll();
    const logger = this.logger;
    const force = setTimeout(function graceOver() {
      logger.warn({ graceMs }, 'shutdown grace is over: closing the connections still open');
      listeners?.destroyAll();
    }, graceMs);
    try {
      await graph.shutdown();
    } finally {
      clearTimeout(force);
    }
  }

  /** Starts a graph of `config`; `abandoned` (see Graph.start) gives up a start a stop overtook. */
  async #apply(config: ValidatedConfig, abandoned?: () => boolean): Promise<void> {
    const storageDirectory = await ensureStorageDirectory(config.service.storage.directory);
    await this.#holdStorage(storageDirectory);
    this.logger.level = config.service.telemetry.logs.level;
    for (const component of config.unused) this.logger.warn({ component }, 'configured but used in no pipeline: not started');
    for (const pipeline of config.unstamped) this.logger.warn({ pipeline }, UNSTAMPED_WARNING);
    for (const warning of config.warnings) this.logger.warn(warning);
    this.#config = config;
    const { endpoint, api_key: _apiKey, ...limits } = config.service.admin;
    if (!this.admin.listensAs(endpoint, limits)) {
      await this.admin.close();
      // The port may be one an old receiver's listener left: the keeper holds it until the new graph runs.
      this.#ports.free(listenEndpoint(endpoint).port);
      await this.admin.listen(endpoint, limits);
    }
    const state = await this.#sharedState(config, storageDirectory);
    const host: Host = { logger: this.logger, telemetry: this.telemetry, storageDirectory, version: this.#version, state, adminApiKey: () => this.#config?.service.admin.api_key };
    attachAdminRoutes(host, this.admin);
    this.#host = host;
    const listeners = new ListenerGroup();
    provideService(host, LISTENER_GROUP, listeners);
    provideService(host, BOUND_PORTS, this.#ports);
    this.#listeners = listeners;
    provideService(host, DRAIN_MEMORY, this.#drainMemory);
    const deadline = new ShutdownDeadline();
    provideService(host, SHUTDOWN_DEADLINE, deadline);
    this.#deadline = deadline;
    const graph = new Graph(config, host);
    this.#graph = graph;
    // A failed start stops what started as any graph stops: a receiver that started may
    // already hold requests (a reload hands it those that waited at its port), bounded by the grace.
    await graph.start(abandoned, () => this.#stopGraph());
    await this.#warnOfOrphanedQueues(config, storageDirectory);
    await this.#warnOfOrphanedDrains(host, storageDirectory);
  }

  /** A renamed or removed exporter's queue keeps records its senders were answered for: say so at each start. */
  async #warnOfOrphanedQueues(config: ValidatedConfig, storageDirectory: string): Promise<void> {
    const reading = new Set([...config.exporters.values()].filter((exporter) => readsDiskQueue(exporter.config)).map((exporter) => exporter.id));
    try {
      for (const orphan of await findOrphanedQueues(storageDirectory, reading)) {
        this.logger.warn(
          { exporter: orphan.exporter, directory: orphan.directory, bytes: orphan.bytes },
          'the queue of an exporter no longer configured holds undelivered records: configure an exporter of that id to deliver them, or delete the directory',
        );
      }
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'could not look for queues no exporter reads');
    }
  }

  /** The same for a drain taken out of the config (or every drain, with the drains exporter in no pipeline). */
  async #warnOfOrphanedDrains(host: Host, storageDirectory: string): Promise<void> {
    const drains = hostService(host, DRAINS_CONTROLLER)?.list() ?? [];
    try {
      for (const orphan of await findOrphanedDrains(storageDirectory, new Set(drains.map((drain) => drain.definition.id)))) {
        this.logger.warn(
          { drain: orphan.drain, directory: orphan.directory, bytes: orphan.bytes },
          'the queue of a drain no longer configured holds undelivered records: configure a drain of that name again (with the drains exporter in a pipeline) to deliver them, or delete the directory',
        );
      }
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'could not look for drain queues no drain reads');
    }
  }

  /** Locks the storage directory before anything in it is opened, once: a reload cannot move it (#storageMove). */
  async #holdStorage(directory: string): Promise<void> {
    if (this.#storage !== undefined) return;
    this.#storage = { directory, lock: await lockStorageDirectory(directory) };
  }

  /**
   * Why `next` cannot be applied by a reload, when it names another storage
   * directory: the running one holds what was acknowledged (queues), the API
   * drains and the usage records, which a graph started elsewhere would
   * leave behind unread, unlisted and uncounted.
   */
  #storageMove(next: ValidatedConfig): string | undefined {
    const current = this.#storage?.directory;
    const requested = resolve(next.service.storage.directory);
    if (current === undefined || current === requested) return undefined;
    return `service.storage.directory: a reload cannot move the storage directory from ${current} to ${requested}: its queues, API drains, sampling decisions and usage records would stay behind in ${current}; stop the daemon, move them, and start it again`;
  }

  /**
   * The cluster and the shared state for `config`. A reload keeps both while
   * the Redis connection's identity stays (connectionIdentity: the url and the
   * key prefix): a new instance_id or redis.timeout is set on the running
   * cluster and a new retention on the running state, so no rate window
   * restarts. A reload that turns cluster mode on or off, or moves it to
   * another Redis or key prefix, closes them and opens new ones; turning it
   * on or off carries the open rate-limit windows across. The sampling
   * processors' decisions go on into a reopened state.
   */
  async #sharedState(config: ValidatedConfig, storageDirectory: string): Promise<SharedState> {
    const settings = config.service.cluster;
    const retentionMs = config.service.usage.retention;
    const id = settings === undefined || settings.instance_id === '' ? this.#defaultInstanceId : settings.instance_id;
    if (this.#cluster !== undefined && this.#state !== undefined && this.#cluster.connection === connectionIdentity(settings)) {
      await this.#cluster.reconfigure(settings, id);
      this.#state.setRetention(retentionMs);
      return this.#state;
    }
    const previous = this.#state;
    this.#state = undefined;
    // Into another Redis nothing is carried: every instance would add the old fleet's counts to the new one's.
    const carried = previous !== undefined && previous.mode !== (settings === undefined ? 'local' : 'redis') ? await this.#rateWindowsOf(previous) : [];
    // The state first: it sends what it still holds through the old connection.
    await previous?.close();
    await this.#cluster?.close();
    const cluster = new Cluster(settings, id, {
      logger: this.logger.child({ component: 'cluster' }),
      telemetry: this.telemetry,
      version: this.#version,
      startedAt: this.#startedAt,
      address: () => this.#adminAddress(),
    });
    cluster.start();
    this.#cluster = cluster;
    if (settings !== undefined) this.logger.info({ instance: id, redis: cluster.redisUrl }, 'cluster mode: shared state in Redis');
    const logger = this.logger.child({ component: 'state' });
    const state = createSharedState(cluster.redis, { storageDirectory, retentionMs, logger, memoryDecisions: this.#memoryDecisions });
    this.#state = state;
    await state.carryRateWindows(carried);
    return state;
  }

  /** What a failure to read them costs is the windows, not the reload (the state must still close, releasing its lock). */
  async #rateWindowsOf(state: SharedState): Promise<CarriedWindows[]> {
    try {
      return await state.rateWindows();
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'could not read the rate-limit windows to carry across the reload; they start afresh');
      return [];
    }
  }

  #adminAddress(): string {
    const address = this.admin.address();
    if (address === undefined) return '';
    const host = address.address === '0.0.0.0' || address.address === '::' ? hostname() : address.address;
    return `${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(function ignore() {});
    return run;
  }
}
