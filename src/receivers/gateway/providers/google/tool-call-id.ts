// Gemini-only rules for replaying tool calls; the id format itself is in
// ../shared/tool-call-id.ts (the other provider types strip its signature).

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
