// The answers to a request its key may not make now: over requests or tokens
// per minute (429 with Retry-After), or over its budget (429 budget_exceeded);
// and what a key's per-minute limits leave, in the headers OpenAI names them by.
import type { RateAllowance, Refusal } from '../../../usage/accountant.js';
import { GatewayHttpError } from './http-error.js';
import { periodEnd } from '../../../shared/periods.js';

export const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
];

/**
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` for a key's
 * requests_per_minute and tokens_per_minute, as OpenAI sends them for an
 * organization's: the window's allowance, what is left of it after this
 * request (tokens: before it, since they are counted once reported), and the
 * time until the window ends (`1m2.5s`); undefined for a key without either.
 */
export function rateLimitHeaders(requests: RateAllowance | undefined, tokens: RateAllowance | undefined): Record<string, string> | undefined {
  if (requests === undefined && tokens === undefined) return undefined;
  const headers: Record<string, string> = {};
  if (requests !== undefined) {
    headers['x-ratelimit-limit-requests'] = String(requests.limit);
    headers['x-ratelimit-remaining-requests'] = String(requests.remaining);
    headers['x-ratelimit-reset-requests'] = duration(requests.resetMs);
  }
  if (tokens !== undefined) {
    headers['x-ratelimit-limit-tokens'] = String(tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = duration(tokens.resetMs);
  }
  return headers;
}

/** A wait as OpenAI's reset headers write one: `0s`, `250ms`, `12.5s`, `1m0s`. */
function duration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole === 0) return '0s';
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const seconds = (whole - minutes * 60_000) / 1000;
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}

export function refusalError(refusal: Refusal, limits: Record<string, string> | undefined, nowMs = Date.now()): GatewayHttpError {
  if (refusal.reason === 'budget_exceeded') {
    const period = refusal.period === 'total' ? '' : ` for this ${refusal.period}`;
    // No retry helps before the period ends: clients are told so, and when that is (never, for a total budget).
    const ends = periodEnd(refusal.period, nowMs);
    const headers: Record<string, string> = { ...limits, 'x-should-retry': 'false' };
    if (ends !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil((ends - nowMs) / 1000)));
    return new GatewayHttpError(429, `This API key has reached its budget${period}.`, { type: 'insufficient_quota', code: 'budget_exceeded', headers });
  }
  const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const what = refusal.reason === 'requests_per_minute' ? 'requests' : 'tokens';
  return new GatewayHttpError(429, `Rate limit reached for this API key (${what} per minute): retry in ${seconds}s.`, { code: 'rate_limit_exceeded', headers: { ...limits, 'retry-after': String(seconds) } });
}
