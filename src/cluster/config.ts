// `service.cluster` (DESIGN section 13): where shared state lives. Absent:
// every kind of state is local to the instance and nothing else is needed.
import { z } from 'zod';
import { positiveTimerDuration } from '../shared/units.js';

export const DEFAULT_KEY_PREFIX = 'sluice:';

function redisUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be a redis:// or rediss:// URL';
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') return 'must be a redis:// or rediss:// URL';
  if (parsed.hostname === '') return 'must name a host (redis://host:6379/0)';
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) return 'the path must be a database number (redis://host:6379/0)';
  return undefined;
}

export const clusterConfigSchema = z.strictObject({
  redis: z.strictObject({
    url: z.string({ error: 'required' }).superRefine(function checkUrl(url, ctx) {
      const problem = redisUrlProblem(url);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
    key_prefix: z.string().max(64, { error: 'must be at most 64 characters long' }).default(DEFAULT_KEY_PREFIX),
    /** ms: a command not answered by then fails, and the caller falls back to local state (0 would fail every one). */
    timeout: positiveTimerDuration().default(1_000),
  }, { error: 'required: { url: redis://host:6379/0 }' }),
  /** Empty (an unset `${env:HOSTNAME:-}`) means a random id per start. */
  instance_id: z.string().max(128, { error: 'must be at most 128 characters long' }).default(''),
});

export type ClusterConfig = z.output<typeof clusterConfigSchema>;
