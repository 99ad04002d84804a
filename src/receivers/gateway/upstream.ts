// Upstream HTTP: one keep-alive undici Agent per provider slug, and the
// per-attempt clock that turns the first-byte and stream-idle timeouts (and a
// client that went away) into an abort of that attempt.
import { Agent, type Dispatcher } from 'undici';
import type { ClientLink } from './client-link.js';
import type { UpstreamRequest } from './providers/types.js';

export type AbortReason = 'first_byte_timeout' | 'stream_idle_timeout' | 'client_closed';

const KEEP_ALIVE_TIMEOUT = 30_000; // ms an idle upstream connection is kept

export class UpstreamAgents {
  readonly #agents = new Map<string, Agent>();

  constructor(slugs: Iterable<string>) {
    for (const slug of slugs) {
      // Our own clock owns the timeouts, so undici's are off.
      this.#agents.set(slug, new Agent({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT, headersTimeout: 0, bodyTimeout: 0 }));
    }
  }

  async send(slug: string, request: UpstreamRequest, url: UpstreamUrl, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const agent = this.#agents.get(slug);
    if (agent === undefined) throw new Error(`no upstream agent for provider ${slug}`);
    return agent.request({
      origin: url.origin,
      path: url.path,
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal,
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.#agents.values()].map((a) => a.destroy()));
    this.#agents.clear();
  }
}

/**
 * One attempt's timers: the first-byte timer runs from the request until the
 * first body byte, then the idle timer restarts on every chunk.
 */
export class AttemptClock {
  readonly controller = new AbortController();
  #reason: AbortReason | undefined;
  #timer: NodeJS.Timeout;
  #sawByte = false;
  readonly #idleMs: number;
  readonly #client: ClientLink;
  readonly #onClientClose = (): void => this.#abort('client_closed');

  constructor(firstByteMs: number, idleMs: number, client: ClientLink) {
    this.#idleMs = idleMs;
    this.#client = client;
    this.#timer = setTimeout(() => this.#abort('first_byte_timeout'), firstByteMs);
    if (client.closed) this.#abort('client_closed');
    else client.onClose(this.#onClientClose);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get reason(): AbortReason | undefined {
    return this.#reason;
  }

  onByte(): void {
    if (this.#sawByte) {
      this.#timer.refresh();
      return;
    }
    this.#sawByte = true;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#abort('stream_idle_timeout'), this.#idleMs);
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#client.onClose(undefined);
  }

  #abort(reason: AbortReason): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.controller.abort(new Error(reason));
  }
}

export async function* timedBody(body: AsyncIterable<Uint8Array>, clock: AttemptClock): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    clock.onByte();
    yield chunk;
  }
}

export async function readAll(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, size);
}

export interface UpstreamUrl {
  readonly origin: string;
  readonly path: string;
  readonly hostname: string;
  readonly port: number;
}

// Adapters build the same few URLs over and over; parse each once.
const URL_CACHE_LIMIT = 1024;
const urlCache = new Map<string, UpstreamUrl>();

export function parseUpstreamUrl(raw: string): UpstreamUrl {
  let parsed = urlCache.get(raw);
  if (parsed === undefined) {
    const url = new URL(raw);
    parsed = { origin: url.origin, path: url.pathname + url.search, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port) };
    if (urlCache.size >= URL_CACHE_LIMIT) urlCache.clear();
    urlCache.set(raw, parsed);
  }
  return parsed;
}
