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
  it('takes the text when model is its first and only "model", and says where the value ends', () => {
    const text = ' { "model" :\t"acme/model" , "messages":[{"role":"user","content":"hi"}]}';
    const raw = rawRequestText(text, 'acme/model');
    expect(raw?.afterModel).toBe(text.indexOf(' , "messages"'));
    expect(withModel(raw as NonNullable<typeof raw>, 'up/"m"')).toBe('{"model":"up/\\"m\\"" , "messages":[{"role":"user","content":"hi"}]}');
    expect(JSON.parse(withModel(raw as NonNullable<typeof raw>, 'up/"m"'))).toEqual({ model: 'up/"m"', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('refuses texts that could say something else than the parsed request', () => {
    const messages = '"messages":[{"role":"user","content":"hi"}]';
    // model not first
    expect(rawRequestText(`{${messages},"model":"acme/model"}`, 'acme/model')).toBeUndefined();
    // a second model key: JSON.parse keeps the last, an upstream might too
    expect(rawRequestText(`{"model":"acme/model",${messages},"model":"acme/other"}`, 'acme/other')).toBeUndefined();
    expect(rawRequestText(`{"model":"acme/model",${messages},"model":"acme/model"}`, 'acme/model')).toBeUndefined();
    // "model" elsewhere (a content string, a tool parameter named model)
    expect(rawRequestText(`{"model":"acme/model","messages":[{"role":"user","content":"model"}]}`, 'acme/model')).toBeUndefined();
    // the value escaped otherwise than JSON.stringify writes it
    expect(rawRequestText(`{"model":"acme\\/model",${messages}}`, 'acme/model')).toBeUndefined();
    // not an object
    expect(rawRequestText(`["model"]`, 'model')).toBeUndefined();
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

  it('never lets a duplicate model key reach the upstream', async () => {
    const [alpha] = await setup(answer);
    const text = '{"model":"acme/model","messages":[{"role":"user","content":"hi"}],"model":"acme/model"}';
    expect((await post(text)).status).toBe(200);
    expect(alpha.requests[0]?.body['model']).toBe('m-alpha');
    expect(alpha.requests[0]?.text).not.toContain('acme/model');
  });

  it('serializes the request again when the client sent a top-level null or gateway options', async () => {
    const [alpha] = await setup(answer);
    expect((await post('{"model":"acme/model","messages":[{"role":"user","content":"hi"}],"temperature":null}')).status).toBe(200);
    expect(alpha.requests[0]?.body).toEqual({ model: 'm-alpha', messages: [{ role: 'user', content: 'hi' }] });
    expect((await post('{"model":"acme/model","messages":[{"role":"user","content":"hi"}],"providerOptions":{"gateway":{"order":["alpha"]}}}')).status).toBe(200);
    expect(alpha.requests[1]?.body).toEqual({ model: 'm-alpha', messages: [{ role: 'user', content: 'hi' }] });
  });
});
