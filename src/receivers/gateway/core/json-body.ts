// A request body as JSON checked against a protocol's schema, or the 400
// that says which field is wrong (the protocol's error format words it).
import type { z } from 'zod';
import { GatewayHttpError } from './http-error.js';
import { firstProblem } from './schema-problem.js';

/**
 * How deep a request body's arrays and objects may nest, the body itself
 * being the first level. JSON.parse takes any depth, but what the gateway
 * does with a request walks it recursively (the raw-text check, a tool
 * schema translated for another provider, the body serialized for an
 * upstream), and a body nested thousands deep overflowed the stack into a
 * 500. OpenAI's structured outputs cap a schema's nesting at a handful of
 * levels: this is far above what any request needs.
 */
export const MAX_JSON_DEPTH = 128;

const NOT_JSON = 'We could not parse the JSON body of your request.';

/** JSON.parse of a body; text that is not JSON (worded `notJson`) or nests deeper than MAX_JSON_DEPTH is a 400. */
export function parseJsonBody(body: Buffer | string, notJson = NOT_JSON): unknown {
  let json: unknown;
  try {
    json = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw new GatewayHttpError(400, notJson, { code: 'invalid_json' });
  }
  if (typeof json === 'object' && json !== null && nestsDeeper(json, MAX_JSON_DEPTH)) {
    throw new GatewayHttpError(400, `The JSON body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`, { code: 'json_too_deep' });
  }
  return json;
}

/** Whether `value` holds arrays or objects more than `levels` deep, counting itself; recurses at most `levels` calls deep. */
function nestsDeeper(value: object, levels: number): boolean {
  if (levels === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (typeof item === 'object' && item !== null && nestsDeeper(item, levels - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (typeof item === 'object' && item !== null && nestsDeeper(item, levels - 1)) return true;
  }
  return false;
}

export function validated<T extends z.ZodType>(schema: T, json: unknown): z.output<T> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const problem = firstProblem(parsed.error);
  throw new GatewayHttpError(400, problem.message, { param: problem.param, code: 'invalid_value' });
}
