// GET /v1/ai/config: the catalog as getAvailableModels() parses it. The two
// client generations each accept only their own specificationVersion literal
// ("v3" for @ai-sdk/gateway 3.x, "v4" for 4.x) and this request carries no
// version header, so the user-agent tells them apart. Both answers are
// serialized once per catalog.
import type { IncomingMessage } from 'node:http';
import type { Catalog, ModelRecord } from '../core/catalog.js';
import { sendJson } from '../core/http-error.js';
import type { GatewayServices, RouteRequest } from '../core/protocol.js';

type SpecVersion = 'v3' | 'v4';

interface ConfigAnswers {
  readonly v3: string;
  readonly v4: string;
}

const answers = new WeakMap<Catalog, ConfigAnswers>();

/** 3.x sends `ai-sdk/gateway/3.x ai-sdk/provider-utils/4.x`, 4.x `ai-sdk-gateway/4.x ai-sdk-provider-utils/5.x`. */
export function specVersionOf(req: IncomingMessage): SpecVersion {
  const agent = req.headers['user-agent'] ?? '';
  if (agent.includes('ai-sdk/gateway/') || agent.includes('ai-sdk/provider-utils/4.')) return 'v3';
  return 'v4';
}

function pricingOf(record: ModelRecord): Record<string, string> | null {
  const pricing = record.pricing;
  const input = pricing?.['input'];
  const output = pricing?.['output'];
  if (input === undefined && output === undefined) return null;
  // The client requires both prices when pricing is present at all; one left out is charged as 0 (an embedding model's output).
  const out: Record<string, string> = { input: input ?? '0', output: output ?? '0' };
  const cacheRead = pricing?.['input_cache_read'];
  const cacheWrite = pricing?.['input_cache_write'];
  if (cacheRead !== undefined) out['input_cache_read'] = cacheRead;
  if (cacheWrite !== undefined) out['input_cache_write'] = cacheWrite;
  return out;
}

function serialize(catalog: Catalog, version: SpecVersion): string {
  const models = catalog.records.map(function toEntry(record) {
    const slash = record.id.indexOf('/');
    return {
      id: record.id,
      name: record.name,
      description: record.description ?? null,
      pricing: pricingOf(record),
      specification: { specificationVersion: version, provider: record.owned_by, modelId: record.id.slice(slash + 1) },
      modelType: record.type,
    };
  });
  return JSON.stringify({ models });
}

export function handleConfig(services: GatewayServices, request: RouteRequest): void {
  let known = answers.get(services.catalog);
  if (known === undefined) {
    known = { v3: serialize(services.catalog, 'v3'), v4: serialize(services.catalog, 'v4') };
    answers.set(services.catalog, known);
  }
  sendJson(request.res, 200, known[specVersionOf(request.req)]);
}
