import OpenAI from 'openai';
import { pino } from 'pino';
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

  it('counts spans the pipeline refused, and logs the refusal at most once per interval, not once per request', async () => {
    const lines: Array<{ msg: string; err?: string }> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as { msg: string }) });
    gateway = await startGateway(
      { models: [{ id: 'acme/model', endpoints: [{ provider: 'p', model: 'm' }] }], providers: { p: { type: 'openai', base_url: 'http://127.0.0.1:9/v1' } } },
      {
        logger,
        consume: () => Promise.reject(new Error('ENOSPC: no space left on device')),
      },
    );
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${gateway.baseURL}/models`, { headers: { authorization: `Bearer ${API_KEY}` } });
      expect(res.status).toBe(200);
    }
    // Spans go down the pipeline in batches: wait for the last one.
    const refusedAll = 'sluice_receiver_refused_spans_total{receiver="gateway",transport="http",reason="pipeline"} 20';
    let text = '';
    for (let i = 0; i < 200 && !text.includes(refusedAll); i++) {
      await new Promise((r) => setTimeout(r, 10));
      text = await gateway.telemetry.registry.metrics();
    }
    expect(text).toContain(refusedAll);
    const refusals = lines.filter((line) => line.msg === 'gateway spans refused by the pipeline');
    // One line per 10 s: all 20 fall in one interval, or two.
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    expect(refusals.length).toBeLessThanOrEqual(2);
    expect(refusals[0]?.err).toBe('ENOSPC: no space left on device');
  });
});
