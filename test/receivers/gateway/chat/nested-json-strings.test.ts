// JSON a request carries inside its strings (a tool call's `arguments`, a
// tool result), which adapters for other provider types parse and send on as
// objects: bounded like the body itself, never a failure of the gateway.
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, startGateway, type Gateway } from '../harness.js';
import { sendMessage } from '../providers/anthropic/fixtures.js';
import { validateAnthropic } from '../providers/anthropic/wire-schema.js';
import { sendResponse } from '../providers/google/fixtures.js';
import { validateGemini } from '../providers/google/wire-schema.js';
import { startFake, type FakeUpstream } from '../providers/shared/fake-upstream.js';

let gateway: Gateway | undefined;
let fake: FakeUpstream | undefined;

afterEach(async () => {
  const problems = fake?.problems ?? [];
  await gateway?.close();
  await fake?.close();
  gateway = undefined;
  fake = undefined;
  expect(problems).toEqual([]);
});

/** `{"a":[[...]]}`, its arrays `levels` deep inside the object. */
function nested(levels: number): string {
  return `{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`;
}

function toolExchange(args: string, result: string): Record<string, unknown> {
  return {
    model: 'acme/chat',
    messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: args } }] },
      { role: 'tool', tool_call_id: 'call_1', content: result },
    ],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
  };
}

async function post(body: unknown): Promise<{ status: number; json: { error?: { message: string; param: string | null; code: string | null } } }> {
  const response = await fetch(`${gateway?.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as never };
}

describe('JSON inside request strings, for a provider type that parses it', () => {
  it('answers 400 naming the tool call arguments nested thousands deep (anthropic), not a 502 of the gateway, and keeps serving', async () => {
    fake = await startFake(validateAnthropic, (_seen, res) => sendMessage(res, [{ type: 'text', text: 'sunny' }]));
    gateway = await startGateway({
      providers: { claude: { type: 'anthropic', base_url: fake.url, api_key: 'sk-ant-test' } },
      models: [{ id: 'acme/chat', endpoints: [{ provider: 'claude', model: 'claude-test' }] }],
    });
    const deep = await post(toolExchange(nested(5000), 'ok'));
    expect(deep.status).toBe(400);
    expect(deep.json.error).toMatchObject({ param: 'messages[1].tool_calls[0].function.arguments', code: 'unsupported_value' });
    expect(deep.json.error?.message).toContain('more than 128 levels deep');
    expect(fake.requests).toHaveLength(0);
    const fine = await post(toolExchange(nested(100), 'ok'));
    expect(fine.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });

  it('sends a tool result nested thousands deep to google as its text, not a 502 of the gateway', async () => {
    fake = await startFake(validateGemini, (_seen, res) => sendResponse(res, [{ text: 'sunny' }]));
    gateway = await startGateway({
      providers: { g: { type: 'google', base_url: fake.url, api_key: 'gm-test-key' } },
      models: [{ id: 'acme/chat', endpoints: [{ provider: 'g', model: 'gemini-test' }] }],
    });
    const result = nested(5000);
    const answer = await post(toolExchange('{"city":"Paris"}', result));
    expect(answer.status).toBe(200);
    expect(JSON.stringify(fake.requests[0]?.body)).toContain(JSON.stringify({ output: result }));
  });
});
