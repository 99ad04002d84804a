// A non-streaming upstream exchange on undici's dispatch API: the answer is
// collected into one buffer by a handler, with no body stream, async iterator
// or per-request AbortSignal (request() would build all three per attempt).
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { answerTooLarge, MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES } from '../providers/shared/answer-limits.js';
import type { UpstreamRequest } from '../providers/shared/types.js';
import type { SpanRecord } from './spans.js';
import { ResendOnClosedConnection, type ResendableHandler } from './stale-connection.js';
import type { AttemptClock, UpstreamUrl } from './upstream.js';

export interface BufferedResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Uint8Array;
}

const NO_HEADERS: IncomingHttpHeaders = {};

/**
 * A network error after the upstream's answer began (its status and headers
 * came, then the connection dropped): the provider broke off its answer,
 * which is not the same as it could not be reached. Keeps the error's code.
 */
export class AnswerBrokenOffError extends Error {
  readonly code: unknown;

  constructor(cause: Error) {
    super(cause.message, { cause });
    this.name = 'AnswerBrokenOffError';
    this.code = (cause as { code?: unknown }).code;
  }
}

interface Waiting {
  readonly clock: AttemptClock;
  readonly resolve: (response: BufferedResponse) => void;
  readonly reject: (err: Error) => void;
}

/**
 * Lets go of everything once the exchange has ended: undici's own
 * structures may keep the handler reachable a while longer (until a full
 * GC), and a handler still holding the body and the attempt would carry
 * them all into the old generation.
 */
class BufferingHandler implements ResendableHandler {
  #waiting: Waiting | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #statusCode = 0;
  #headers: IncomingHttpHeaders = NO_HEADERS;
  #chunks: Buffer[] = [];
  #size = 0;
  /** Why the attempt was aborted, for a request that starts after it. */
  #aborted: Error | undefined;

  constructor(waiting: Waiting) {
    this.#waiting = waiting;
    waiting.clock.onAbort = (reason) => {
      this.#aborted = reason;
      if (this.#controller !== undefined) {
        this.#controller.abort(reason);
        return;
      }
      // Still connecting: undici hears no abort until the connection is
      // made (a hanging handshake runs to its connect timeout), so the
      // attempt ends now; the request is aborted if it ever starts.
      this.#fail(reason);
    };
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#aborted !== undefined) controller.abort(this.#aborted);
  }

  onResend(): void {
    this.#controller = undefined;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#statusCode = statusCode;
    this.#headers = headers;
    // An answer that says it is too large is not waited for.
    if (statusCode < 300 && Number(headers['content-length']) > MAX_ANSWER_BYTES) this.#refuse(controller);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    waiting.clock.onByte();
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    if (this.#statusCode >= 300) {
      if (this.#size < MAX_ERROR_BODY_BYTES) return;
      this.onResponseEnd();
      controller.abort(new Error('the rest of the error body was not read'));
    } else if (this.#size > MAX_ANSWER_BYTES) this.#refuse(controller);
  }

  onResponseEnd(): void {
    const waiting = this.#settle();
    if (waiting === undefined) return;
    const chunks = this.#chunks;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#size);
    const response = { statusCode: this.#statusCode, headers: this.#headers, body };
    this.#chunks = [];
    this.#headers = NO_HEADERS;
    waiting.resolve(response);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // An informational 1xx is not the answer: an error after it still kept the answer from coming.
    this.#fail(this.#statusCode < 200 ? error : new AnswerBrokenOffError(error));
  }

  /** A 2xx answer larger than the gateway reads: the attempt fails, and the rest of it is not read. */
  #refuse(controller: Dispatcher.DispatchController): void {
    const error = answerTooLarge();
    this.#fail(error);
    controller.abort(error);
  }

  #fail(error: Error): void {
    const waiting = this.#settle();
    this.#chunks = [];
    this.#headers = NO_HEADERS;
    waiting?.reject(error);
  }

  #settle(): Waiting | undefined {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    this.#controller = undefined;
    if (waiting !== undefined) waiting.clock.onAbort = undefined;
    return waiting;
  }
}

/**
 * Sends `request` and resolves with the whole answer; the clock's timeouts
 * and the client abort it. A kept-alive connection closed under it is
 * replaced (stale-connection.ts).
 */
export function exchange(dispatcher: Dispatcher, request: UpstreamRequest, url: UpstreamUrl, clock: AttemptClock, span: SpanRecord): Promise<BufferedResponse> {
  return new Promise(function dispatch(resolve, reject) {
    const reason = clock.error;
    if (reason !== undefined) {
      reject(reason);
      return;
    }
    const handler = new BufferingHandler({ clock, resolve, reject });
    const options = { origin: url.origin, path: url.path, method: request.method, headers: request.headers, body: request.body };
    new ResendOnClosedConnection(dispatcher, options, handler, clock, span).dispatch();
  });
}
