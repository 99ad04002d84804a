// Bedrock runtime errors (`x-amzn-errortype` header, `{"message": ...}` body,
// or an exception frame inside ConverseStream) -> the gateway's error info.
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors
import { asObject, isFallbackStatus } from '../shared/inputs.js';
import { UNSUPPORTED_VALUE, type UpstreamErrorInfo } from '../shared/types.js';

const decoder = new TextDecoder();

/** Exception name (either case) -> OpenAI error type. */
const ERROR_TYPES: Readonly<Record<string, string>> = {
  validationexception: 'invalid_request_error',
  resourcenotfoundexception: 'not_found_error',
  accessdeniedexception: 'permission_error',
  // AWS's own authentication failures: an unknown key, a bad or incomplete SigV4 signature, none at all, expired session credentials.
  unrecognizedclientexception: 'authentication_error',
  invalidsignatureexception: 'authentication_error',
  incompletesignatureexception: 'authentication_error',
  missingauthenticationtokenexception: 'authentication_error',
  expiredtokenexception: 'authentication_error',
  throttlingexception: 'rate_limit_error',
  servicequotaexceededexception: 'rate_limit_error',
  modelnotreadyexception: 'api_error',
  modeltimeoutexception: 'api_error',
  modelerrorexception: 'api_error',
  modelstreamerrorexception: 'api_error',
  internalserverexception: 'api_error',
  serviceunavailableexception: 'api_error',
};

/** Failures another provider may not share: the model erred (424, whole or while streaming) or a quota ran out. */
const FALLBACK_TYPES = new Set(['modelerrorexception', 'modelstreamerrorexception', 'servicequotaexceededexception', 'modelnotreadyexception']);

/**
 * Converse checks a request against what its model can do, and refuses what
 * it cannot with a ValidationException that says so: "This model doesn't
 * support system messages", "... the toolConfig.toolChoice.any field", "...
 * tool use in streaming mode", "... with on-demand throughput isn't supported";
 * a model-specific field the model does not take (Nova's reasoningConfig sent
 * to Llama) is "Malformed input request: #: extraneous key [reasoningConfig] is not permitted";
 * Llama and Mistral take no text beside tool results in a turn ("Conversation
 * blocks and tool result blocks cannot be provided in the same turn"); Claude
 * Sonnet 4.5 and later take temperature or top_p, not both ("The model returned
 * the following errors: `temperature` and `top_p` cannot both be specified for this model").
 */
const UNSUPPORTED = /n(?:o|'|\u2019)t support(?:ed)?\b|extraneous key \[|cannot be provided in the same turn|\bfor this model\b/i;

/** Exception name (lower case) -> the HTTP status Bedrock answers it with; a ConverseStream exception frame carries none. */
const EXCEPTION_STATUS: Readonly<Record<string, number>> = {
  validationexception: 400,
  servicequotaexceededexception: 400,
  accessdeniedexception: 403,
  resourcenotfoundexception: 404,
  modeltimeoutexception: 408,
  modelerrorexception: 424,
  modelstreamerrorexception: 424,
  throttlingexception: 429,
  modelnotreadyexception: 429,
  internalserverexception: 500,
  serviceunavailableexception: 503,
};

export function errorTypeOf(exception: string): string {
  return ERROR_TYPES[exception.toLowerCase()] ?? 'api_error';
}

/** An exception frame as the HTTP answer it stands for, or undefined for an exception this table does not know. */
export function classifyBedrockException(exception: string, payload: string): UpstreamErrorInfo | undefined {
  const status = EXCEPTION_STATUS[exception.toLowerCase()];
  return status === undefined ? undefined : classifyBedrockError(status, new TextEncoder().encode(payload), { 'x-amzn-errortype': exception });
}

export function classifyBedrockError(status: number, body: Uint8Array, headers: Record<string, string | string[] | undefined>): UpstreamErrorInfo {
  const text = decoder.decode(body);
  const header = headers['x-amzn-errortype'];
  // "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
  const exception = (Array.isArray(header) ? header[0] : header)?.split(':')[0] ?? readField(text, '__type')?.split('#').at(-1) ?? '';
  const message = readField(text, 'message') ?? readField(text, 'Message') ?? (text.trim() === '' ? `bedrock answered HTTP ${status}` : `bedrock answered HTTP ${status}: ${text.trim().slice(0, 500)}`);
  // What this model cannot take, another model may: answered as a provider type's own refusal, so the next endpoint is tried.
  if (exception.toLowerCase() === 'validationexception' && UNSUPPORTED.test(message)) {
    return { status: 400, message, type: 'invalid_request_error', code: UNSUPPORTED_VALUE, param: null, fallback: true };
  }
  return {
    status,
    message,
    type: exception === '' ? (status >= 500 ? 'api_error' : 'invalid_request_error') : errorTypeOf(exception),
    code: exception === '' ? null : exception,
    param: null,
    fallback: isFallbackStatus(status) || FALLBACK_TYPES.has(exception.toLowerCase()),
  };
}

function readField(text: string, field: string): string | undefined {
  try {
    const value = asObject(JSON.parse(text))?.[field];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
