// One running instance of a validated config: one instance per receiver and
// per exporter id, processors per pipeline, wired through fan-out.
import type { Logger } from 'pino';
import type {
  ComponentConfig,
  ComponentKind,
  CreateSettings,
  Exporter,
  ExporterFactory,
  Host,
  Processor,
  ProcessorFactory,
  Receiver,
  ReceiverFactory,
  TracesConsumer,
} from './component.js';
import { errorMessage, StartAbandonedError } from '../shared/errors.js';
import { guardMemory } from './memory-guard.js';
import { buildPipeline, fanOut } from './pipeline.js';

/** What a graph is built from: the part of a validated config (config/validate) it reads. */
export interface GraphConfig {
  readonly receivers: ReadonlyMap<string, ComponentConfig<ReceiverFactory>>;
  readonly processors: ReadonlyMap<string, ComponentConfig<ProcessorFactory>>;
  readonly exporters: ReadonlyMap<string, ComponentConfig<ExporterFactory>>;
  readonly service: {
    readonly pipelines: Readonly<Record<string, { readonly receivers: readonly string[]; readonly processors: readonly string[]; readonly exporters: readonly string[] }>>;
    readonly memory_limit_mib?: number | undefined;
  };
}

interface Instance<T> {
  readonly id: string;
  readonly kind: ComponentKind;
  readonly component: T;
}

export class Graph {
  readonly #host: Host;
  readonly #receivers: Instance<Receiver>[] = [];
  readonly #processors: Instance<Processor>[] = [];
  readonly #exporters: Instance<Exporter>[] = [];
  #started = false;
  #shutdown: Promise<void> | undefined;

  /** Creates every component (create() does no I/O); start() brings them up. */
  constructor(config: GraphConfig, host: Host) {
    this.#host = host;
    const settingsFor = function settingsFor(kind: ComponentKind, id: string, pipeline?: string): CreateSettings {
      const bindings = pipeline === undefined ? { kind, component: id } : { kind, component: id, pipeline };
      return { id, logger: host.logger.child(bindings), telemetry: host.telemetry, storageDirectory: host.storageDirectory, version: host.version };
    };

    const exporters = new Map<string, Exporter>();
    for (const [id, entry] of config.exporters) {
      const exporter = entry.factory.create(settingsFor('exporter', id), entry.config);
      exporters.set(id, exporter);
      this.#exporters.push({ id, kind: 'exporter', component: exporter });
    }

    const pipelineEntries = new Map<string, TracesConsumer>();
    for (const [pipelineId, pipeline] of Object.entries(config.service.pipelines)) {
      const processors = pipeline.processors.map((id) => {
        const entry = required(config.processors.get(id), 'processor', id);
        const processor = entry.factory.create(settingsFor('processor', id, pipelineId), entry.config);
        this.#processors.push({ id, kind: 'processor', component: processor });
        return { id, processor };
      });
      const sinks = pipeline.exporters.map((id) => required(exporters.get(id), 'exporter', id));
      pipelineEntries.set(pipelineId, buildPipeline(pipelineId, processors, sinks, host.telemetry));
    }

    for (const [id, entry] of config.receivers) {
      const fed = Object.entries(config.service.pipelines)
        .filter(([, pipeline]) => pipeline.receivers.includes(id))
        .map(([pipelineId]) => required(pipelineEntries.get(pipelineId), 'pipeline', pipelineId));
      const limitMib = config.service.memory_limit_mib;
      const next = limitMib === undefined ? fanOut(fed) : guardMemory(fanOut(fed), { limitMib });
      const receiver = entry.factory.create(settingsFor('receiver', id), entry.config, next);
      this.#receivers.push({ id, kind: 'receiver', component: receiver });
    }
  }

  get started(): boolean {
    return this.#started && this.#shutdown === undefined;
  }

  /**
   * Downstream first: exporters, processors, receivers. A failure stops what
   * started, and so does `abandoned()` turning true before the next component
   * (a stop asked for meanwhile: no listener may open after it). `stop`
   * stops what started: the service's bounds it by shutdown_grace, as a
   * receiver that started may be answering requests already.
   */
  async start(abandoned: () => boolean = () => false, stop: () => Promise<void> = () => this.shutdown()): Promise<void> {
    if (this.#shutdown !== undefined) throw new Error('a graph that was shut down cannot start again');
    try {
      for (const instance of [...this.#exporters, ...this.#processors, ...this.#receivers]) {
        if (abandoned()) throw new StartAbandonedError();
        await startOne(instance, this.#host);
      }
    } catch (err) {
      await stop();
      throw err;
    }
    this.#started = true;
  }

  /** Upstream first: receivers stop accepting, processors and exporters drain. Idempotent. */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#shutdownInOrder();
    return this.#shutdown;
  }

  async #shutdownInOrder(): Promise<void> {
    for (const stage of [this.#receivers, this.#processors, this.#exporters]) {
      await Promise.all(stage.map((instance) => shutdownOne(instance, this.#host.logger)));
    }
  }
}

function required<T>(value: T | undefined, kind: string, id: string): T {
  // Validation guarantees every reference resolves; this guards the invariant.
  if (value === undefined) throw new Error(`${kind} "${id}" is referenced but was not built`);
  return value;
}

async function startOne(instance: Instance<Receiver | Processor | Exporter>, host: Host): Promise<void> {
  try {
    await instance.component.start?.(host);
  } catch (err) {
    throw new Error(`${instance.kind} ${instance.id} failed to start: ${errorMessage(err)}`, { cause: err });
  }
}

async function shutdownOne(instance: Instance<Receiver | Processor | Exporter>, logger: Logger): Promise<void> {
  try {
    await instance.component.shutdown?.();
  } catch (err) {
    logger.error({ kind: instance.kind, component: instance.id, err: errorMessage(err) }, 'component failed to shut down cleanly');
  }
}
