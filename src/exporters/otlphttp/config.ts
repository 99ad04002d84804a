import { z } from 'zod';
import { caFileProblem } from '../../shared/pem.js';
import { positiveTimerDuration } from '../../shared/units.js';
import { queuedSenderConfigShape } from '../exporterhelper/index.js';
import { checkHeaders } from './headers.js';

/**
 * The collector's `endpoint` is a base URL it adds /v1/traces to; Sluice's
 * (and a drain's `url`) is the full URL, sent to as written, so one with no
 * path is most likely a base URL copied from a collector config.
 */
export const NO_PATH_WARNING = 'has no path: traces are POSTed to the root path (/) as written, where the collector would add /v1/traces: write the full URL';

export function hasNoPath(url: string): boolean {
  return URL.canParse(url) && new URL(url).pathname === '/';
}

export const ENCODINGS = ['json', 'protobuf'] as const;
export const COMPRESSIONS = ['gzip', 'none'] as const;

export const otlphttpConfigSchema = z
  .object({
    /** The full URL, path included (`https://collector.example.com/v1/traces`). */
    endpoint: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
    encoding: z.enum(ENCODINGS, { error: `must be one of ${ENCODINGS.join(', ')}` }),
    compression: z.enum(COMPRESSIONS, { error: `must be one of ${COMPRESSIONS.join(', ')}` }),
    headers: z.record(z.string(), z.string({ error: 'must be a string' })).superRefine(checkHeaders),
    tls: z.object({
      ca_file: z.string().min(1, { error: 'must not be empty' }).superRefine(function checkCaFile(path, ctx) {
        const problem = caFileProblem(path);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      }).optional(),
    }).strict(),
    timeout: positiveTimerDuration(),
    ...queuedSenderConfigShape,
  })
  .strict();

export type OtlpHttpConfig = z.output<typeof otlphttpConfigSchema>;

export function createDefaultConfig() {
  return { encoding: 'protobuf', compression: 'gzip', headers: {}, tls: {}, timeout: '10s' };
}
