// Upstream HTTP: one keep-alive undici Agent per provider slug, and the
// per-attempt clock that turns the first-byte and stream-idle timeouts (and a
// client that went away) into an abort of that attempt.
import type { Dispatcher } from 'undici';
import { outboundAgent } from '../../../shared/outbound-agent.js';
import { basicAuthorization, hasAuthorization, hasHeader } from '../../../shared/url-credentials.js';
import type { ClientLink } from './client-link.js';
import type { UpstreamRequest } from '../providers/shared/types.js';
import type { SpanRecord } from './spans.js';
import { formatTraceparent } from './trace-context.js';
import { ResendOnClosedConnection, type ResendableHandler } from './stale-connection.js';
import { exchange, type BufferedResponse } from './upstream-exchange.js';

export type AbortReason = 'first_byte_timeout' | 'stream_idle_timeout' | 'client_closed' | 'client_stalled';

const KEEP_ALIVE_TIMEOUT = 30_000; // ms an idle upstream connection is kept

export class UpstreamAgents {
  readonly #agents = new Map<string, Dispatcher>();
  readonly #traceContext: boolean;

  /** `traceContext`: whether requests upstream carry the attempt's W3C Trace Context. */
  constructor(slugs: Iterable<string>, traceContext: boolean) {
    this.#traceContext = traceContext;
    for (const slug of slugs) {
      // Our own clock owns the timeouts, so undici's are off.
      this.#agents.set(slug, outboundAgent({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT, headersTimeout: 0, bodyTimeout: 0 }));
    }
  }

  /**
   * A streaming request on the dispatch API: `handler` gets the answer's parts
   * as they arrive. An attempt already aborted (the client left while an
   * adapter fetched an image) throws instead of being sent. Like every
   * request upstream, it carries the attempt span's trace context.
   */
  stream(slug: string, request: UpstreamRequest, url: UpstreamUrl, clock: AttemptClock, span: SpanRecord, handler: ResendableHandler): void {
    const reason = clock.error;
    if (reason !== undefined) throw reason;
    const options = { origin: url.origin, path: url.path, method: request.method, headers: sentHeaders(request.headers, url, this.#traceContext ? span : undefined), body: request.body };
    new ResendOnClosedConnection(this.#agent(slug), options, handler, clock, span).dispatch();
  }

  /** A non-streaming request: the whole answer in one buffer. */
  exchange(slug: string, request: UpstreamRequest, url: UpstreamUrl, clock: AttemptClock, span: SpanRecord): Promise<BufferedResponse> {
    return exchange(this.#agent(slug), { ...request, headers: sentHeaders(request.headers, url, this.#traceContext ? span : undefined) }, url, clock, span);
  }

  #agent(slug: string): Dispatcher {
    const agent = this.#agents.get(slug);
    if (agent === undefined) throw new Error(`no upstream agent for provider ${slug}`);
    return agent;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#agents.values()].map((a) => a.destroy()));
    this.#agents.clear();
  }
}

/**
 * The adapter's headers (often one frozen object per provider), after
 * `Accept-Encoding: identity` (a provider's `headers` may say otherwise), plus the
 * Basic authorization that credentials in base_url stand for (undici would
 * drop them; config validation refuses them beside another Authorization),
 * plus W3C Trace Context naming the attempt's CLIENT span as the parent, as
 * OpenTelemetry's HTTP client instrumentations propagate it: an upstream
 * that traces (a self-hosted model server) continues the gateway's trace
 * (`span` undefined: propagation is off).
 * Added after a Bedrock request is signed, so the signature does not cover
 * them (SigV4 allows unsigned headers).
 */
function sentHeaders(headers: Record<string, string>, url: UpstreamUrl, span: SpanRecord | undefined): Record<string, string> {
  const sent: Record<string, string> = { ...headers };
  // The gateway reads answers as they come and decodes no content coding; a
  // request without Accept-Encoding takes any (RFC 9110, 12.5.3), so it says so.
  if (!hasHeader(headers, 'accept-encoding')) sent['accept-encoding'] = 'identity';
  const authorization = url.authorization;
  if (authorization !== undefined && !hasAuthorization(headers)) sent['authorization'] = authorization;
  if (span === undefined) return sent;
  sent['traceparent'] = formatTraceparent(span.traceId, span.spanId, span.flags ?? 1);
  const traceState = span.traceState;
  if (traceState !== undefined) sent['tracestate'] = traceState;
  return sent;
}

/**
 * One attempt's timer: until the first body byte it is the first-byte
 * timeout, then it ends the attempt once no chunk has come for the idle
 * time. A chunk only notes when it came; the timer, when it falls due, sets
 * itself again for what is left of the idle time since the last chunk,
 * instead of being re-inserted into Node's timer list on every chunk of
 * every open stream. The first byte leaves the first-byte timer running as
 * the idle timer unless it would fall due later than the idle time allows,
 * so most attempts (whole answers) set one timer and clear it. The
 * AbortSignal adapters may ask for (image fetches) is made on first use.
 */
export class AttemptClock {
  /** The one listener of the attempt's exchange (upstream-exchange.ts, stream-exchange.ts), which aborts it. */
  onAbort: ((reason: Error) => void) | undefined;
  /** Requests of the attempt sent again on a new connection (stale-connection.ts), over all its upstream calls. */
  resends = 0;
  #error: Error | undefined;
  #controller: AbortController | undefined;
  #reason: AbortReason | undefined;
  #timer: NodeJS.Timeout;
  #sawByte = false;
  /** performance.now() at the last chunk. */
  #lastByteAt = 0;
  readonly #idleMs: number;
  readonly #client: ClientLink;
  readonly #onClientClose = (): void => this.#abort('client_closed');
  /** Set while the client, not the upstream, holds the stream up; #heldAt is when that began. */
  #held = false;
  #heldAt = 0;
  /** performance.now() when the timer set at the start falls due. */
  readonly #firstByteDueAt: number;
  readonly #timerDue = (): void => {
    if (!this.#sawByte) {
      this.#abort('first_byte_timeout');
      return;
    }
    // Held, the quiet that counts is the client's: one that reads nothing for
    // the idle time is taken for gone, as an upstream would be.
    const quiet = performance.now() - (this.#held ? this.#heldAt : this.#lastByteAt);
    if (quiet >= this.#idleMs) this.#abort(this.#held ? 'client_stalled' : 'stream_idle_timeout');
    else this.#timer = setTimeout(this.#timerDue, this.#idleMs - quiet);
  };

  constructor(firstByteMs: number, idleMs: number, client: ClientLink) {
    this.#idleMs = idleMs;
    this.#client = client;
    this.#firstByteDueAt = performance.now() + firstByteMs;
    this.#timer = setTimeout(this.#timerDue, firstByteMs);
    if (client.closed) this.#abort('client_closed');
    else client.onClose(this.#onClientClose);
  }

  /** The error the attempt was aborted with, if it was. */
  get error(): Error | undefined {
    return this.#error;
  }

  /** The AbortSignal adapters may ask for (image fetches), made on first use. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#error !== undefined) this.#controller.abort(this.#error);
    }
    return this.#controller.signal;
  }

  get reason(): AbortReason | undefined {
    return this.#reason;
  }

  /**
   * While held (the upstream paused for a client that reads slower than it
   * writes), the idle timer measures the client's silence instead of the
   * upstream's; letting go counts as upstream activity.
   */
  hold(held: boolean): void {
    if (held === this.#held) return;
    if (held) this.#heldAt = performance.now();
    else this.#lastByteAt = performance.now();
    this.#held = held;
  }

  onByte(): void {
    const now = performance.now();
    this.#lastByteAt = now;
    if (this.#sawByte) return;
    this.#sawByte = true;
    if (this.#firstByteDueAt - now <= this.#idleMs) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(this.#timerDue, this.#idleMs);
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#client.onClose(undefined);
  }

  #abort(reason: AbortReason): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    const error = new Error(reason);
    this.#error = error;
    this.onAbort?.(error);
    this.#controller?.abort(error);
  }
}

export interface UpstreamUrl {
  readonly origin: string;
  readonly path: string;
  readonly hostname: string;
  readonly port: number;
  /** The Basic authorization the URL's userinfo stands for, if it has any. */
  readonly authorization: string | undefined;
}

// Adapters build the same few URLs over and over; parse each once.
const URL_CACHE_LIMIT = 1024;
const urlCache = new Map<string, UpstreamUrl>();

export function parseUpstreamUrl(raw: string): UpstreamUrl {
  let parsed = urlCache.get(raw);
  if (parsed === undefined) {
    const url = new URL(raw);
    parsed = { origin: url.origin, path: url.pathname + url.search, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port), authorization: basicAuthorization(url) };
    if (urlCache.size >= URL_CACHE_LIMIT) urlCache.clear();
    urlCache.set(raw, parsed);
  }
  return parsed;
}
