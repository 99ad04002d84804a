// A rate-limited last endpoint's wait reaches the client as Retry-After,
// whatever the provider type says it in: a header (OpenAI-compatible,
// Anthropic) or Gemini's RetryInfo in the body; streamed requests alike.
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, sendJson, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';

let gateway: Gateway | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  await gateway?.close();
  await upstream?.close();
  gateway = undefined;
  upstream = undefined;
});

function ask(stream: boolean): Promise<Response> {
  return fetch(`${gateway?.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'p/m', messages: [{ role: 'user', content: 'hi' }], stream }),
  });
}

const CASES: ReadonlyArray<[string, (url: string) => Record<string, unknown>, (res: ServerResponse) => void]> = [
  [
    'anthropic',
    (url) => ({ type: 'anthropic', base_url: url, api_key: 'k' }),
    (res) => {
      res.setHeader('retry-after', '23');
      sendJson(res, 429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
    },
  ],
  [
    'google',
    (url) => ({ type: 'google', base_url: url, api_key: 'k' }),
    (res) => sendJson(res, 429, { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'quota', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '22.4s' }] } }),
  ],
];

describe("a rate-limited last endpoint's wait", () => {
  it.each(CASES)('reaches the client as Retry-After from a %s provider, whole and streamed', async (_type, provider, answer) => {
    upstream = await startUpstream((_body, res) => answer(res));
    gateway = await startGateway({ providers: { p: provider(upstream.url.replace(/\/v1$/, '')) } });
    for (const stream of [false, true]) {
      const response = await ask(stream);
      expect(response.status).toBe(429);
      // Gemini's 22.4s, rounded up to the whole seconds Retry-After takes.
      expect(response.headers.get('retry-after')).toBe('23');
      await response.text();
    }
  });
});
