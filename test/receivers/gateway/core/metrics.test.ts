import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, completion, openaiProvider, sendJson, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

describe('gateway metrics', () => {
  it('counts requests by route and status, attempts by provider and outcome, and latency', async () => {
    const down = await startUpstream((_b, res) => sendJson(res, 503, { error: { message: 'down' } }));
    const up = await startUpstream((_b, res) => sendJson(res, 200, completion('ok')));
    upstreams.push(down, up);
    gateway = await startGateway({
      providers: { first: openaiProvider(down), second: openaiProvider(up) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'first', model: 'm' }, { provider: 'second', model: 'm' }] }],
    });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    await client.chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }] });
    await gateway.spans(3);
    const text = await gateway.telemetry.registry.metrics();
    expect(text).toContain('sluice_gateway_requests_total{receiver="gateway",route="/v1/chat/completions",status="200"} 1');
    expect(text).toContain('sluice_gateway_attempts_total{receiver="gateway",provider="first",outcome="http_error"} 1');
    expect(text).toContain('sluice_gateway_attempts_total{receiver="gateway",provider="second",outcome="success"} 1');
    expect(text).toContain('sluice_gateway_request_duration_seconds_count{receiver="gateway",route="/v1/chat/completions"} 1');
    // Each attempt's latency, by provider (the console's p50/p99 per provider).
    expect(text).toContain('sluice_gateway_attempt_duration_seconds_count{receiver="gateway",provider="first"} 1');
    expect(text).toContain('sluice_gateway_attempt_duration_seconds_count{receiver="gateway",provider="second"} 1');
    expect(text).toContain('sluice_receiver_accepted_spans_total{receiver="gateway",transport="http"} 3');
  });
});
