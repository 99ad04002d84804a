// The `service` section: storage, admin endpoint, logs, cluster, pipelines.
import { z } from 'zod';
import { keyText } from './key-text.js';
import { clusterConfigSchema } from '../cluster/config.js';
import { checkHttpTimeouts, httpListenerShape } from '../core/listener/config.js';
import { endpointText } from '../core/listener/endpoint.js';
import { LOG_LEVELS } from '../core/logger.js';
import { duration, timerDuration } from '../shared/units.js';

export { LOG_LEVELS, type LogLevel } from '../core/logger.js';

export const PIPELINE_ID = /^traces(\/[^\s/]+)?$/;

const idList = z.array(z.string()).default([]);

export const pipelineSchema = z.strictObject({
  receivers: idList,
  processors: idList,
  exporters: idList,
});

export const adminSchema = z
  .strictObject({
    endpoint: endpointText('127.0.0.1:13133').default('127.0.0.1:13133'),
    api_key: keyText().optional(),
    ...httpListenerShape,
  })
  .superRefine(checkHttpTimeouts)
  .prefault({});

export const serviceSchema = z.strictObject({
  storage: z.strictObject({ directory: z.string().min(1).default('./data') }).prefault({}),
  admin: adminSchema,
  telemetry: z
    .strictObject({
      // In any case (`INFO`, as a LOG_LEVEL variable often holds it), as the collector reads its levels.
      logs: z.strictObject({ level: z.preprocess((level) => (typeof level === 'string' ? level.toLowerCase() : level), z.enum(LOG_LEVELS)).default('info') }).prefault({}),
    })
    .prefault({}),
  memory_limit_mib: z.number().int().positive().optional(),
  /** Absent: one instance, all state local (DESIGN section 13). */
  cluster: clusterConfigSchema.optional(),
  /** In-flight requests get this long on SIGTERM/SIGINT or a reload; then every connection left is destroyed. */
  shutdown_grace: timerDuration().default(5_000),
  usage: z
    .strictObject({
      /** Generation records older than this are deleted (spend per budget period is kept apart). */
      retention: duration().pipe(z.number().min(86_400_000, { error: 'must be at least 1d' })).prefault('30d'),
    })
    .prefault({}),
  pipelines: z.record(
    z.string().regex(PIPELINE_ID, { error: 'pipeline ids are `traces` or `traces/<name>` (only traces are supported)' }),
    pipelineSchema,
  ),
});

export type ServiceConfig = z.output<typeof serviceSchema>;
export type PipelineConfig = z.output<typeof pipelineSchema>;
