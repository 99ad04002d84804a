// The `sampling` processor's config, and the rule schema drains share.
import { z } from 'zod';
import { timerDuration } from '../../shared/units.js';

export const DEFAULT_DECISION_WAIT = '2s';
export const DEFAULT_MAX_PENDING_SPANS = 100_000;

/**
 * A trace's path is a request path (url.path, or http.target's path), which
 * begins with `/`: a prefix that does not (`api`) could never match, and its
 * rule would let every trace fall through to the next one.
 */
export const PATH_PREFIX_PROBLEM = 'must begin with / (a request path, such as /api)';

export function isPathPrefix(prefix: string): boolean {
  const trimmed = prefix.trim();
  return trimmed === '' || trimmed.startsWith('/');
}

/** A trace's environment is compared whole: one written with a space around it (` production`) could match no trace. */
export const ENVIRONMENT_PROBLEM = 'must not begin or end with a space (environments are compared whole)';

export function isEnvironment(environment: string): boolean {
  return environment.trim() === environment;
}

export const samplingRuleSchema = z.strictObject({
  environment: z.string().min(1, { error: 'must not be empty', abort: true }).refine(isEnvironment, { error: ENVIRONMENT_PROBLEM }),
  percentage: z
    .number({ error: 'must be a number from 0 to 100' })
    .min(0, { error: 'must be a number from 0 to 100' })
    .max(100, { error: 'must be a number from 0 to 100' }),
  path_prefix: z.string().refine(isPathPrefix, { error: PATH_PREFIX_PROBLEM }).optional(),
});

export const samplingConfigSchema = z.strictObject({
  rules: z.array(samplingRuleSchema),
  /** ms */
  decision_wait: timerDuration(),
  max_pending_spans: z.number().int().positive(),
});

export type SamplingRuleConfig = z.output<typeof samplingRuleSchema>;
export type SamplingConfig = z.output<typeof samplingConfigSchema>;

export function createDefaultConfig() {
  return { rules: [], decision_wait: DEFAULT_DECISION_WAIT, max_pending_spans: DEFAULT_MAX_PENDING_SPANS };
}
