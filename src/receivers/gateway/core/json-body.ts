// A request body as JSON checked against a protocol's schema, or the 400
// that says which field is wrong (the protocol's error format words it).
import type { z } from 'zod';
import { GatewayHttpError } from './http-error.js';
import { firstProblem } from './schema-problem.js';
import { MAX_JSON_DEPTH, nestsTooDeep } from '../providers/shared/json-depth.js';

const NOT_JSON = 'We could not parse the JSON body of your request.';

/** JSON.parse of a body; text that is not JSON (worded `notJson`) or nests deeper than MAX_JSON_DEPTH is a 400. */
export function parseJsonBody(body: Buffer | string, notJson = NOT_JSON): unknown {
  let json: unknown;
  try {
    json = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw new GatewayHttpError(400, notJson, { code: 'invalid_json' });
  }
  if (nestsTooDeep(json)) {
    throw new GatewayHttpError(400, `The JSON body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`, { code: 'json_too_deep' });
  }
  return json;
}

export function validated<T extends z.ZodType>(schema: T, json: unknown): z.output<T> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const problem = firstProblem(parsed.error);
  throw new GatewayHttpError(400, problem.message, { param: problem.param, code: 'invalid_value' });
}
