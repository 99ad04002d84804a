// Images whose data URL or server names another type than their bytes are,
// sent with the openai SDK to the provider types that read them inline:
// Anthropic and Converse check the bytes against the declared type.
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, startGateway, type Gateway } from '../harness.js';
import { sendMessage } from '../providers/anthropic/fixtures.js';
import { messagesRequest, validateAnthropic } from '../providers/anthropic/wire-schema.js';
import { sendConverse } from '../providers/bedrock/fixtures.js';
import { converseRequest, CREDENTIALS, REGION, requestProblems } from '../providers/bedrock/wire-schema.js';
import { sendResponse } from '../providers/google/fixtures.js';
import { generateContentRequest, validateGemini } from '../providers/google/wire-schema.js';
import { JPEG_BASE64, PNG_BASE64, startFake, type FakeUpstream, type Seen } from '../providers/shared/fake-upstream.js';

let gateway: Gateway | undefined;
const fakes: FakeUpstream[] = [];

afterEach(async () => {
  const problems = fakes.flatMap((fake) => fake.problems);
  await gateway?.close();
  for (const fake of fakes.splice(0)) await fake.close();
  gateway = undefined;
  expect(problems).toEqual([]);
});

/**
 * Under /images/ a server that types images carelessly: PNG bytes as
 * image/jpeg (photo.jpg), as S3's default for an object stored without a type
 * (upload.png: binary/octet-stream), without a type (bare.png), and a body
 * that is no image as application/octet-stream (notes.bin); `answer` the rest.
 */
function servingMislabelled(answer: (res: ServerResponse) => void): (seen: Seen, res: ServerResponse) => void {
  const types: Record<string, string | undefined> = { '/images/photo.jpg': 'image/jpeg', '/images/upload.png': 'binary/octet-stream', '/images/bare.png': undefined, '/images/notes.bin': 'application/octet-stream' };
  return function serve(seen, res) {
    if (!seen.path.startsWith('/images/')) return answer(res);
    const type = types[seen.path];
    res.writeHead(200, type === undefined ? {} : { 'content-type': type });
    res.end(seen.path === '/images/notes.bin' ? 'plain words, no picture' : Buffer.from(PNG_BASE64, 'base64'));
  };
}

async function setup(): Promise<{ client: OpenAI; anthropic: FakeUpstream; google: FakeUpstream; bedrock: FakeUpstream }> {
  const anthropic = await startFake(validateAnthropic, (_seen, res) => sendMessage(res, [{ type: 'text', text: 'two pixels' }]));
  const google = await startFake(validateGemini, servingMislabelled((res) => sendResponse(res, [{ text: 'two pixels' }])));
  const bedrock = await startFake(requestProblems, servingMislabelled((res) => sendConverse(res, [{ text: 'two pixels' }])));
  fakes.push(anthropic, google, bedrock);
  const fetch = { image_fetch: { allow_private_addresses: true } };
  gateway = await startGateway({
    providers: {
      claude: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-test' },
      gemini: { type: 'google', base_url: google.url, api_key: 'gm-test-key', ...fetch },
      converse: { type: 'bedrock', base_url: bedrock.url, region: REGION, access_key_id: CREDENTIALS.accessKeyId, secret_access_key: CREDENTIALS.secretAccessKey, ...fetch },
    },
    models: [
      { id: 'acme/claude', endpoints: [{ provider: 'claude', model: 'claude-x' }] },
      { id: 'acme/gemini', endpoints: [{ provider: 'gemini', model: 'gemini-x' }] },
      { id: 'acme/converse', endpoints: [{ provider: 'converse', model: 'anthropic.claude-x' }] },
    ],
  });
  return { client: new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 }), anthropic, google, bedrock };
}

function imageMessage(urls: readonly string[]): OpenAI.ChatCompletionMessageParam[] {
  return [{ role: 'user', content: [{ type: 'text', text: 'What are these?' }, ...urls.map((url) => ({ type: 'image_url' as const, image_url: { url } }))] }];
}

function upstreamRequest(fake: FakeUpstream): unknown {
  return fake.requests.find((seen) => !seen.path.startsWith('/images/'))?.body;
}

describe('an image labelled with another type than its bytes are', () => {
  it('goes to every provider type as the type its bytes are, in a data URL and from a server', async () => {
    const { client, anthropic, google, bedrock } = await setup();
    const mislabelled = [`data:image/jpeg;base64,${PNG_BASE64}`, `data:image/png;base64,${JPEG_BASE64}`];

    const fromClaude = await client.chat.completions.create({ model: 'acme/claude', messages: imageMessage(mislabelled) });
    expect(fromClaude.choices[0]?.message.content).toBe('two pixels');
    const claudeContent = messagesRequest.parse(upstreamRequest(anthropic)).messages[0]?.content;
    expect(Array.isArray(claudeContent) ? claudeContent.flatMap((block) => (block.type === 'image' && block.source.type === 'base64' ? [block.source.media_type] : [])) : []).toEqual(['image/png', 'image/jpeg']);

    const served = [...mislabelled, `${google.url}/images/photo.jpg`];
    const fromGemini = await client.chat.completions.create({ model: 'acme/gemini', messages: imageMessage(served) });
    expect(fromGemini.choices[0]?.message.content).toBe('two pixels');
    expect(generateContentRequest.parse(upstreamRequest(google)).contents[0]?.parts.flatMap((part) => (part.inlineData !== undefined ? [part.inlineData.mimeType] : []))).toEqual(['image/png', 'image/jpeg', 'image/png']);

    const fromConverse = await client.chat.completions.create({ model: 'acme/converse', messages: imageMessage([...mislabelled, `${bedrock.url}/images/photo.jpg`]) });
    expect(fromConverse.choices[0]?.message.content).toBe('two pixels');
    expect(converseRequest.parse(upstreamRequest(bedrock)).messages[0]?.content.flatMap((block) => (block.image !== undefined ? [block.image.format] : []))).toEqual(['png', 'jpeg', 'png']);
  });
});

describe('an image server that gives no image type', () => {
  it('is read, and its image goes as the type its bytes are, on the provider types that fetch images', async () => {
    const { client, google, bedrock } = await setup();
    for (const [model, fake] of [['acme/gemini', google], ['acme/converse', bedrock]] as const) {
      const out = await client.chat.completions.create({ model, messages: imageMessage([`${fake.url}/images/upload.png`, `${fake.url}/images/bare.png`]) });
      expect(out.choices[0]?.message.content).toBe('two pixels');
    }
    expect(generateContentRequest.parse(upstreamRequest(google)).contents[0]?.parts.flatMap((part) => (part.inlineData !== undefined ? [part.inlineData] : []))).toEqual([
      { mimeType: 'image/png', data: PNG_BASE64 },
      { mimeType: 'image/png', data: PNG_BASE64 },
    ]);
    expect(converseRequest.parse(upstreamRequest(bedrock)).messages[0]?.content.flatMap((block) => (block.image !== undefined ? [block.image.format] : []))).toEqual(['png', 'png']);
  });

  it('is refused, naming the part, when its bytes are no image', async () => {
    const { client, google, bedrock } = await setup();
    for (const [model, fake] of [['acme/gemini', google], ['acme/converse', bedrock]] as const) {
      const error = await client.chat.completions.create({ model, messages: imageMessage([`${fake.url}/images/notes.bin`]) }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'messages[0].content[1].image_url.url' });
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('application/octet-stream');
      expect(upstreamRequest(fake)).toBeUndefined();
    }
  });
});

/**
 * The start of an AVIF whose ftyp box names the generic HEIF brand `mif1`
 * first and `avif` among its compatible brands, as some encoders write it.
 */
const AVIF_MIF1_BASE64 = Buffer.concat([
  Buffer.from([0, 0, 0, 0x20]),
  Buffer.from('ftypmif1', 'latin1'),
  Buffer.from([0, 0, 0, 0]),
  Buffer.from('mif1avifmiafMA1B', 'latin1'),
  Buffer.from([0, 0, 0, 0x10]),
  Buffer.from('metanot an image', 'latin1'),
]).toString('base64');

describe('an AVIF whose first brand is the generic mif1', () => {
  it('is no HEIF: it goes as named, and a provider type that cannot read AVIF refuses it', async () => {
    const { client, google } = await setup();
    const error = await client.chat.completions.create({ model: 'acme/gemini', messages: imageMessage([`data:image/avif;base64,${AVIF_MIF1_BASE64}`]) }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: 'messages[0].content[1].image_url.url' });
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('image/avif');
    expect(upstreamRequest(google)).toBeUndefined();
  });
});
