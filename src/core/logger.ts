// JSON lines via pino. Secrets never reach a log line: header values that
// carry credentials, API keys, signing secrets and image data are censored
// wherever they sit in a logged object, down to two levels of nesting
// (DESIGN section 8).
import { type DestinationStream, type Logger, pino } from 'pino';

/** The levels service.logs.level accepts. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const SECRET_KEYS: ReadonlySet<string> = new Set(['authorization', 'Authorization', 'api_key', 'apiKey', 'api-key', 'x-api-key', 'secret', 'password', 'token', 'cookie', 'set-cookie', 'image_url', 'b64_json']);
const CENSOR = '[redacted]';
/** pino's key for an error logged as the first argument or under `err`. */
const ERROR_KEY = 'err';
/** Levels of nesting searched: a secret key at the top, one level down or two; every value of a `headers` object there. */
const DEEPEST = 2;

/**
 * The logged object with its secrets censored, copied only where something
 * is censored (the caller's object is never changed). Hand-written rather
 * than pino's `redact`: its wildcard paths made every log line 14 times
 * dearer (11 µs against 0.8), and a busy pipeline logs at every batch.
 */
export function censorSecrets(value: Record<string, unknown>): Record<string, unknown> {
  return censored(value, 0) as Record<string, unknown>;
}

function censored(value: object, depth: number): object {
  const array = Array.isArray(value);
  let copy: Record<string, unknown> | unknown[] | undefined;
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    // pino's err serializer (censoredError) takes the top-level error: it keeps the error's type.
    if (field === undefined || (depth === 0 && key === ERROR_KEY)) continue;
    let next = field;
    if (!array && SECRET_KEYS.has(key)) next = CENSOR;
    else if (isWalkable(field)) {
      if (!array && key === 'headers') next = everyValueCensored(field);
      else if (depth < DEEPEST) next = censored(field, depth + 1);
    }
    if (next !== field) {
      copy ??= array ? [...(value as unknown[])] : { ...(value as Record<string, unknown>) };
      (copy as Record<string, unknown>)[key] = next;
    }
  }
  return copy ?? value;
}

/** What pino writes for an error under `err`, censored as a logged object one level down is. */
function censoredError(err: unknown): unknown {
  const serialized: unknown = pino.stdSerializers.err(err as Error);
  return isWalkable(serialized) ? censored(serialized, 1) : serialized;
}

function everyValueCensored(headers: object): object {
  if (Array.isArray(headers)) return headers.map(() => CENSOR);
  const out: Record<string, string> = {};
  for (const key of Object.keys(headers)) out[key] = CENSOR;
  return out;
}

/** Any object but a buffer or typed array (whose every byte would be a key). */
function isWalkable(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !ArrayBuffer.isView(value);
}

export interface LoggerOptions {
  readonly level?: LogLevel;
  /** Defaults to synchronous stdout so the last lines before exit are written. */
  readonly destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: true });
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: { service: 'sluice' },
      formatters: { log: censorSecrets },
      serializers: { [ERROR_KEY]: censoredError },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
  // pino gives child bindings to neither formatter: they are censored here,
  // for children of children too (they inherit this method).
  const child = logger.child;
  logger.child = function censoredChild(this: Logger, bindings: Record<string, unknown>, childOptions?: Parameters<Logger['child']>[1]) {
    return child.call(this, censorSecrets(bindings), childOptions);
  } as Logger['child'];
  return logger;
}
