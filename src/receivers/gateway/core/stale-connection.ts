// A kept-alive upstream connection that the server closed just as a request
// was written on it. Servers that drop idle connections sooner than the pool
// keeps them, without saying so (uvicorn after 5 s, so vLLM and LiteLLM),
// close one now and then at the moment it is reused. Such a request almost
// never reached the server's application (the server was closing a
// connection it thought idle), so it is sent again on another connection,
// as browsers do with a reused connection that closes before any answer
// (Chromium's HttpNetworkTransaction, POST included). undici's diagnostics
// channels are the one public place that pairs a request with its
// connection: they tell which requests went out on a connection that had
// carried one before.
import { channel } from 'node:diagnostics_channel';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { SpanRecord } from './spans.js';
import type { AttemptClock } from './upstream.js';

/** Times one attempt's request is sent again; each time its connection was a kept-alive one the upstream had closed. */
export const MAX_RESENDS = 2;

/** Codes of a connection closed under a request: by a FIN, a reset, or a write into a closed socket. */
const CLOSED_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** Connections that have had a request written on them. */
const carriedOne = new WeakSet<object>();
/**
 * undici requests written on a connection that had carried one before,
 * with how many bytes that connection had read then: one read since is
 * part of the request's answer (a status line the connection closed after).
 */
const onReusedConnection = new WeakMap<object, { socket: { readonly bytesRead: number }; bytesRead: number }>();
/** The errors such requests failed with before a byte of their answer came. */
const reusedConnectionErrors = new WeakSet<object>();

// Held here so the channels and their subscriptions live as long as the process.
const sendHeaders = channel('undici:client:sendHeaders');
const requestError = channel('undici:request:error');

sendHeaders.subscribe(function noteConnection(message) {
  const { request, socket } = message as { request: { method?: unknown }; socket: { readonly bytesRead: number } };
  // A proxy's CONNECT: the tunnel it opens is a new connection, even where it is the same socket (to an http: origin).
  if (request.method === 'CONNECT') return;
  if (carriedOne.has(socket)) onReusedConnection.set(request, { socket, bytesRead: socket.bytesRead });
  else carriedOne.add(socket);
});

requestError.subscribe(function noteError(message) {
  const { request, error } = message as { request: object; error: unknown };
  const sent = onReusedConnection.get(request);
  if (sent !== undefined && sent.socket.bytesRead === sent.bytesRead && typeof error === 'object' && error !== null) reusedConnectionErrors.add(error);
});

/** Whether `error` is a kept-alive connection closing under the request written on it. */
function closedWhenReused(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && CLOSED_CODES.has(code) && reusedConnectionErrors.has(error);
}

/** A handler whose request may be sent again. */
export interface ResendableHandler extends Dispatcher.DispatchHandler {
  /**
   * Its request failed and is being sent again: until the new one starts
   * (onRequestStart), it has no request to abort, so an abort must end
   * the exchange at once, as for a request still connecting.
   */
  onResend(): void;
}

/**
 * Passes everything to `handler`, except the failure of a request whose
 * kept-alive connection was closed before any answer came: that request
 * is dispatched again, with this handler, at most MAX_RESENDS times, while
 * the attempt's clock runs on. The attempt's span counts the resends of all
 * its calls in `http.request.resend_count`, as OpenTelemetry's HTTP
 * conventions name it.
 */
export class ResendOnClosedConnection implements Dispatcher.DispatchHandler {
  readonly #dispatcher: Dispatcher;
  readonly #options: Dispatcher.DispatchOptions;
  readonly #handler: ResendableHandler;
  readonly #clock: AttemptClock;
  readonly #span: SpanRecord;
  #answered = false;
  #resends = 0;

  constructor(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, handler: ResendableHandler, clock: AttemptClock, span: SpanRecord) {
    this.#dispatcher = dispatcher;
    this.#options = options;
    this.#handler = handler;
    this.#clock = clock;
    this.#span = span;
  }

  /** Sends the request. */
  dispatch(): void {
    this.#dispatcher.dispatch(this.#options, this);
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#handler.onRequestStart?.(controller, context);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    if (!this.#answered) {
      this.#answered = true;
      this.#noteResends();
    }
    this.#handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    if (!this.#answered && this.#resends < MAX_RESENDS && this.#clock.error === undefined && closedWhenReused(error)) {
      this.#resends += 1;
      this.#clock.resends += 1;
      this.#handler.onResend();
      this.dispatch();
      return;
    }
    if (!this.#answered) this.#noteResends();
    this.#handler.onResponseError?.(controller, error);
  }

  #noteResends(): void {
    if (this.#resends > 0) this.#span.replace('http.request.resend_count', this.#clock.resends);
  }
}
