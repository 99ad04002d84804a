// OTLP request bodies, checked off the event loop when they are large.
// Parsing and checking a request is synchronous work that grows with the
// body: a 40 MiB JSON request held the loop, and every listener with it, for
// seconds, and checking a protobuf one costs about 5 ms per MiB. Bodies up
// to INLINE_BYTES are decoded where they arrive (a worker's round trip costs
// more than they do). Larger ones go to one worker thread: a JSON body comes
// back encoded as protobuf, a protobuf body comes back checked, and the batch
// is made of those bytes, scanned here for their framing only. The
// TypeScript sources (as the unit tests run them) have no compiled worker:
// there every body is decoded inline.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { TraceBatch } from '../../otlp/batch.js';
import { parseJsonRequest } from '../../otlp/json-codec.js';
import { MalformedDataError } from '../../shared/errors.js';

/** Bodies up to this many bytes are decoded on the event loop. */
export const INLINE_BYTES = 256 * 1024;

export type BodyEncoding = 'json' | 'protobuf';

export interface DecodeTask {
  readonly id: number;
  readonly encoding: BodyEncoding;
  readonly body: Uint8Array;
}

/** The request as checked protobuf bytes, or why it is malformed. */
export type DecodeReply = { readonly id: number; readonly proto: Uint8Array } | { readonly id: number; readonly malformed: string };

const WORKER_FILE = fileURLToPath(new URL('./body-decode-worker.js', import.meta.url));

/** One worker thread, started on the first large body and again after it stops. */
class DecodeWorker {
  #worker: Worker | undefined;
  #nextId = 0;
  readonly #pending = new Map<number, { resolve(proto: Uint8Array): void; reject(err: Error): void }>();

  /** Takes the body over: a buffer of its own moves to the worker without a copy, and the caller must not use it again. */
  decode(encoding: BodyEncoding, body: Uint8Array): Promise<Uint8Array> {
    const worker = this.#worker ?? this.#start();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      const owned = ownBuffer(body);
      worker.postMessage({ id, encoding, body: owned } satisfies DecodeTask, [owned.buffer as ArrayBuffer]);
    });
  }

  #start(): Worker {
    const worker = new Worker(WORKER_FILE);
    // Requests waiting on it keep the process alive; an idle worker does not.
    worker.unref();
    worker.on('message', (reply: DecodeReply) => this.#answer(reply));
    worker.on('error', (err) => this.#stopped(worker, err));
    worker.on('exit', (code) => this.#stopped(worker, new Error(`the OTLP decoding thread exited with code ${code}`)));
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

/**
 * The bytes in a buffer of their own, which a message can transfer: posting
 * a view into a larger buffer (a slice of a gRPC frame, of Node's pool) would
 * copy all of that buffer.
 */
export function ownBuffer(bytes: Uint8Array): Uint8Array {
  // A copy, where Buffer#slice would be another view.
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}

/** Looked for on the first large body (not at import, which the worker thread does too); null without a compiled worker. */
let decoder: DecodeWorker | null | undefined;

/**
 * The batch an OTLP request body holds; MalformedDataError when it is not
 * one. A large body is handed to the worker: the caller must not use it
 * again.
 */
export async function decodeBody(encoding: BodyEncoding, body: Uint8Array): Promise<TraceBatch> {
  if (body.byteLength <= INLINE_BYTES) return decodeInline(encoding, body);
  decoder ??= existsSync(WORKER_FILE) ? new DecodeWorker() : null;
  if (decoder === null) return decodeInline(encoding, body);
  // Bytes the worker checked, or encoded from a checked request: their framing is all there is to scan.
  return TraceBatch.fromDerivedProto(await decoder.decode(encoding, body));
}

/** Decodes on this thread; whatever the decoder throws on bad input is MalformedDataError. */
export function decodeInline(encoding: BodyEncoding, body: Uint8Array): TraceBatch {
  try {
    return encoding === 'protobuf' ? TraceBatch.fromProto(body) : TraceBatch.fromModel(parseJsonRequest(body));
  } catch (err) {
    if (err instanceof MalformedDataError) throw err;
    throw new MalformedDataError(`malformed ${encoding === 'protobuf' ? 'protobuf' : 'json'} body: ${err instanceof Error ? err.message : String(err)}`);
  }
}
