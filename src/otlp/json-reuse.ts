// OTLP/JSON written once per batch, read by every output that wants it.
// With the example config's `file` exporter and a JSON drain, each batch was
// transcoded twice: once for its line in the file and again when the drain
// delivered the same bytes. A batch's bytes are immutable (batch.ts), so the
// JSON of one encoded request is a function of that Uint8Array object: the
// `file` exporter's transcoding remembers its JSON here, keyed by the
// object, and a later transcoding of the same object copies it.
//
// Nothing is remembered unless some queued output wants JSON later (a JSON
// drain or `otlphttp` exporter). Queued outputs deliver a batch up to their
// flush_timeout (200 ms) after it arrived: under the mixed load the drain
// took a line a median 100 ms after the file wrote it. Lines held that long
// as buffers of their own outlived two young-generation collections, went
// to the old generation, and made V8 run two to three times as many full
// collections (bench/RESULTS.md). So the JSON is copied into one ring
// buffer allocated once (8 MiB, about 0.8 s of lines at 10,000 spans/s),
// and a request is let go once each output that wants JSON has taken it or
// when its bytes in the ring are written over. The bytes objects are looked
// up weakly: one no output takes (a drain whose sampling queued a copy of
// some spans) is never kept reachable from here.
//
// A delivery finds nothing, and transcodes as before, when its records are
// not the objects the file exporter was given: a drain whose sampling or
// edge filter left spans out, records read back from disk (after a restart,
// or beyond the queue's 8 MiB of recent records), lines written over before
// the delivery, lines over a quarter of the ring, and batches received as
// OTLP/JSON (the file writes those from their model). A delivery copies a
// large line in pieces with turns of the loop between them, during which
// newer lines may write over it: it then transcodes that request instead.

const RESOURCE_SPANS_OPEN = '{"resourceSpans":['.length;
const RESOURCE_SPANS_CLOSE = ']}'.length;

/** The ring's size: a line larger than a quarter of it is not remembered. */
export const RING_BYTES = 8 * 1024 * 1024;

interface Remembered {
  /** Where its resourceSpans JSON lies in the ring. */
  readonly start: number;
  readonly end: number;
  /** Outputs that may still take it: 0 once taken by all or written over. */
  takers: number;
  /** Newer lines have taken its place in the ring. */
  writtenOver: boolean;
}

/** A request's remembered JSON, as one output takes it. */
export interface RememberedSpans {
  /** Its resourceSpans list without the brackets (empty when it has none): the ring's own bytes. */
  readonly json: Uint8Array;
  /**
   * Whether `json` still holds its JSON: a copy that gives the event loop
   * turns lets newer lines be remembered meanwhile, which may write over it.
   */
  intact(): boolean;
}

const byRequest = new WeakMap<Uint8Array, Remembered>();
/**
 * Everything in the ring from index `oldest` on, oldest first: in the order
 * of their places in the ring, going round from `head`. Never an empty one,
 * which would have no place to be written over at.
 */
let inRing: (Remembered | undefined)[] = [];
let oldest = 0;
let ring: Buffer | undefined;
/** Where the next one is written. */
let head = 0;
let wanting = 0;
const NOTHING = new Uint8Array(0);
/** Slots before `oldest` are dropped from the array once there are this many and they are most of it. */
const COMPACT_AFTER = 1024;

/**
 * Says that JSON of requests will be wanted after their first transcoding
 * (a queued JSON output exists); the returned function takes it back, once.
 */
export function wantJsonReuse(): () => void {
  wanting += 1;
  let released = false;
  return function release() {
    if (released) return;
    released = true;
    wanting -= 1;
    if (wanting === 0) {
      while (oldest < inRing.length) writtenOver();
      inRing = [];
      oldest = 0;
      ring = undefined;
      head = 0;
    }
  };
}

/**
 * Copies the resourceSpans of `json` (the transcoder's output for `request`
 * alone, followed by `suffixBytes` bytes) until each output that wants JSON
 * has taken it.
 */
export function rememberJson(request: Uint8Array, json: Uint8Array, suffixBytes: number): void {
  if (wanting === 0) return;
  const inner = json.subarray(RESOURCE_SPANS_OPEN, json.byteLength - RESOURCE_SPANS_CLOSE - suffixBytes);
  const length = inner.byteLength;
  if (length > RING_BYTES / 4) return;
  const previous = byRequest.get(request);
  if (previous !== undefined) previous.takers = 0;
  if (length === 0) {
    byRequest.set(request, { start: 0, end: 0, takers: wanting, writtenOver: false });
    return;
  }
  ring ??= Buffer.allocUnsafe(RING_BYTES);
  let start = head;
  if (start + length > RING_BYTES) {
    // The ring's end is too short: what lies there is the oldest and goes first.
    for (let first = inRing[oldest]; first !== undefined && first.start >= start; first = inRing[oldest]) writtenOver();
    start = 0;
  }
  const end = start + length;
  for (let first = inRing[oldest]; first !== undefined && first.start < end && first.end > start; first = inRing[oldest]) writtenOver();
  ring.set(inner, start);
  head = end;
  const entry: Remembered = { start, end, takers: wanting, writtenOver: false };
  byRequest.set(request, entry);
  inRing.push(entry);
}

function writtenOver(): void {
  const first = inRing[oldest] as Remembered;
  first.takers = 0;
  first.writtenOver = true;
  inRing[oldest] = undefined;
  oldest += 1;
  if (oldest >= COMPACT_AFTER && oldest * 2 >= inRing.length) {
    inRing = inRing.slice(oldest);
    oldest = 0;
  }
}

/**
 * The JSON of `request`'s resourceSpans list, if an earlier transcoding of
 * this object remembered it and not every output that wanted it has taken it
 * yet. The bytes are the ring's: a copy made across turns of the event loop
 * checks `intact()` once it is done.
 */
export function takeRememberedResourceSpans(request: Uint8Array): RememberedSpans | undefined {
  const entry = byRequest.get(request);
  if (entry === undefined || entry.takers <= 0) return undefined;
  entry.takers -= 1;
  const json = entry.end === entry.start ? NOTHING : ring?.subarray(entry.start, entry.end);
  if (json === undefined) return undefined;
  return {
    json,
    intact: function intact() {
      return !entry.writtenOver;
    },
  };
}
