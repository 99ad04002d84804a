import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { stringifyRequest } from '../../src/otlp/json-codec.js';
import { RING_BYTES, rememberJson, takeRememberedResourceSpans, wantJsonReuse } from '../../src/otlp/json-reuse.js';
import { transcodeToJson, transcodeToJsonSliced } from '../../src/otlp/json-transcoder.js';
import { decodeRequest, encodeRequest } from '../../src/otlp/proto-codec.js';
import { concatRequests } from '../../src/otlp/wire.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';
import { turnsDuring } from '../helpers/turns.js';

const releases: (() => void)[] = [];
function want(): void {
  releases.push(wantJsonReuse());
}
afterEach(() => {
  for (const release of releases.splice(0)) release();
});

/** What the transcoder returns for one request whose resourceSpans JSON is `inner`. */
function jsonOf(inner: Buffer): Buffer {
  return Buffer.concat([Buffer.from('{"resourceSpans":['), inner, Buffer.from(']}')]);
}

function sdkRequest(service: string): Uint8Array {
  return ProtobufTraceSerializer.serializeRequest(makeSdkSpans({ 'service.name': service }))!;
}

function viaModel(bytes: Uint8Array): string {
  return stringifyRequest(decodeRequest(bytes));
}

describe('OTLP/JSON reuse between outputs', () => {
  it('remembers nothing while no output wants JSON again', () => {
    const bytes = sdkRequest('alone');
    transcodeToJson([bytes], { suffix: '\n', remember: true });
    expect(takeRememberedResourceSpans(bytes)).toBeUndefined();
  });

  it('remembers only when asked: a delivery of one record is not kept for anyone', () => {
    want();
    const bytes = sdkRequest('delivery');
    transcodeToJson([bytes]);
    expect(takeRememberedResourceSpans(bytes)).toBeUndefined();
  });

  it("remembers a request's resourceSpans, without the brackets or a line's newline, once an output wants them", async () => {
    want();
    const bytes = sdkRequest('line');
    const line = (await transcodeToJsonSliced([bytes], 0.5, { suffix: '\n', remember: true })).toString('utf8');
    expect(line).toBe(`${viaModel(bytes)}\n`);
    const known = takeRememberedResourceSpans(bytes)?.json;
    expect(Buffer.from(known ?? []).toString('utf8')).toBe(line.slice('{"resourceSpans":['.length, -']}\n'.length));
  });

  it('gives the event loop a turn while copying remembered JSON, record by record and piece by piece', async () => {
    want();
    const records = ['a', 'b', 'c', 'd'].map(sdkRequest);
    // Three remembered records, one of them larger than a copy piece (256 KiB), and one to transcode.
    const large = Buffer.from(`{"marker":"${'x'.repeat(600 * 1024)}"}`);
    rememberJson(records[0] as Uint8Array, jsonOf(Buffer.from('{"marker":0}')), 0);
    rememberJson(records[1] as Uint8Array, jsonOf(large), 0);
    rememberJson(records[2] as Uint8Array, jsonOf(Buffer.from('{"marker":2}')), 0);
    // A zero-length slice yields at every chance: after each remembered piece, and after each transcoded span.
    const { value, turns } = await turnsDuring(() => transcodeToJsonSliced(records, 0));
    const json = value.toString('utf8');
    const transcoded = viaModel(records[3] as Uint8Array).slice('{"resourceSpans":['.length, -']}'.length);
    expect(json).toBe(`{"resourceSpans":[{"marker":0},${large.toString('utf8')},{"marker":2},${transcoded}]}`);
    // 1 + 3 + 1 copies, then the fourth record's spans.
    expect(turns).toBeGreaterThanOrEqual(5 + 2);
  });

  it('transcodes a request afresh when newer lines write over its remembered JSON while it is being copied', async () => {
    want();
    const request = sdkRequest('overwritten');
    // Its JSON, larger than a copy piece (256 KiB), is the oldest in a ring nearly full behind it.
    rememberJson(request, jsonOf(Buffer.from(`{"marker":"${'x'.repeat(600 * 1024)}"}`)), 0);
    for (let i = 0; i < 3; i++) rememberJson(new Uint8Array(1), jsonOf(Buffer.alloc(RING_BYTES / 4, 0x20)), 0);
    const delivery = transcodeToJsonSliced([request], 0);
    // During the delivery's first turn of the loop, the next line wraps round to the start of the ring.
    setImmediate(() => rememberJson(new Uint8Array(1), jsonOf(Buffer.alloc(RING_BYTES / 4, 0x7a)), 0));
    expect((await delivery).toString('utf8')).toBe(viaModel(request));
  });

  it('copies the remembered JSON instead of transcoding the same bytes again', () => {
    want();
    const bytes = sdkRequest('copied');
    // A marker no transcoding of these bytes could write: seen in the output only if it was copied.
    rememberJson(bytes, Buffer.from('{"resourceSpans":[{"marker":1}]}'), 0);
    expect(transcodeToJson([bytes]).toString('utf8')).toBe('{"resourceSpans":[{"marker":1}]}');
  });

  it('keys on the bytes object: equal bytes in another buffer are transcoded afresh', () => {
    want();
    const bytes = sdkRequest('object');
    rememberJson(bytes, Buffer.from('{"resourceSpans":[{"marker":1}]}'), 0);
    const copy = Uint8Array.from(bytes);
    expect(transcodeToJson([copy]).toString('utf8')).toBe(viaModel(copy));
  });

  it('writes the same text for any mix of remembered, fresh and empty requests', () => {
    const empty = encodeRequest({ resourceSpans: [] });
    const pool = [sdkRequest('a'), sdkRequest('b'), empty, sdkRequest('c')];
    fc.assert(
      fc.property(fc.array(fc.nat(pool.length - 1), { minLength: 1, maxLength: 6 }), fc.array(fc.boolean(), { minLength: pool.length, maxLength: pool.length }), function sameText(picks, primed) {
        const release = wantJsonReuse();
        try {
          const requests = picks.map((i) => Uint8Array.from(pool[i] as Uint8Array));
          // Some requests were transcoded alone before (a file line), some not.
          requests.forEach((bytes, i) => {
            if (primed[picks[i] as number] === true) transcodeToJson([bytes], { suffix: '\n', remember: true });
          });
          expect(transcodeToJson(requests).toString('utf8')).toBe(viaModel(concatRequests(requests)));
        } finally {
          release();
        }
      }),
      { numRuns: 100 },
    );
  });

  it('lets a request go once each output that wanted JSON has taken it', () => {
    want();
    want();
    const bytes = sdkRequest('twice');
    const line = transcodeToJson([bytes], { suffix: '\n', remember: true }).toString('utf8');
    const inner = line.slice('{"resourceSpans":['.length, -']}\n'.length);
    expect(Buffer.from(takeRememberedResourceSpans(bytes)?.json ?? []).toString('utf8')).toBe(inner);
    expect(Buffer.from(takeRememberedResourceSpans(bytes)?.json ?? []).toString('utf8')).toBe(inner);
    expect(takeRememberedResourceSpans(bytes)).toBeUndefined();
    // Taken by every output, so the next transcoding is a fresh one, and right.
    expect(transcodeToJson([bytes]).toString('utf8')).toBe(viaModel(bytes));
  });

  it(`keeps lines in a ring of ${RING_BYTES / 1024 / 1024} MiB, the oldest written over first`, () => {
    want();
    const quarter = RING_BYTES / 4;
    const requests = Array.from({ length: 6 }, () => new Uint8Array(1));
    // Six lines of a quarter of the ring: the fifth and sixth take the places of the first and second.
    requests.forEach((request, i) => rememberJson(request, jsonOf(Buffer.alloc(quarter, 0x61 + i)), 0));
    expect(takeRememberedResourceSpans(requests[0] as Uint8Array)).toBeUndefined();
    expect(takeRememberedResourceSpans(requests[1] as Uint8Array)).toBeUndefined();
    requests.slice(2).forEach((request, i) => {
      const known = takeRememberedResourceSpans(request)?.json;
      expect(known?.byteLength).toBe(quarter);
      expect(Buffer.from(known ?? []).equals(Buffer.alloc(quarter, 0x63 + i))).toBe(true);
    });
  });

  it('wraps to the start of the ring when a line does not fit at its end, letting go of what lay past it', () => {
    want();
    const size = RING_BYTES / 4 - 1;
    const requests = Array.from({ length: 5 }, () => new Uint8Array(1));
    requests.slice(0, 4).forEach((request, i) => rememberJson(request, jsonOf(Buffer.alloc(size, 0x61 + i)), 0));
    // Four lines fill the ring but for 4 bytes: the fifth goes to its start, over the first only.
    rememberJson(requests[4] as Uint8Array, jsonOf(Buffer.alloc(16, 0x7a)), 0);
    expect(takeRememberedResourceSpans(requests[0] as Uint8Array)).toBeUndefined();
    expect(Buffer.from(takeRememberedResourceSpans(requests[4] as Uint8Array)?.json ?? []).toString('latin1')).toBe('z'.repeat(16));
    requests.slice(1, 4).forEach((request, i) => {
      expect(Buffer.from(takeRememberedResourceSpans(request)?.json ?? []).equals(Buffer.alloc(size, 0x62 + i))).toBe(true);
    });
  });

  it('lets go of lines left past the last write when the next one wraps, before writing over the ring\'s start', () => {
    want();
    const q = RING_BYTES / 4;
    // [size, fill] in the order remembered: a first lap, then a second that stops short of the old D2.
    const lines: Array<[string, number]> = [['A', q], ['B', q], ['C', q], ['D', q / 2], ['D2', q / 4], ['E', q], ['F', q], ['G', q], ['G2', q / 5], ['H', q]];
    const requests = new Map(lines.map(([name]) => [name, new Uint8Array(1)]));
    const fill = (name: string) => name.charCodeAt(name.length - 1);
    for (const [name, size] of lines) rememberJson(requests.get(name) as Uint8Array, jsonOf(Buffer.alloc(Math.floor(size), fill(name))), 0);
    // H did not fit after G2: D2 (past G2) and E (at the start, under H) are gone; the rest are intact.
    for (const gone of ['A', 'B', 'C', 'D', 'D2', 'E']) expect(takeRememberedResourceSpans(requests.get(gone) as Uint8Array), gone).toBeUndefined();
    for (const [name, size] of lines.slice(6)) {
      expect(Buffer.from(takeRememberedResourceSpans(requests.get(name) as Uint8Array)?.json ?? []).equals(Buffer.alloc(Math.floor(size), fill(name))), name).toBe(true);
    }
  });

  it('keeps a request without resourceSpans out of the ring: the writes after it still let go of what they cover', () => {
    want();
    const empty = encodeRequest({ resourceSpans: [] });
    transcodeToJson([empty], { remember: true });
    const size = RING_BYTES / 4;
    const requests = Array.from({ length: 5 }, () => new Uint8Array(1));
    requests.forEach((request, i) => rememberJson(request, jsonOf(Buffer.alloc(size, 0x61 + i)), 0));
    // The fifth wrapped to where the empty one was remembered, over the first.
    expect(takeRememberedResourceSpans(requests[0] as Uint8Array)).toBeUndefined();
    expect(Buffer.from(takeRememberedResourceSpans(requests[4] as Uint8Array)?.json ?? []).equals(Buffer.alloc(size, 0x65))).toBe(true);
    expect(takeRememberedResourceSpans(empty)?.json.byteLength).toBe(0);
  });

  it('does not remember a line larger than a quarter of the ring', () => {
    want();
    const request = new Uint8Array(1);
    rememberJson(request, jsonOf(Buffer.alloc(RING_BYTES / 4 + 1, 0x20)), 0);
    expect(takeRememberedResourceSpans(request)).toBeUndefined();
  });

  it('stops remembering once every output that wanted JSON has let go, each release counting once', () => {
    const first = wantJsonReuse();
    const second = wantJsonReuse();
    first();
    first();
    const kept = sdkRequest('kept');
    transcodeToJson([kept], { remember: true });
    expect(takeRememberedResourceSpans(kept)).toBeDefined();
    second();
    const dropped = sdkRequest('dropped');
    transcodeToJson([dropped], { remember: true });
    expect(takeRememberedResourceSpans(dropped)).toBeUndefined();
  });
});
