import { describe, expect, it } from 'vitest';
import { tokensOf } from '../../src/shared/tokens.js';
import { mapStopReason } from '../../src/receivers/gateway/providers/anthropic/response.js';

describe('billed token counts', () => {
  it('reads cached prompt tokens from OpenAI\'s prompt_tokens_details, or DeepSeek\'s prompt_cache_hit_tokens', () => {
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60 } })).toMatchObject({ input: 100, output: 7, cacheRead: 60 });
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_cache_hit_tokens: 60 })).toMatchObject({ input: 100, output: 7, cacheRead: 60 });
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 10 }, prompt_cache_hit_tokens: 60 })).toMatchObject({ cacheRead: 10 });
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 7, prompt_cache_hit_tokens: -3 })).toMatchObject({ cacheRead: 0 });
  });

  it('reads Anthropic\'s model_context_window_exceeded as an answer cut short', () => {
    expect(mapStopReason('model_context_window_exceeded')).toBe('length');
    expect(mapStopReason('max_tokens')).toBe('length');
  });
});
