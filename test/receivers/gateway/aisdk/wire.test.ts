// The wire protocol itself, driven with fetch: the request forms no single
// client version sends all of (every tool-result output form, every file data
// form of 3.x and 4.x, V4-only assistant parts) and the stream part types each
// version may receive.
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, chunk, completion, openaiProvider, sendJson, sendStream, startGateway, startUpstream, usageChunk, type Gateway, type Upstream } from '../harness.js';
import { PNG_BASE64 } from '../providers/shared/fake-upstream.js';

let gateway: Gateway | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  await gateway?.close();
  await upstream?.close();
  gateway = undefined;
  upstream = undefined;
});

async function setup(handler: Parameters<typeof startUpstream>[0]) {
  upstream = await startUpstream(handler);
  gateway = await startGateway({ providers: { oa: openaiProvider(upstream) }, models: [{ id: 'acme/chat', endpoints: [{ provider: 'oa', model: 'up' }] }] });
}

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${(gateway as Gateway).baseURL}/ai/language-model`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', 'ai-language-model-id': 'acme/chat', 'ai-language-model-streaming': 'false', 'ai-language-model-specification-version': '4', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Every stream part type of LanguageModelV3StreamPart: what an ai 6 client can parse. */
const V3_PART_TYPES = new Set(['stream-start', 'response-metadata', 'text-start', 'text-delta', 'text-end', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-call', 'tool-result', 'tool-approval-request', 'file', 'source', 'finish', 'raw', 'error']);

describe('the /v1/ai/language-model wire protocol', () => {
  it('maps every tool-result output form and every file data form onto the upstream request', async () => {
    await setup((_b, res) => sendJson(res, 200, completion('ok')));
    const response = await post({
      toolChoice: { type: 'auto' },
      prompt: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG_BASE64 } },
            { type: 'file', mediaType: 'image', data: { type: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'file', mediaType: 'image/*', data: PNG_BASE64 },
            { type: 'file', mediaType: 'image/png', data: `data:image/png;base64,${PNG_BASE64}` },
            { type: 'file', mediaType: 'text/plain', data: { type: 'text', text: 'a note' } },
            { type: 'file', mediaType: 'text/plain', data: Buffer.from('b64 note').toString('base64') },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'thinking' },
            { type: 'reasoning-file', mediaType: 'image/png', data: { type: 'data', data: PNG_BASE64 } },
            { type: 'custom', kind: 'acme.thing' },
            { type: 'tool-call', toolCallId: 'c1', toolName: 't', input: { a: 1 } },
            { type: 'tool-call', toolCallId: 'c2', toolName: 't', input: {} },
            { type: 'tool-call', toolCallId: 'c3', toolName: 't', input: {} },
            { type: 'tool-call', toolCallId: 'c4', toolName: 't', input: {} },
            { type: 'tool-call', toolCallId: 'c5', toolName: 't', input: {} },
            { type: 'tool-call', toolCallId: 'c6', toolName: 't', input: {} },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'c1', toolName: 't', output: { type: 'text', value: 'plain' } },
            { type: 'tool-result', toolCallId: 'c2', toolName: 't', output: { type: 'json', value: { ok: true } } },
            { type: 'tool-result', toolCallId: 'c3', toolName: 't', output: { type: 'error-text', value: 'failed' } },
            { type: 'tool-result', toolCallId: 'c4', toolName: 't', output: { type: 'error-json', value: { code: 7 } } },
            { type: 'tool-result', toolCallId: 'c5', toolName: 't', output: { type: 'execution-denied', reason: 'not allowed' } },
            {
              type: 'tool-result',
              toolCallId: 'c6',
              toolName: 't',
              output: {
                type: 'content',
                value: [
                  { type: 'text', text: 'see ' },
                  { type: 'image-data', data: PNG_BASE64, mediaType: 'image/png' },
                  { type: 'file', data: { type: 'url', url: 'https://example.com/x.png' }, mediaType: 'image/png' },
                  { type: 'text', text: 'attached' },
                ],
              },
            },
            { type: 'tool-approval-response', approvalId: 'a1', approved: true },
          ],
        },
      ],
    });
    expect(response.status).toBe(200);
    const messages = upstream?.requests[0]?.body['messages'];
    const png = { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } };
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look' }, png, { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } }, png, png, { type: 'text', text: 'a note' }, { type: 'text', text: 'b64 note' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'].map((id, i) => ({ id, type: 'function', function: { name: 't', arguments: i === 0 ? '{"a":1}' : '{}' } })),
      },
      { role: 'tool', tool_call_id: 'c1', content: 'plain' },
      { role: 'tool', tool_call_id: 'c2', content: '{"ok":true}' },
      { role: 'tool', tool_call_id: 'c3', content: 'failed' },
      { role: 'tool', tool_call_id: 'c4', content: '{"code":7}' },
      { role: 'tool', tool_call_id: 'c5', content: 'not allowed' },
      { role: 'tool', tool_call_id: 'c6', content: 'see attached' },
      { role: 'user', content: [png, { type: 'image_url', image_url: { url: 'https://example.com/x.png' } }] },
    ]);
    // ai 7's toolChoice auto without tools is not forwarded (OpenAI refuses tool_choice without tools).
    expect(upstream?.requests[0]?.body['tool_choice']).toBeUndefined();
  });

  it('answers 400 invalid_request_error naming a malformed part, and a spec version it does not speak', async () => {
    await setup((_b, res) => sendJson(res, 200, completion('unused')));
    const bad = await post({ prompt: [{ role: 'user', content: [{ type: 'file', mediaType: 'image/png' }] }] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'prompt[0].content[0].data' } });
    const version = await post({ prompt: [{ role: 'system', content: 'x' }] }, { 'ai-language-model-specification-version': '2' });
    expect(version.status).toBe(400);
    expect(await version.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'ai-language-model-specification-version' } });
    expect(upstream?.requests).toHaveLength(0);
  });

  it('answers 400 json_too_deep for a call nested deeper than 128 levels', async () => {
    await setup((_b, res) => sendJson(res, 200, completion('unused')));
    // Written as text: JSON.stringify itself gives up thousands of levels deep.
    const schema = `${'{"a":'.repeat(5000)}{"type":"string"}${'}'.repeat(5000)}`;
    const deep = await post(`{"prompt":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"type":"function","name":"f","inputSchema":{"type":"object","properties":${schema}}}]}`);
    expect(deep.status).toBe(400);
    expect(await deep.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'json_too_deep' } });
    expect(upstream?.requests).toHaveLength(0);
  });

  it('reads a data URL without ;base64 as percent-encoded bytes, and answers 400 for one without a comma or nested in another', async () => {
    await setup((_b, res) => sendJson(res, 200, completion('ok')));
    const text = await post({ prompt: [{ role: 'user', content: [{ type: 'file', mediaType: 'text/plain', data: 'data:text/plain,a%20note%20%E2%9C%93' }] }] });
    expect(text.status).toBe(200);
    expect(upstream?.requests[0]?.body['messages']).toEqual([{ role: 'user', content: [{ type: 'text', text: 'a note ✓' }] }]);
    const bad = await post({ prompt: [{ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: 'data:image/png;base64' }] }] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'prompt[0].content[0].data' } });
    // A data URL inside a data URL, ten thousand deep: a 400, not a stack overflow.
    const nested = await post({ prompt: [{ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: `${'data:;base64,'.repeat(10_000)}${PNG_BASE64}` }] }] });
    expect(nested.status).toBe(400);
    expect(await nested.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'prompt[0].content[0].data' } });
    // Percent-encoded bytes that are not UTF-8 (a PNG) arrive as the same bytes.
    const png = Buffer.from(PNG_BASE64, 'base64');
    const escaped = [...png].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
    const binary = await post({ prompt: [{ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: `data:image/png,${escaped}` }] }] });
    expect(binary.status).toBe(200);
    expect(upstream?.requests[1]?.body['messages']).toEqual([{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }] }]);
    expect(upstream?.requests).toHaveLength(2);
  });

  it('answers from an upstream completion that has no created time', async () => {
    await setup((_b, res) => {
      const { created: _created, ...timeless } = completion('no time');
      sendJson(res, 200, timeless);
    });
    const response = await post({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    expect(response.status).toBe(200);
    const result = (await response.json()) as { content: unknown; response: { timestamp: string } };
    expect(result.content).toEqual([{ type: 'text', text: 'no time' }]);
    expect(Number.isNaN(Date.parse(result.response.timestamp))).toBe(false);
    expect(upstream?.requests).toHaveLength(1);
  });

  it.each(['3', '4'])('streams only part types a version %s client parses', async (version) => {
    await setup((_b, res) =>
      sendStream(res, [
        chunk({ role: 'assistant', reasoning: 'hmm' }),
        chunk({ content: 'Hi' }),
        chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 't', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk,
      ]),
    );
    const response = await post({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] }, { 'ai-language-model-streaming': 'true', 'ai-language-model-specification-version': version });
    const types = (await response.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => (JSON.parse(e.slice(6)) as { type: string }).type);
    expect(types.every((t) => V3_PART_TYPES.has(t))).toBe(true);
    expect(types[0]).toBe('stream-start');
    expect(types.at(-1)).toBe('finish');
    expect(types).toEqual(expect.arrayContaining(['reasoning-start', 'reasoning-end', 'text-start', 'text-end', 'tool-input-start', 'tool-input-end', 'tool-call']));
  });
});
