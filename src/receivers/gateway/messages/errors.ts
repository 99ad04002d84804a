// Errors in Anthropic's shape: {"type":"error","error":{"type","message"}},
// with Anthropic's types for the statuses (https://docs.anthropic.com/en/api/errors).
import { GatewayHttpError } from '../core/http-error.js';
import type { ErrorFormat } from '../core/protocol.js';
import { PROVIDER_NOT_CONFIGURED, SHUTTING_DOWN } from '../core/attempt-failure.js';

/** Anthropic's own status for "overloaded, try again later"; the chat protocol answers 503. */
export const OVERLOADED_STATUS = 529;

/** The gateway's own 503s: its configuration or its shutdown, not an upstream's load. */
const GATEWAY_UNAVAILABLE = new Set([PROVIDER_NOT_CONFIGURED, SHUTTING_DOWN]);

export function anthropicErrorType(error: GatewayHttpError): string {
  if (error.errorCode === 'overloaded_error' || error.status === OVERLOADED_STATUS) return 'overloaded_error';
  // An upstream unavailable for now (Gemini's UNAVAILABLE, Bedrock's ServiceUnavailableException) is what Anthropic calls overloaded.
  if (error.status === 503 && !GATEWAY_UNAVAILABLE.has(error.errorCode ?? '')) return 'overloaded_error';
  switch (error.status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    default:
      // A 4xx of the upstream's own failing (Bedrock's 424 ModelErrorException) is not the client's request.
      return error.status >= 500 || error.errorType === 'api_error' ? 'api_error' : 'invalid_request_error';
  }
}

/** The core's missing-key message names Authorization only; this protocol's clients send x-api-key. */
const MISSING_KEY_MESSAGE = 'Missing API key: send x-api-key: <key> (or Authorization: Bearer <key>).';

export function anthropicErrorBody(error: GatewayHttpError): { type: 'error'; error: { type: string; message: string } } {
  const message = error.errorCode === 'missing_api_key' ? MISSING_KEY_MESSAGE : error.message;
  return { type: 'error', error: { type: anthropicErrorType(error), message } };
}

export const messagesErrors: ErrorFormat = {
  body: function messagesErrorBody(error) {
    return JSON.stringify(anthropicErrorBody(error));
  },
  streamEvent: function messagesErrorEvent(error) {
    return `event: error\ndata: ${JSON.stringify(anthropicErrorBody(error))}\n\n`;
  },
};

/** An upstream's overloaded answer keeps Anthropic's 529 on this protocol. */
export function withAnthropicStatus(error: GatewayHttpError): GatewayHttpError {
  if (error.errorCode !== 'overloaded_error' || error.status === OVERLOADED_STATUS) return error;
  return new GatewayHttpError(OVERLOADED_STATUS, error.message, { type: error.errorType, code: error.errorCode, param: error.param, headers: { ...error.headers } });
}
