// Between the API's shape (Vercel's drains: `encoding: proto`, `rate` 0..1,
// `env`, `requestPath`) and the drain definitions the exporter runs.
import type { DrainChanges, DrainState } from '../../exporters/drains/controller.js';
import type { DrainDefinition, DrainDelivery } from '../../exporters/drains/definition.js';
import { DROP_REASONS } from '../../exporters/drains/delivery-stats.js';
import type { SamplingRule } from '../../processors/sampling/rules.js';
import { originOf, redactUrl, unredactUrl } from '../../shared/redact-url.js';
import type { DeliveryBody, DrainBody, RuleBody } from './schema.js';

// rate x 100 in doubles gives 10.000000000000002 for 0.1; 15 significant digits is the decimal the user meant.
const SIGNIFICANT_DIGITS = 15;

export function rateToPercentage(rate: number): number {
  return Number((rate * 100).toPrecision(SIGNIFICANT_DIGITS));
}

export function percentageToRate(percentage: number): number {
  return Number((percentage / 100).toPrecision(SIGNIFICANT_DIGITS));
}

export function deliveryFromBody(body: DeliveryBody): DrainDelivery {
  return {
    url: body.endpoint.traces,
    encoding: body.encoding === 'proto' ? 'protobuf' : 'json',
    compression: body.compression,
    headers: body.headers,
    insecure: body.insecure,
    ...(body.secret === undefined ? {} : { secret: body.secret }),
    ...(body.tls === undefined ? {} : { ca: body.tls.ca }),
  };
}

function ruleFromBody(rule: RuleBody): SamplingRule {
  return { environment: rule.env, percentage: rateToPercentage(rule.rate), path_prefix: rule.requestPath };
}

export function changesFromBody(body: DrainBody): DrainChanges {
  return {
    name: body.name,
    enabled: body.status === 'enabled',
    delivery: deliveryFromBody(body.delivery),
    sampling: body.sampling.map(ruleFromBody),
  };
}

/** A drain as a full request body, secrets included: PATCH merges into this and validates the result. */
export function bodyOf(definition: DrainDefinition): Record<string, unknown> {
  const { delivery } = definition;
  return {
    name: definition.name,
    delivery: {
      type: 'otlphttp',
      endpoint: { traces: delivery.url },
      encoding: delivery.encoding === 'protobuf' ? 'proto' : 'json',
      compression: delivery.compression,
      headers: { ...delivery.headers },
      insecure: delivery.insecure,
      ...(delivery.secret === undefined ? {} : { secret: delivery.secret }),
      ...(delivery.ca === undefined ? {} : { tls: { ca: delivery.ca } }),
    },
    sampling: definition.sampling.map(function ruleBody(rule) {
      const path = rule.path_prefix ?? '';
      return { type: 'head_sampling', env: rule.environment, rate: percentageToRate(rule.percentage), ...(path === '' ? {} : { requestPath: path }) };
    }),
    status: definition.enabled ? 'enabled' : 'disabled',
  };
}

/** A PATCH body over the current drain: top-level keys replace, `delivery` merges, null removes. */
export function mergePatch(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (key === 'delivery' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const delivery: Record<string, unknown> = { ...(current['delivery'] as Record<string, unknown>) };
      for (const [field, fieldValue] of Object.entries(value)) {
        if (fieldValue === null) delete delivery[field];
        else delivery[field] = fieldValue;
      }
      merged['delivery'] = delivery;
    } else {
      merged[key] = value;
    }
  }
  return merged;
}

export type Patched = { readonly ok: true; readonly body: Record<string, unknown> } | { readonly ok: false; readonly problems: string[] };

/**
 * `patch` merged over the stored drain. A URL echoed back as it was shown
 * (credentials as `***`), whole or with only other parts edited, keeps the
 * stored credentials, as an omitted URL does (unredactUrl).
 */
export function patchedBody(definition: DrainDefinition, patch: Record<string, unknown>): Patched {
  const merged = mergePatch(bodyOf(definition), patch);
  const delivery = merged['delivery'] as Record<string, unknown>;
  const endpoint = delivery['endpoint'];
  if (endpoint === null || typeof endpoint !== 'object' || !('traces' in endpoint) || typeof endpoint.traces !== 'string') return { ok: true, body: merged };
  const url = unredactUrl(endpoint.traces, definition.delivery.url);
  if ('problem' in url) return { ok: false, problems: [`delivery.endpoint.traces: ${url.problem}`] };
  delivery['endpoint'] = { ...endpoint, traces: url.url };
  return { ok: true, body: merged };
}

/**
 * Header values are never shown, so a patch carries them over only while the
 * endpoint keeps its origin: one that moves the drain (or tests it) elsewhere
 * gives them again. Asked once the merged body is valid (`url` is its URL).
 */
export function headersMoveProblem(definition: DrainDefinition, patch: Record<string, unknown>, url: string): string | undefined {
  const patchDelivery = patch['delivery'];
  const headersGiven = patchDelivery !== null && typeof patchDelivery === 'object' && 'headers' in patchDelivery;
  if (headersGiven || Object.keys(definition.delivery.headers).length === 0) return undefined;
  const from = originOf(definition.delivery.url);
  const to = originOf(url);
  if (from === to) return undefined;
  return `delivery.headers: the endpoint moves from ${from ?? 'its stored origin'} to ${to ?? 'another origin'}; give the headers again (or {} for none): stored header values are sent only to the origin they were set for`;
}

/** The response: never a secret, a header value or a password in the URL. */
export function viewOf(state: DrainState): Record<string, unknown> {
  const { definition, stats, startError } = state;
  const body = bodyOf(definition);
  const { delivery } = definition;
  const window = stats.window();
  let status: string = definition.enabled ? 'enabled' : 'disabled';
  if (definition.enabled && (stats.errored || startError !== undefined)) status = 'errored';
  const counters = stats.counters;
  const dropped: Record<string, number> = {};
  for (const reason of DROP_REASONS) dropped[reason] = counters.spansDropped[reason];
  return {
    id: definition.id,
    name: definition.name,
    source: definition.source,
    status,
    createdAt: definition.createdAt,
    updatedAt: definition.updatedAt,
    delivery: {
      type: 'otlphttp',
      endpoint: { traces: redactUrl(delivery.url) },
      encoding: delivery.encoding === 'protobuf' ? 'proto' : 'json',
      compression: delivery.compression,
      headers: Object.keys(delivery.headers),
      secret: delivery.secret !== undefined,
      insecure: delivery.insecure,
      tls: { ca: delivery.ca !== undefined || delivery.caFile !== undefined },
    },
    sampling: body['sampling'],
    deliveries: {
      succeeded: counters.deliveriesSucceeded,
      failed: counters.deliveriesFailed,
      pastHour: window,
      spansSent: counters.spansSent,
      spansDropped: dropped,
      lastSuccessAt: counters.lastSuccessAt,
      lastFailureAt: counters.lastFailureAt,
      lastError: counters.lastError,
    },
    ...(startError === undefined ? {} : { error: startError }),
  };
}
