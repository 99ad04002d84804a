// Anthropic error responses -> the gateway's error info.
// https://docs.anthropic.com/en/api/errors
import { asObject, isFallbackStatus } from '../shared/inputs.js';
import { UNSUPPORTED_VALUE, type UpstreamErrorInfo } from '../shared/types.js';

const decoder = new TextDecoder();

/** Anthropic error type -> OpenAI error type. */
const ERROR_TYPES: Readonly<Record<string, string>> = {
  invalid_request_error: 'invalid_request_error',
  authentication_error: 'authentication_error',
  permission_error: 'permission_error',
  not_found_error: 'not_found_error',
  request_too_large: 'invalid_request_error',
  rate_limit_error: 'rate_limit_error',
  api_error: 'api_error',
  overloaded_error: 'api_error',
};

/**
 * What one Claude model cannot take and another may, as Anthropic words it:
 * "`temperature` and `top_p` cannot both be specified for this model"
 * (Sonnet 4.5 and later), "\"thinking.type.enabled\" is not supported for this
 * model", "'claude-3-5-haiku-20241022' does not support thinking."
 */
const UNSUPPORTED = /\bthis model\b|^'[^']+' does not support\b/i;

/** The HTTP status Anthropic answers each error type with: an `error` event in a stream carries none. */
const TYPE_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** An `error` event's data as the HTTP answer it stands for, or undefined for an error type this table does not know. */
export function classifyAnthropicEvent(data: string): UpstreamErrorInfo | undefined {
  const type = readError(data)?.type;
  const status = type === undefined ? undefined : TYPE_STATUS[type];
  return status === undefined ? undefined : classifyAnthropicError(status, new TextEncoder().encode(data));
}

export function classifyAnthropicError(status: number, body: Uint8Array): UpstreamErrorInfo {
  const text = decoder.decode(body);
  const wire = readError(text);
  const known = wire === undefined ? undefined : ERROR_TYPES[wire.type];
  // Answered as a provider type's own refusal, so the next endpoint is tried.
  if (status === 400 && wire?.type === 'invalid_request_error' && UNSUPPORTED.test(wire.message)) {
    return { status: 400, message: wire.message, type: 'invalid_request_error', code: UNSUPPORTED_VALUE, param: null, fallback: true };
  }
  return {
    // 529 is Anthropic's own; clients know 503 as "overloaded, try again later".
    status: status === 529 ? 503 : status,
    message: wire?.message ?? (text.trim() === '' ? `anthropic answered HTTP ${status}` : `anthropic answered HTTP ${status}: ${text.trim().slice(0, 500)}`),
    type: known ?? (status >= 500 ? 'api_error' : 'invalid_request_error'),
    code: wire?.type ?? null,
    param: null,
    fallback: isFallbackStatus(status),
  };
}

function readError(text: string): { type: string; message: string } | undefined {
  try {
    const error = asObject(asObject(JSON.parse(text))?.['error']);
    if (error === undefined) return undefined;
    return { type: typeof error['type'] === 'string' ? error['type'] : 'api_error', message: typeof error['message'] === 'string' ? error['message'] : 'anthropic error' };
  } catch {
    return undefined;
  }
}
