// A non-streaming upstream exchange on undici's dispatch API: the answer is
// collected into one buffer by a handler, with no body stream, async iterator
// or per-request AbortSignal (request() would build all three per attempt).
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { UpstreamRequest } from '../providers/shared/types.js';
import type { AttemptClock, UpstreamUrl } from './upstream.js';

export interface BufferedResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Uint8Array;
}

const NO_HEADERS: IncomingHttpHeaders = {};

class BufferingHandler implements Dispatcher.DispatchHandler {
  readonly #clock: AttemptClock;
  readonly #resolve: (response: BufferedResponse) => void;
  readonly #reject: (err: Error) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #statusCode = 0;
  #headers: IncomingHttpHeaders = NO_HEADERS;
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(clock: AttemptClock, resolve: (response: BufferedResponse) => void, reject: (err: Error) => void) {
    this.#clock = clock;
    this.#resolve = resolve;
    this.#reject = reject;
    clock.onAbort = (reason) => this.#controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    const reason = this.#clock.error;
    if (reason !== undefined) controller.abort(reason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#statusCode = statusCode;
    this.#headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#clock.onByte();
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  onResponseEnd(): void {
    this.#clock.onAbort = undefined;
    const chunks = this.#chunks;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#size);
    this.#resolve({ statusCode: this.#statusCode, headers: this.#headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#clock.onAbort = undefined;
    this.#reject(error);
  }
}

/** Sends `request` and resolves with the whole answer; the clock's timeouts and the client abort it. */
export function exchange(dispatcher: Dispatcher, request: UpstreamRequest, url: UpstreamUrl, clock: AttemptClock): Promise<BufferedResponse> {
  return new Promise(function dispatch(resolve, reject) {
    const reason = clock.error;
    if (reason !== undefined) {
      reject(reason);
      return;
    }
    const handler = new BufferingHandler(clock, resolve, reject);
    dispatcher.dispatch({ origin: url.origin, path: url.path, method: request.method, headers: request.headers, body: request.body }, handler);
  });
}
