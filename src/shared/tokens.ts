// The token counts a request is billed on, read from an OpenAI-shaped usage
// object. OpenAI counts cached prompt tokens inside prompt_tokens (and the
// gateway's adapters map Anthropic, Bedrock and Gemini usage the same way),
// so uncached input is what remains after cache reads and writes.
// OpenAI-compatible servers name cache counts their own ways: reads are
// OpenAI's cached_tokens or DeepSeek's prompt_cache_hit_tokens; writes are
// cache_creation_tokens (what the gateway itself answers) or OpenRouter's
// cache_write_tokens.

export interface TokenCounts {
  /** All prompt tokens, cached ones included. */
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly reasoning: number;
}

export const NO_TOKENS: TokenCounts = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };

export interface UsageLike {
  prompt_tokens?: number;
  completion_tokens?: number;
  /** DeepSeek's count of cached prompt tokens, where OpenAI's prompt_tokens_details is absent. */
  prompt_cache_hit_tokens?: number;
  prompt_tokens_details?: {
    cached_tokens?: number;
    cache_creation_tokens?: number;
    /** OpenRouter's count of prompt tokens written to the cache. */
    cache_write_tokens?: number;
  } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/** The cache reads the upstream reported, as it wrote them (undefined when it reported none). */
export function reportedCacheRead(usage: UsageLike): number | undefined {
  return usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens;
}

/** The cache writes the upstream reported, as it wrote them (undefined when it reported none). */
export function reportedCacheWrite(usage: UsageLike): number | undefined {
  return usage.prompt_tokens_details?.cache_creation_tokens ?? usage.prompt_tokens_details?.cache_write_tokens;
}

export function tokensOf(usage: UsageLike): TokenCounts {
  return {
    input: tokenCount(usage.prompt_tokens),
    output: tokenCount(usage.completion_tokens),
    cacheRead: tokenCount(reportedCacheRead(usage)),
    cacheWrite: tokenCount(reportedCacheWrite(usage)),
    reasoning: tokenCount(usage.completion_tokens_details?.reasoning_tokens),
  };
}

export function addTokens(a: TokenCounts, b: TokenCounts): TokenCounts {
  return { input: a.input + b.input, output: a.output + b.output, cacheRead: a.cacheRead + b.cacheRead, cacheWrite: a.cacheWrite + b.cacheWrite, reasoning: a.reasoning + b.reasoning };
}

/** An upstream's token count: trusted only as a non-negative integer, else 0. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

const USAGE_COUNTS = ['prompt_tokens', 'completion_tokens', 'total_tokens', 'prompt_cache_hit_tokens'];
const PROMPT_DETAIL_COUNTS = ['cached_tokens', 'cache_creation_tokens', 'cache_write_tokens'];
const COMPLETION_DETAIL_COUNTS = ['reasoning_tokens'];

/**
 * Sets each count of an OpenAI-shaped usage object that is present but not a
 * non-negative integer to 0, as it is billed; says whether any was. An
 * answer passed on as the upstream wrote it then tells its client what the
 * gateway counted.
 */
export function zeroWrongCounts(usage: UsageLike & { total_tokens?: number }): boolean {
  const top = zeroWrongIn(usage, USAGE_COUNTS);
  const prompt = zeroWrongIn(usage.prompt_tokens_details, PROMPT_DETAIL_COUNTS);
  return zeroWrongIn(usage.completion_tokens_details, COMPLETION_DETAIL_COUNTS) || top || prompt;
}

/** zeroWrongCounts for the `keys` of one object of the usage (absent or null ones are left alone). */
function zeroWrongIn(counts: unknown, keys: readonly string[]): boolean {
  if (typeof counts !== 'object' || counts === null) return false;
  const record = counts as Record<string, unknown>;
  let wrong = false;
  for (const key of keys) {
    const value = record[key];
    if (value === undefined || value === null || tokenCount(value) === value) continue;
    record[key] = 0;
    wrong = true;
  }
  return wrong;
}
