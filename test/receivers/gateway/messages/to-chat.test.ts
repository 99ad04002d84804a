import { describe, expect, it } from 'vitest';
import { messagesRequestSchema } from '../../../../src/receivers/gateway/messages/schema.js';
import { toChatRequest } from '../../../../src/receivers/gateway/messages/to-chat.js';
import { ProviderRequestError } from '../../../../src/receivers/gateway/providers/shared/inputs.js';

function translate(body: Record<string, unknown>, type = 'google') {
  return toChatRequest(messagesRequestSchema.parse({ model: 'm/x', max_tokens: 100, ...body }), type);
}

function refusal(body: Record<string, unknown>, type = 'google'): string | undefined {
  try {
    translate(body, type);
    return undefined;
  } catch (err) {
    if (err instanceof ProviderRequestError) return err.param;
    throw err;
  }
}

describe('Messages -> Chat Completions translation', () => {
  it('marks an error tool result in its text and keeps a tool result cache breakpoint on its last part', () => {
    const chat = translate({
      messages: [
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true, cache_control: { type: 'ephemeral' } }] },
      ],
    });
    expect(chat.messages[1]).toEqual({ role: 'tool', tool_call_id: 't1', content: [{ type: 'text', text: 'Error: ' }, { type: 'text', text: 'boom', cache_control: { type: 'ephemeral' } }] });
  });

  it('maps thinking: a budget for google and bedrock, an effort for openai, adaptive through output_config.effort', () => {
    expect(translate({ max_tokens: 9000, thinking: { type: 'enabled', budget_tokens: 5000 }, messages: [{ role: 'user', content: 'a' }] }).reasoning).toEqual({ max_tokens: 5000 });
    expect(translate({ max_tokens: 9000, thinking: { type: 'enabled', budget_tokens: 5000 }, messages: [{ role: 'user', content: 'a' }] }, 'openai').reasoning_effort).toBe('medium');
    expect(translate({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' }, messages: [{ role: 'user', content: 'a' }] }, 'openai').reasoning_effort).toBe('high');
    // Claude's adaptive thinking on bedrock takes them; google reads them as high.
    expect(translate({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' }, messages: [{ role: 'user', content: 'a' }] }, 'bedrock').reasoning_effort).toBe('max');
    expect(translate({ thinking: { type: 'adaptive' }, output_config: { effort: 'xhigh' }, messages: [{ role: 'user', content: 'a' }] }).reasoning_effort).toBe('xhigh');
    expect(translate({ output_config: { format: { type: 'json_schema', schema: { type: 'object' } } }, messages: [{ role: 'user', content: 'a' }] }).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object' } } });
  });

  it.each([
    ['container', { container: 'c1', messages: [{ role: 'user', content: 'a' }] }],
    ['cache_control', { cache_control: { type: 'ephemeral' }, messages: [{ role: 'user', content: 'a' }] }],
    ['tools.0.type', { tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'a' }] }],
    ['messages.0.content.0.type', { messages: [{ role: 'user', content: [{ type: 'search_result', source: 's', title: 't', content: [] }] }] }],
    ['messages.1.content.0.type', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] }] }],
    ['system.0.type', { system: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }], messages: [{ role: 'user', content: 'a' }] }],
    ['thinking.type', { thinking: { type: 'between_tools' }, messages: [{ role: 'user', content: 'a' }] }],
    ['messages.0.content.0.content.0', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [null] }] }] }],
    ['messages.0.content.0.content.0.text', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] }] }] }],
    ['messages.0.content.1.text', { messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text' }] }] }],
    ['messages.0.content.0.text', { messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }],
    ['system.0.text', { system: [{ type: 'text' }], messages: [{ role: 'user', content: 'a' }] }],
    ['messages.1.content.0.text', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'text', text: null }] }] }],
    ['messages.1.content.0.id', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] }] }],
    ['messages.1.content.0.name', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't', input: {} }] }] }],
    ['messages.1.content.0.input', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: 'x' }] }] }],
    ['messages.1.content.0.thinking', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'thinking', signature: 's' }] }] }],
    ['messages.1.content.0.data', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'redacted_thinking' }] }] }],
    ['messages.0.content', { messages: [{ role: 'user', content: [] }] }],
    ['messages.2.content', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: '' }] }],
    ['messages.2.content', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: [] }] }],
  ])('refuses what it cannot carry, naming %s', (param, body) => {
    expect(refusal(body)).toBe(param);
  });
});
