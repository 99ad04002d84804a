// Fetches an http(s) image for providers that only take inline bytes (Gemini,
// Bedrock Converse). Bounded by size and time; non-public addresses refused
// unless `image_fetch.allow_private_addresses` is set.
import { isIP } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { abortableRequest } from '../../../../shared/abortable-request.js';
import { z } from 'zod';
import { positiveByteSize, positiveTimerDuration } from '../../../../shared/units.js';
import { guardedLookup, isPublicAddress } from './address-guard.js';
import { imageMediaType, invalidRequest, type InlineImage } from './inputs.js';

export interface ImageFetchConfig {
  /** bytes */
  max_size: number;
  /** ms, the whole fetch including redirects */
  timeout: number;
  allow_private_addresses: boolean;
}

export const imageFetchConfigSchema = z
  .strictObject({
    max_size: positiveByteSize().default(10 * 1024 * 1024),
    timeout: positiveTimerDuration().default(10_000),
    allow_private_addresses: z.boolean().default(false),
  })
  .prefault({});

const MAX_REDIRECTS = 3;

const guardedAgent = new Agent({ connect: { lookup: guardedLookup }, connections: 16 });
const openAgent = new Agent({ connections: 16 });

export async function fetchImage(url: string, config: ImageFetchConfig, signal: AbortSignal, param: string): Promise<InlineImage> {
  const dispatcher: Dispatcher = config.allow_private_addresses ? openAgent : guardedAgent;
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(config.timeout)]);
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const target = checkUrl(current, config, param);
    let response: Dispatcher.ResponseData;
    try {
      response = await abortableRequest(target, { dispatcher, signal: deadline, headers: { accept: 'image/*' } });
    } catch (err) {
      if (signal.aborted) throw err;
      invalidRequest(param, `image could not be fetched: ${err instanceof Error ? err.message : String(err)}`);
    }
    const location = response.headers['location'];
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
      await response.body.dump();
      current = new URL(location, target).href;
      continue;
    }
    if (response.statusCode !== 200) {
      await response.body.dump();
      invalidRequest(param, `image fetch answered HTTP ${response.statusCode}`);
    }
    const mediaType = imageMediaType(String(response.headers['content-type'] ?? ''));
    if (!mediaType.startsWith('image/')) {
      await response.body.dump();
      invalidRequest(param, `image fetch answered content-type ${mediaType === '' ? '(none)' : mediaType}, not image/*`);
    }
    const bytes = await readBounded(response, config.max_size, param, signal);
    return { mediaType, data: bytes.toString('base64') };
  }
  invalidRequest(param, `image fetch redirected more than ${MAX_REDIRECTS} times`);
}

function checkUrl(url: string, config: ImageFetchConfig, param: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    invalidRequest(param, 'is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') invalidRequest(param, 'image URLs must be http(s)');
  // An IP literal is dialled without a DNS lookup, so the guard in the lookup never sees it.
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!config.allow_private_addresses && isIP(host) !== 0 && !isPublicAddress(host)) invalidRequest(param, `${host} is not a public address`);
  return parsed;
}

async function readBounded(response: Dispatcher.ResponseData, maxSize: number, param: string, signal: AbortSignal): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxSize) {
    await response.body.dump();
    invalidRequest(param, `image is ${declared} bytes, more than image_fetch.max_size (${maxSize})`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > maxSize) break;
      chunks.push(buffer);
    }
  } catch (err) {
    // The image's server went silent or closed mid-body: the request's image, not the provider, failed.
    if (signal.aborted) throw err;
    invalidRequest(param, `image could not be fetched: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (size > maxSize) {
    response.body.destroy();
    invalidRequest(param, `image is more than image_fetch.max_size (${maxSize}) bytes`);
  }
  return Buffer.concat(chunks);
}
