import { describe, expect, it } from 'vitest';
import { tokensOf, zeroWrongCounts } from '../../src/shared/tokens.js';
import { periodEnd } from '../../src/shared/periods.js';
import { mapStopReason } from '../../src/receivers/gateway/providers/anthropic/response.js';

describe('billed token counts', () => {
  it('reads cached prompt tokens from OpenAI\'s prompt_tokens_details, or DeepSeek\'s prompt_cache_hit_tokens', () => {
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60 } })).toMatchObject({ input: 100, output: 7, cacheRead: 60 });
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_cache_hit_tokens: 60 })).toMatchObject({ input: 100, output: 7, cacheRead: 60 });
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 10 }, prompt_cache_hit_tokens: 60 })).toMatchObject({ cacheRead: 10 });
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_cache_hit_tokens: -3 })).toMatchObject({ cacheRead: 0 });
  });

  it('reads cache writes from cache_creation_tokens, or OpenRouter\'s cache_write_tokens', () => {
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 10, cache_creation_tokens: 30 } })).toMatchObject({ cacheRead: 10, cacheWrite: 30 });
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 10, cache_write_tokens: 30 } })).toMatchObject({ cacheRead: 10, cacheWrite: 30 });
    const wrong = { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cache_write_tokens: -30 } };
    expect(zeroWrongCounts(wrong)).toBe(true);
    expect(wrong.prompt_tokens_details.cache_write_tokens).toBe(0);
  });

  it('zeroes the counts of a usage object that are present but not non-negative integers, and says whether it did', () => {
    const right = { prompt_tokens: 100, completion_tokens: 0, total_tokens: 100, prompt_tokens_details: null, completion_tokens_details: { reasoning_tokens: 3 } };
    expect(zeroWrongCounts(right)).toBe(false);
    expect(right).toEqual({ prompt_tokens: 100, completion_tokens: 0, total_tokens: 100, prompt_tokens_details: null, completion_tokens_details: { reasoning_tokens: 3 } });
    const wrong = { prompt_tokens: -1, completion_tokens: 2.5, total_tokens: 2 ** 60, prompt_cache_hit_tokens: Number.NaN, prompt_tokens_details: { cached_tokens: '4' as unknown as number, cache_creation_tokens: 1 }, completion_tokens_details: {} };
    expect(zeroWrongCounts(wrong)).toBe(true);
    expect(wrong).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_cache_hit_tokens: 0, prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 1 }, completion_tokens_details: {} });
  });

  it('reads Anthropic\'s model_context_window_exceeded as an answer cut short', () => {
    expect(mapStopReason('model_context_window_exceeded')).toBe('length');
    expect(mapStopReason('max_tokens')).toBe('length');
  });

  it('ends a budget period where the next begins: the next UTC day, Monday, first of the month; total never', () => {
    const wednesday = Date.parse('2026-11-25T15:30:00Z');
    expect(periodEnd('day', wednesday)).toBe(Date.parse('2026-11-26T00:00:00Z'));
    expect(periodEnd('week', wednesday)).toBe(Date.parse('2026-11-30T00:00:00Z'));
    expect(periodEnd('week', Date.parse('2026-11-30T00:00:00Z'))).toBe(Date.parse('2026-12-07T00:00:00Z'));
    expect(periodEnd('month', Date.parse('2026-12-31T23:59:59Z'))).toBe(Date.parse('2027-01-01T00:00:00Z'));
    expect(periodEnd('total', wednesday)).toBeUndefined();
  });
});
