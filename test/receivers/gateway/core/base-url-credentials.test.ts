// Credentials written into a provider's base_url (`https://user:pass@host/v1`,
// a proxy in front of the upstream asking for them) go as Basic
// authorization, as curl and the drains exporter send them: undici would
// drop them silently. They never come back to a client through what the
// upstream says.
import { afterEach, describe, expect, it } from 'vitest';
import { SpanKind } from '../../../../src/otlp/model.js';
import { gatewayConfigSchema, createDefaultConfig } from '../../../../src/receivers/gateway/config.js';
import { API_KEY, completion, sendJson, startGateway, startUpstream, textStream, type Gateway, type Upstream } from '../harness.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

const PASSWORD = 'p@ss:word-9876';
const BASIC = `Basic ${Buffer.from(`proxy-user:${PASSWORD}`).toString('base64')}`;

function withCredentials(upstream: Upstream, path = '/v1'): string {
  return `http://proxy-user:${encodeURIComponent(PASSWORD)}@127.0.0.1:${upstream.port}${path}`;
}

function ask(body: Record<string, unknown>, path = '/chat/completions'): Promise<Response> {
  return fetch(`${gateway?.baseURL}${path}`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const messages = [{ role: 'user', content: 'hi' }];

describe("credentials in a provider's base_url", () => {
  it('are sent as Basic authorization, whole answers and streams alike', async () => {
    const upstream = await startUpstream((body, res) => (body['stream'] === true ? textStream(res, ['ok']) : sendJson(res, 200, completion('ok'))));
    upstreams.push(upstream);
    gateway = await startGateway({ providers: { up: { type: 'openai', base_url: withCredentials(upstream) } } });
    expect((await ask({ model: 'up/m', messages })).status).toBe(200);
    expect(await (await ask({ model: 'up/m', messages, stream: true })).text()).toContain('[DONE]');
    expect(upstream.requests.map((r) => r.headers.authorization)).toEqual([BASIC, BASIC]);
    expect(upstream.requests[0]?.url).toBe('/v1/chat/completions');
  });

  it('go beside the key of a provider that sends it in a header of its own (Anthropic, natively too)', async () => {
    const upstream = await startUpstream((_body, res) => sendJson(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }));
    upstreams.push(upstream);
    gateway = await startGateway({ providers: { claude: { type: 'anthropic', base_url: withCredentials(upstream, ''), api_key: 'sk-ant' } } });
    expect((await ask({ model: 'claude/m', messages })).status).toBe(200);
    expect((await ask({ model: 'claude/m', max_tokens: 10, messages }, '/messages')).status).toBe(200);
    expect(upstream.requests.map((r) => [r.headers.authorization, r.headers['x-api-key']])).toEqual([
      [BASIC, 'sk-ant'],
      [BASIC, 'sk-ant'],
    ]);
  });

  it('are replaced by *** when the upstream echoes them, as written or as the header they went in', async () => {
    const upstream = await startUpstream((_body, res, req) => sendJson(res, 401, { error: { message: `refused ${String(req.headers.authorization)} (password ${PASSWORD})`, type: 'invalid_request_error' } }));
    upstreams.push(upstream);
    gateway = await startGateway({ providers: { up: { type: 'openai', base_url: withCredentials(upstream) } } });
    const answer = await ask({ model: 'up/m', messages });
    expect(answer.status).toBe(401);
    const text = await answer.text();
    expect(text).toContain('refused *** (password ***)');
    expect(text).not.toContain(BASIC.slice('Basic '.length));
    const client = (await gateway.spans(2)).find((span) => span.kind === SpanKind.CLIENT);
    expect(client?.status?.message).toContain('refused *** (password ***)');
  });

  it('are refused beside another Authorization, which would take the place of one of them', () => {
    const url = 'https://user:secret@proxy.example/v1';
    const providers = {
      key: { type: 'openai', base_url: url, api_key: 'sk-1' },
      header: { type: 'google', base_url: url, api_key: 'g', headers: { Authorization: 'Bearer t' } },
      aws: { type: 'bedrock', base_url: url, region: 'us-east-1', access_key_id: 'a', secret_access_key: 'b' },
      fine: { type: 'openai', base_url: url },
      'fine-anthropic': { type: 'anthropic', base_url: url, api_key: 'k' },
    };
    const result = gatewayConfigSchema.safeParse({ ...createDefaultConfig(), api_keys: ['k'], providers });
    expect(result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      "providers.key.base_url: its credentials are sent as Basic authorization, and api_key's Bearer token goes in the same Authorization header; leave one out",
      'providers.header.base_url: its credentials are sent as Basic authorization, and a `headers` Authorization goes in the same Authorization header; leave one out',
      "providers.aws.base_url: its credentials are sent as Basic authorization, and Bedrock's SigV4 signature (or API key) goes in the same Authorization header; leave one out",
    ]);
  });
});
