import { describe, expect, it } from 'vitest';
import { chatRequestSchema } from '../../../../src/receivers/gateway/chat/schema.js';
import { fastParse } from '../../../../src/receivers/gateway/chat/schema-fast.js';

const text = [
  { role: 'system', content: 'Be terse.' },
  { role: 'user', content: 'Hi', name: 'ann' },
];

const taken: Record<string, unknown>[] = [
  { model: 'openai/gpt', messages: text },
  { messages: text, stream: true, model: 'm', temperature: 0, max_tokens: 16, custom_field: { a: 1 }, user: 'u' },
  { model: 'm', messages: [{ role: 'developer', content: '' }, { role: 'assistant', content: 'x' }], top_p: 1, seed: -5, n: 128, presence_penalty: -2, frequency_penalty: 2 },
  { model: 'm', messages: text, stream: null, temperature: null, max_completion_tokens: 1 },
  {
    temperature: 0.3,
    tool_choice: 'auto',
    model: 'm',
    messages: text,
    parallel_tool_calls: false,
    tools: [
      { function: { parameters: { required: ['id'], type: 'object', properties: { id: { type: 'string' } } }, name: 'get_order', description: 'Look up an order' }, type: 'function' },
      { type: 'function', function: { name: 'no-params', strict: null } },
      { type: 'function', function: { name: 'strict_one', parameters: {}, strict: true } },
    ],
    max_tokens: 512,
  },
  { model: 'm', messages: text, tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'none' },
  { model: 'm', messages: text, tool_choice: 'none' },
];

const refused: Record<string, unknown>[] = [
  { model: '', messages: text },
  { model: 'm', messages: [] },
  { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
  { model: 'm', messages: [{ role: 'user', content: 'hi', extra: 1 }] },
  { model: 'm', messages: [{ role: 'tool', content: 'hi', tool_call_id: 't' }] },
  { model: 'm', messages: [{ role: 'assistant', content: null }] },
  { model: 'm', messages: text, temperature: 2.5 },
  { model: 'm', messages: text, max_tokens: 1.5 },
  { model: 'm', messages: text, max_tokens: 0 },
  { model: 'm', messages: text, n: 129 },
  { model: 'm', messages: text, user: null },
  { model: 'm', messages: text, stream: 'yes' },
  { model: 'm', messages: text, tools: [] },
  { model: 'm', messages: text, tools: [{ type: 'function', function: { name: 'has space' } }] },
  { model: 'm', messages: text, tools: [{ type: 'function', function: { name: 'f', extra: 1 } }] },
  { model: 'm', messages: text, tools: [{ type: 'function', extra: 1, function: { name: 'f' } }] },
  { model: 'm', messages: text, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'array' } } }] },
  { model: 'm', messages: text, tools: [{ type: 'function', function: { name: 'f', parameters: { required: [1] } } }] },
  { model: 'm', messages: text, tools: [{ type: 'function', function: { name: 'f', parameters: { properties: [] } } }] },
  { model: 'm', messages: text, tools: [{ type: 'function', function: { name: 'f', description: 3 } }] },
  { model: 'm', messages: text, tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: { type: 'function', function: { name: 'f' } } },
  { model: 'm', messages: text, tool_choice: 'auto' },
  { model: 'm', messages: text, tools: [{ type: 'function', function: { name: 'f' } }], parallel_tool_calls: 'yes' },
  { model: 'm', messages: text, stream_options: { include_usage: true }, stream: true },
  { model: 'm', messages: text, providerOptions: { gateway: { order: ['a'] } } },
  { messages: text },
];

describe('schema fast path', () => {
  it.each(taken.map((r, i) => [i, r] as const))('returns what zod returns, keys in the same order (%i)', (_i, request) => {
    const zod = chatRequestSchema.parse(request) as Record<string, unknown>;
    const fast = fastParse(request);
    expect(fast).toEqual(zod);
    expect(JSON.stringify(fast)).toBe(JSON.stringify(zod));
    expect(Object.keys(fast ?? {})).toEqual(Object.keys(zod));
  });

  it.each(refused.map((r, i) => [i, r] as const))('leaves anything else to zod (%i)', (_i, request) => {
    expect(fastParse(request)).toBeUndefined();
  });
});
