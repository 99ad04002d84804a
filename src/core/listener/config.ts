// The keys every listener takes (DESIGN section 10), named as in the
// collector's confighttp / configgrpc. Each listener's schema spreads the
// shape it needs next to its own endpoint and keys.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { duration, timerDuration } from '../../shared/units.js';
import { tlsSchema } from './tls.js';

const positiveCount = z.number().int().positive();

/** HTTP listeners: OTLP/HTTP, the gateway, the admin endpoint. */
export const httpListenerShape = {
  tls: tlsSchema.optional(),
  max_connections: positiveCount.default(10_000),
  read_header_timeout: timerDuration().default(10_000),
  read_timeout: timerDuration().default(60_000),
  idle_timeout: timerDuration().default(60_000),
};

/** Node refuses a header timeout longer than the request timeout; say so by key. */
export function checkHttpTimeouts(config: { read_header_timeout: number; read_timeout: number }, ctx: z.RefinementCtx): void {
  if (config.read_timeout > 0 && config.read_header_timeout > config.read_timeout) {
    ctx.addIssue({ code: 'custom', path: ['read_header_timeout'], message: 'must not be longer than read_timeout' });
  }
  checkHeaderTimeout(config, ctx);
}

function checkHeaderTimeout(config: { read_header_timeout: number }, ctx: z.RefinementCtx): void {
  if (config.read_header_timeout === 0) ctx.addIssue({ code: 'custom', path: ['read_header_timeout'], message: 'must be greater than 0' });
}

/**
 * The gRPC listener: the same TLS, connection cap and timeouts, and grpc's
 * own connection limits. On HTTP/2 `read_header_timeout` bounds the
 * connection's start (TLS handshake, HTTP/2 preface), `read_timeout` each
 * call's request, and `idle_timeout` is configgrpc's `max_connection_idle`
 * under its HTTP name (give either; resolved by resolveGrpcLimits). As in
 * grpc-go, 0 means no limit for the connection durations.
 */
export const grpcListenerShape = {
  tls: tlsSchema.optional(),
  max_connections: positiveCount.default(10_000),
  read_header_timeout: timerDuration().default(10_000),
  read_timeout: timerDuration().default(60_000),
  idle_timeout: timerDuration().optional(),
  max_concurrent_streams: positiveCount.default(100),
  max_connection_idle: timerDuration().optional(),
  max_connection_age: timerDuration().optional(),
  max_connection_age_grace: timerDuration().default(5_000),
};

const DEFAULT_GRPC_IDLE_MS = 60_000;

/**
 * Checks the timeouts and makes one idle limit of `idle_timeout` and
 * `max_connection_idle` (the same limit by two names): whichever is given,
 * 60 s when neither is; both given must agree.
 */
export function resolveGrpcLimits<T extends { read_header_timeout: number; idle_timeout?: number | undefined; max_connection_idle?: number | undefined }>(
  config: T,
  ctx: z.RefinementCtx,
): Omit<T, 'idle_timeout' | 'max_connection_idle'> & { max_connection_idle: number } {
  const { idle_timeout, max_connection_idle, ...rest } = config;
  if (idle_timeout !== undefined && max_connection_idle !== undefined && idle_timeout !== max_connection_idle) {
    ctx.addIssue({ code: 'custom', path: ['idle_timeout'], message: 'is the same limit as max_connection_idle on a gRPC listener: give one of them, or the same value' });
  }
  checkHeaderTimeout(config, ctx);
  return { ...rest, max_connection_idle: max_connection_idle ?? idle_timeout ?? DEFAULT_GRPC_IDLE_MS };
}

export const corsSchema = z.strictObject({
  allowed_origins: z.array(z.string().min(1)).min(1, 'must list at least one origin'),
  allowed_headers: z.array(z.string().min(1)).default([]),
  max_age: duration().optional(),
});

export type CorsConfig = z.output<typeof corsSchema>;

const httpLimits = z.object(httpListenerShape);
export type HttpListenerConfig = z.output<typeof httpLimits>;

/** The HTTP limits with every default, for listeners built outside a config (tests, tools). */
export const DEFAULT_HTTP_LISTENER: HttpListenerConfig = httpLimits.parse({});

/**
 * Equal for two configs a running listener can keep serving unchanged: the
 * TLS material by content, so a rotated certificate on disk makes a
 * difference.
 */
export function listenerFingerprint(endpoint: string, config: HttpListenerConfig): string {
  const { tls, ...limits } = config;
  const hash = createHash('sha256').update(endpoint).update(JSON.stringify(limits));
  if (tls !== undefined) hash.update(tls.cert).update(tls.key).update(tls.clientCa ?? '').update(tls.minVersion);
  return hash.digest('hex');
}
