// From the parsed YAML tree to a validated config: every problem at once,
// each naming its YAML path, or a ConfigError listing them all.
import type { z } from 'zod';
import type { AnyFactory, ComponentConfig, ComponentKind, ExporterFactory, ProcessorFactory, ReceiverFactory } from '../core/component.js';
import { parseComponentId } from '../core/component.js';
import { formatEndpoint, parseEndpoint } from '../core/listener/endpoint.js';
import { ConfigError } from '../shared/errors.js';
import type { ComponentRegistry, TopLevelSection } from '../core/registry.js';
import { COMPONENT_ID_HINT, isValidComponentId } from './component-id.js';
import { configErrorMap, formatIssues } from './format-issues.js';
import { checkGraph } from './graph-checks.js';
import { unstampedPipelines } from './platform-check.js';
import { deepMerge } from './merge.js';
import { type ConfigPath, formatPath } from './path.js';
import { PIPELINE_ID, adminSchema, pipelineSchema, serviceSchema, type PipelineConfig, type ServiceConfig } from './service-schema.js';
import { isPlainObject } from '../shared/plain-object.js';

export type { ComponentConfig } from '../core/component.js';

export interface ValidatedConfig {
  readonly receivers: ReadonlyMap<string, ComponentConfig<ReceiverFactory>>;
  readonly processors: ReadonlyMap<string, ComponentConfig<ProcessorFactory>>;
  readonly exporters: ReadonlyMap<string, ComponentConfig<ExporterFactory>>;
  /** Validated top-level sections registered by components (`drains`). */
  readonly sections: ReadonlyMap<string, unknown>;
  readonly service: ServiceConfig;
  /** `<kind section>.<id>` of components configured but used in no pipeline: validated, left out of the maps above, never built. */
  readonly unused: readonly string[];
  /** Ids of pipelines no resource processor stamps with platform.projectId and platform.deploymentId (they run, with a warning). */
  readonly unstamped: readonly string[];
  /** Likely mistakes the components' factories see in their valid configs: `<path>: <message>` lines. */
  readonly warnings: readonly string[];
}

export const KIND_SECTIONS = { receiver: 'receivers', processor: 'processors', exporter: 'exporters' } as const;

/** Parses with the config error map; problems are pushed with `prefix` as their path. */
export function parseAt<S extends z.ZodType>(schema: S, input: unknown, prefix: ConfigPath, problems: string[]): { ok: true; value: z.output<S> } | { ok: false } {
  const result = schema.safeParse(input, { error: configErrorMap });
  if (result.success) return { ok: true, value: result.data };
  problems.push(...formatIssues(result.error.issues, prefix));
  return { ok: false };
}

export function validateConfig(raw: unknown, registry: ComponentRegistry): ValidatedConfig {
  const problems: string[] = [];
  if (raw === null || raw === undefined) throw new ConfigError(['(root): the config is empty']);
  if (!isPlainObject(raw)) throw new ConfigError(['(root): must be a mapping of receivers, processors, exporters and service']);

  const sectionsByKey = new Map(registry.sections().map((section) => [section.key, section] as const));
  for (const key of Object.keys(raw)) {
    if (!(key in KIND_SECTIONS_BY_NAME) && key !== 'service' && !sectionsByKey.has(key)) problems.push(`${key}: unknown key`);
  }

  const sections = new Map<string, unknown>();
  const failedSections = new Set<string>();
  const warnings: string[] = [];
  for (const section of sectionsByKey.values()) {
    const input = raw[section.key] ?? section.whenAbsent;
    const parsed = parseAt(section.schema, input, [section.key], problems);
    if (parsed.ok) sections.set(section.key, parsed.value);
    else failedSections.add(section.key);
    if (parsed.ok) for (const { path, message } of section.warnings?.(parsed.value) ?? []) warnings.push(`${formatPath([section.key, ...path])}: ${message}`);
  }

  const components = {
    receiver: parseComponents('receiver', raw, registry, sectionsByKey, sections, failedSections, problems),
    processor: parseComponents('processor', raw, registry, sectionsByKey, sections, failedSections, problems),
    exporter: parseComponents('exporter', raw, registry, sectionsByKey, sections, failedSections, problems),
  };

  for (const section of sectionsByKey.values()) {
    const target = section.inject;
    const given = raw[section.key];
    const hasContent = Array.isArray(given) ? given.length > 0 : given !== undefined && given !== null;
    if (target === undefined || !hasContent) continue;
    const consumers = [...components[target.kind].configured].filter((id) => parseComponentId(id).type === target.type);
    if (consumers.length === 0) problems.push(`${section.key}: no ${target.kind} of type ${target.type} is configured to use this section`);
  }

  for (const kind of ['receiver', 'processor', 'exporter'] as const) problems.push(...checkTogether(kind, components[kind].valid));

  const service = parseAt(serviceSchema, raw['service'], ['service'], problems);
  // A shape problem elsewhere in `service` must not hide the references of pipelines that are well formed.
  const pipelines = service.ok ? { pipelines: service.value.pipelines, complete: true } : wellFormedPipelines(raw['service']);
  const unused = new Set<string>();
  if (pipelines !== undefined) {
    const graph = checkGraph(pipelines.pipelines, {
      receiver: components.receiver.configured,
      processor: components.processor.configured,
      exporter: components.exporter.configured,
    }, pipelines.complete);
    problems.push(...graph.problems);
    for (const path of graph.unused) unused.add(path);
  }
  const used = <F extends AnyFactory>(kind: keyof typeof KIND_SECTIONS, valid: ReadonlyMap<string, ComponentConfig<F>>) =>
    new Map([...valid].filter(([id]) => !unused.has(`${KIND_SECTIONS[kind]}.${id}`)));
  const receivers = used('receiver', components.receiver.valid as Map<string, ComponentConfig<ReceiverFactory>>);

  // As for pipelines: a shape problem elsewhere in `service` must not hide these.
  const admin = service.ok ? service.value.admin : wellFormedAdmin(raw['service']);
  problems.push(...sharedAddresses(receivers, admin?.endpoint), ...sharedAdminKey(receivers, admin?.api_key));

  if (problems.length > 0 || !service.ok) throw new ConfigError(problems);
  const processors = used('processor', components.processor.valid as Map<string, ComponentConfig<ProcessorFactory>>);
  return {
    receivers,
    processors,
    exporters: used('exporter', components.exporter.valid as Map<string, ComponentConfig<ExporterFactory>>),
    sections,
    service: service.value,
    unused: [...unused],
    unstamped: unstampedPipelines(service.value.pipelines, processors),
    warnings: [...warnings, ...(['receiver', 'processor', 'exporter'] as const).flatMap((kind) => factoryWarnings(kind, components[kind].valid))],
  };
}

/** Each valid component's warnings, at their YAML paths (unused components are checked like any other). */
function factoryWarnings(kind: ComponentKind, valid: ReadonlyMap<string, ComponentConfig<AnyFactory>>): string[] {
  const lines: string[] = [];
  for (const component of valid.values()) {
    for (const { path, message } of component.factory.warnings?.(component.config) ?? []) lines.push(`${KIND_SECTIONS[kind]}.${component.id}.${path}: ${message}`);
  }
  return lines;
}

/** What a host on every interface stands for in boundAddresses(): it overlaps any other address on its port. */
const EVERY_INTERFACE = '*';
const EVERY_INTERFACE_HOSTS = new Set(['', '0.0.0.0', '::']);
/** The system's resolver decides which loopback `localhost` binds, so it may be either. */
const LOCALHOST = ['127.0.0.1', '::1'];

/**
 * Two listeners on one address: the second would fail to bind at `run`
 * (EADDRINUSE). Port 0 (any free port) never clashes; an address on every
 * interface clashes with any other on its port. Hosts are compared as the
 * addresses they bind, however they are written (`localhost`, `[::1]`,
 * `[0:0:0:0:0:0:0:1]`).
 */
function sharedAddresses(receivers: ReadonlyMap<string, ComponentConfig<AnyFactory>>, adminEndpoint: string | undefined): string[] {
  const listeners: Array<{ path: string; host: string; port: number }> = [];
  for (const component of receivers.values()) {
    for (const address of component.factory.listens?.(component.config) ?? []) listeners.push({ ...address, path: `receivers.${component.id}.${address.path}` });
  }
  const admin = adminEndpoint === undefined ? undefined : parseEndpoint(adminEndpoint);
  if (admin !== undefined) listeners.push({ path: 'service.admin.endpoint', ...admin });
  const bound = listeners.map((listener) => boundAddresses(listener.host));
  const problems: string[] = [];
  listeners.forEach(function check(listener, i) {
    if (listener.port === 0) return;
    const mine = bound[i] ?? [];
    const overlaps = (j: number) => {
      const theirs = bound[j] ?? [];
      return mine.includes(EVERY_INTERFACE) || theirs.includes(EVERY_INTERFACE) || mine.some((address) => theirs.includes(address));
    };
    const earlier = listeners.slice(0, i).find((other, j) => other.port === listener.port && overlaps(j));
    if (earlier !== undefined) problems.push(`${listener.path}: ${formatEndpoint(listener.host, listener.port)} takes the port of ${earlier.path} (${formatEndpoint(earlier.host, earlier.port)}); two listeners cannot share an address`);
  });
  return problems;
}

/**
 * The admin key opens the drains API (where every trace goes) and every
 * key's usage records: one that is also a client key hands both to each
 * client that holds it, and on the gateway's usage routes it would act as
 * the admin key rather than as the client key it also is.
 */
function sharedAdminKey(receivers: ReadonlyMap<string, ComponentConfig<AnyFactory>>, adminKey: string | undefined): string[] {
  if (adminKey === undefined || adminKey === '') return [];
  const problems: string[] = [];
  for (const component of receivers.values()) {
    for (const { path, key } of component.factory.clientKeys?.(component.config) ?? []) {
      if (key === adminKey) problems.push(`service.admin.api_key: is also the client key receivers.${component.id}.${path}: give the admin endpoint a key of its own (a client holding it could change where every trace goes)`);
    }
  }
  return problems;
}

/** The addresses a listener's host may bind, each in one canonical spelling (WHATWG URL host parsing). */
function boundAddresses(host: string): readonly string[] {
  let canonical: string;
  try {
    canonical = new URL(`http://${host.includes(':') ? `[${host}]` : host}/`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    canonical = host.toLowerCase();
  }
  if (EVERY_INTERFACE_HOSTS.has(canonical)) return [EVERY_INTERFACE];
  if (canonical === 'localhost') return LOCALHOST;
  return [canonical];
}

/** Each factory's checks across the components of its type that validated. */
function checkTogether(kind: ComponentKind, valid: ReadonlyMap<string, ComponentConfig<AnyFactory>>): string[] {
  const byFactory = new Map<AnyFactory, Array<{ id: string; config: unknown }>>();
  for (const component of valid.values()) {
    if (component.factory.checkTogether === undefined) continue;
    const group = byFactory.get(component.factory) ?? [];
    group.push({ id: component.id, config: component.config });
    byFactory.set(component.factory, group);
  }
  const problems: string[] = [];
  for (const [factory, group] of byFactory) problems.push(...(factory.checkTogether?.(group) ?? []).map((problem: string) => `${KIND_SECTIONS[kind]}.${problem}`));
  return problems;
}

/** The pipelines of an invalid `service` section whose own shape is valid; `complete` when none was left out. */
function wellFormedPipelines(service: unknown): { pipelines: Record<string, PipelineConfig>; complete: boolean } | undefined {
  const given = isPlainObject(service) ? service['pipelines'] : undefined;
  if (!isPlainObject(given)) return undefined;
  const pipelines: Record<string, PipelineConfig> = {};
  let complete = true;
  for (const [id, pipeline] of Object.entries(given)) {
    const parsed = pipelineSchema.safeParse(pipeline);
    if (parsed.success && PIPELINE_ID.test(id)) pipelines[id] = parsed.data;
    else complete = false;
  }
  return { pipelines, complete };
}

/** The admin section of an invalid `service` section, when its own shape is valid. */
function wellFormedAdmin(service: unknown): ServiceConfig['admin'] | undefined {
  const parsed = adminSchema.safeParse(isPlainObject(service) ? service['admin'] : undefined);
  return parsed.success ? parsed.data : undefined;
}

const KIND_SECTIONS_BY_NAME: Readonly<Record<string, ComponentKind>> = { receivers: 'receiver', processors: 'processor', exporters: 'exporter' };

interface ParsedComponents {
  /** Every id present in the YAML, valid or not: graph checks refer to these. */
  readonly configured: Set<string>;
  readonly valid: Map<string, ComponentConfig<ReceiverFactory | ProcessorFactory | ExporterFactory>>;
}

function parseComponents(
  kind: ComponentKind,
  raw: Record<string, unknown>,
  registry: ComponentRegistry,
  sectionsByKey: ReadonlyMap<string, TopLevelSection>,
  sectionValues: ReadonlyMap<string, unknown>,
  failedSections: ReadonlySet<string>,
  problems: string[],
): ParsedComponents {
  const sectionName = KIND_SECTIONS[kind];
  const result: ParsedComponents = { configured: new Set(), valid: new Map() };
  const given = raw[sectionName];
  if (given === undefined || given === null) return result;
  if (!isPlainObject(given)) {
    problems.push(`${sectionName}: must be a mapping of component ids to their settings`);
    return result;
  }
  for (const [id, settings] of Object.entries(given)) {
    result.configured.add(id);
    const path = [sectionName, id];
    if (!isValidComponentId(id)) {
      problems.push(`${formatPath(path)}: ${COMPONENT_ID_HINT}`);
      continue;
    }
    const { type } = parseComponentId(id);
    const factory = registry.factory(kind, type);
    if (factory === undefined) {
      const known = registry.types(kind);
      problems.push(`${formatPath(path)}: unknown ${kind} type "${type}"${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}`);
      continue;
    }
    if (settings !== null && settings !== undefined && !isPlainObject(settings)) {
      problems.push(`${formatPath(path)}: must be a mapping of settings`);
      continue;
    }
    let merged = deepMerge(factory.createDefaultConfig(), settings);
    const skipKeys = new Set<PropertyKey>();
    for (const section of sectionsByKey.values()) {
      const target = section.inject;
      if (target === undefined || target.kind !== kind || target.type !== type) continue;
      if (failedSections.has(section.key)) skipKeys.add(target.configKey);
      merged = { ...(isPlainObject(merged) ? merged : {}), [target.configKey]: sectionValues.get(section.key) };
    }
    const parsed = factory.configSchema.safeParse(merged, { error: configErrorMap });
    if (parsed.success) {
      result.valid.set(id, { id, factory, config: parsed.data });
      continue;
    }
    // An injected section that failed is already reported at its own path.
    const issues = parsed.error.issues.filter((issue) => !skipKeys.has(issue.path[0] ?? ''));
    problems.push(...formatIssues(issues, path));
  }
  return result;
}
