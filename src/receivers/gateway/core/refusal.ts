// The answers to a request its key may not make now: over requests or tokens
// per minute (429 with Retry-After), or over its budget (429 budget_exceeded).
import type { Refusal } from '../../../usage/accountant.js';
import { GatewayHttpError } from './http-error.js';
import { periodEnd } from '../../../shared/periods.js';

export function refusalError(refusal: Refusal, nowMs = Date.now()): GatewayHttpError {
  if (refusal.reason === 'budget_exceeded') {
    const period = refusal.period === 'total' ? '' : ` for this ${refusal.period}`;
    // No retry helps before the period ends: clients are told so, and when that is (never, for a total budget).
    const ends = periodEnd(refusal.period, nowMs);
    const headers: Record<string, string> = { 'x-should-retry': 'false' };
    if (ends !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil((ends - nowMs) / 1000)));
    return new GatewayHttpError(429, `This API key has reached its budget${period}.`, { type: 'insufficient_quota', code: 'budget_exceeded', headers });
  }
  const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const what = refusal.reason === 'requests_per_minute' ? 'requests' : 'tokens';
  return new GatewayHttpError(429, `Rate limit reached for this API key (${what} per minute): retry in ${seconds}s.`, { code: 'rate_limit_exceeded', headers: { 'retry-after': String(seconds) } });
}
