// Gemini error responses ({"error": google.rpc.Status}) -> the gateway's error info.
// https://ai.google.dev/gemini-api/docs/troubleshooting
import { UNSUPPORTED_VALUE, type UpstreamErrorInfo } from '../shared/types.js';
import { asObject, isFallbackStatus } from '../shared/inputs.js';
import type { GeminiError } from './wire.js';

const decoder = new TextDecoder();

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';

/**
 * Gemini checks a request against what its model can do, and refuses what it
 * cannot with an INVALID_ARGUMENT that says so: "Penalty is not enabled for
 * models/gemini-2.5-flash" (penalties, which 2.0 took), "Developer
 * instruction is not enabled for models/gemma-3-27b-it" (system messages),
 * "JSON mode is not enabled for ...", "Function calling with a response mime
 * type: 'application/json' is unsupported"; thinking turned off (`reasoning_effort:
 * "none"`) on a model that always thinks: "Budget 0 is invalid. This model only works
 * in thinking mode", "The model does not support setting thinking_budget to 0"
 * ("doesn't support" too, so no word boundary before the n).
 * Another model may take the request.
 */
const UNSUPPORTED = /\bnot enabled for (?:this model|models\/)|\bunsupported\b|n(?:o|'|\u2019)t support(?:ed)?\b|\bthis model\b/i;

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
  const details = detailsOf(error);
  const badKey = details.some((detail) => detail['reason'] === 'API_KEY_INVALID');
  const effective = badKey ? 401 : status;
  // What this model cannot take, another model may: answered as a provider type's own refusal, so the next endpoint is tried.
  if (!badKey && status === 400 && error?.status === 'INVALID_ARGUMENT' && typeof error.message === 'string' && UNSUPPORTED.test(error.message)) {
    return { status: 400, message: error.message, type: 'invalid_request_error', code: UNSUPPORTED_VALUE, param: null, fallback: true };
  }
  return {
    status: effective,
    message: error?.message ?? (text.trim() === '' ? `google answered HTTP ${status}` : `google answered HTTP ${status}: ${text.trim().slice(0, 500)}`),
    type: badKey ? 'authentication_error' : ((error?.status !== undefined ? ERROR_TYPES[error.status] : undefined) ?? (status >= 500 ? 'api_error' : 'invalid_request_error')),
    code: badKey ? 'API_KEY_INVALID' : (error?.status ?? null),
    param: null,
    fallback: isFallbackStatus(effective),
    retryAfter: retryDelayOf(details),
  };
}

/**
 * The wait a google.rpc.RetryInfo detail asks for (a 429 RESOURCE_EXHAUSTED
 * carries one, `"retryDelay": "37s"`; Gemini sends no Retry-After header), in whole seconds.
 */
function retryDelayOf(details: ReadonlyArray<Record<string, unknown>>): number | undefined {
  const delay = details.find((detail) => detail['@type'] === RETRY_INFO)?.['retryDelay'];
  const seconds = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1] : undefined;
  return seconds === undefined ? undefined : Math.ceil(Number(seconds));
}

/** The error's details that are objects (a proxy may send anything there). */
function detailsOf(error: GeminiError | undefined): Array<Record<string, unknown>> {
  const details: unknown = error?.details;
  if (!Array.isArray(details)) return [];
  return details.flatMap((detail: unknown) => {
    const object = asObject(detail);
    return object === undefined ? [] : [object];
  });
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
