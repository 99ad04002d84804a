// How an attempt that threw is reported: the client's error, whether the
// next provider is tried, the span's error.type and the attempts metric's
// outcome. Shared by the buffered attempt (attempt.ts), the streamed one
// (stream-pipe.ts) and native Messages passthrough.
import { GatewayHttpError } from './http-error.js';
import { InvalidResponseError, ProviderNotConfiguredError, UNSUPPORTED_VALUE, UpstreamStreamError, type UpstreamErrorInfo } from '../providers/shared/types.js';
import { ProviderRequestError } from '../providers/shared/inputs.js';
import type { AttemptClock } from './upstream.js';
import { BrokenStreamError } from './stream-exchange.js';
import { AnswerBrokenOffError } from './upstream-exchange.js';

/** The attempts metric's `outcome` label: a fixed set, unlike error.type on spans. */
export type AttemptOutcome = 'success' | 'http_error' | 'timeout' | 'network_error' | 'stream_error' | 'invalid_response' | 'rejected' | 'cancelled' | 'internal_error';

export { UNSUPPORTED_VALUE };

/** The code of the 503 a provider without credentials answers, before anything is sent upstream. */
export const PROVIDER_NOT_CONFIGURED = 'provider_not_configured';

/** The code of the 503 that ends the streams open when the gateway shuts down. */
export const SHUTTING_DOWN = 'shutting_down';

export interface AttemptFailure {
  error: GatewayHttpError;
  /** What the attempt's span records: the client's message, or more than the client is told. */
  spanMessage: string;
  fallback: boolean;
  spanErrorType: string;
  outcome: AttemptOutcome;
}

/** The provider an attempt went to: its slug, and what hides its credentials in its upstream's words. */
export interface AttemptProvider {
  readonly slug: string;
  readonly redact: (text: string) => string;
}

/**
 * A failure that is not an upstream HTTP status: timeouts, network errors,
 * bad upstream data, a client gone. `answering`: the upstream's 2xx answer
 * had begun, so a network error broke it off rather than kept it from being reached.
 */
export function attemptFailure(err: unknown, clock: AttemptClock, provider: AttemptProvider, answering = false): AttemptFailure {
  const failure = classify(err, clock, provider.slug, answering);
  const { error } = failure;
  // An in-band error or a quoted answer carries the upstream's own words.
  const message = provider.redact(error.message);
  const redacted = message === error.message ? error : new GatewayHttpError(error.status, message, { type: error.errorType, code: error.errorCode, param: error.param, headers: { ...error.headers } });
  return { ...failure, error: redacted, spanMessage: 'spanMessage' in failure ? provider.redact(failure.spanMessage) : message };
}

function classify(err: unknown, clock: AttemptClock, slug: string, answering: boolean): Omit<AttemptFailure, 'spanMessage'> | AttemptFailure {
  const reason = clock.reason;
  if (reason === 'client_closed') {
    return { error: new GatewayHttpError(499, 'The client closed the request.', { code: 'client_closed' }), fallback: false, spanErrorType: 'cancelled', outcome: 'cancelled' };
  }
  if (reason === 'client_stalled') {
    const error = new GatewayHttpError(499, 'The client read nothing of the stream for longer than stream_idle_timeout.', { code: 'client_stalled' });
    return { error, fallback: false, spanErrorType: 'cancelled', outcome: 'cancelled' };
  }
  if (reason !== undefined) {
    const what = reason === 'first_byte_timeout' ? 'did not answer within first_byte_timeout' : 'went silent for longer than stream_idle_timeout';
    return { error: upstreamError(`Provider ${slug} ${what}.`), fallback: true, spanErrorType: 'timeout', outcome: 'timeout' };
  }
  if (err instanceof ProviderNotConfiguredError) {
    const error = new GatewayHttpError(503, err.message, { type: 'api_error', code: PROVIDER_NOT_CONFIGURED });
    return { error, fallback: true, spanErrorType: 'provider_not_configured', outcome: 'rejected' };
  }
  // A value this provider type cannot take (temperature 1.5 for Anthropic): the request is
  // valid OpenAI, so another provider type may take it; if none does, the client gets the 400.
  if (err instanceof ProviderRequestError) {
    const error = new GatewayHttpError(400, `Provider ${slug} cannot take this request: ${err.message}`, { type: 'invalid_request_error', code: UNSUPPORTED_VALUE, param: err.param });
    return { error, fallback: true, spanErrorType: UNSUPPORTED_VALUE, outcome: 'rejected' };
  }
  // An adapter refusing the request (say, a feature its provider lacks) answers as it chose.
  if (err instanceof GatewayHttpError) return { error: err, fallback: err.status >= 500, spanErrorType: err.spanErrorType, outcome: 'rejected' };
  if (err instanceof BrokenStreamError) {
    return { error: upstreamError(`Provider ${slug} failed: ${err.message}.`), fallback: false, spanErrorType: 'stream_error', outcome: 'stream_error' };
  }
  if (err instanceof UpstreamStreamError) {
    const message = `Provider ${slug} failed: ${err.message}`;
    const answer = err.answer;
    if (answer === undefined) return { error: upstreamError(message), fallback: true, spanErrorType: err.errorType, outcome: 'stream_error' };
    const error = new GatewayHttpError(answer.status, message, { type: answer.type, code: answer.code ?? 'upstream_error', param: answer.param, headers: retryAfterOf(answer) });
    // Recorded as the HTTP answer it stands for would be: by its status.
    return { error, fallback: answer.fallback, spanErrorType: String(answer.status), outcome: 'stream_error' };
  }
  if (err instanceof SyntaxError) {
    const what = err instanceof InvalidResponseError ? `an invalid response: ${err.message}` : 'malformed JSON';
    return { error: upstreamError(`Provider ${slug} answered with ${what}.`), fallback: true, spanErrorType: 'invalid_response', outcome: 'invalid_response' };
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    const what = answering || err instanceof AnswerBrokenOffError ? 'broke off its answer' : 'could not be reached';
    return { error: upstreamError(`Provider ${slug} ${what} (${code}).`), fallback: true, spanErrorType: code, outcome: 'network_error' };
  }
  // Network and system errors carry a code; one without is this gateway failing on what it was given
  // (an upstream answer of a shape it did not expect, say), not an unreachable provider.
  // The client learns that it failed here; the span and the log also say how.
  const name = err instanceof Error ? err.name : 'Error';
  const message = err instanceof Error ? err.message : String(err);
  const error = upstreamError(`The attempt on provider ${slug} failed in the gateway (${name}).`);
  return { error, spanMessage: `${error.message} ${message}`, fallback: true, spanErrorType: name, outcome: 'internal_error' };
}

/** A wait the upstream said in its body, as the Retry-After header SDKs read (a header the upstream sent wins over it). */
export function retryAfterOf(info: UpstreamErrorInfo): Record<string, string> {
  return info.retryAfter === undefined ? {} : { 'retry-after': String(info.retryAfter) };
}

function upstreamError(message: string): GatewayHttpError {
  return new GatewayHttpError(502, message, { type: 'api_error', code: 'upstream_error' });
}
