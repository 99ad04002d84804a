// OTLP/JSON request bodies, decoded off the event loop when they are large.
// Parsing, checking and encoding a JSON request is synchronous work that
// grows with the body: a 40 MiB request held the loop, and every listener
// with it, for seconds. Bodies up to INLINE_BYTES are decoded where they
// arrive (a worker's round trip costs more than they do); larger ones go to
// one worker thread, which answers with the request encoded as protobuf, and
// the batch is made of those bytes. The TypeScript sources (as the unit tests
// run them) have no compiled worker: there every body is decoded inline.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { TraceBatch } from '../../otlp/batch.js';
import { parseJsonRequest } from '../../otlp/json-codec.js';
import { MalformedDataError } from '../../shared/errors.js';

/** Bodies up to this many bytes are decoded on the event loop. */
export const INLINE_BYTES = 256 * 1024;

export interface DecodeTask {
  readonly id: number;
  readonly body: Uint8Array;
}

/** The body's protobuf bytes, or why it is malformed. */
export type DecodeReply = { readonly id: number; readonly proto: Uint8Array } | { readonly id: number; readonly malformed: string };

const WORKER_FILE = fileURLToPath(new URL('./json-decode-worker.js', import.meta.url));

/** One worker thread, started on the first large body and again after it stops. */
class DecodeWorker {
  #worker: Worker | undefined;
  #nextId = 0;
  readonly #pending = new Map<number, { resolve(proto: Uint8Array): void; reject(err: Error): void }>();

  decode(body: Uint8Array): Promise<Uint8Array> {
    const worker = this.#worker ?? this.#start();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // The body is not needed here once sent: a buffer of its own moves without a copy.
      const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
      worker.postMessage({ id, body } satisfies DecodeTask, whole ? [body.buffer as ArrayBuffer] : []);
    });
  }

  #start(): Worker {
    const worker = new Worker(WORKER_FILE);
    // Requests waiting on it keep the process alive; an idle worker does not.
    worker.unref();
    worker.on('message', (reply: DecodeReply) => this.#answer(reply));
    worker.on('error', (err) => this.#stopped(worker, err));
    worker.on('exit', (code) => this.#stopped(worker, new Error(`the JSON decoding thread exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  #answer(reply: DecodeReply): void {
    const waiting = this.#pending.get(reply.id);
    if (waiting === undefined) return;
    this.#pending.delete(reply.id);
    if ('proto' in reply) waiting.resolve(reply.proto);
    else waiting.reject(new MalformedDataError(reply.malformed));
  }

  /** Every body it held fails (a 503, not a 400: the body may be fine); the next one starts a new worker. */
  #stopped(worker: Worker, err: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    for (const waiting of this.#pending.values()) waiting.reject(err);
    this.#pending.clear();
  }
}

/** Looked for on the first large body (not at import, which the worker thread does too); null without a compiled worker. */
let decoder: DecodeWorker | null | undefined;

/** The batch an OTLP/JSON body holds; MalformedDataError when it is not one. */
export async function decodeJsonBody(body: Uint8Array): Promise<TraceBatch> {
  if (body.byteLength <= INLINE_BYTES) return decodeInline(body);
  decoder ??= existsSync(WORKER_FILE) ? new DecodeWorker() : null;
  if (decoder === null) return decodeInline(body);
  // Bytes encoded from a checked request: their framing is all there is to scan.
  return TraceBatch.fromDerivedProto(await decoder.decode(body));
}

/** Decodes on this thread; whatever the decoder throws on bad input is MalformedDataError. */
export function decodeInline(body: Uint8Array): TraceBatch {
  try {
    return TraceBatch.fromModel(parseJsonRequest(body));
  } catch (err) {
    if (err instanceof MalformedDataError) throw err;
    throw new MalformedDataError(`malformed json body: ${err instanceof Error ? err.message : String(err)}`);
  }
}
