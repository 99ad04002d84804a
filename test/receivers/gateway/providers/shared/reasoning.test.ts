import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../../../../../src/receivers/gateway/providers/shared/openai-types.js';
import { ProviderRequestError } from '../../../../../src/receivers/gateway/providers/shared/inputs.js';
import { claudeThinkingMode, reasoningOf, replayBlocks, structuredOutputTool, thinkingBudget } from '../../../../../src/receivers/gateway/providers/shared/reasoning.js';

function request(extra: Partial<ChatCompletionRequest>): ChatCompletionRequest {
  return { model: 'x/y', messages: [{ role: 'user', content: 'a' }], ...extra };
}

function on(extra: Partial<ChatCompletionRequest>) {
  const reasoning = reasoningOf(request(extra));
  if (reasoning?.on !== true) throw new Error('expected reasoning on');
  return reasoning;
}

describe('reasoning options', () => {
  it('reads reasoning_effort, reasoning.effort, reasoning.enabled and says nothing when nothing is set', () => {
    expect(reasoningOf(request({}))).toBeUndefined();
    expect(reasoningOf(request({ reasoning_effort: 'none' }))).toEqual({ on: false });
    expect(reasoningOf(request({ reasoning: { enabled: false } }))).toEqual({ on: false });
    expect(reasoningOf(request({ reasoning: { enabled: true } }))).toEqual({ on: true, effort: 'medium', requested: 'medium', budget: undefined, exclude: false });
    expect(reasoningOf(request({ reasoning: { effort: 'low', max_tokens: 3000, exclude: true } }))).toEqual({ on: true, effort: 'low', requested: 'low', budget: 3000, exclude: true });
    expect(reasoningOf(request({ reasoning_effort: 'xhigh' }))).toMatchObject({ on: true, effort: 'high', requested: 'xhigh' });
  });

  it('derives a budget from the effort as a share of max_tokens, between 1024 and 32000', () => {
    const req = request({});
    expect(thinkingBudget(on({ reasoning_effort: 'high' }), 10_000, true, req, 'anthropic')).toEqual({ budget: 8000, maxTokens: 10_000 });
    expect(thinkingBudget(on({ reasoning_effort: 'minimal' }), 4096, false, req, 'anthropic')).toEqual({ budget: 1024, maxTokens: 4096 });
    expect(thinkingBudget(on({ reasoning_effort: 'high' }), 100_000, true, req, 'anthropic')).toEqual({ budget: 32_000, maxTokens: 100_000 });
    expect(() => thinkingBudget(on({ reasoning_effort: 'low' }), 1000, true, request({ reasoning_effort: 'low' }), 'anthropic')).toThrow(/reasoning_effort: needs max_tokens above 1024/);
  });

  it('raises an unset max_tokens for an explicit budget, and refuses one that does not fit under a set max_tokens', () => {
    const req = request({});
    expect(thinkingBudget(on({ reasoning: { max_tokens: 6000 } }), 4096, false, req, 'anthropic')).toEqual({ budget: 6000, maxTokens: 10_096 });
    expect(() => thinkingBudget(on({ reasoning: { max_tokens: 6000 } }), 4096, true, req, 'anthropic')).toThrow(ProviderRequestError);
    expect(() => thinkingBudget(on({ reasoning: { max_tokens: 500 } }), 4096, false, req, 'anthropic')).toThrow(/at least 1024/);
    expect(() => thinkingBudget(on({ reasoning: { exclude: true, effort: 'low' } }), 4096, false, req, 'bedrock')).toThrow(/reasoning.exclude/);
  });

  it('joins streamed pieces by index and keeps only signed blocks of its own format', () => {
    const blocks = replayBlocks(
      [
        { type: 'reasoning.text', text: 'Let ', format: 'anthropic-claude-v1', index: 0 },
        { type: 'reasoning.text', text: 'me.', format: 'anthropic-claude-v1', index: 0 },
        { type: 'reasoning.text', text: '', signature: 'sig-1', format: 'anthropic-claude-v1', index: 0 },
        { type: 'reasoning.text', text: 'Unsigned.', index: 1 },
        { type: 'reasoning.encrypted', data: 'opaque', format: 'anthropic-claude-v1', index: 2 },
        { type: 'reasoning.text', text: 'Other.', signature: 'sig-2', format: 'amazon-bedrock-converse-v1', index: 3 },
        { type: 'reasoning.text', text: 'Whole.', signature: 'sig-3' },
      ],
      'anthropic-claude-v1',
    );
    expect(blocks).toEqual([
      { kind: 'text', text: 'Let me.', signature: 'sig-1' },
      { kind: 'encrypted', data: 'opaque' },
      { kind: 'text', text: 'Whole.', signature: 'sig-3' },
    ]);
  });

  it('turns json_schema into the reserved forced tool, and refuses json_object, tools and reasoning beside it', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const format = { type: 'json_schema' as const, json_schema: { name: 'answer', schema } };
    expect(structuredOutputTool(request({ response_format: format }), 'bedrock', undefined)).toMatchObject({ name: 'sluice_structured_output', schema });
    expect(structuredOutputTool(request({ response_format: { type: 'text' } }), 'bedrock', undefined)).toBeUndefined();
    expect(() => structuredOutputTool(request({ response_format: { type: 'json_object' } }), 'anthropic', undefined)).toThrow(/json_object/);
    const tools = [{ type: 'function' as const, function: { name: 'f' } }];
    expect(() => structuredOutputTool(request({ response_format: format, tools }), 'anthropic', undefined)).toThrow(/tools/);
    expect(() => structuredOutputTool(request({ response_format: format }), 'anthropic', { on: true, effort: 'low', requested: 'low', budget: undefined, exclude: false })).toThrow(/reasoning/);
  });

  it('tells from a Claude model id (Anthropic\'s or Bedrock\'s) whether it takes adaptive thinking, only that, and xhigh', () => {
    const modes = (ids: string[]) => ids.map((id) => claudeThinkingMode(id));
    expect(modes(['claude-3-7-sonnet-20250219', 'claude-opus-4-20250514', 'claude-sonnet-4-5', 'anthropic.claude-haiku-4-5-20251001-v1:0', 'claude-opus-4-1', 'claude-test', 'arn:aws:bedrock:us-east-1:1:application-inference-profile/abc'])).toEqual(Array(7).fill({ mode: 'budget', xhigh: false, disabled: false }));
    expect(modes(['claude-opus-4-6', 'claude-sonnet-4-6-20260217', 'anthropic.claude-opus-4-6-v1:0', 'us.anthropic.claude-sonnet-4-6'])).toEqual(Array(4).fill({ mode: 'adaptive', xhigh: false, disabled: false }));
    expect(modes(['claude-opus-4-7', 'anthropic.claude-opus-4-7', 'eu.anthropic.claude-opus-4-8-v1:0', 'claude-opus-5-5', 'claude-sonnet-5-5', 'claude-fable-5', 'claude-fable-5-1', 'anthropic.claude-mythos-5-1'])).toEqual(Array(8).fill({ mode: 'adaptive-only', xhigh: true, disabled: false }));
    // Opus 5 and Sonnet 5 think by default and take `disabled`.
    expect(modes(['claude-opus-5', 'anthropic.claude-opus-5', 'anthropic.claude-sonnet-5'])).toEqual(Array(3).fill({ mode: 'adaptive-only', xhigh: true, disabled: true }));
    expect(modes(['claude-mythos-preview', 'us.anthropic.claude-mythos-preview'])).toEqual(Array(2).fill({ mode: 'adaptive-only', xhigh: false, disabled: false }));
  });
});
