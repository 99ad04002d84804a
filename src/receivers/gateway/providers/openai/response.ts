import type { ChatCompletion } from '../shared/openai-types.js';
import { InvalidResponseError, UpstreamStreamError, type UpstreamErrorInfo } from '../shared/types.js';
import { isFallbackStatus } from '../shared/inputs.js';

const decoder = new TextDecoder();

export function parseOpenAIResponse(body: Uint8Array): ChatCompletion {
  // Buffer's utf8 decoding costs less than TextDecoder's for bodies this small.
  return parseOpenAIResponseText(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
}

export function parseOpenAIResponseText(text: string): ChatCompletion {
  const parsed = parseJsonBody(text);
  if (!isObject(parsed)) throw new UpstreamStreamError('upstream answered with a body that is not a chat completion');
  // OpenRouter, LiteLLM and others may answer 200 with an error object (one met after the status went out).
  const error = inBandError(parsed, text);
  if (error !== undefined) throw error;
  if (!hasChoiceObjects(parsed, 'message')) {
    throw new UpstreamStreamError('upstream answered with a body that is not a chat completion');
  }
  const problem = completionProblem(parsed['choices'] as Record<string, unknown>[]);
  if (problem !== undefined) throw new InvalidResponseError(problem);
  return parsed as unknown as ChatCompletion;
}

/** A 2xx body's JSON; one that is not JSON is quoted (a base_url that leads to a web page, no /v1 or a UI's port, answers 200 with HTML). */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidResponseError(`the body is not JSON: ${quoted(text)}`);
  }
}

/**
 * The failure a 2xx body or stream event reports in place of a completion or
 * chunk (`{"error": {...}}`), if it does. One that says which HTTP answer it
 * stands for is judged as that answer: vLLM and OpenRouter give the status as
 * its code (LiteLLM as a string), others name the kind (OpenAI's rate limit).
 */
export function inBandError(parsed: Record<string, unknown>, text: string): UpstreamStreamError | undefined {
  const error = parsed['error'];
  if (error === undefined || error === null) return undefined;
  const wire = isObject(error) ? error : { message: String(error) };
  const status = inBandStatus(wire);
  const answer = status === undefined ? undefined : classifyOpenAIError(status, new TextEncoder().encode(text));
  return new UpstreamStreamError(typeof wire['message'] === 'string' ? wire['message'] : 'upstream reported an error', typeof wire['type'] === 'string' ? wire['type'] : 'api_error', answer);
}

/**
 * The HTTP status an error's code or type names, for errors met after the
 * status went out. OpenAI's rate-limit error names the limit as its type
 * (`tokens`, `requests`) beside `code: rate_limit_exceeded`. A generic
 * `server_error` or `api_error` names none: it stays the upstream's failure.
 */
const KIND_STATUS: ReadonlyMap<string, number> = new Map([
  ['rate_limit_exceeded', 429],
  ['rate_limit_error', 429],
  ['insufficient_quota', 429],
  ['tokens', 429],
  ['requests', 429],
  ['overloaded_error', 503],
  ['service_unavailable', 503],
  ['invalid_request_error', 400],
  ['context_length_exceeded', 400],
]);

function inBandStatus(wire: Record<string, unknown>): number | undefined {
  const code = wire['code'];
  const numeric = typeof code === 'string' && /^[45]\d\d$/.test(code) ? Number(code) : code;
  if (typeof numeric === 'number' && Number.isInteger(numeric) && numeric >= 400 && numeric <= 599) return numeric;
  for (const word of [code, wire['type']]) {
    const status = typeof word === 'string' ? KIND_STATUS.get(word) : undefined;
    if (status !== undefined) return status;
  }
  return undefined;
}

/** What makes a completion's choices unreadable: none at all, or a tool call without its function (or custom tool) name. */
function completionProblem(choices: readonly Record<string, unknown>[]): string | undefined {
  if (choices.length === 0) return 'the completion has no choice';
  for (const [i, choice] of choices.entries()) {
    const calls = (choice['message'] as Record<string, unknown>)['tool_calls'];
    if (calls === undefined || calls === null) continue;
    if (!Array.isArray(calls)) return `choices[${i}].message.tool_calls is not a list`;
    for (const [j, call] of calls.entries()) {
      const named: unknown = !isObject(call) ? undefined : call['type'] === 'custom' ? call['custom'] : call['function'];
      if (!isObject(named) || typeof named['name'] !== 'string') return `choices[${i}].message.tool_calls[${j}] has no function name`;
    }
  }
  return undefined;
}

/**
 * `choices` is an array of objects, as in every completion and chunk. A
 * completion's choice must hold its `message`; a chunk's choice without a
 * `delta` (some servers leave it out of the last one) gets an empty one.
 */
export function hasChoiceObjects(parsed: Record<string, unknown>, part: 'message' | 'delta'): boolean {
  const choices = parsed['choices'];
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) {
    if (!isObject(choice)) return false;
    if (isObject(choice[part])) continue;
    if (part === 'message') return false;
    choice[part] = {};
  }
  return true;
}

interface WireError {
  message?: unknown;
  type?: unknown;
  code?: unknown;
  param?: unknown;
}

const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
};

export function classifyOpenAIError(status: number, body: Uint8Array): UpstreamErrorInfo {
  const text = decoder.decode(body);
  const wire = readWireError(text);
  const message = typeof wire?.message === 'string' && wire.message !== '' ? wire.message : fallbackMessage(status, text);
  return {
    status,
    message,
    type: typeof wire?.type === 'string' ? wire.type : (TYPE_BY_STATUS[status] ?? 'api_error'),
    code: typeof wire?.code === 'string' ? wire.code : typeof wire?.code === 'number' ? String(wire.code) : null,
    param: typeof wire?.param === 'string' ? wire.param : null,
    fallback: isFallbackStatus(status),
  };
}

function readWireError(text: string): WireError | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isObject(parsed)) return undefined;
    const error = parsed['error'];
    if (isObject(error)) return error;
    if (typeof error === 'string') return { message: error };
    return typeof parsed['message'] === 'string' ? { message: parsed['message'] } : undefined;
  } catch {
    return undefined;
  }
}

function fallbackMessage(status: number, text: string): string {
  const trimmed = text.trim().slice(0, 500);
  return trimmed === '' ? `upstream answered HTTP ${status}` : `upstream answered HTTP ${status}: ${trimmed}`;
}

const QUOTED_CHARS = 100;

/** The start of a body that is not what was expected, for an error message. */
export function quoted(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '(empty)';
  return trimmed.length > QUOTED_CHARS ? `${trimmed.slice(0, QUOTED_CHARS)}...` : trimmed;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
