// Issue 13 end to end: the official Anthropic SDK talks to the built daemon's
// Messages API, served natively by a fake Anthropic upstream and translated
// for a fake OpenAI-compatible one; the gateway's spans reach the file exporter.
import Anthropic from '@anthropic-ai/sdk';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ExportTraceServiceRequest } from '../../src/otlp/model.js';
import { waitUntil } from '../helpers/daemon.js';
import { startGatewayDaemon } from '../helpers/gateway-daemon.js';
import { message, messageEnd, messageStart, sendEvents, textBlock } from '../receivers/gateway/providers/anthropic/fixtures.js';
import { json, startFake } from '../receivers/gateway/providers/shared/fake-upstream.js';
import { completion, sendJson, startUpstream } from '../receivers/gateway/harness.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function spanNames(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .flatMap((line) => (JSON.parse(line) as ExportTraceServiceRequest).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.name))));
}

describe('Messages API end to end', () => {
  it('serves the Anthropic SDK from the built daemon, natively and translated', async () => {
    const anthropic = await startFake(
      (seen) => (seen.headers['x-api-key'] === 'sk-ant-upstream' ? [] : ['x-api-key is not the provider key']),
      (seen, res) => ((seen.body as { stream?: boolean }).stream === true ? sendEvents(res, [messageStart(), ...textBlock(0, ['native ', 'stream']), ...messageEnd('end_turn')]) : json(res, 200, message([{ type: 'text', text: 'native hello' }], 'end_turn'))),
    );
    cleanups.push(() => anthropic.close());
    const openai = await startUpstream((_body, res) => sendJson(res, 200, completion('translated hello')));
    cleanups.push(() => openai.close());
    const daemon = await startGatewayDaemon(
      `
    api_keys: ["\${env:SLUICE_GATEWAY_KEY}"]
    providers:
      anthropic: { type: anthropic, base_url: ${anthropic.url}, api_key: sk-ant-upstream }
      openai: { type: openai, base_url: ${openai.url}, api_key: sk-upstream }
`,
      { env: { SLUICE_GATEWAY_KEY: 'sk-e2e' } },
    );
    const port = daemon.port;
    cleanups.push(() => daemon.cleanup());
    const client = new Anthropic({ baseURL: `http://127.0.0.1:${port}`, apiKey: 'sk-e2e', maxRetries: 0 });

    const native = await client.messages.create({ model: 'anthropic/claude-x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(native.content).toEqual([{ type: 'text', text: 'native hello' }]);
    expect(await client.messages.stream({ model: 'anthropic/claude-x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalText()).toBe('native stream');
    const translated = await client.messages.create({ model: 'openai/gpt-x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(translated.content).toEqual([{ type: 'text', text: 'translated hello' }]);
    await expect(new Anthropic({ baseURL: `http://127.0.0.1:${port}`, apiKey: 'wrong', maxRetries: 0 }).messages.create({ model: 'openai/gpt-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    expect(anthropic.problems).toEqual([]);

    const file = join(daemon.dir, 'traces.jsonl');
    await waitUntil(async () => (await spanNames(file)).length >= 7, 10_000, 'gateway spans in the file');
    const names = await spanNames(file);
    expect(names.filter((n) => n === 'POST /v1/messages')).toHaveLength(4);
    // A streamed attempt can still be open when its request closes and then joins its batch last: order within a batch means nothing.
    expect(names.filter((n) => n.startsWith('chat ')).sort()).toEqual(['chat claude-x', 'chat claude-x', 'chat gpt-x']);
  });
});
