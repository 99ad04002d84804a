// A batch of trace data as it moves through the pipeline. It is immutable
// (fan-out hands the same batch to several pipelines) and keeps whichever
// forms it has been asked for: the encoded protobuf request (the hot path),
// its wire index, and the decoded model (only when some output needs it).
// JSON is transcoded from the protobuf bytes, not from the model.
import { decodeRequest, encodeRequest } from './proto-codec.js';
import { stringifyRequest } from './json-codec.js';
import { transcodeToJson, transcodeToJsonSliced } from './json-transcoder.js';
import type { ExportTraceServiceRequest } from './model.js';
import { concatRequests, scanRequest, type WireIndex } from './wire.js';

export class TraceBatch {
  #proto: Uint8Array | undefined;
  #index: WireIndex | undefined;
  #model: ExportTraceServiceRequest | undefined;

  private constructor(proto: Uint8Array | undefined, index: WireIndex | undefined, model: ExportTraceServiceRequest | undefined) {
    this.#proto = proto;
    this.#index = index;
    this.#model = model;
  }

  /** Wraps encoded bytes, scanning them now so malformed framing fails at the receiver. */
  static fromProto(bytes: Uint8Array): TraceBatch {
    return new TraceBatch(bytes, scanRequest(bytes), undefined);
  }

  /** Bytes a processor made from a checked batch's (filtered, merged): scanned for their framing only. */
  static fromDerivedProto(bytes: Uint8Array): TraceBatch {
    return new TraceBatch(bytes, scanRequest(bytes, false), undefined);
  }

  /** Wraps an already scanned request (used by processors that produced new bytes). */
  static fromIndex(index: WireIndex): TraceBatch {
    return new TraceBatch(index.buf, index, undefined);
  }

  /**
   * Encoded bytes the caller produced itself (the gateway's own spans), well
   * formed by construction: not scanned until an output asks for the index.
   */
  static fromOwnProto(bytes: Uint8Array): TraceBatch {
    return new TraceBatch(bytes, undefined, undefined);
  }

  static fromModel(model: ExportTraceServiceRequest): TraceBatch {
    return new TraceBatch(undefined, undefined, model);
  }

  /** Merges batches by concatenating their encoded requests. */
  static concat(batches: readonly TraceBatch[]): TraceBatch {
    if (batches.length === 1 && batches[0] !== undefined) return batches[0];
    return TraceBatch.fromDerivedProto(concatRequests(batches.map((b) => b.toProto())));
  }

  get spanCount(): number {
    if (this.#index !== undefined) return this.#index.spanCount;
    if (this.#model !== undefined) {
      let count = 0;
      for (const rs of this.#model.resourceSpans) for (const ss of rs.scopeSpans) count += ss.spans.length;
      return count;
    }
    return this.wire().spanCount;
  }

  toProto(): Uint8Array {
    this.#proto ??= encodeRequest(this.#model ?? { resourceSpans: [] });
    return this.#proto;
  }

  wire(): WireIndex {
    // Own bytes or a checked JSON request encoded: the framing is all there is to find.
    this.#index ??= scanRequest(this.toProto(), false);
    return this.#index;
  }

  /** The decoded model. Shared: callers must not mutate it. */
  toModel(): ExportTraceServiceRequest {
    this.#model ??= decodeRequest(this.toProto());
    return this.#model;
  }

  /** OTLP/JSON text, all at once. */
  toJson(): string {
    if (this.#proto === undefined && this.#model !== undefined) return stringifyRequest(this.#model);
    return transcodeToJson([this.toProto()]).toString('utf8');
  }

  /**
   * OTLP/JSON as UTF-8 bytes followed by `suffix`, written in slices of at
   * most `sliceMs` with a turn of the event loop between them, and kept for
   * the queued JSON outputs that will deliver these same bytes (json-reuse.ts).
   */
  toJsonBytes(sliceMs: number, suffix = ''): Promise<Uint8Array> {
    if (this.#proto === undefined && this.#model !== undefined) return Promise.resolve(Buffer.from(stringifyRequest(this.#model) + suffix));
    return transcodeToJsonSliced([this.toProto()], sliceMs, { suffix, remember: true });
  }
}
