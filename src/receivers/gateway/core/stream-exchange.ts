// A streaming upstream exchange on undici's dispatch API. The answer's body
// parts go to the protocol's StreamPipe from undici's own data callback, so a
// chunk passes with no body stream, async iterator or await on its way; what
// the pipe writes to the client is corked per tick, and a client that reads
// slower than the upstream writes pauses the upstream until it drains.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { AttemptFailure } from './attempt-failure.js';
import { MAX_ERROR_BODY_BYTES } from '../providers/shared/answer-limits.js';
import type { SpanRecord } from './spans.js';
import type { ResendableHandler } from './stale-connection.js';
import type { AttemptClock } from './upstream.js';

/** ms an upstream whose stream is complete has to end its body before its connection is dropped. */
const LINGER_MS = 1_000;

const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});

/** What one protocol does with a 2xx streaming body. */
export interface StreamPipe<T> {
  /**
   * One part of the body. The pipe writes to the client with
   * `exchange.write` and calls `exchange.complete` once the stream is whole;
   * it throws to fail the attempt.
   */
  part(part: Buffer, exchange: StreamExchange<T>): void;
  /** The body ended: the pipe completes the exchange, or throws (a stream cut short). */
  end(exchange: StreamExchange<T>): void;
  /**
   * How the attempt ends when the stream failed after its 2xx answer began:
   * the pipe threw, the upstream broke off, a timeout fired or the client
   * left. Must not throw.
   */
  fail(err: unknown): T;
}

/**
 * A stream whose failure could not be reported on it (its pipe's fail()
 * threw): the client's answer is cut, and no other attempt may follow it.
 */
export class BrokenStreamError extends Error {
  readonly code = 'SLUICE_ERR_BROKEN_STREAM';

  constructor(cause: unknown) {
    super('the stream broke off and could not be ended cleanly', { cause });
    this.name = 'BrokenStreamError';
  }
}

/** A non-2xx answer, read whole for the adapter to classify. */
export interface RefusedStream {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Uint8Array;
}

export type ExchangeOutcome<T> = { readonly refused: RefusedStream } | { readonly piped: T };

/**
 * Ends a client's stream that failed after its first byte and marks the
 * request's SERVER span: the protocol's error event, or a cut for a client
 * that is gone. A response already ended in full has nothing more to tell.
 */
export function endFailedStream(res: ServerResponse, server: SpanRecord, failure: AttemptFailure, errorEvent: () => string): void {
  server.fail(failure.spanErrorType === 'cancelled' ? 'cancelled' : 'stream_error', failure.spanMessage);
  if (res.writableEnded) return;
  if (failure.spanErrorType !== 'cancelled' && !res.destroyed) res.end(errorEvent());
  else res.destroy();
}

/**
 * Events parsed from one upstream read can arrive in several data callbacks
 * (one per HTTP chunk); corking until the next tick sends them in one write
 * instead of one each.
 */
function corkedWriter(res: ServerResponse): (text: string) => boolean {
  let corked = false;
  function uncork(): void {
    corked = false;
    res.uncork();
  }
  return function write(text) {
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    return res.write(text);
  };
}

/**
 * undici's dispatch handler for one streaming attempt. `outcome` settles
 * once: rejected when the exchange fails before an answer started (the
 * attempt's catch judges the error), with the body of a non-2xx answer, or
 * with what the pipe made of a 2xx one. The answer's status goes on the
 * attempt's span as it arrives.
 */
export class StreamExchange<T> implements ResendableHandler {
  readonly outcome: Promise<ExchangeOutcome<T>>;
  #resolve!: (outcome: ExchangeOutcome<T>) => void;
  #reject!: (err: unknown) => void;
  readonly #res: ServerResponse;
  readonly #clock: AttemptClock;
  readonly #span: SpanRecord;
  readonly #pipe: StreamPipe<T>;
  readonly #write: (text: string) => boolean;
  #controller: Dispatcher.DispatchController | undefined;
  /** Set when a 2xx answer began: its body goes to the pipe. */
  #piping = false;
  /** The 2xx answer's headers, once it began. */
  #headers: IncomingHttpHeaders = NO_HEADERS;
  /** A non-2xx answer's status, headers and body parts. */
  #refused: { statusCode: number; headers: IncomingHttpHeaders; parts: Buffer[]; size: number } | undefined;
  #settled = false;
  #ended = false;
  #lingering: NodeJS.Timeout | undefined;
  readonly #resume = (): void => {
    this.#clock.hold(false);
    this.#controller?.resume();
  };

  constructor(res: ServerResponse, clock: AttemptClock, span: SpanRecord, pipe: StreamPipe<T>) {
    this.#res = res;
    this.#clock = clock;
    this.#span = span;
    this.#pipe = pipe;
    this.#write = corkedWriter(res);
    this.outcome = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    clock.onAbort = (reason) => {
      if (this.#controller !== undefined) this.#controller.abort(reason);
      // Still connecting: undici hears no abort until the connection is made
      // (a hanging handshake runs to its connect timeout), so the attempt
      // ends now; onRequestStart aborts the request if it ever starts.
      else this.#fail(reason);
    };
  }

  /** The headers of the 2xx answer whose body the pipe reads. */
  get headers(): IncomingHttpHeaders {
    return this.#headers;
  }

  /** True once the attempt's outcome is decided (a pipe stops mapping then). */
  get settled(): boolean {
    return this.#settled;
  }

  /** Writes to the client; past its buffer's high-water mark the upstream waits for it to drain. */
  write(text: string): void {
    if (this.#write(text)) return;
    const controller = this.#controller;
    if (controller === undefined || controller.paused || this.#settled) return;
    controller.pause();
    // A client that reads slowly is not an upstream gone silent.
    this.#clock.hold(true);
    this.#res.once('drain', this.#resume);
  }

  /** The stream is whole: the attempt ends with `result`. */
  complete(result: T): void {
    if (this.#settled) return;
    this.#settle();
    this.#resolve({ piped: result });
    if (this.#ended) return;
    // The upstream said it was done; its body's end (the chunked encoding's
    // last chunk) may come in a later read. What else comes is read and
    // dropped for a while, so the connection can be used again; a body that
    // goes on past that is abandoned, with its connection.
    this.#controller?.resume();
    this.#lingering = setTimeout(() => this.#abandon(new Error('stream complete, but its body did not end')), LINGER_MS);
    // Dropping the rest is no reason to keep a stopping process alive.
    this.#lingering.unref();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    const reason = this.#clock.error;
    if (reason !== undefined) controller.abort(reason);
  }

  onResend(): void {
    this.#controller = undefined;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // An informational answer (103 Early Hints) comes before the real one.
    if (statusCode < 200) return;
    this.#span.int('http.response.status_code', statusCode);
    if (statusCode < 300) {
      this.#piping = true;
      this.#headers = headers;
    } else this.#refused = { statusCode, headers, parts: [], size: 0 };
  }

  onResponseData(_controller: Dispatcher.DispatchController, part: Buffer): void {
    if (this.#settled) return;
    this.#clock.onByte();
    if (!this.#piping) {
      const refused = this.#refused;
      if (refused === undefined) return;
      refused.parts.push(part);
      refused.size += part.length;
      if (refused.size < MAX_ERROR_BODY_BYTES) return;
      this.#answerRefused(refused);
      this.#abandon(new Error('the rest of the error body was not read'));
      return;
    }
    try {
      this.#pipe.part(part, this);
    } catch (err) {
      this.#fail(err);
    }
  }

  onResponseEnd(): void {
    this.#ended = true;
    clearTimeout(this.#lingering);
    if (this.#settled) return;
    const refused = this.#refused;
    if (refused !== undefined) {
      this.#answerRefused(refused);
      return;
    }
    try {
      this.#pipe.end(this);
    } catch (err) {
      this.#fail(err);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#ended = true;
    clearTimeout(this.#lingering);
    this.#fail(error);
  }

  /** The attempt ends with the non-2xx answer, its body as read. */
  #answerRefused(refused: { statusCode: number; headers: IncomingHttpHeaders; parts: Buffer[] }): void {
    this.#settle();
    const body = refused.parts.length === 1 ? (refused.parts[0] as Buffer) : Buffer.concat(refused.parts);
    this.#resolve({ refused: { statusCode: refused.statusCode, headers: refused.headers, body } });
  }

  #fail(err: unknown): void {
    if (this.#settled) return;
    this.#settle();
    this.#abandon(err instanceof Error ? err : new Error(String(err)));
    if (!this.#piping) {
      // No answer yet, or a non-2xx one that broke off.
      this.#reject(err);
      return;
    }
    let result: T;
    try {
      result = this.#pipe.fail(err);
    } catch (failure) {
      this.#res.destroy();
      this.#reject(new BrokenStreamError(failure));
      return;
    }
    this.#resolve({ piped: result });
  }

  /** Aborts the upstream exchange if its body is still coming. */
  #abandon(reason: Error): void {
    if (!this.#ended) this.#controller?.abort(reason);
  }

  #settle(): void {
    this.#settled = true;
    this.#clock.onAbort = undefined;
    this.#clock.hold(false);
    this.#res.off('drain', this.#resume);
  }
}
