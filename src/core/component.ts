// The component model, after the OpenTelemetry Collector: every receiver,
// processor and exporter is declared as data (a type name, a config schema,
// createDefaultConfig() and a create function) and lives through
// start()/shutdown(). Data moves through one interface, TracesConsumer.
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { SharedState } from '../cluster/state.js';
import type { TraceBatch } from '../otlp/batch.js';
import type { Telemetry } from '../shared/telemetry.js';

/**
 * The one consumer interface. The returned promise settles when the data is
 * accepted: written to the durable queue of every exporter downstream (or,
 * for exporters without a queue, delivered). It rejects with a
 * PermanentError (the data is bad: drop and count), a ResourceExhaustedError
 * (backpressure: ask the sender to retry later) or any other error
 * (retryable). A receiver answers its client only once this settles.
 */
export interface TracesConsumer {
  consume(batch: TraceBatch): Promise<void>;
}

/**
 * Lifecycle contract: start() returns quickly (it binds listeners and starts
 * workers, it does not wait for traffic); shutdown() is idempotent, safe
 * before start(), and drains in-flight work before it resolves.
 */
export interface Component {
  start(host: Host): Promise<void>;
  shutdown(): Promise<void>;
}

export type Receiver = Component;

/** Processors are pure transforms of a batch; null or an empty batch means "nothing left". */
export interface Processor extends Partial<Component> {
  process(batch: TraceBatch): TraceBatch | null | Promise<TraceBatch | null>;
}

export interface Exporter extends Component, TracesConsumer {}

/** What the running service offers its components. */
export interface Host {
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  /** service.storage.directory, already created and writable. */
  readonly storageDirectory: string;
  /** The service's own version, for User-Agent headers. */
  readonly version: string;
  /** State shared across instances in cluster mode (local otherwise): rate limits, spend, generation records. */
  readonly state: SharedState;
  /** service.admin.api_key as it is now (undefined when unset). */
  readonly adminApiKey: () => string | undefined;
}

export type ComponentKind = 'receiver' | 'processor' | 'exporter';

/** What create() learns about the instance it builds. */
export interface CreateSettings {
  /** The full component id from the config: `otlphttp/acme`. */
  readonly id: string;
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  readonly storageDirectory: string;
  readonly version: string;
}

/**
 * The config schema receives the user's YAML section deep-merged over
 * createDefaultConfig(), so it validates the complete config; its messages
 * name the key (`encoding: must be one of json, protobuf`), and the loader
 * prefixes the component's YAML path.
 */
interface FactoryBase<K extends ComponentKind, C> {
  readonly kind: K;
  readonly type: string;
  readonly configSchema: z.ZodType<C>;
  createDefaultConfig(): unknown;
  /**
   * Problems across every configured component of this type, each config
   * already valid on its own (two gateways giving one key name to different
   * keys): `<section>.<id>.<path>: <message>` lines.
   */
  checkTogether?(configs: ReadonlyArray<{ readonly id: string; readonly config: C }>): string[];
  /** The addresses the component listens on, each with its key's path within the component (`protocols.http.endpoint`). */
  listens?(config: C): ReadonlyArray<{ readonly path: string; readonly host: string; readonly port: number }>;
  /** The keys its clients present, each with its path within the component (`api_keys[0]`): the admin key must be none of them. */
  clientKeys?(config: C): ReadonlyArray<{ readonly path: string; readonly key: string }>;
  /** Likely mistakes in a valid config, each with its key's path within the component: `validate` prints them, `run` logs them. */
  warnings?(config: C): ReadonlyArray<{ readonly path: string; readonly message: string }>;
}

export interface ReceiverFactory<C = unknown> extends FactoryBase<'receiver', C> {
  create(settings: CreateSettings, config: C, next: TracesConsumer): Receiver;
}

/** A resource attribute a processor sets to a usable value, or leaves unset (deleted, or written empty). */
export interface ResourceStamp {
  readonly key: string;
  readonly sets: boolean;
}

export interface ProcessorFactory<C = unknown> extends FactoryBase<'processor', C> {
  create(settings: CreateSettings, config: C): Processor;
  /** What a processor of this config does to resource attributes, in order; absent for processors that touch none. */
  resourceStamps?(config: C): readonly ResourceStamp[];
}

export interface ExporterFactory<C = unknown> extends FactoryBase<'exporter', C> {
  create(settings: CreateSettings, config: C): Exporter;
}

// create() is declared as a method, so a factory of a specific config type
// is assignable to the unknown-config form the registry keeps.
export type AnyFactory = ReceiverFactory | ProcessorFactory | ExporterFactory;

/** One configured component: its id, its factory and the factory's validated config. */
export interface ComponentConfig<F> {
  readonly id: string;
  readonly factory: F;
  /** The output of the factory's configSchema. */
  readonly config: unknown;
}

/** `otlphttp/acme` -> { type: 'otlphttp', name: 'acme' } */
export function parseComponentId(id: string): { type: string; name: string | undefined } {
  const slash = id.indexOf('/');
  if (slash === -1) return { type: id, name: undefined };
  return { type: id.slice(0, slash), name: id.slice(slash + 1) };
}
