// The OTLP/JSON of a batch, kept a short while for a second consumer of the
// same bytes. With a `file` exporter and a JSON drain in one pipeline (the
// example config), both transcode every batch: the file exporter when the
// batch arrives, the drain when it delivers, and with no sampling rule that
// drops a span the drain's queued record is the batch's own Uint8Array. So
// the file exporter shelves each batch's JSON, keyed by those bytes, and a
// JSON delivery takes what it finds instead of transcoding it again.
//
// Bounded: only while some JSON delivery may take (takers > 0), at most
// SHELF_BYTES of JSON, oldest out first, and each piece taken once.

/** About half a second of the mixed load's JSON: a drain delivers within flush_timeout (200 ms) of the write. */
const SHELF_BYTES = 4 * 1024 * 1024;

/** Insertion order is age order. */
const shelf = new Map<Uint8Array, Buffer>();
let shelfBytes = 0;
let takers = 0;
let taken = 0;

/** A JSON delivery announces that it may take shelved JSON; call the result when it closes. */
export function takeShelvedJson(): () => void {
  takers += 1;
  let released = false;
  return function release() {
    if (released) return;
    released = true;
    takers -= 1;
    if (takers === 0) clear();
  };
}

/** Whether shelving is worth doing now. */
export function shelving(): boolean {
  return takers > 0;
}

/** Keeps `json`, the resourceSpans elements that `request` transcodes to (without the enclosing brackets). */
export function shelve(request: Uint8Array, json: Buffer): void {
  if (takers === 0 || json.byteLength > SHELF_BYTES) return;
  const previous = shelf.get(request);
  if (previous !== undefined) {
    shelf.delete(request);
    shelfBytes -= previous.byteLength;
  }
  shelf.set(request, json);
  shelfBytes += json.byteLength;
  for (const [oldest, piece] of shelf) {
    if (shelfBytes <= SHELF_BYTES) break;
    shelf.delete(oldest);
    shelfBytes -= piece.byteLength;
  }
}

/** The JSON shelved for exactly these bytes, removed from the shelf; undefined when there is none. */
export function takeShelved(request: Uint8Array): Buffer | undefined {
  const json = shelf.get(request);
  if (json === undefined) return undefined;
  shelf.delete(request);
  shelfBytes -= json.byteLength;
  taken += 1;
  return json;
}

/** How many pieces were taken since start (tests and benchmarks). */
export function shelvedTaken(): number {
  return taken;
}

function clear(): void {
  shelf.clear();
  shelfBytes = 0;
}
