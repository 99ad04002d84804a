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
    for (const endpoints of this.#endpoints.values()) {
      for (const e of endpoints) {
        const key = upstreamKey(e.provider, e.model);
        if (e.prices !== undefined && !this.#upstreamPrices.has(key)) this.#upstreamPrices.set(key, e.prices);
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
   */
  upstreamPrices(provider: string, model: string): Prices | undefined {
    return this.#upstreamPrices.get(upstreamKey(provider, model));
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
