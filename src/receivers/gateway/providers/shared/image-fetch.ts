// Fetches http(s) images for providers that only take inline bytes (Gemini,
// Bedrock Converse). Bounded by size and time, per image and per request;
// non-public addresses refused unless `image_fetch.allow_private_addresses` is set.
import { isIP } from 'node:net';
import PQueue from 'p-queue';
import { Agent, type Dispatcher } from 'undici';
import { abortableRequest } from '../../../../shared/abortable-request.js';
import { z } from 'zod';
import { positiveByteSize, positiveTimerDuration } from '../../../../shared/units.js';
import { guardedLookup, isPublicAddress } from './address-guard.js';
import { imageMediaType, invalidRequest, sniffImageType, type InlineImage } from './inputs.js';

export interface ImageFetchConfig {
  /** bytes, one image */
  max_size: number;
  /** bytes, every image one request fetches */
  max_total_size: number;
  /** ms, the whole fetch including redirects */
  timeout: number;
  allow_private_addresses: boolean;
}

export const imageFetchConfigSchema = z
  .strictObject({
    max_size: positiveByteSize().default(10 * 1024 * 1024),
    // Gemini's limit for a whole request with inline data.
    max_total_size: positiveByteSize().default(20 * 1024 * 1024),
    timeout: positiveTimerDuration().default(10_000),
    allow_private_addresses: z.boolean().default(false),
  })
  .prefault({});

const MAX_REDIRECTS = 3;
/** Images one request fetches at once; the others wait for a free slot. */
const CONCURRENT_FETCHES = 4;

/**
 * What a server says of bytes it has no type for (S3's default for an object
 * stored without one is binary/octet-stream): such a body is read, and taken
 * when its bytes show an image type (sniffImageType), as OpenAI takes it.
 */
const UNTYPED: ReadonlySet<string> = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

const guardedAgent = new Agent({ connect: { lookup: guardedLookup }, connections: 16 });
const openAgent = new Agent({ connections: 16 });

/**
 * The images of one upstream request. A request of a few kilobytes can name
 * thousands of image URLs: fetched all at once and held whole, they cost a
 * socket each and gigabytes of memory. So they are fetched a few at a time,
 * their bytes together are bounded by `image_fetch.max_total_size`, and the
 * first image that fails (which fails the request) stops the others.
 */
export class RequestImages {
  readonly #config: ImageFetchConfig;
  readonly #attempt: { readonly signal: AbortSignal };
  readonly #stop = new AbortController();
  /** Made at the first fetch, as the signal is. */
  #queue: PQueue | undefined;
  #signal: AbortSignal | undefined;
  #bytes = 0;

  /** `attempt.signal` (a client gone, a timeout) is asked for at the first fetch: most requests have no image URL. */
  constructor(config: ImageFetchConfig, attempt: { readonly signal: AbortSignal }) {
    this.#config = config;
    this.#attempt = attempt;
  }

  fetch(url: string, param: string): Promise<InlineImage> {
    const signal = (this.#signal ??= AbortSignal.any([this.#attempt.signal, this.#stop.signal]));
    const queue = (this.#queue ??= new PQueue({ concurrency: CONCURRENT_FETCHES }));
    return queue.add(
      async () => {
        try {
          return await fetchImage(url, this.#config, signal, param, (bytes) => this.#take(bytes));
        } catch (err) {
          this.#stop.abort(err);
          throw err;
        }
      },
      { throwOnTimeout: true },
    );
  }

  /** Counts `bytes` more of this request's images; false once they pass max_total_size together. */
  #take(bytes: number): boolean {
    this.#bytes += bytes;
    return this.#bytes <= this.#config.max_total_size;
  }
}

async function fetchImage(url: string, config: ImageFetchConfig, signal: AbortSignal, param: string, take: (bytes: number) => boolean): Promise<InlineImage> {
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
    const named = mediaType === '' ? '(none)' : mediaType;
    if (!mediaType.startsWith('image/') && !UNTYPED.has(mediaType)) {
      await response.body.dump();
      invalidRequest(param, `image fetch answered content-type ${named}, not image/*`);
    }
    const bytes = await readBounded(response, config, param, signal, take);
    const type = sniffImageType(bytes) ?? mediaType;
    if (!type.startsWith('image/')) invalidRequest(param, `image fetch answered content-type ${named}, and bytes of no image type the providers read`);
    return { mediaType: type, data: bytes.toString('base64') };
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

async function readBounded(response: Dispatcher.ResponseData, config: ImageFetchConfig, param: string, signal: AbortSignal, take: (bytes: number) => boolean): Promise<Buffer> {
  const maxSize = config.max_size;
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxSize) {
    await response.body.dump();
    invalidRequest(param, `image is ${declared} bytes, more than image_fetch.max_size (${maxSize})`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let withinTotal = true;
  try {
    for await (const chunk of response.body) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > maxSize) break;
      withinTotal = take(buffer.length);
      if (!withinTotal) break;
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
  if (!withinTotal) {
    response.body.destroy();
    invalidRequest(param, `the request's images are more than image_fetch.max_total_size (${config.max_total_size}) bytes together`);
  }
  return Buffer.concat(chunks);
}
