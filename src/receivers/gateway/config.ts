// receivers.gateway: keys as DESIGN section 4 names them. Durations parse to
// ms and sizes to bytes here; each provider entry is validated by its type's
// adapter schema, so a bad provider key is reported under its YAML path.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { keyText } from '../../config/key-text.js';
import { configErrorMap, forwardIssues } from '../../config/format-issues.js';
import { keysParsed } from '../../config/when-parsed.js';
import { positiveByteSize, positiveTimerDuration } from '../../shared/units.js';
import { endpointText } from '../../core/listener/endpoint.js';
import { checkHttpTimeouts, corsSchema, httpListenerShape } from '../../core/listener/config.js';
import { BUDGET_PERIODS } from '../../shared/periods.js';
import { basicAuthorization, hasAuthorization } from '../../shared/url-credentials.js';
import { modelSchema } from './core/catalog-config.js';
import { providerConfigSchemas, providerTypes } from './providers/config-schemas.js';
import type { BaseProviderConfig } from './providers/shared/types.js';

const bareKeySchema = keyText({ min: 1 });

const keyRecordSchema = z.strictObject({
  key: keyText({ min: 1 }),
  /** Shown in metrics, reports and logs instead of the secret. */
  name: z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters').optional(),
  /** Requests allowed per fixed minute window. */
  requests_per_minute: z.number().int().positive().optional(),
  /** Tokens (input and output, as upstreams report them) per fixed minute window. */
  tokens_per_minute: z.number().int().positive().optional(),
  budget: z
    .strictObject({
      // Up to a quadrillion: past 1e21 a number no longer has a plain decimal form to read exactly.
      usd: z.number().nonnegative().max(1e15),
      period: z.enum(BUDGET_PERIODS),
    })
    .optional(),
});

/** A bare string or a record; each form reports its own problems (a union would only say "Invalid input"). */
const apiKeySchema = z.unknown().transform(function validateKey(value, ctx): string | z.output<typeof keyRecordSchema> {
  if (typeof value !== 'string' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    ctx.addIssue({ code: 'custom', message: 'must be a key string or a key record ({ key, name, ... })' });
    return z.NEVER;
  }
  const parsed = typeof value === 'string' ? bareKeySchema.safeParse(value, { error: configErrorMap }) : keyRecordSchema.safeParse(value, { error: configErrorMap });
  if (!parsed.success) {
    forwardIssues(parsed.error.issues, ctx);
    return z.NEVER;
  }
  return parsed.data;
});

const providerSchema = z
  .looseObject({
    type: z.string(),
    first_byte_timeout: positiveTimerDuration().optional(),
    stream_idle_timeout: positiveTimerDuration().optional(),
  })
  .transform(function validateProvider(raw, ctx): BaseProviderConfig {
    const schema = providerConfigSchemas.get(raw.type);
    if (schema === undefined) {
      ctx.addIssue({ code: 'custom', path: ['type'], message: `must be one of ${providerTypes().join(', ')}` });
      return z.NEVER;
    }
    const parsed = schema.safeParse(stripUndefined(raw), { error: configErrorMap });
    if (!parsed.success) {
      forwardIssues(parsed.error.issues, ctx);
      return z.NEVER;
    }
    const clash = otherAuthorization(parsed.data);
    if (clash !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['base_url'], message: `its credentials are sent as Basic authorization, and ${clash} goes in the same Authorization header; leave one out` });
      return z.NEVER;
    }
    return parsed.data;
  });

/**
 * What else a provider whose base_url has credentials (sent as Basic
 * authorization, core/upstream.ts) would put in the Authorization header:
 * one of the two would be lost.
 */
function otherAuthorization(config: BaseProviderConfig): string | undefined {
  if (basicAuthorization(new URL(config.base_url)) === undefined) return undefined;
  if (hasAuthorization(config.headers ?? {})) return 'a `headers` Authorization';
  if (config.type === 'bedrock') return "Bedrock's SigV4 signature (or API key)";
  if (config.type === 'openai' && typeof config.api_key === 'string' && config.api_key !== '') return "api_key's Bearer token";
  return undefined;
}

const endpointSchema = endpointText('127.0.0.1:8787');

export const gatewayConfigSchema = z
  .strictObject({
    endpoint: endpointSchema,
    environment: z.string().min(1),
    api_keys: z.array(apiKeySchema).min(1, 'must list at least one key'),
    max_request_body_size: positiveByteSize(),
    first_byte_timeout: positiveTimerDuration(),
    stream_idle_timeout: positiveTimerDuration(),
    providers: z.record(z.string().regex(/^[^/\s]+$/, 'a provider slug must not contain "/" or whitespace'), providerSchema),
    models: z.array(modelSchema),
    capture_content: z.boolean(),
    ...httpListenerShape,
    cors: corsSchema.optional(),
  })
  // Each check runs once the keys it reads parsed, so a bad key elsewhere in the section hides none of them.
  .superRefine(checkHttpTimeouts, { when: keysParsed('read_header_timeout', 'read_timeout') })
  .superRefine(function checkKeys(config, ctx) {
    const names = new Set<string>();
    const keys = new Set<string>();
    config.api_keys.forEach(function checkKey(entry, i) {
      const key = typeof entry === 'string' ? entry : entry.key;
      const name = apiKeyName(entry);
      if (keys.has(key)) ctx.addIssue({ code: 'custom', path: ['api_keys', i], message: 'duplicate key' });
      if (names.has(name)) ctx.addIssue({ code: 'custom', path: ['api_keys', i, 'name'], message: `duplicate key name ${name}` });
      keys.add(key);
      names.add(name);
    });
  }, { when: keysParsed('api_keys') })
  .superRefine(function checkModels(config, ctx) {
    const seen = new Set<string>();
    config.models.forEach(function checkModel(model, i) {
      if (seen.has(model.id)) ctx.addIssue({ code: 'custom', path: ['models', i, 'id'], message: `duplicate model id ${model.id}` });
      seen.add(model.id);
      model.endpoints.forEach(function checkEndpoint(endpoint, j) {
        if (config.providers[endpoint.provider] === undefined) {
          ctx.addIssue({ code: 'custom', path: ['models', i, 'endpoints', j, 'provider'], message: `must name a provider configured under providers (${endpoint.provider} is not)` });
        }
      });
    });
  }, { when: keysParsed('models', 'providers') });

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;
export type ApiKeyEntry = GatewayConfig['api_keys'][number];

/** A key's name: its own, or for a bare key `key-` and the first 8 hex digits of its SHA-256 (never the secret). */
/**
 * Usage (spend, budgets, generation records, reports) is kept by key name,
 * so a name is one key wherever it appears: two gateways may share a key
 * under one name, but may not give one name to two different keys.
 */
export function checkKeyNamesTogether(gateways: ReadonlyArray<{ readonly id: string; readonly config: GatewayConfig }>): string[] {
  const owners = new Map<string, { readonly key: string; readonly id: string }>();
  const problems: string[] = [];
  for (const { id, config } of gateways) {
    config.api_keys.forEach(function checkName(entry, i) {
      const key = typeof entry === 'string' ? entry : entry.key;
      const name = apiKeyName(entry);
      const owner = owners.get(name);
      if (owner === undefined) owners.set(name, { key, id });
      else if (owner.key !== key) problems.push(`${id}.api_keys[${i}].name: key name ${name} is given to another key in ${owner.id}; usage is kept by name, so each name must stand for one key`);
    });
  }
  return problems;
}

export function apiKeyName(entry: ApiKeyEntry): string {
  if (typeof entry !== 'string' && entry.name !== undefined) return entry.name;
  const key = typeof entry === 'string' ? entry : entry.key;
  return `key-${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
}

export function createDefaultConfig() {
  return {
    endpoint: '127.0.0.1:8787',
    environment: 'production',
    api_keys: [],
    max_request_body_size: '20MiB',
    first_byte_timeout: '30s',
    stream_idle_timeout: '60s',
    providers: {},
    models: [],
    capture_content: false,
  };
}

function stripUndefined(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = v;
  return out;
}
