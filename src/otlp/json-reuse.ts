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
// as buffers of their own outlived two young-generation collections, went to
// the old generation, and made V8 run three times as many full collections
// (bench/RESULTS.md). So the JSON is copied into one ring buffer allocated
// once (8 MiB, about 0.8 s of lines at 10,000 spans/s), and a request is let
// go once each output that wants JSON has taken it or when its bytes in the
// ring are written over. The bytes objects are looked up weakly: one no
// output takes (a drain whose sampling queued a copy of some spans) is
// never kept reachable from here.

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
}

const byRequest = new WeakMap<Uint8Array, Remembered>();
/** Everything in the ring, oldest first, which is also the order of their places in it. */
let inRing: Remembered[] = [];
let ring: Buffer | undefined;
/** Where the next one is written. */
let head = 0;
let wanting = 0;

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
      for (const entry of inRing) entry.takers = 0;
      inRing = [];
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
  ring ??= Buffer.allocUnsafe(RING_BYTES);
  let start = head;
  if (start + length > RING_BYTES) {
    // The ring's end is too short: what lies there is the oldest and goes first.
    while (inRing.length > 0 && (inRing[0] as Remembered).start >= start) writtenOver();
    start = 0;
  }
  const end = start + length;
  while (inRing.length > 0 && (inRing[0] as Remembered).start < end && (inRing[0] as Remembered).end > start) writtenOver();
  ring.set(inner, start);
  head = end;
  const previous = byRequest.get(request);
  if (previous !== undefined) previous.takers = 0;
  const entry: Remembered = { start, end, takers: wanting };
  byRequest.set(request, entry);
  inRing.push(entry);
}

function writtenOver(): void {
  (inRing.shift() as Remembered).takers = 0;
}

/**
 * The JSON of `request`'s resourceSpans list without its brackets (empty
 * when it has none), if an earlier transcoding of this object remembered it
 * and not every output that wanted it has taken it yet. The bytes are the
 * ring's: copy them before anything else is remembered.
 */
export function takeRememberedResourceSpans(request: Uint8Array): Uint8Array | undefined {
  const entry = byRequest.get(request);
  if (entry === undefined || entry.takers <= 0 || ring === undefined) return undefined;
  entry.takers -= 1;
  return ring.subarray(entry.start, entry.end);
}
