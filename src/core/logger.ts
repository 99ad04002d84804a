// JSON lines via pino. Secrets never reach a log line: header values that
// carry credentials, API keys, signing secrets and image data are censored
// wherever they sit in a logged object (DESIGN section 8).
import { type DestinationStream, type Logger, pino } from 'pino';

/** The levels service.logs.level accepts. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const SECRET_KEYS = ['authorization', 'Authorization', 'api_key', 'apiKey', 'api-key', 'x-api-key', 'secret', 'password', 'token', 'cookie', 'set-cookie', 'image_url', 'b64_json'];

// pino's redaction matches paths, not key names anywhere; cover the key at
// the top level, one level down, and under any headers object.
const REDACT_PATHS = [
  ...SECRET_KEYS.map((key) => `["${key}"]`),
  ...SECRET_KEYS.map((key) => `*["${key}"]`),
  ...SECRET_KEYS.map((key) => `*.*["${key}"]`),
  'headers.*',
  '*.headers.*',
  '*.*.headers.*',
];

export interface LoggerOptions {
  readonly level?: LogLevel;
  /** Defaults to synchronous stdout so the last lines before exit are written. */
  readonly destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: true });
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'sluice' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
