// A request body as JSON checked against a protocol's schema, or the 400
// that says which field is wrong (the protocol's error format words it).
import type { z } from 'zod';
import { GatewayHttpError } from './http-error.js';
import { firstProblem } from './schema-problem.js';

export function parseJsonBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new GatewayHttpError(400, 'We could not parse the JSON body of your request.', { code: 'invalid_json' });
  }
}

export function validated<T extends z.ZodType>(schema: T, json: unknown): z.output<T> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const problem = firstProblem(parsed.error);
  throw new GatewayHttpError(400, problem.message, { param: problem.param, code: 'invalid_value' });
}
