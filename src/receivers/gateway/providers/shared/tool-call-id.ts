// Gemini's function calls carry no id the client can echo, but may carry a
// `thoughtSignature` that must come back on the same functionCall part in the
// next request (Gemini 2.5+ with thinking; required by Gemini 3), and Gemini 3
// gives each call an `id` its functionResponse must echo. OpenAI clients echo
// exactly one opaque field per tool call: its `id`. So the google adapter
// mints ids as `gemini_<hex>`, followed by `-<hex of Gemini's id>` when the
// call had one and by `.<signature>` when there is one (signatures are
// base64, the rest is hex: the first dot separates them). Ids that do not
// start with `gemini_` (minted by another provider before a fallback) are
// passed through and carry neither.
//
// The signature is for Gemini only, and other providers refuse such ids
// (Anthropic and Converse take ^[a-zA-Z0-9_-]+$, OpenAI at most 40
// characters): requests to them carry `portableToolCallId(id)` instead.
// Anthropic and Converse also refuse ids other providers mint with other
// characters (Kimi K2's `functions.get_weather:0`): requests to them carry
// `anthropicToolCallId(id)`.
import { createHash, randomBytes } from 'node:crypto';

const PREFIX = 'gemini_';
/** What Anthropic's tool_use ids, Converse's toolUseId and OpenAI's tool call ids all accept. */
const PORTABLE = /^[a-zA-Z0-9_-]{1,40}$/;
/** Anthropic's tool_use ids and Converse's toolUseId (at most 64 characters). */
const ANTHROPIC = /^[a-zA-Z0-9_-]{1,64}$/;
const DIGEST_LENGTH = 8; // hex characters

export function mintToolCallId(thoughtSignature: string | undefined, callId?: string): string {
  const own = callId === undefined || callId === '' ? '' : `-${Buffer.from(callId, 'utf8').toString('hex')}`;
  const id = `${PREFIX}${randomBytes(8).toString('hex')}${own}`;
  return thoughtSignature === undefined || thoughtSignature === '' ? id : `${id}.${thoughtSignature}`;
}

/** The id Gemini gave the call a tool-call id was minted for, if it gave one. */
export function geminiCallIdOf(toolCallId: string): string | undefined {
  const hex = /^gemini_[0-9a-f]{16}-((?:[0-9a-f]{2})+)(?:\.|$)/.exec(toolCallId)?.[1];
  return hex === undefined ? undefined : Buffer.from(hex, 'hex').toString('utf8');
}

export function thoughtSignatureOf(toolCallId: string): string | undefined {
  if (!toolCallId.startsWith(PREFIX)) return undefined;
  const dot = toolCallId.indexOf('.');
  return dot === -1 ? undefined : toolCallId.slice(dot + 1);
}

/**
 * A Gemini-minted id without its signature, for requests to other provider
 * types; the same for the same id, so a tool call and its result still match.
 * An id that is not Gemini's is returned as it is.
 */
export function portableToolCallId(toolCallId: string): string {
  if (!toolCallId.startsWith(PREFIX)) return toolCallId;
  const dot = toolCallId.indexOf('.');
  const bare = dot === -1 ? toolCallId : toolCallId.slice(0, dot);
  if (PORTABLE.test(bare)) return bare;
  // Not an id the google adapter minted (a client wrote it): a digest keeps it unique.
  return `${PREFIX}${createHash('sha256').update(toolCallId).digest('hex').slice(0, 32)}`;
}

/**
 * portableToolCallId, with any other id Anthropic and Converse would refuse
 * made into one they take: its other characters become `_` and a digest of
 * the whole id is appended, so the same id always maps to the same one (a
 * call and its result still match) and two ids differing only there do not
 * meet. An id they take is returned as it is.
 */
export function anthropicToolCallId(toolCallId: string): string {
  const id = portableToolCallId(toolCallId);
  if (ANTHROPIC.test(id)) return id;
  const digest = createHash('sha256').update(id).digest('hex').slice(0, DIGEST_LENGTH);
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64 - DIGEST_LENGTH - 1)}_${digest}`;
}
