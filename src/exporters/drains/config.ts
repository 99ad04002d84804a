// The top-level `drains:` list (config-managed drains) and the `drains`
// exporter's own settings. The list is validated at `drains[i].<key>` by the
// config loader and injected into the exporter as its `drains` key.
import { z } from 'zod';
import { keysParsed } from '../../config/when-parsed.js';
import { caFileProblem } from '../../shared/pem.js';
import { positiveByteSize, positiveTimerDuration, timerDuration } from '../../shared/units.js';
import { samplingRuleSchema } from '../../processors/sampling/config.js';
import { queuedSenderConfigShape } from '../exporterhelper/index.js';
import { checkHeaders } from '../otlphttp/headers.js';
import { MAX_DRAINS, MAX_HEADERS, MAX_NAME_LENGTH, MAX_RULES } from './limits.js';

export const ON_FULL = ['drop', 'refuse'] as const;

const queueOverrideSchema = z.strictObject({
  max_size: positiveByteSize().optional(),
  on_full: z.enum(ON_FULL).optional(),
});

export const drainConfigSchema = z
  .strictObject({
    name: z.string({ error: 'required' }).min(1, { error: 'must not be empty' }).max(MAX_NAME_LENGTH, { error: `must be at most ${MAX_NAME_LENGTH} characters long` }),
    url: z.string({ error: 'required' }),
    format: z.enum(['protobuf', 'json']).default('protobuf'),
    compression: z.enum(['gzip', 'none']).default('gzip'),
    headers: z
      .record(z.string(), z.string({ error: 'must be a string' }))
      .refine((headers) => Object.keys(headers).length <= MAX_HEADERS, { error: `must have at most ${MAX_HEADERS} headers` })
      .superRefine(checkHeaders)
      .default({}),
    secret: z.string().optional(),
    sampling: z.array(samplingRuleSchema).max(MAX_RULES, { error: `must have at most ${MAX_RULES} rules` }).default([]),
    insecure: z.boolean({ error: 'must be true or false' }).default(false),
    tls: z
      .strictObject({
        ca_file: z.string().min(1).superRefine(function checkCaFile(path, ctx) {
          const problem = caFileProblem(path);
          if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
        }),
      })
      .optional(),
    /** Per-drain overrides of the exporter's sending_queue. */
    sending_queue: queueOverrideSchema.optional(),
  })
  .superRefine(
    function checkUrl(drain, ctx) {
      const problem = urlProblem(drain.url, drain.insecure);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: problem });
    },
    // Beside the drain's other problems, not only once they are fixed.
    { when: keysParsed('url', 'insecure') },
  );

export type DrainConfig = z.output<typeof drainConfigSchema>;

/** Why a drain URL is refused, or undefined when it is fine. */
export function urlProblem(url: string, insecure: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an https URL';
  }
  if (parsed.protocol === 'https:') return undefined;
  // DESIGN's words exactly; the README says how insecure: true lets http through.
  if (parsed.protocol === 'http:' && insecure) return undefined;
  return 'must be an https URL';
}

export const drainListSchema = z
  .array(drainConfigSchema, { error: 'must be a list of drains' })
  .max(MAX_DRAINS, { error: `must have at most ${MAX_DRAINS} drains` })
  .superRefine(
    function uniqueNames(drains, ctx) {
      const seen = new Set<string>();
      drains.forEach(function check(drain, index) {
        if (seen.has(drain.name)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `duplicate drain name "${drain.name}"` });
        seen.add(drain.name);
      });
    },
    // Beside a drain's other problems, not only once they are fixed: it reads names alone.
    { when: namesParsed },
  );

/** True when every drain is a mapping whose name parsed. */
function namesParsed(payload: z.core.ParsePayload): boolean {
  return !payload.issues.some((issue) => issue.path === undefined || issue.path.length < 2 || issue.path[1] === 'name');
}

/** The same sending_queue and retry_on_failure keys as every queued exporter. */
export const drainsExporterConfigSchema = z
  .strictObject({
    /** Injected from the top-level `drains:` list. */
    drains: z.custom<DrainConfig[]>().default([]),
    /** ms */
    decision_wait: timerDuration(),
    max_pending_spans: z.number().int().positive(),
    /** ms, per delivery request */
    timeout: positiveTimerDuration(),
    ...queuedSenderConfigShape,
  })
  .superRefine(function drainsQueueOnDisk(config, ctx) {
    // Drains promise durability: their queues (and the pending hold) are always on disk.
    if (config.sending_queue.storage !== 'disk') ctx.addIssue({ code: 'custom', path: ['sending_queue', 'storage'], message: 'drains always queue on disk' });
    if (!config.sending_queue.enabled) ctx.addIssue({ code: 'custom', path: ['sending_queue', 'enabled'], message: 'drains always queue on disk' });
  });

export type DrainsExporterConfig = z.output<typeof drainsExporterConfigSchema>;

export function createDefaultConfig() {
  return {
    decision_wait: '2s',
    max_pending_spans: 100_000,
    timeout: '10s',
  };
}
