// How a failed request is answered, decided by error type (never message)
// and shared by both transports: status codes, metric reason, retry delay.
import type { status as GrpcStatus } from '@grpc/grpc-js';
import { errorMessage, isPermanent, isResourceExhausted, RetryableError } from '../../shared/errors.js';
import { BodyTooLargeError } from '../../core/http-body.js';

// google.rpc.Code values, fixed by the gRPC spec; not imported from grpc-js
// so that an HTTP-only receiver never loads it.
const INVALID_ARGUMENT = 3 as GrpcStatus.INVALID_ARGUMENT;
const RESOURCE_EXHAUSTED = 8 as GrpcStatus.RESOURCE_EXHAUSTED;
const UNAVAILABLE = 14 as GrpcStatus.UNAVAILABLE;

export type RefusalReason = 'malformed' | 'too_large' | 'backpressure' | 'error' | 'unauthenticated';

export interface Refusal {
  readonly reason: RefusalReason;
  readonly httpStatus: number;
  readonly grpcCode: GrpcStatus;
  readonly message: string;
  /** Set for backpressure and retryable errors that name a delay. */
  readonly retryAfterMs: number | undefined;
}

/** Sent with a 429 when the refusing component named no delay. */
export const DEFAULT_BACKPRESSURE_RETRY_MS = 1_000;

/**
 * The least delay a client is told to wait. A delay passed on from a
 * destination can be 0 or already past (`Retry-After: 0`, an HTTP date gone
 * by): told so, a client retries at once, into the same refusal. One
 * second, the least HTTP's whole-second Retry-After can say, holds for gRPC's
 * RetryInfo too, so both transports answer alike.
 */
const MIN_RETRY_AFTER_MS = 1_000;

function retryDelay(ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : Math.max(MIN_RETRY_AFTER_MS, ms);
}

/** How a request that failed with `err` is answered and counted. */
export function classify(err: unknown): Refusal {
  if (err instanceof BodyTooLargeError) {
    return { reason: 'too_large', httpStatus: 413, grpcCode: RESOURCE_EXHAUSTED, message: err.message, retryAfterMs: undefined };
  }
  if (isPermanent(err)) {
    return { reason: 'malformed', httpStatus: 400, grpcCode: INVALID_ARGUMENT, message: err.message, retryAfterMs: undefined };
  }
  if (isResourceExhausted(err)) {
    return {
      reason: 'backpressure',
      httpStatus: 429,
      grpcCode: RESOURCE_EXHAUSTED,
      message: err.message,
      retryAfterMs: retryDelay(err.retryAfterMs ?? DEFAULT_BACKPRESSURE_RETRY_MS),
    };
  }
  const retryAfterMs = err instanceof RetryableError ? retryDelay(err.retryAfterMs) : undefined;
  return { reason: 'error', httpStatus: 503, grpcCode: UNAVAILABLE, message: errorMessage(err), retryAfterMs };
}
