import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, describe, expect, it } from 'vitest';
import { shelvedTaken, takeShelvedJson } from '../../src/otlp/json-shelf.js';
import { transcodeToJson, transcodeToJsonSliced } from '../../src/otlp/json-transcoder.js';
import { encodeRequest } from '../../src/otlp/proto-codec.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';

const request = (): Uint8Array => ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!;

describe('JSON shelved by a file line for a delivery of the same bytes', () => {
  const releases: (() => void)[] = [];
  const taker = (): void => {
    releases.push(takeShelvedJson());
  };
  afterEach(() => {
    for (const release of releases.splice(0)) release();
  });

  it('gives a delivery the same bytes it would transcode, taking each shelved request once', async () => {
    taker();
    const a = request();
    const b = request();
    const before = shelvedTaken();
    const line = await transcodeToJsonSliced([a], 0, '\n', 'shelve');
    expect(line.toString('utf8')).toBe(`${transcodeToJson([a]).toString('utf8')}\n`);

    const delivery = await transcodeToJsonSliced([a, b], 0, '', 'take');
    expect(delivery.toString('utf8')).toBe(transcodeToJson([a, b]).toString('utf8'));
    expect(shelvedTaken() - before).toBe(1);

    // Taken once: the retry of the same delivery transcodes on its own, to the same bytes.
    const retry = await transcodeToJsonSliced([a, b], 0, '', 'take');
    expect(retry.toString('utf8')).toBe(delivery.toString('utf8'));
    expect(shelvedTaken() - before).toBe(1);
  });

  it('keeps the order of the records whichever of them were shelved', async () => {
    taker();
    const records = [request(), request(), request(), request()];
    const before = shelvedTaken();
    await transcodeToJsonSliced([records[1] as Uint8Array], 0, '\n', 'shelve');
    await transcodeToJsonSliced([records[3] as Uint8Array], 0, '\n', 'shelve');
    const delivery = await transcodeToJsonSliced(records, 0, '', 'take');
    expect(delivery.toString('utf8')).toBe(transcodeToJson(records).toString('utf8'));
    expect(shelvedTaken() - before).toBe(2);
  });

  it('shelves an empty request as empty, so the delivery writes no stray comma', async () => {
    taker();
    const empty = encodeRequest({ resourceSpans: [] });
    const full = request();
    const before = shelvedTaken();
    await transcodeToJsonSliced([empty], 0, '\n', 'shelve');
    await transcodeToJsonSliced([full], 0, '\n', 'shelve');
    const delivery = await transcodeToJsonSliced([empty, full, empty], 0, '', 'take');
    expect(delivery.toString('utf8')).toBe(transcodeToJson([empty, full, empty]).toString('utf8'));
    expect(() => JSON.parse(delivery.toString('utf8')) as unknown).not.toThrow();
    expect(shelvedTaken() - before).toBe(2);
  });

  it('shelves nothing while no JSON delivery may take', async () => {
    const a = request();
    await transcodeToJsonSliced([a], 0, '\n', 'shelve');
    taker();
    const before = shelvedTaken();
    await transcodeToJsonSliced([a], 0, '', 'take');
    expect(shelvedTaken() - before).toBe(0);
  });

  it('drops what it holds when the last taker closes', async () => {
    taker();
    const a = request();
    await transcodeToJsonSliced([a], 0, '\n', 'shelve');
    for (const release of releases.splice(0)) release();
    taker();
    const before = shelvedTaken();
    await transcodeToJsonSliced([a], 0, '', 'take');
    expect(shelvedTaken() - before).toBe(0);
  });

  it('holds at most its budget, letting the oldest go first', async () => {
    taker();
    const first = request();
    await transcodeToJsonSliced([first], 0, '\n', 'shelve');
    // Each of these shelves its JSON less the enclosing object; 4 MiB of them push the first out.
    const pieceBytes = transcodeToJson([first]).byteLength - '{"resourceSpans":[]}'.length;
    const fillers = Array.from({ length: Math.ceil((4 * 1024 * 1024) / pieceBytes) }, () => request());
    for (const f of fillers) await transcodeToJsonSliced([f], 1_000, '\n', 'shelve');
    const before = shelvedTaken();
    await transcodeToJsonSliced([first], 0, '', 'take');
    expect(shelvedTaken() - before).toBe(0);
    await transcodeToJsonSliced([fillers.at(-1) as Uint8Array], 0, '', 'take');
    expect(shelvedTaken() - before).toBe(1);
  });
});
