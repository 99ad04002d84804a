import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { rawRequestText, withModel } from '../../../../src/receivers/gateway/providers/shared/raw-request.js';
import { API_KEY, completion, openaiProvider, sendJson, startGateway, startUpstream, type Gateway, type Upstream, type UpstreamHandler } from '../harness.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

async function setup(first: UpstreamHandler, second: UpstreamHandler = first): Promise<[Upstream, Upstream]> {
  const a = await startUpstream(first);
  const b = await startUpstream(second);
  upstreams.push(a, b);
  gateway = await startGateway({
    providers: { alpha: openaiProvider(a), beta: openaiProvider(b) },
    models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm-alpha' }, { provider: 'beta', model: 'm-beta' }] }],
  });
  return [a, b];
}

async function post(text: string): Promise<Response> {
  return fetch(`${(gateway as Gateway).baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body: text });
}

const answer: UpstreamHandler = (_body, res) => sendJson(res, 200, completion('ok'));

describe('the client JSON text sent on to OpenAI-compatible upstreams', () => {
  const raw = (text: string, model: string) => rawRequestText(text, JSON.parse(text), model);

  it('takes the text when model is its first key, and says where the value ends', () => {
    const text = ' { "model" :\t"acme/model" , "messages":[{"role":"user","content":"model"}]}';
    const found = raw(text, 'acme/model');
    expect(found?.afterModel).toBe(text.indexOf(' , "messages"'));
    expect(withModel(found as NonNullable<typeof found>, 'up/"m"')).toBe('{"model":"up/\\"m\\"" , "messages":[{"role":"user","content":"model"}]}');
    expect(JSON.parse(withModel(found as NonNullable<typeof found>, 'up/"m"'))).toEqual({ model: 'up/"m"', messages: [{ role: 'user', content: 'model' }] });
    // escaped quotes and backslashes inside strings do not end them early
    expect(raw('{"model":"acme/model","messages":[{"role":"user","content":"a \\\" \\\\"}],"x":{"y":1}}', 'acme/model')).toBeDefined();
  });

  it('refuses texts that could say something else than the parsed request', () => {
    const messages = '"messages":[{"role":"user","content":"hi"}]';
    // model not first
    expect(raw(`{${messages},"model":"acme/model"}`, 'acme/model')).toBeUndefined();
    // a second model key, plain or escaped: JSON.parse keeps the last, an upstream may keep either
    expect(raw(`{"model":"acme/model",${messages},"model":"acme/other"}`, 'acme/other')).toBeUndefined();
    expect(raw(`{"model":"acme/model",${messages},"model":"acme/model"}`, 'acme/model')).toBeUndefined();
    expect(raw(`{"model":"acme/model",${messages},"mod\\u0065l":"acme/model"}`, 'acme/model')).toBeUndefined();
    // duplicate keys anywhere else
    expect(raw(`{"model":"acme/model","max_tokens":100000,${messages},"max_tokens":10}`, 'acme/model')).toBeUndefined();
    expect(raw('{"model":"acme/model","messages":[{"role":"user","content":"IGNORE","content":"hi"}]}', 'acme/model')).toBeUndefined();
    expect(raw(`{"model":"acme/model",${messages},"x":{"a":1,"\\u0061":2}}`, 'acme/model')).toBeUndefined();
    // a number JSON.parse cannot keep as written
    expect(raw(`{"model":"acme/model",${messages},"x":1e400}`, 'acme/model')).toBeUndefined();
    expect(raw(`{"model":"acme/model",${messages},"x":2E3}`, 'acme/model')).toBeUndefined();
    // the value escaped otherwise than JSON.stringify writes it, or the key escaped
    expect(raw(`{"model":"acme\\/model",${messages}}`, 'acme/model')).toBeUndefined();
    expect(raw(`{"mod\\u0065l":"acme/model",${messages}}`, 'acme/model')).toBeUndefined();
    // not an object
    expect(raw('["model"]', 'model')).toBeUndefined();
  });

  it('sends the official openai SDK request on byte for byte but for the model, on every attempt', async () => {
    const [alpha, beta] = await setup((_body, res) => sendJson(res, 500, { error: { message: 'down' } }), answer);
    const client = new OpenAI({ baseURL: (gateway as Gateway).baseURL, apiKey: API_KEY, maxRetries: 0 });
    const result = await client.chat.completions.create({
      model: 'acme/model',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Ünïcode 🚀 and "quotes"' }],
      temperature: 0.2,
      max_tokens: 50,
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } }],
      tool_choice: 'auto',
    });
    expect(result.choices[0]?.message.content).toBe('ok');
    const sent = `{"model":"acme/model","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Ünïcode 🚀 and \\"quotes\\""}],"temperature":0.2,"max_tokens":50,"tools":[{"type":"function","function":{"name":"lookup","description":"Looks up","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}],"tool_choice":"auto"}`;
    expect(alpha.requests[0]?.text).toBe(sent.replace('"acme/model"', '"m-alpha"'));
    expect(beta.requests[0]?.text).toBe(sent.replace('"acme/model"', '"m-beta"'));
  });

  it('keeps fields it does not know, in the client order and spacing', async () => {
    const [alpha] = await setup(answer);
    const text = '{"model": "acme/model", "vendor_extra": {"keep": [1, 2]}, "messages": [{"role": "user", "content": "hi"}]}';
    expect((await post(text)).status).toBe(200);
    expect(alpha.requests[0]?.text).toBe('{"model":"m-alpha", "vendor_extra": {"keep": [1, 2]}, "messages": [{"role": "user", "content": "hi"}]}');
  });

  it('never lets a duplicate key reach the upstream, plain or escaped', async () => {
    const [alpha] = await setup(answer);
    for (const text of [
      '{"model":"acme/model","messages":[{"role":"user","content":"hi"}],"model":"acme/model"}',
      '{"model":"acme/model","messages":[{"role":"user","content":"hi"}],"mod\\u0065l":"acme/model"}',
      '{"model":"acme/model","messages":[{"role":"user","content":"IGNORE","content":"hi"}]}',
    ]) {
      expect((await post(text)).status).toBe(200);
    }
    for (const seen of alpha.requests) {
      expect(seen.text).not.toContain('acme/model');
      expect(seen.text).not.toContain('IGNORE');
      expect(seen.body).toEqual({ model: 'm-alpha', messages: [{ role: 'user', content: 'hi' }] });
    }
    expect(alpha.requests.length).toBe(3);
  });

  it('serializes the request again when the client sent a top-level null or gateway options', async () => {
    const [alpha] = await setup(answer);
    expect((await post('{"model":"acme/model","messages":[{"role":"user","content":"hi"}],"temperature":null}')).status).toBe(200);
    expect(alpha.requests[0]?.body).toEqual({ model: 'm-alpha', messages: [{ role: 'user', content: 'hi' }] });
    expect((await post('{"model":"acme/model","messages":[{"role":"user","content":"hi"}],"providerOptions":{"gateway":{"order":["alpha"]}}}')).status).toBe(200);
    expect(alpha.requests[1]?.body).toEqual({ model: 'm-alpha', messages: [{ role: 'user', content: 'hi' }] });
  });
});
