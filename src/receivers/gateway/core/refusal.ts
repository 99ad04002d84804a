// The answers to a request its key may not make now: over requests or tokens
// per minute (429 with Retry-After), or over its budget (429 budget_exceeded).
import type { Refusal } from '../../../usage/accountant.js';
import { GatewayHttpError } from './http-error.js';

export function refusalError(refusal: Refusal): GatewayHttpError {
  if (refusal.reason === 'budget_exceeded') {
    const period = refusal.period === 'total' ? '' : ` for this ${refusal.period}`;
    return new GatewayHttpError(429, `This API key has reached its budget${period}.`, { type: 'insufficient_quota', code: 'budget_exceeded' });
  }
  const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const what = refusal.reason === 'requests_per_minute' ? 'requests' : 'tokens';
  return new GatewayHttpError(429, `Rate limit reached for this API key (${what} per minute): retry in ${seconds}s.`, { code: 'rate_limit_exceeded', headers: { 'retry-after': String(seconds) } });
}
