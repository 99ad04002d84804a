// An upstream that echoes the gateway's credentials for it in an error (some
// OpenAI-compatible servers and proxies do: "invalid key: sk-...") must not
// hand them to the gateway's clients or write them into spans.
import { afterEach, describe, expect, it } from 'vitest';
import { SpanKind } from '../../../../src/otlp/model.js';
import { providerSecretsRedactor } from '../../../../src/receivers/gateway/core/provider-secrets.js';
import type { BaseProviderConfig } from '../../../../src/receivers/gateway/providers/shared/types.js';
import { API_KEY, chunk, openaiProvider, sendJson, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

const PROVIDER_KEY = 'sk-provider-secret-1234';
const ORG_TOKEN = 'org-token-5678';

function ask(body: Record<string, unknown>, path = '/chat/completions', headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gateway?.baseURL}${path}`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

async function clientSpanMessage(): Promise<string> {
  const client = (await gateway!.spans(2)).find((span) => span.kind === SpanKind.CLIENT);
  return client?.status?.message ?? '';
}

describe("a provider's credentials echoed by its upstream", () => {
  it('are replaced by *** in the error the client gets and on the attempt span, key and header value alike', async () => {
    const upstream = await startUpstream((_body, res, req) =>
      sendJson(res, 401, { error: { message: `Incorrect API key provided: ${req.headers.authorization} (organization ${req.headers['x-org']})`, type: 'invalid_request_error' } }),
    );
    upstreams.push(upstream);
    gateway = await startGateway({ providers: { up: openaiProvider(upstream, { api_key: PROVIDER_KEY, headers: { 'x-org': ORG_TOKEN } }) } });
    const answer = await ask({ model: 'up/m', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.status).toBe(401);
    const text = await answer.text();
    expect(text).not.toContain(PROVIDER_KEY);
    expect(text).not.toContain(ORG_TOKEN);
    expect(text).toContain('Incorrect API key provided: Bearer *** (organization ***)');
    const spanMessage = await clientSpanMessage();
    expect(spanMessage).toContain('Incorrect API key provided');
    expect(spanMessage).not.toContain(PROVIDER_KEY);
  });

  it('are replaced in an in-band error that ends a stream already under way', async () => {
    const upstream = await startUpstream((_body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Hel' }))}\n\n`);
      res.end(`data: ${JSON.stringify({ error: { message: `quota exceeded for key ${PROVIDER_KEY}`, type: 'server_error' } })}\n\n`);
    });
    upstreams.push(upstream);
    gateway = await startGateway({ providers: { up: openaiProvider(upstream, { api_key: PROVIDER_KEY }) } });
    const answer = await ask({ model: 'up/m', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const text = await answer.text();
    expect(text).toContain('Hel');
    expect(text).toContain('quota exceeded for key ***');
    expect(text).not.toContain(PROVIDER_KEY);
    expect(await clientSpanMessage()).not.toContain(PROVIDER_KEY);
  });

  it('are replaced in what an Anthropic upstream says to a Messages request sent on natively', async () => {
    const upstream = await startUpstream((_body, res, req) => sendJson(res, 401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${String(req.headers['x-api-key'])}` } }));
    upstreams.push(upstream);
    gateway = await startGateway({ providers: { claude: { type: 'anthropic', base_url: `http://127.0.0.1:${upstream.port}`, api_key: PROVIDER_KEY } } });
    const answer = await ask({ model: 'claude/m', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, '/messages');
    expect(answer.status).toBe(401);
    const text = await answer.text();
    expect(text).toContain('invalid x-api-key ***');
    expect(text).not.toContain(PROVIDER_KEY);
  });
});

describe('the AWS credentials a Bedrock provider signs with from the environment', () => {
  it('are replaced as they are when the text is redacted (rotated ones too), and not for a provider with keys of its own', () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, { AWS_SECRET_ACCESS_KEY: 'env-secret-before', AWS_SESSION_TOKEN: 'env-session-token-before' });
      const redact = providerSecretsRedactor({ type: 'bedrock', base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com' });
      expect(redact('signed with env-secret-before and env-session-token-before')).toBe('signed with *** and ***');
      Object.assign(process.env, { AWS_SECRET_ACCESS_KEY: 'env-secret-after' });
      expect(redact('now env-secret-after')).toBe('now ***');
      // A Bedrock API key taken from the environment, as the signer sends it.
      Object.assign(process.env, { AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key-env' });
      expect(redact('Bearer bedrock-api-key-env is invalid')).toBe('Bearer *** is invalid');

      const ownKeys = providerSecretsRedactor({ type: 'bedrock', base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com', access_key_id: 'AKID', secret_access_key: 'own-secret' } as BaseProviderConfig);
      expect(ownKeys('own-secret, not env-secret-after')).toBe('***, not env-secret-after');
    } finally {
      process.env = saved;
    }
  });
});
