// Gemini error responses ({"error": google.rpc.Status}) -> the gateway's error info.
// https://ai.google.dev/gemini-api/docs/troubleshooting
import type { UpstreamErrorInfo } from '../shared/types.js';
import { asObject, isFallbackStatus } from '../shared/inputs.js';
import type { GeminiError } from './wire.js';

const decoder = new TextDecoder();

/** google.rpc.Code name -> OpenAI error type. */
const ERROR_TYPES: Readonly<Record<string, string>> = {
  INVALID_ARGUMENT: 'invalid_request_error',
  FAILED_PRECONDITION: 'invalid_request_error',
  OUT_OF_RANGE: 'invalid_request_error',
  UNAUTHENTICATED: 'authentication_error',
  PERMISSION_DENIED: 'permission_error',
  NOT_FOUND: 'not_found_error',
  RESOURCE_EXHAUSTED: 'rate_limit_error',
  INTERNAL: 'api_error',
  UNAVAILABLE: 'api_error',
  DEADLINE_EXCEEDED: 'api_error',
};

export function classifyGoogleError(status: number, body: Uint8Array): UpstreamErrorInfo {
  const text = decoder.decode(body);
  const error = readError(text);
  // Gemini answers a bad API key with 400 INVALID_ARGUMENT; it is an auth failure (and another provider may work).
  const badKey = error?.details?.some((detail) => detail.reason === 'API_KEY_INVALID') === true;
  const effective = badKey ? 401 : status;
  return {
    status: effective,
    message: error?.message ?? (text.trim() === '' ? `google answered HTTP ${status}` : `google answered HTTP ${status}: ${text.trim().slice(0, 500)}`),
    type: badKey ? 'authentication_error' : ((error?.status !== undefined ? ERROR_TYPES[error.status] : undefined) ?? (status >= 500 ? 'api_error' : 'invalid_request_error')),
    code: badKey ? 'API_KEY_INVALID' : (error?.status ?? null),
    param: null,
    fallback: isFallbackStatus(effective),
  };
}

function readError(text: string): GeminiError | undefined {
  try {
    // Some proxies answer with a one-element array of errors.
    const parsed: unknown = JSON.parse(text);
    return asObject(asObject(Array.isArray(parsed) ? parsed[0] : parsed)?.['error']) as GeminiError | undefined;
  } catch {
    return undefined;
  }
}
