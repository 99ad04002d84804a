// Headers configured for deliveries (otlphttp exporters, drains from YAML or
// the API) are checked when configured: one that HTTP cannot carry would
// otherwise fail every delivery, retried until max_age drops the data.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { z } from 'zod';

/** Set by the exporter on every delivery, or by HTTP itself: not configurable. */
const OWNED = new Set(['content-type', 'content-encoding', 'content-length', 'user-agent', 'x-sluice-signature', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'expect', 'te', 'trailer', 'proxy-connection']);

/** Why a header cannot be sent with each delivery, or undefined when it can. */
export function headerProblem(name: string, value: string): string | undefined {
  try {
    validateHeaderName(name);
  } catch {
    return 'is not a valid header name';
  }
  if (OWNED.has(name.toLowerCase())) return 'is set by the exporter or by HTTP itself, not by configuration';
  try {
    validateHeaderValue(name, value);
  } catch {
    return 'has a value a header cannot carry (a line break, a control character or a character beyond Latin-1)';
  }
  return undefined;
}

/**
 * Adds an issue per header that cannot be sent, at that header's path. Header
 * names are case-insensitive: `X-Key` and `x-key` would go as one header whose
 * value is both joined by a comma, which no destination reads as either.
 */
export function checkHeaders(headers: Readonly<Record<string, string>>, ctx: z.RefinementCtx): void {
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const first = seen.get(name.toLowerCase());
    const problem = headerProblem(name, value) ?? (first === undefined ? undefined : `repeats header ${first} (header names are case-insensitive)`);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: problem });
    if (first === undefined) seen.set(name.toLowerCase(), name);
  }
}
