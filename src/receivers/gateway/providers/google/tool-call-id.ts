// Gemini's function calls carry no id the client can echo, but may carry a
// `thoughtSignature` that must come back on the same functionCall part in the
// next request (Gemini 2.5+ with thinking; required by Gemini 3). OpenAI
// clients echo exactly one opaque field per tool call: its `id`. So the
// adapter mints ids as `gemini_<hex>` and appends `.<signature>` when there is
// one (signatures are base64, ids are hex: the first dot separates them).
// Ids that do not start with `gemini_` (minted by another provider before a
// fallback) are passed through and carry no signature.
import { randomBytes } from 'node:crypto';

const PREFIX = 'gemini_';

export function mintToolCallId(thoughtSignature: string | undefined): string {
  const id = `${PREFIX}${randomBytes(8).toString('hex')}`;
  return thoughtSignature === undefined || thoughtSignature === '' ? id : `${id}.${thoughtSignature}`;
}

export function thoughtSignatureOf(toolCallId: string): string | undefined {
  if (!toolCallId.startsWith(PREFIX)) return undefined;
  const dot = toolCallId.indexOf('.');
  return dot === -1 ? undefined : toolCallId.slice(dot + 1);
}

/**
 * Google's documented stand-in for a signature that was never issued (tool
 * calls minted by another provider before a fallback, or by the client).
 * Gemini 3 refuses a replayed turn whose first functionCall lacks a signature;
 * earlier models need none.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

export function requiresThoughtSignatures(model: string): boolean {
  return /^(models\/)?gemini-(?:[3-9]|\d{2,})/.test(model);
}
