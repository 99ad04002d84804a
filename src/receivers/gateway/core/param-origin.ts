// Where a translated request's messages and parts came from. An adapter
// names what it cannot take by its place in the Chat Completions request it
// was given (`messages[1].content[1].image_url.url`); a client of another
// protocol sent something else (`messages.0.content.1.source` on Messages,
// with the system prompt outside `messages`; `prompt[0].content[1]` on the
// AI SDK protocol). Translations record each message's and part's own path
// here, and a failed attempt's error is told in the client's terms.
import type { ChatCompletionRequest } from '../providers/shared/openai-types.js';
import type { AttemptResult } from './attempt.js';
import { GatewayHttpError } from './http-error.js';

const origins = new WeakMap<object, string>();

/** Records that `value` (a message or a content part) is what the client sent at `path`; returns it. */
export function fromOrigin<T extends object>(value: T, path: string): T {
  origins.set(value, path);
  return value;
}

/** How a protocol names what follows a message or part in its own requests. */
export interface ParamStyle {
  /** Top-level Chat Completions params the protocol names otherwise (`stop` -> `stop_sequences`). */
  readonly fields: Readonly<Record<string, string>>;
  /** The rest of a Chat Completions param (`.image_url.url`) in the protocol's terms. */
  tail(rest: string): string;
}

const CHAT_PARAM = /^messages\[(\d+)\](?:\.content\[(\d+)\])?(.*)$/;

/** The client's name for a param of the translated request, or undefined when the translation recorded no origin for it. */
export function originalParam(request: ChatCompletionRequest, param: string, style: ParamStyle): string | undefined {
  const field = style.fields[param];
  if (field !== undefined) return field;
  const match = CHAT_PARAM.exec(param);
  if (match === null) return undefined;
  const [, messageIndex, partIndex, rest = ''] = match;
  const message = request.messages[Number(messageIndex)];
  if (message === undefined) return undefined;
  const content = message.content;
  const part = partIndex !== undefined && Array.isArray(content) ? (content[Number(partIndex)] as object | undefined) : undefined;
  const partOrigin = part === undefined ? undefined : origins.get(part);
  if (partOrigin !== undefined) return partOrigin + style.tail(rest);
  const messageOrigin = origins.get(message);
  if (messageOrigin === undefined) return undefined;
  return messageOrigin + style.tail(`${partIndex === undefined ? '' : `.content[${partIndex}]`}${rest}`);
}

/** A failed attempt's error, its param (and the message naming it) told as the client sent it. */
export function inClientTerms(result: AttemptResult, request: ChatCompletionRequest, style: ParamStyle): AttemptResult {
  if (result.answered) return result;
  const { error } = result;
  const param = error.param;
  if (param === null) return result;
  const original = originalParam(request, param, style);
  if (original === undefined) return result;
  const renamed = new GatewayHttpError(error.status, error.message.replace(param, original), { type: error.errorType, code: error.errorCode, param: original, headers: { ...error.headers } });
  return { answered: false, fallback: result.fallback, error: renamed };
}
