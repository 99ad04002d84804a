// Exponential backoff with jitter between delivery attempts.

export const BACKOFF_MULTIPLIER = 1.5;
/** Each delay is spread uniformly over ±JITTER of its nominal value. */
export const JITTER = 0.2;
/** A destination asking for an immediate retry still waits this long (ms). */
export const MIN_RETRY_DELAY_MS = 10;

export interface BackoffPolicy {
  readonly initialIntervalMs: number;
  readonly maxIntervalMs: number;
}

/**
 * Delay before retry number `attempt` (0 for the first retry). A destination's
 * Retry-After (`retryInMs`) can lengthen it, never shorten it, as in the
 * collector: `Retry-After: 0` does not make a retry loop.
 */
export function retryDelayMs(policy: BackoffPolicy, attempt: number, retryInMs: number | undefined, random: () => number = Math.random): number {
  const nominal = Math.min(policy.maxIntervalMs, policy.initialIntervalMs * BACKOFF_MULTIPLIER ** attempt);
  const backoff = Math.max(MIN_RETRY_DELAY_MS, Math.round(nominal * (1 - JITTER + 2 * JITTER * random())));
  return retryInMs === undefined ? backoff : Math.max(backoff, retryInMs);
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(function wake() {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    function onAbort(): void {
      clearTimeout(timer);
      resolve(false);
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
