import { deflateSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_KEY, completion, openaiProvider, sendJson, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';

let gateway: Gateway;
let upstream: Upstream;

beforeEach(async () => {
  upstream = await startUpstream((_b, res) => sendJson(res, 200, completion('ok')));
  gateway = await startGateway({ providers: { openai: openaiProvider(upstream) }, models: [{ id: 'openai/gpt-test', endpoints: [{ provider: 'openai', model: 'gpt' }] }] });
});

afterEach(async () => {
  await gateway.close();
  await upstream.close();
});

const user = [{ role: 'user', content: 'hi' }];

async function post(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; error: { message: string; type: string; param: string | null; code: string | null } }> {
  const response = await fetch(`${gateway.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' || body instanceof Buffer ? body : JSON.stringify(body),
  });
  const json = (await response.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  return { status: response.status, error: json.error };
}

const TOOL = { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } };

// [description, body, expected param]
const invalid: Array<[string, Record<string, unknown>, string]> = [
  ['a missing model', { messages: user }, 'model'],
  ['missing messages', { model: 'openai/gpt-test' }, 'messages'],
  ['empty messages', { model: 'openai/gpt-test', messages: [] }, 'messages'],
  ['an unknown role', { model: 'openai/gpt-test', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
  ['content of the wrong type', { model: 'openai/gpt-test', messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
  ['an unknown content part type', { model: 'openai/gpt-test', messages: [{ role: 'user', content: [{ type: 'audio', audio: {} }] }] }, 'messages[0].content[0].type'],
  ['an ftp image URL', { model: 'openai/gpt-test', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] }, 'messages[0].content[0].image_url.url'],
  ['a data URL that is not an image', { model: 'openai/gpt-test', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:text/plain;base64,aGk=' } }] }] }, 'messages[0].content[0].image_url.url'],
  ['a data URL with invalid base64', { model: 'openai/gpt-test', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,not*base64' } }] }] }, 'messages[0].content[0].image_url.url'],
  ['a bad image detail', { model: 'openai/gpt-test', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'ultra' } }] }] }, 'messages[0].content[0].image_url.detail'],
  ['an image part in a system message', { model: 'openai/gpt-test', messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }, 'messages[0].content[0].type'],
  ['a tool message without tool_call_id', { model: 'openai/gpt-test', messages: [{ role: 'tool', content: 'r' }] }, 'messages[0].tool_call_id'],
  ['an assistant message with neither content nor tool_calls', { model: 'openai/gpt-test', messages: [{ role: 'assistant' }] }, 'messages[0].content'],
  ['an assistant tool call of the wrong type', { model: 'openai/gpt-test', messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'code', function: { name: 'f', arguments: '{}' } }] }] }, 'messages[0].tool_calls[0].type'],
  ['a tool with a bad name', { model: 'openai/gpt-test', messages: user, tools: [{ type: 'function', function: { name: 'has space' } }] }, 'tools[0].function.name'],
  ['tool parameters that are not an object schema', { model: 'openai/gpt-test', messages: user, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'string' } } }] }, 'tools[0].function.parameters.type'],
  ['a bad tool_choice string', { model: 'openai/gpt-test', messages: user, tools: [TOOL], tool_choice: 'sometimes' }, 'tool_choice'],
  ['a tool_choice naming no tool', { model: 'openai/gpt-test', messages: user, tools: [TOOL], tool_choice: { type: 'function', function: { name: 'g' } } }, 'tool_choice.function.name'],
  ['tool_choice without tools', { model: 'openai/gpt-test', messages: user, tool_choice: 'required' }, 'tool_choice'],
  ['temperature above 2', { model: 'openai/gpt-test', messages: user, temperature: 2.5 }, 'temperature'],
  ['temperature below 0', { model: 'openai/gpt-test', messages: user, temperature: -0.1 }, 'temperature'],
  ['top_p above 1', { model: 'openai/gpt-test', messages: user, top_p: 1.5 }, 'top_p'],
  ['max_tokens of 0', { model: 'openai/gpt-test', messages: user, max_tokens: 0 }, 'max_tokens'],
  ['a fractional max_completion_tokens', { model: 'openai/gpt-test', messages: user, max_completion_tokens: 1.5 }, 'max_completion_tokens'],
  ['five stop sequences', { model: 'openai/gpt-test', messages: user, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
  ['a fractional seed', { model: 'openai/gpt-test', messages: user, seed: 1.5 }, 'seed'],
  ['n of 0', { model: 'openai/gpt-test', messages: user, n: 0 }, 'n'],
  ['an unknown response_format type', { model: 'openai/gpt-test', messages: user, response_format: { type: 'xml' } }, 'response_format.type'],
  ['stream_options without stream', { model: 'openai/gpt-test', messages: user, stream_options: { include_usage: true } }, 'stream_options'],
  ['a non-boolean include_usage', { model: 'openai/gpt-test', messages: user, stream: true, stream_options: { include_usage: 'yes' } }, 'stream_options.include_usage'],
  ['a non-string user', { model: 'openai/gpt-test', messages: user, user: 7 }, 'user'],
  ['an unknown reasoning_effort', { model: 'openai/gpt-test', messages: user, reasoning_effort: 'extreme' }, 'reasoning_effort'],
  ['a reasoning budget of 0', { model: 'openai/gpt-test', messages: user, reasoning: { max_tokens: 0 } }, 'reasoning.max_tokens'],
  ['reasoning.effort differing from reasoning_effort', { model: 'openai/gpt-test', messages: user, reasoning_effort: 'low', reasoning: { effort: 'high' } }, 'reasoning.effort'],
  ['a cache_control of an unknown type', { model: 'openai/gpt-test', messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'forever' } }] }] }, 'messages[0].content[0].cache_control.type'],
  ['a non-array order', { model: 'openai/gpt-test', messages: user, providerOptions: { gateway: { order: 'openai' } } }, 'providerOptions.gateway.order'],
];

describe('gateway request validation', () => {
  it.each(invalid)('rejects %s with a 400 naming the param', async (_name, body, param) => {
    const { status, error } = await post(body);
    expect(status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(param);
    expect(upstream.requests).toHaveLength(0);
  });

  // [description, body, param, message]
  const worded: Array<[string, unknown, string | null, string]> = [
    ['a missing model', { messages: user }, 'model', 'model: is required'],
    ['a model that is a number', { model: 5, messages: user }, 'model', 'model: must be of type string'],
    ['messages that are a string', { model: 'openai/gpt-test', messages: 'hi' }, 'messages', 'messages: must be of type array'],
    ['a temperature that is a string', { model: 'openai/gpt-test', messages: user, temperature: 'hot' }, 'temperature', 'temperature: must be of type number'],
    ['a stream flag that is a string', { model: 'openai/gpt-test', messages: user, stream: 'yes' }, 'stream', 'stream: must be of type boolean'],
    // A union names what its branch of the value's type wants, not "an invalid type or shape".
    ['a tool_choice string that is not a mode', { model: 'openai/gpt-test', messages: user, tools: [TOOL], tool_choice: 'sometimes' }, 'tool_choice', 'tool_choice: must be one of "auto", "none", "required"'],
    // No single parameter is at fault: OpenAI's error shape says null.
    ['a body that is an array', [], null, 'The request body must be of type object'],
    ['a body that is a JSON string', '"hi"', null, 'The request body must be of type object'],
  ];
  it.each(worded)('words %s as what is wrong, not as missing', async (_name, body, param, message) => {
    const { status, error } = await post(body as Record<string, unknown>);
    expect(status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toBe(message);
  });

  it('says a number past a double\'s range (which JSON.parse reads as Infinity) is not finite, rather than not a number', async () => {
    for (const [field, value] of [['max_tokens', '1e400'], ['temperature', '-1e999']]) {
      const { status, error } = await post(`{"model":"openai/gpt-test","messages":[{"role":"user","content":"hi"}],"${field}":${value}}`);
      expect(status).toBe(400);
      expect(error).toMatchObject({ message: `${field}: must be a finite number`, param: field, code: 'invalid_value' });
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('rejects a body that is not JSON with code invalid_json', async () => {
    const { status, error } = await post('{not json');
    expect(status).toBe(400);
    expect(error.code).toBe('invalid_json');
  });

  it('rejects a body nested deeper than 128 levels with code json_too_deep, forwards one at 128, and keeps serving', async () => {
    // The body, tools, the tool, function and parameters are five levels; the chain (properties) adds the rest.
    const withChain = (levels: number): Record<string, unknown> => {
      let chain: Record<string, unknown> = { type: 'string' };
      for (let i = 1; i < levels; i++) chain = { a: chain };
      return { model: 'openai/gpt-test', messages: user, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: chain } } }] };
    };
    const tooDeep = await post(withChain(124));
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.error).toEqual({ message: 'The JSON body nests arrays and objects more than 128 levels deep.', type: 'invalid_request_error', param: null, code: 'json_too_deep' });
    // Thousands deep (as text: JSON.stringify itself gives up there): before the bound, the raw-text check overflowed the stack into a 500.
    const chain = `${'{"a":'.repeat(5000)}{"type":"string"}${'}'.repeat(5000)}`;
    const thousands = await post(`{"model":"openai/gpt-test","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":${chain}}}}]}`);
    expect(thousands.status).toBe(400);
    expect(thousands.error.code).toBe('json_too_deep');
    expect(upstream.requests).toHaveLength(0);
    const atBound = await post(withChain(123));
    expect(atBound.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
  });

  it('accepts a request using every supported field', async () => {
    const { status } = await post({
      model: 'openai/gpt-test',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'really' }] },
        { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,aGk=', detail: 'high' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'done' },
      ],
      tools: [TOOL],
      tool_choice: { type: 'function', function: { name: 'f' } },
      temperature: 0,
      top_p: 1,
      max_tokens: 5,
      max_completion_tokens: 5,
      stop: ['x', 'y', 'z', 'w'],
      seed: -3,
      n: 1,
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' } } },
      user: 'u1',
      reasoning_effort: 'low',
    });
    expect(status).toBe(200);
    expect(upstream.requests[0]?.body['reasoning_effort']).toBe('low');
  });

  it('reads a gzip or deflate body, answers 400 to a broken one and 415 to another encoding', async () => {
    const body = JSON.stringify({ model: 'openai/gpt-test', messages: user });
    expect((await post(gzipSync(body), { 'content-encoding': 'gzip' })).status).toBe(200);
    expect((await post(deflateSync(body), { 'content-encoding': 'deflate' })).status).toBe(200);
    const broken = await post(Buffer.from('not gzip'), { 'content-encoding': 'gzip' });
    expect(broken.status).toBe(400);
    expect(broken.error.code).toBe('invalid_body');
    const other = await post(Buffer.from(body), { 'content-encoding': 'br' });
    expect(other.status).toBe(415);
    expect(other.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_content_encoding' });
    expect(upstream.requests).toHaveLength(2);
  });

  it('answers 413 to a gzip body that inflates past max_request_body_size', async () => {
    const bomb = gzipSync(Buffer.alloc(21 * 1024 * 1024, 32));
    const { status, error } = await post(bomb, { 'content-encoding': 'gzip' });
    expect(status).toBe(413);
    expect(error.code).toBe('request_too_large');
  });

  it('answers 401 without an Authorization header', async () => {
    const response = await fetch(`${gateway.baseURL}/models`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('missing_api_key');
  });

  it('answers 401 to a wrong key', async () => {
    const response = await fetch(`${gateway.baseURL}/models`, { headers: { authorization: 'Bearer sk-nope' } });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
  });

  it('answers 413 to a body over max_request_body_size', async () => {
    await gateway.close();
    gateway = await startGateway({ providers: { openai: openaiProvider(upstream) }, models: [], max_request_body_size: 2048 });
    const { status, error } = await post({ model: 'openai/gpt', messages: [{ role: 'user', content: 'x'.repeat(10_000) }] });
    expect(status).toBe(413);
    expect(error.code).toBe('request_too_large');
  });

  it('answers 413 to a body over the default 20MiB limit while the client is still sending', async () => {
    const { status, error } = await post({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'x'.repeat(21 * 1024 * 1024) }] });
    expect(status).toBe(413);
    expect(error.code).toBe('request_too_large');
  });

  it('answers 404 to an unknown route', async () => {
    const response = await fetch(`${gateway.baseURL}/completions`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}` } });
    expect(response.status).toBe(404);
  });

  it('answers 405 with Allow to the wrong method', async () => {
    const response = await fetch(`${gateway.baseURL}/chat/completions`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('answers HEAD on a GET route as GET without the body, and names HEAD in Allow', async () => {
    const headers = { authorization: `Bearer ${API_KEY}` };
    const get = await fetch(`${gateway.baseURL}/models`, { headers });
    const head = await fetch(`${gateway.baseURL}/models`, { method: 'HEAD', headers });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
    const wrong = await fetch(`${gateway.baseURL}/models`, { method: 'DELETE', headers });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers 404 model_not_found for an unknown model id on /v1/models/{id}', async () => {
    const response = await fetch(`${gateway.baseURL}/models/openai/missing`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
  });

  it('answers 429 with Retry-After once a key exceeds requests_per_minute', async () => {
    await gateway.close();
    gateway = await startGateway({ api_keys: [{ key: API_KEY, requests_per_minute: 2 }], providers: {}, models: [] });
    const headers = { authorization: `Bearer ${API_KEY}` };
    expect((await fetch(`${gateway.baseURL}/models`, { headers })).status).toBe(200);
    expect((await fetch(`${gateway.baseURL}/models`, { headers })).status).toBe(200);
    const limited = await fetch(`${gateway.baseURL}/models`, { headers });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('rate-limits each key separately', async () => {
    await gateway.close();
    gateway = await startGateway({ api_keys: [{ key: API_KEY, requests_per_minute: 1 }, 'sk-other'], providers: {}, models: [] });
    await fetch(`${gateway.baseURL}/models`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect((await fetch(`${gateway.baseURL}/models`, { headers: { authorization: `Bearer ${API_KEY}` } })).status).toBe(429);
    expect((await fetch(`${gateway.baseURL}/models`, { headers: { authorization: 'Bearer sk-other' } })).status).toBe(200);
  });
});
