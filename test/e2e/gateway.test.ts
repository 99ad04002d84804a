// Issue 5 end to end: the official openai SDK talks to the built daemon's
// gateway, which calls a fake OpenAI-compatible upstream and writes its own
// spans through the pipeline to the file exporter.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { ExportTraceServiceRequest } from '../../src/otlp/model.js';
import { waitUntil } from '../helpers/daemon.js';
import { startGatewayDaemon } from '../helpers/gateway-daemon.js';
import { completion, sendJson, startUpstream, textStream } from '../receivers/gateway/harness.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function readSpans(path: string): Promise<Array<{ name: string; resource: Record<string, string> }>> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .flatMap((line) =>
      (JSON.parse(line) as ExportTraceServiceRequest).resourceSpans.flatMap((rs) => {
        const resource = Object.fromEntries((rs.resource?.attributes ?? []).map((a) => [a.key, a.value?.stringValue ?? '']));
        return rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => ({ name: s.name, resource })));
      }),
    );
}

describe('gateway end to end', () => {
  it('serves the openai SDK from the built daemon and drains its spans to the file exporter', async () => {
    const upstream = await startUpstream((body, res) => (body['stream'] === true ? textStream(res, ['e2e ', 'stream']) : sendJson(res, 200, completion('e2e hello'))));
    cleanups.push(() => upstream.close());
    const daemon = await startGatewayDaemon(
      `
    environment: e2e
    api_keys: ["\${env:SLUICE_GATEWAY_KEY}"]
    first_byte_timeout: 5s
    providers:
      fake: { type: openai, base_url: ${upstream.url}, api_key: sk-upstream }
    models:
      - id: fake/model
        name: Fake model
        pricing: { input: "0.000001", output: "0.000002" }
        endpoints: [{ provider: fake, model: upstream-model }]
`,
      { env: { SLUICE_GATEWAY_KEY: 'sk-e2e' } },
    );
    const port = daemon.port;
    cleanups.push(() => daemon.cleanup());
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-e2e', maxRetries: 0 });

    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['fake/model']);
    const result = await client.chat.completions.create({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }] });
    expect(result.choices[0]?.message.content).toBe('e2e hello');
    let streamed = '';
    for await (const part of await client.chat.completions.create({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }], stream: true })) {
      streamed += part.choices[0]?.delta.content ?? '';
    }
    expect(streamed).toBe('e2e stream');
    await expect(new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'wrong', maxRetries: 0 }).models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);

    const file = join(daemon.dir, 'traces.jsonl');
    await waitUntil(async () => (await readSpans(file)).length >= 6, 10_000, 'gateway spans in the file');
    const spans = await readSpans(file);
    expect(spans.filter((s) => s.name === 'POST /v1/chat/completions')).toHaveLength(2);
    expect(spans.filter((s) => s.name === 'chat upstream-model')).toHaveLength(2);
    expect(spans.filter((s) => s.name === 'GET /v1/models')).toHaveLength(2);
    expect(spans[0]?.resource).toMatchObject({ 'service.name': 'sluice', 'deployment.environment.name': 'e2e' });

    const metrics = await (await fetch(`http://127.0.0.1:${daemon.adminPort}/metrics`)).text();
    expect(metrics).toContain('sluice_gateway_requests_total');
    expect(metrics).toContain('sluice_gateway_attempts_total');
    expect(await daemon.stop()).toBe(0);
  });
});
