// Request bodies of the drains API, in the shape of Vercel's drains API.
// Problems are reported by JSON path: `delivery.endpoint.traces: must be an https URL`;
// configErrorMap words a missing field `required` and one of the wrong type by its type.
import { z } from 'zod';
import { configErrorMap, formatIssues } from '../../config/format-issues.js';
import { keysParsed } from '../../config/when-parsed.js';
import { isPemBundle } from '../../shared/pem.js';
import { urlProblem } from '../../exporters/drains/config.js';
import { checkHeaders } from '../../exporters/otlphttp/headers.js';
import { MAX_HEADERS, MAX_NAME_LENGTH, MAX_RULES } from '../../exporters/drains/limits.js';
import { isPlainObject } from '../../shared/plain-object.js';
import { ENVIRONMENT_PROBLEM, isEnvironment, isPathPrefix, PATH_PREFIX_PROBLEM } from '../../processors/sampling/config.js';

const headersSchema = z
  .record(z.string().min(1), z.string({ error: 'must be a string' }))
  .refine((headers) => Object.keys(headers).length <= MAX_HEADERS, { error: `must have at most ${MAX_HEADERS} headers` })
  .superRefine(checkHeaders);

export const deliverySchema = z
  .strictObject({
    type: z.literal('otlphttp').default('otlphttp'),
    endpoint: z.strictObject({ traces: z.string() }),
    encoding: z.enum(['proto', 'json']).default('proto'),
    compression: z.enum(['gzip', 'none']).default('gzip'),
    headers: headersSchema.default({}),
    secret: z.string().min(1).optional(),
    insecure: z.boolean().default(false),
    tls: z.strictObject({ ca: z.string().refine(isPemBundle, { error: 'must be a PEM certificate' }) }).optional(),
  })
  .superRefine(
    function checkEndpoint(delivery, ctx) {
      const problem = urlProblem(delivery.endpoint.traces, delivery.insecure);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['endpoint', 'traces'], message: problem });
    },
    // Beside the other fields' problems, not only once they are fixed.
    { when: keysParsed('endpoint', 'insecure') },
  );

/** Control and bidirectional-formatting characters: they break a name's line or reorder what it reads as. */
const CONTROL_CHARACTERS = /[\p{Cc}\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

export const ruleSchema = z.strictObject({
  type: z.literal('head_sampling').default('head_sampling'),
  env: z.string().min(1, { abort: true }).refine(isEnvironment, { error: ENVIRONMENT_PROBLEM }),
  rate: z.number({ error: 'must be a number from 0 to 1' }).min(0, { error: 'must be a number from 0 to 1' }).max(1, { error: 'must be a number from 0 to 1' }),
  requestPath: z.string().refine(isPathPrefix, { error: PATH_PREFIX_PROBLEM }).optional(),
});

export const drainBodySchema = z.strictObject({
  name: z
    .string()
    .min(1, { error: 'must not be empty', abort: true })
    .max(MAX_NAME_LENGTH, { error: `must be at most ${MAX_NAME_LENGTH} characters long` })
    // The name is how the console, its delete confirmation and the logs tell drains apart.
    .refine((name) => name.trim() !== '', { error: 'must not be blank' })
    .refine((name) => !CONTROL_CHARACTERS.test(name), { error: 'must not contain control characters (a line break, a tab)' }),
  delivery: deliverySchema,
  sampling: z.array(ruleSchema).max(MAX_RULES, { error: `must have at most ${MAX_RULES} rules` }).default([]),
  status: z.enum(['enabled', 'disabled']).default('enabled'),
});

/** PATCH: any subset of the create body; `delivery` merges key by key, `secret: null` removes the secret. */
export const drainPatchSchema = z.strictObject({
  name: z.unknown().optional(),
  delivery: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  sampling: z.unknown().optional(),
  status: z.unknown().optional(),
});

export const testBodySchema = z.strictObject({ delivery: deliverySchema });

/** POST /v1/drains/test with `drain`: the delivery given merges over that drain's stored one, as PATCH does. */
export const testOverDrainSchema = z.strictObject({
  drain: z.string({ error: 'must be a drain id' }).min(1, { error: 'must be a drain id' }),
  delivery: z.record(z.string(), z.unknown(), { error: 'must be an object' }).default({}),
});

/**
 * `insecure` is a delivery key, but a drain in YAML sets it at its top
 * level, where DESIGN's "unless the drain sets insecure" reads it too: a
 * top-level `insecure` moves into `delivery`. Given in both places with
 * different values it stays where it is, and the schema names it.
 */
export function liftInsecure(body: unknown): unknown {
  if (!isPlainObject(body) || !Object.hasOwn(body, 'insecure')) return body;
  const { insecure, ...rest } = body;
  const delivery = rest['delivery'] ?? {};
  if (!isPlainObject(delivery)) return body;
  if (Object.hasOwn(delivery, 'insecure') && delivery['insecure'] !== insecure) return body;
  return { ...rest, delivery: { ...delivery, insecure } };
}

export type DrainBody = z.output<typeof drainBodySchema>;
export type DeliveryBody = z.output<typeof deliverySchema>;
export type RuleBody = z.output<typeof ruleSchema>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

export function parseBody<S extends z.ZodType>(schema: S, input: unknown): Parsed<z.output<S>> {
  const result = schema.safeParse(input, { error: configErrorMap });
  if (result.success) return { ok: true, value: result.data };
  const problems = formatIssues(result.error.issues).map((line) => line.replace(/^\(root\): /, 'body: '));
  return { ok: false, problems };
}
