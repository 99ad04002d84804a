// logprobs / top_logprobs on a google provider, through the gateway with the
// openai SDK: Gemini's responseLogprobs / logprobs, and each candidate's
// logprobsResult back as OpenAI's choices[i].logprobs.content, whole and
// streamed (Gemini sends each event's tokens with that event).
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, startGateway, type Gateway } from '../harness.js';
import { json, sse, startFake, type FakeUpstream, type Handler } from '../providers/shared/fake-upstream.js';
import { generateContentRequest, validateGemini } from '../providers/google/wire-schema.js';

let gateway: Gateway | undefined;
let fake: FakeUpstream | undefined;

afterEach(async () => {
  const problems = fake?.problems ?? [];
  await gateway?.close();
  await fake?.close();
  gateway = undefined;
  fake = undefined;
  expect(problems).toEqual([]);
});

const models = [{ id: 'acme/gemini', endpoints: [{ provider: 'gemini', model: 'gemini-test' }] }];

async function setup(handler: Handler): Promise<OpenAI> {
  fake = await startFake(validateGemini, handler);
  gateway = await startGateway({ providers: { gemini: { type: 'google', base_url: fake.url, api_key: 'gm-test-key' } }, models });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}

function sentConfig(): unknown {
  return generateContentRequest.parse(fake?.requests[0]?.body).generationConfig;
}

// Gemini's LogprobsResult: one chosen token and one list of top tokens per decoding step.
// proto3 JSON leaves out a logProbability of 0.
const hi = { token: 'Hi', tokenId: 17, logProbability: -0.25 };
const hello = { token: 'Hello', tokenId: 18, logProbability: -1.75 };
const there = { token: ' thére', tokenId: 19 };
const bang = { token: '!', tokenId: 20, logProbability: -3 };

const bytes = (text: string) => [...Buffer.from(text, 'utf8')];
const openaiHi = { token: 'Hi', logprob: -0.25, bytes: bytes('Hi'), top_logprobs: [{ token: 'Hi', logprob: -0.25, bytes: bytes('Hi') }, { token: 'Hello', logprob: -1.75, bytes: bytes('Hello') }] };
const openaiThere = { token: ' thére', logprob: 0, bytes: bytes(' thére'), top_logprobs: [{ token: ' thére', logprob: 0, bytes: bytes(' thére') }, { token: '!', logprob: -3, bytes: bytes('!') }] };

describe('logprobs on a google provider', () => {
  it('asks Gemini for logprobs and answers each token with its top alternatives as OpenAI logprobs.content', async () => {
    const client = await setup((_seen, res) =>
      json(res, 200, {
        candidates: [
          {
            content: { role: 'model', parts: [{ text: 'Hi thére' }] },
            finishReason: 'STOP',
            avgLogprobs: -0.125,
            logprobsResult: { topCandidates: [{ candidates: [hi, hello] }, { candidates: [there, bang] }], chosenCandidates: [hi, there], logProbabilitySum: -0.25 },
          },
        ],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
        modelVersion: 'gemini-test-001',
      }),
    );
    const answer = await client.chat.completions.create({ model: 'acme/gemini', messages: [{ role: 'user', content: 'Greet me' }], logprobs: true, top_logprobs: 2 });
    expect(sentConfig()).toEqual({ responseLogprobs: true, logprobs: 2 });
    expect(answer.choices[0]?.message.content).toBe('Hi thére');
    expect(answer.choices[0]?.logprobs?.content).toEqual([openaiHi, openaiThere]);
  });

  it('asks for the chosen tokens alone when top_logprobs is not set, and answers no logprobs when none were asked for', async () => {
    let calls = 0;
    const client = await setup((_seen, res) => {
      calls += 1;
      const logprobsResult = calls === 1 ? { logprobsResult: { topCandidates: [{}], chosenCandidates: [hi] } } : {};
      json(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP', ...logprobsResult }] });
    });
    const asked = await client.chat.completions.create({ model: 'acme/gemini', messages: [{ role: 'user', content: 'Greet me' }], logprobs: true });
    expect(sentConfig()).toEqual({ responseLogprobs: true });
    expect(asked.choices[0]?.logprobs?.content).toEqual([{ ...openaiHi, top_logprobs: [] }]);
    const plain = await client.chat.completions.create({ model: 'acme/gemini', messages: [{ role: 'user', content: 'Greet me' }] });
    expect(generateContentRequest.parse(fake?.requests[1]?.body).generationConfig).toBeUndefined();
    expect(plain.choices[0]?.logprobs ?? null).toBeNull();
  });

  it('streams each event’s tokens with that event’s text', async () => {
    const client = await setup((_seen, res) =>
      sse(
        res,
        [
          { candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, logprobsResult: { topCandidates: [{ candidates: [hi, hello] }], chosenCandidates: [hi] } }] },
          { candidates: [{ content: { role: 'model', parts: [{ text: ' thére' }] }, finishReason: 'STOP', logprobsResult: { topCandidates: [{ candidates: [there, bang] }], chosenCandidates: [there] } }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 } },
        ].map((data) => ({ data })),
      ),
    );
    const stream = await client.chat.completions.create({ model: 'acme/gemini', messages: [{ role: 'user', content: 'Greet me' }], logprobs: true, top_logprobs: 2, stream: true });
    const pieces: Array<[string, unknown]> = [];
    for await (const chunk of stream) {
      for (const choice of chunk.choices) if (choice.logprobs != null) pieces.push([choice.delta.content ?? '', choice.logprobs.content]);
    }
    expect(sentConfig()).toEqual({ responseLogprobs: true, logprobs: 2 });
    expect(pieces).toEqual([
      ['Hi', [openaiHi]],
      [' thére', [openaiThere]],
    ]);
  });
});
