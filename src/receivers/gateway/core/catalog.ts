// The model catalog: the records GET /v1/models serves (serialized once, at
// construction) and the endpoint lists routing starts from.
import { mergePricing, parsePrices, type Prices, type PricingConfig } from '../../../usage/pricing.js';
import type { Served } from '../../../usage/meter.js';
import type { ModelConfig } from './catalog-config.js';

export interface Endpoint {
  /** The catalog id (or `<provider>/<model>` for a model outside the catalog) this endpoint serves. */
  readonly modelId: string;
  /** Provider slug. */
  readonly provider: string;
  /** Model name sent upstream. */
  readonly model: string;
  /** The catalog's max_tokens for the model, if it is in the catalog. */
  readonly maxTokens: number | undefined;
  /** What this endpoint charges (its own pricing over the model's); undefined when unpriced. */
  readonly prices: Prices | undefined;
  /** Set on a `<provider>/<model>` endpoint the catalog does not list: its id is whatever the client wrote. */
  readonly unlisted?: true;
}

/** Who an attempt at `endpoint` of provider `slug` is charged as. */
export function servedBy(endpoint: Endpoint, slug: string): Served {
  return { modelId: endpoint.modelId, provider: slug, prices: endpoint.prices, unlisted: endpoint.unlisted === true };
}

export type ModelType = 'language' | 'embedding';

/** Every field of DESIGN section 7 is present; what the catalog does not say is null. */
export interface ModelRecord {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  name: string;
  description: string | null;
  type: ModelType;
  tags: string[];
  context_window: number | null;
  max_tokens: number | null;
  pricing: PricingConfig | null;
}

export class Catalog {
  readonly listJson: string;
  /** The records GET /v1/models lists, in catalog order. */
  readonly records: readonly ModelRecord[];
  readonly #recordJson = new Map<string, string>();
  readonly #endpoints = new Map<string, readonly Endpoint[]>();
  readonly #types = new Map<string, ModelType>();
  /** `provider\0model` -> the prices of the first catalog endpoint sending that model to that provider. */
  readonly #upstreamPrices = new Map<string, Prices>();
  /** The same by the model's base name (`baseModel`): for another name of a model the catalog sends under one. */
  readonly #basePrices = new Map<string, Prices>();

  constructor(models: readonly ModelConfig[], createdDefault: number) {
    const records = models.map(function toRecord(m): ModelRecord {
      const record: ModelRecord = {
        id: m.id,
        object: 'model',
        created: m.created ?? createdDefault,
        owned_by: m.owned_by ?? m.id.slice(0, m.id.indexOf('/')),
        name: m.name ?? m.id,
        description: m.description ?? null,
        type: m.type,
        tags: m.tags ?? [],
        context_window: m.context_window ?? null,
        max_tokens: m.max_tokens ?? null,
        pricing: m.pricing ?? null,
      };
      return record;
    });
    for (const [i, record] of records.entries()) {
      const model = models[i] as ModelConfig;
      this.#recordJson.set(record.id, JSON.stringify(record));
      this.#types.set(record.id, record.type);
      this.#endpoints.set(
        record.id,
        model.endpoints.map(function toEndpoint(e): Endpoint {
          const pricing = mergePricing(model.pricing, e.pricing);
          return { modelId: model.id, provider: e.provider, model: e.model, maxTokens: model.max_tokens, prices: pricing === undefined ? undefined : parsePrices(pricing) };
        }),
      );
    }
    // A base name the catalog sends as it is (`gpt-4o`) prices its other names before any snapshot of it does.
    const byAlias = new Set<string>();
    for (const endpoints of this.#endpoints.values()) {
      for (const e of endpoints) {
        if (e.prices === undefined) continue;
        const key = upstreamKey(e.provider, e.model);
        if (!this.#upstreamPrices.has(key)) this.#upstreamPrices.set(key, e.prices);
        const base = upstreamKey(e.provider, baseModel(e.model));
        if (!this.#basePrices.has(base) || (base === key && !byAlias.has(base))) this.#basePrices.set(base, e.prices);
        if (base === key) byAlias.add(base);
      }
    }
    this.records = records;
    this.listJson = JSON.stringify({ object: 'list', data: records });
  }

  recordJson(id: string): string | undefined {
    return this.#recordJson.get(id);
  }

  endpoints(id: string): readonly Endpoint[] | undefined {
    return this.#endpoints.get(id);
  }

  /**
   * What the catalog charges for `model` at provider `provider`: the prices
   * of its first endpoint sending that model there, so reaching the same
   * upstream model as `<provider>/<model>` costs what the catalog says.
   * Failing that, the prices of another name of it sent there (a dated
   * snapshot's or a Bedrock inference profile's alias first, else the first
   * of its snapshots), so no such name is free.
   */
  upstreamPrices(provider: string, model: string): Prices | undefined {
    return this.#upstreamPrices.get(upstreamKey(provider, model)) ?? this.#basePrices.get(upstreamKey(provider, baseModel(model)));
  }

  /** The catalog type of a model (undefined for one not in the catalog). */
  typeOf(id: string): ModelType | undefined {
    return this.#types.get(id);
  }
}

/**
 * One upstream model, however a request names it: Gemini takes `models/x`
 * for `x` (the google adapter strips the prefix), so a direct
 * `google/models/x` is priced as the catalog prices `x`.
 */
function upstreamKey(provider: string, model: string): string {
  return `${provider}\u0000${model.replace(/^models\//, '')}`;
}

/** A Bedrock cross-Region inference profile's geography, before the model id it names (`us.anthropic.claude-…`). */
const INFERENCE_PROFILE = /^(?:global|us|us-gov|eu|apac|jp|au|ca)\.(?=[^.]+\.)/;
/** A snapshot's date (`-20250929`, `-2024-08-06`) or a moving alias's `-latest`, at the end of a model name. */
const SNAPSHOT = /-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;

/**
 * The name a model goes by whichever of its names a request uses:
 * `claude-sonnet-4-5-20250929` and `claude-sonnet-4-5` are both
 * `claude-sonnet-4-5`; `us.anthropic.claude-…` is `anthropic.claude-…`.
 */
function baseModel(model: string): string {
  return model.replace(/^models\//, '').replace(INFERENCE_PROFILE, '').replace(SNAPSHOT, '');
}
