// A stored API drain (drains.json, or Redis in cluster mode) read back:
// every field checked, so a damaged or hand-edited file stops the start with
// the field that is wrong instead of running a drain that half works.
import { z } from 'zod';
import { configErrorMap, formatIssues } from '../../config/format-issues.js';
import { samplingRuleSchema } from '../../processors/sampling/config.js';
import { urlProblem } from './config.js';
import type { DrainDefinition } from './definition.js';
import { MAX_HEADERS, MAX_NAME_LENGTH, MAX_RULES } from './limits.js';

const deliverySchema = z
  .strictObject({
    url: z.string(),
    encoding: z.enum(['json', 'protobuf']),
    compression: z.enum(['gzip', 'none']),
    headers: z.record(z.string(), z.string()).refine((h) => Object.keys(h).length <= MAX_HEADERS, { error: `must have at most ${MAX_HEADERS} headers` }),
    secret: z.string().optional(),
    ca: z.string().optional(),
    caFile: z.string().optional(),
    insecure: z.boolean(),
  })
  .superRefine(function checkUrl(delivery, ctx) {
    const problem = urlProblem(delivery.url, delivery.insecure);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: problem });
  });

// A drain stored before a path_prefix had to begin with `/`, or its environment
// be written without a space around it, still starts (its rule matches nothing,
// as it always did); the API names the problem at its next change.
const storedRuleSchema = samplingRuleSchema.extend({ environment: z.string().min(1, { error: 'must not be empty' }), path_prefix: z.string().optional() });

const storedDrainSchema = z.strictObject({
  id: z.string().regex(/^drn_[A-Za-z0-9_-]+$/, { error: 'must be a drain id (drn_...)' }),
  name: z.string().min(1).max(MAX_NAME_LENGTH),
  source: z.literal('api').optional(),
  enabled: z.boolean(),
  createdAt: z.number().int().nonnegative(),
  updatedAt: z.number().int().nonnegative(),
  delivery: deliverySchema,
  sampling: z.array(storedRuleSchema).max(MAX_RULES),
  queue: z.strictObject({ maxSizeBytes: z.number().int().positive().optional(), onFull: z.enum(['drop', 'refuse']).optional() }).optional(),
});

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Parses one stored API drain; throws an Error listing each bad field under `at`. */
export function parseStoredDrain(value: unknown, at: readonly PropertyKey[]): DrainDefinition {
  const result = storedDrainSchema.safeParse(value, { error: configErrorMap });
  if (!result.success) throw new Error(formatIssues(result.error.issues, at).join('; '));
  const drain = result.data;
  const { queue, ...rest } = drain;
  return {
    ...rest,
    source: 'api',
    delivery: withoutUndefined(drain.delivery),
    sampling: drain.sampling.map(withoutUndefined),
    ...(queue === undefined ? {} : { queue: withoutUndefined(queue) }),
  } as DrainDefinition;
}
