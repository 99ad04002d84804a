// The flat map from component type to factory, one per kind (an `otlp`
// receiver and an `otlp` exporter are different factories), plus the
// top-level config sections a component owns (the `drains` list).
import type { z } from 'zod';
import type { AnyFactory, ComponentKind, ExporterFactory, ProcessorFactory, ReceiverFactory } from './component.js';

type FactoryOf<K extends ComponentKind> = K extends 'receiver' ? ReceiverFactory : K extends 'processor' ? ProcessorFactory : ExporterFactory;

/**
 * A top-level YAML key validated by `schema` (its problems read `drains[0].url`).
 * The parsed value is handed to every component of `inject.kind`/`inject.type`
 * as its config key `inject.configKey`, before that component's own schema
 * runs: declare that key in the component schema without re-validating it,
 * e.g. `drains: z.custom<DrainConfig[]>()`.
 */
export interface TopLevelSection {
  readonly key: string;
  readonly schema: z.ZodType;
  /** What the schema parses when the key is absent from the YAML. */
  readonly whenAbsent?: unknown;
  readonly inject?: { readonly kind: ComponentKind; readonly type: string; readonly configKey: string };
  /** Likely mistakes in the parsed value, each at its path within the section (`[0, 'url']`): `validate` prints them, `run` logs them. */
  warnings?(value: unknown): ReadonlyArray<{ readonly path: readonly PropertyKey[]; readonly message: string }>;
}

const RESERVED_KEYS = new Set(['receivers', 'processors', 'exporters', 'service']);

export class ComponentRegistry {
  readonly #factories: { [K in ComponentKind]: Map<string, FactoryOf<K>> } = {
    receiver: new Map(),
    processor: new Map(),
    exporter: new Map(),
  };
  readonly #sections = new Map<string, TopLevelSection>();

  register(...factories: AnyFactory[]): this {
    for (const factory of factories) {
      const byType: Map<string, AnyFactory> = this.#factories[factory.kind];
      if (byType.has(factory.type)) throw new Error(`${factory.kind} type "${factory.type}" is registered twice`);
      byType.set(factory.type, factory);
    }
    return this;
  }

  registerTopLevelSection(section: TopLevelSection): this {
    if (RESERVED_KEYS.has(section.key) || this.#sections.has(section.key)) {
      throw new Error(`top-level config section "${section.key}" is already taken`);
    }
    this.#sections.set(section.key, section);
    return this;
  }

  factory<K extends ComponentKind>(kind: K, type: string): FactoryOf<K> | undefined {
    return this.#factories[kind].get(type);
  }

  types(kind: ComponentKind): string[] {
    return [...this.#factories[kind].keys()].sort();
  }

  sections(): readonly TopLevelSection[] {
    return [...this.#sections.values()];
  }
}
