import { gzipSync, deflateSync, createGzip } from 'node:zlib';
import { request } from 'node:http';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ResourceExhaustedError } from '../../../src/shared/errors.js';
import { decodeStatus } from '../../../src/otlp/rpc-status.js';
import { waitUntil } from '../../helpers/daemon.js';
import { rawClient } from '../../helpers/raw-clients.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { metricValue, startReceiver, stopAll } from './harness.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

function protoBody(): Uint8Array {
  return ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!;
}

function jsonBody(): Uint8Array {
  return JsonTraceSerializer.serializeRequest(makeSdkSpans())!;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw POST with node:http, tolerant of the server closing after an early answer. */
function send(url: string, body: Uint8Array | undefined, headers: Record<string, string>, method = 'POST'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(body.length) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    // The server may close while the body is still being written (413).
    req.on('error', (err) => reject(err));
    req.end(body === undefined ? undefined : Buffer.from(body));
  });
}

async function expectStillServing(url: string): Promise<void> {
  const answer = await send(url, protoBody(), { 'content-type': PROTOBUF });
  expect(answer.status).toBe(200);
}

afterEach(stopAll);

describe('OTLP/HTTP receiver', () => {
  it('accepts a protobuf request and answers with an empty protobuf ExportTraceServiceResponse', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const answer = await send(tracesUrl, protoBody(), { 'content-type': PROTOBUF });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe(PROTOBUF);
    // An empty ExportTraceServiceResponse (full success) encodes to zero bytes.
    expect(answer.body.length).toBe(0);
    expect(consumer.spans().map((s) => s.name).sort()).toEqual(['GET /api/cart', 'SELECT cart']);
  });

  it('accepts a JSON request with a charset parameter and answers in JSON', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const answer = await send(tracesUrl, jsonBody(), { 'content-type': 'application/json; charset=utf-8' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe(JSON_TYPE);
    expect(JSON.parse(answer.body.toString())).toEqual({});
    expect(consumer.spans()).toHaveLength(2);
  });

  it('accepts gzip and deflate bodies', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    expect((await send(tracesUrl, gzipSync(protoBody()), { 'content-type': PROTOBUF, 'content-encoding': 'gzip' })).status).toBe(200);
    expect((await send(tracesUrl, deflateSync(jsonBody()), { 'content-type': JSON_TYPE, 'content-encoding': 'deflate' })).status).toBe(200);
    expect(consumer.spans()).toHaveLength(4);
  });

  it('answers an empty request with success without calling the pipeline', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const answer = await send(tracesUrl, new Uint8Array(), { 'content-type': PROTOBUF });
    expect(answer.status).toBe(200);
    expect(consumer.calls).toBe(0);
  });

  it('answers 404 for another path and keeps serving', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const answer = await send(tracesUrl.replace('/v1/traces', '/v1/metrics'), jsonBody(), { 'content-type': JSON_TYPE });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body.toString()).message).toContain('no such path: /v1/metrics');
    await expectStillServing(tracesUrl);
  });

  it('answers 405 with Allow: POST and a google.rpc.Status body in the request\'s encoding, JSON when it has none', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const bare = await fetch(tracesUrl);
    expect(bare.status).toBe(405);
    expect(bare.headers.get('allow')).toBe('POST');
    expect(bare.headers.get('content-type')).toBe(JSON_TYPE);
    expect(await bare.json()).toEqual({ code: 12, message: 'method GET is not allowed; use POST' });
    const proto = await fetch(tracesUrl, { method: 'PUT', headers: { 'content-type': PROTOBUF }, body: Buffer.from(protoBody()) });
    expect(proto.status).toBe(405);
    expect(proto.headers.get('allow')).toBe('POST');
    expect(proto.headers.get('content-type')).toBe(PROTOBUF);
    expect(decodeStatus(new Uint8Array(await proto.arrayBuffer()))).toMatchObject({ code: 12, message: 'method PUT is not allowed; use POST' });
    const json = await fetch(tracesUrl, { method: 'DELETE', headers: { 'content-type': JSON_TYPE } });
    expect(json.status).toBe(405);
    expect(json.headers.get('allow')).toBe('POST');
    expect(await json.json()).toEqual({ code: 12, message: 'method DELETE is not allowed; use POST' });
    await expectStillServing(tracesUrl);
  });

  it('answers 415 for another content type with a JSON google.rpc.Status naming the accepted ones', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const answer = await fetch(tracesUrl, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(answer.status).toBe(415);
    expect(answer.headers.get('content-type')).toBe(JSON_TYPE);
    expect(await answer.json()).toEqual({ code: 3, message: 'unsupported content type text/plain; use application/x-protobuf or application/json' });
    await expectStillServing(tracesUrl);
  });

  it('answers 415 for an unsupported content encoding', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const answer = await send(tracesUrl, protoBody(), { 'content-type': PROTOBUF, 'content-encoding': 'br' });
    expect(answer.status).toBe(415);
    expect(decodeStatus(answer.body).message).toContain('unsupported content encoding br');
    await expectStillServing(tracesUrl);
  });

  it('answers malformed protobuf with 400 and a google.rpc.Status body saying what is wrong', async () => {
    const { tracesUrl, consumer, telemetry } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const answer = await send(tracesUrl, Buffer.from([0x0a, 0xff, 0x01, 0x02]), { 'content-type': PROTOBUF });
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe(PROTOBUF);
    const status = decodeStatus(answer.body);
    expect(status.code).toBe(3); // INVALID_ARGUMENT
    expect(status.message).not.toBe('');
    expect(consumer.calls).toBe(0);
    expect(await metricValue(telemetry, 'sluice_receiver_refused_requests_total', { transport: 'http', reason: 'malformed' })).toBe(1);
    await expectStillServing(tracesUrl);
  });

  it('answers 400 for a span whose attribute bytes are broken, though its framing down to the span is sound', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const span = [0x0a, 0x10, ...new Array<number>(16).fill(0xab), 0x12, 0x08, ...new Array<number>(8).fill(0xcd), 0x4a, 0x01, 0x0f];
    const scopeSpans = [0x12, span.length, ...span];
    const resourceSpans = [0x12, scopeSpans.length, ...scopeSpans];
    const answer = await send(tracesUrl, Buffer.from([0x0a, resourceSpans.length, ...resourceSpans]), { 'content-type': PROTOBUF });
    expect(answer.status).toBe(400);
    expect(decodeStatus(answer.body).message).toContain('wire type 7');
    expect(consumer.calls).toBe(0);
    await expectStillServing(tracesUrl);
  });

  it('answers malformed JSON with 400 and a JSON body naming the bad field', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const answer = await send(tracesUrl, Buffer.from('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz"}]}]}]}'), { 'content-type': JSON_TYPE });
    expect(answer.status).toBe(400);
    const body = JSON.parse(answer.body.toString()) as { code: number; message: string };
    expect(body.code).toBe(3);
    expect(body.message).toContain('resourceSpans[0].scopeSpans[0].spans[0]');
    await expectStillServing(tracesUrl);
  });

  it('answers 400 naming the field for an enum that is neither a name nor a 32-bit integer, and for bytes that are not base64', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const SPAN = 'resourceSpans[0].scopeSpans[0].spans[0]';
    const withSpan = (fields: Record<string, unknown>) =>
      Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', ...fields }] }] }] }));
    const refused: Array<[Record<string, unknown>, string]> = [
      // Names every object inherits are no enum names.
      ...['toString', 'valueOf', 'constructor', '__proto__', 'hasOwnProperty'].flatMap((name): Array<[Record<string, unknown>, string]> => [
        [{ kind: name }, `${SPAN}.kind`],
        [{ status: { code: name } }, `${SPAN}.status.code`],
      ]),
      // Enums are 32-bit: nothing that would wrap on the wire.
      ...[1e20, 4294967298, 2147483648, 1.5].map((kind): [Record<string, unknown>, string] => [{ kind }, `${SPAN}.kind`]),
      [{ status: { code: 4294967298 } }, `${SPAN}.status.code`],
      // One base64 character is not a byte; padding must complete a group of four.
      ...['A', 'AAAAA', 'AA=', 'AAAA=', '='].map((bytesValue): [Record<string, unknown>, string] => [
        { attributes: [{ key: 'b', value: { bytesValue } }] },
        `${SPAN}.attributes[0].value.bytesValue`,
      ]),
    ];
    for (const [fields, path] of refused) {
      const answer = await send(tracesUrl, withSpan(fields), { 'content-type': JSON_TYPE });
      expect({ fields, status: answer.status }).toEqual({ fields, status: 400 });
      expect(JSON.parse(answer.body.toString()).message).toContain(`${path}:`);
    }
    expect(consumer.calls).toBe(0);
    // Names, integers up to 2^31 - 1, and base64 standard or URL-safe, padded or not, still pass.
    const accepted = [{ kind: 'SPAN_KIND_SERVER', status: { code: 'STATUS_CODE_ERROR' } }, { kind: 2147483647 }, { attributes: [{ key: 'b', value: { bytesValue: 'AP8' } }, { key: 'c', value: { bytesValue: '_-8=' } }] }];
    for (const fields of accepted) expect((await send(tracesUrl, withSpan(fields), { 'content-type': JSON_TYPE })).status).toBe(200);
    const [named, largest, bytes] = consumer.spans();
    expect([named?.kind, named?.status?.code, largest?.kind]).toEqual([2, 2, 2147483647]);
    expect(bytes?.attributes?.map((a) => a.value?.bytesValue)).toEqual(['AP8=', '/+8=']);
  });

  it('keeps every digit of a 64-bit integer written as a JSON number past 2^53, and refuses one past the 64-bit range', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    // Written as text: JSON.stringify cannot write these numbers, and JSON.parse rounds them to a double.
    const withSpan = (fields: string) =>
      Buffer.from(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"x",${fields}}]}]}]}`);
    const exact = withSpan(
      '"startTimeUnixNano":1700000000123456789,"endTimeUnixNano":18446744073709551615,"events":[{"timeUnixNano":1700000000123456790,"name":"e"}],' +
        '"attributes":[{"key":"max","value":{"intValue":9223372036854775806}},{"key":"min","value":{"intValue":-9223372036854775807}},' +
        '{"key":"s","value":{"stringValue":"12345678901234567890"}},{"key":"d","value":{"doubleValue":12345678901234567890}},{"key":"f","value":{"doubleValue":1.12345678901234567891e5}}]',
    );
    expect((await send(tracesUrl, exact, { 'content-type': JSON_TYPE })).status).toBe(200);
    const [span] = consumer.spans();
    expect([span?.startTimeUnixNano, span?.endTimeUnixNano, span?.events?.[0]?.timeUnixNano]).toEqual(['1700000000123456789', '18446744073709551615', '1700000000123456790']);
    expect(span?.attributes?.map((a) => a.value)).toEqual([
      { intValue: '9223372036854775806' },
      { intValue: '-9223372036854775807' },
      { stringValue: '12345678901234567890' },
      { doubleValue: 12345678901234567890 },
      { doubleValue: 112345.678901234567891 },
    ]);
    for (const n of ['9223372036854775808', `"${'9'.repeat(100_000)}"`, '1e30']) {
      const past = await send(tracesUrl, withSpan(`"attributes":[{"key":"n","value":{"intValue":${n}}}]`), { 'content-type': JSON_TYPE });
      expect(past.status).toBe(400);
      expect(JSON.parse(past.body.toString()).message).toContain('attributes[0].value.intValue: is out of the 64-bit range');
    }
    const padded = await send(tracesUrl, withSpan('"attributes":[{"key":"n","value":{"intValue":"-00000000000000000000000042"}}]'), { 'content-type': JSON_TYPE });
    expect(padded.status).toBe(200);
    expect(consumer.spans()[1]?.attributes?.[0]?.value).toEqual({ intValue: '-42' });
  });

  it('says a negative unsigned 64-bit integer is negative and an infinite one out of range, rather than that it is no integer', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const withSpan = (fields: string) =>
      Buffer.from(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"x",${fields}}]}]}]}`);
    const cases: Array<[string, string]> = [
      ['"startTimeUnixNano":-1', 'startTimeUnixNano: must not be negative'],
      ['"endTimeUnixNano":"-5"', 'endTimeUnixNano: must not be negative'],
      ['"events":[{"timeUnixNano":-9223372036854775808,"name":"e"}]', 'events[0].timeUnixNano: must not be negative'],
      // JSON.parse reads a number past a double's range as Infinity.
      ['"startTimeUnixNano":1e400', 'startTimeUnixNano: is out of the 64-bit range'],
      ['"attributes":[{"key":"n","value":{"intValue":-1e400}}]', 'attributes[0].value.intValue: is out of the 64-bit range'],
      ['"attributes":[{"key":"n","value":{"intValue":1.5}}]', 'attributes[0].value.intValue: must be an integer'],
    ];
    for (const [fields, problem] of cases) {
      const answer = await send(tracesUrl, withSpan(fields), { 'content-type': JSON_TYPE });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body.toString()).message).toBe(`resourceSpans[0].scopeSpans[0].spans[0].${problem}`);
    }
    expect(consumer.calls).toBe(0);
  });

  it('reads an attribute value member given as null as not set, as the proto3 JSON mapping does', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const members = ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'];
    const attributes = [...members.map((member) => ({ key: member, value: { [member]: null } })), { key: 'next', value: { stringValue: null, intValue: '7' } }];
    const body = { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'nulls', attributes }] }] }] };
    expect((await send(tracesUrl, Buffer.from(JSON.stringify(body)), { 'content-type': JSON_TYPE })).status).toBe(200);
    expect(consumer.spans()[0]?.attributes?.map((kv) => kv.value)).toEqual([...members.map(() => ({})), { intValue: '7' }]);
  });

  it('answers 400 to a doubleValue string of 250,000 digits and a letter, checked in one pass rather than trying every split of its digits', async () => {
    // The check once matched `\d+\.?\d*`, which splits a run of digits every way
    // before failing: this body (under the worker thread's threshold) held the event loop for minutes.
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const attributes = [{ key: 'long', value: { doubleValue: `${'1'.repeat(250_000)}x` } }];
    const body = { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'long', attributes }] }] }] };
    const answer = await send(tracesUrl, Buffer.from(JSON.stringify(body)), { 'content-type': JSON_TYPE });
    expect(answer.status).toBe(400);
    expect((JSON.parse(answer.body.toString()) as { message: string }).message).toContain('spans[0].attributes[0].value.doubleValue: must be a number');
    await expectStillServing(tracesUrl);
  });

  it('reads 32-bit counts and flags from decimal strings as well as numbers, as the proto3 JSON mapping and the collector do', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const request = (flags: unknown) =>
      Buffer.from(
        JSON.stringify({
          resourceSpans: [
            {
              resource: { attributes: [], droppedAttributesCount: '2' },
              scopeSpans: [
                {
                  scope: { name: 's', droppedAttributesCount: '1' },
                  spans: [
                    {
                      traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'counts', flags,
                      droppedAttributesCount: '3', droppedEventsCount: '4', droppedLinksCount: '5',
                      events: [{ timeUnixNano: '1', name: 'e', droppedAttributesCount: '6' }],
                      links: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203332', flags: '256', droppedAttributesCount: '7' }],
                    },
                  ],
                },
              ],
            },
          ],
        }),
      );
    expect((await send(tracesUrl, request('4294967295'), { 'content-type': JSON_TYPE })).status).toBe(200);
    const model = consumer.batches[0]!.toModel();
    const span = consumer.spans()[0];
    expect([model.resourceSpans[0]?.resource?.droppedAttributesCount, model.resourceSpans[0]?.scopeSpans[0]?.scope?.droppedAttributesCount]).toEqual([2, 1]);
    expect([span?.flags, span?.droppedAttributesCount, span?.droppedEventsCount, span?.droppedLinksCount]).toEqual([4294967295, 3, 4, 5]);
    expect([span?.events?.[0]?.droppedAttributesCount, span?.links?.[0]?.flags, span?.links?.[0]?.droppedAttributesCount]).toEqual([6, 256, 7]);
    for (const flags of ['4294967296', '-1', '1.5', '0x1', '', ' 1']) {
      const answer = await send(tracesUrl, request(flags), { 'content-type': JSON_TYPE });
      expect({ flags, status: answer.status }).toEqual({ flags, status: 400 });
      expect(JSON.parse(answer.body.toString()).message).toContain('spans[0].flags: must be an unsigned 32-bit integer');
    }
  });

  it("reads a request written in the proto's own snake_case field names, wholly or in part, as the collector does, not as an empty one", async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const span = (name: string) => ({ name, traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', startTimeUnixNano: '1700000000000000001', endTimeUnixNano: '1700000000000000002', kind: 2, attributes: [{ key: 'http_route', value: { stringValue: '/a_b' } }, { key: 'list', value: { kvlistValue: { values: [{ key: 'in_list', value: { intValue: '3' } }] } } }] });
    const snake = (value: unknown): unknown =>
      Array.isArray(value) ? value.map(snake) : typeof value === 'object' && value !== null ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snake(v)])) : value;
    const camel = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] }, schemaUrl: 'https://opentelemetry.io/schemas/1.26.0', scopeSpans: [{ scope: { name: 'scope' }, spans: [span('one')] }] }] };
    // Mixed: lowerCamelCase at the root, the proto's names below it (each field read under either name, as the collector's protojson does).
    const mixed = { resourceSpans: camel.resourceSpans.map((rs) => ({ resource: rs.resource, schema_url: rs.schemaUrl, scope_spans: snake(rs.scopeSpans) })) };
    for (const body of [camel, snake(camel), mixed]) expect((await send(tracesUrl, Buffer.from(JSON.stringify(body)), { 'content-type': JSON_TYPE })).status).toBe(200);
    expect(JSON.stringify(snake(camel))).toContain('"resource_spans"');
    expect(JSON.stringify(mixed)).toContain('"scope_spans"');
    expect(consumer.batches).toHaveLength(3);
    expect(consumer.batches[1]!.toModel()).toEqual(consumer.batches[0]!.toModel());
    expect(consumer.batches[2]!.toModel()).toEqual(consumer.batches[0]!.toModel());
    expect(consumer.spans()[1]?.attributes).toEqual([{ key: 'http_route', value: { stringValue: '/a_b' } }, { key: 'list', value: { kvlistValue: { values: [{ key: 'in_list', value: { intValue: '3' } }] } } }]);
  });

  it('reads a snake_case field name written with escapes (scope\\u005fspans) as its lowerCamelCase one, as JSON reads the key', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const span = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'escaped', startTimeUnixNano: '1', endTimeUnixNano: '2' };
    const body = JSON.stringify({ resourceSpans: [{ resource: {}, scope_spans: [{ spans: [span] }] }] });
    for (const escaped of [body.replace('"scope_spans"', '"scope\\u005fspans"'), body.replace('"scope_spans"', '"\\u0073cope_spans"')]) {
      expect(escaped).not.toContain('"scope_spans"');
      expect((await send(tracesUrl, Buffer.from(escaped), { 'content-type': JSON_TYPE })).status).toBe(200);
    }
    expect(consumer.spans().map((s) => s.name)).toEqual(['escaped', 'escaped']);
  });

  it('reads a field written in both spellings by its lowerCamelCase one, and a key mixing them (droppedAttributes_count) as unknown, as protojson does', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const span = { name: 'both', traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', span_id: 'ffffffffffffffff', startTimeUnixNano: '1', endTimeUnixNano: '2', droppedAttributes_count: 9 };
    const body = `{"__proto__": {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "from the prototype"}]}]}]}, ${JSON.stringify({ resourceSpans: [{ resource: {}, scopeSpans: [{ spans: [span] }] }] }).slice(1)}`;
    expect((await send(tracesUrl, Buffer.from(body), { 'content-type': JSON_TYPE })).status).toBe(200);
    const model = consumer.batches[0]!.toModel();
    const read = model.resourceSpans[0]?.scopeSpans[0]?.spans[0];
    expect([read?.name, read?.spanId, read?.droppedAttributesCount ?? 0]).toEqual(['both', 'b7ad6b7169203331', 0]);
  });

  it('answers a broken gzip body with 400', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const answer = await send(tracesUrl, Buffer.from('not gzip at all'), { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body.toString()).message).toContain('invalid gzip body');
    await expectStillServing(tracesUrl);
  });

  it('answers 413 for a body over max_request_body_size', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0', max_request_body_size: '1KiB' } });
    const answer = await send(tracesUrl, Buffer.alloc(4096), { 'content-type': PROTOBUF });
    expect(answer.status).toBe(413);
    expect(decodeStatus(answer.body).message).toContain('max_request_body_size');
    await expectStillServing(tracesUrl);
  });

  it('refuses a compressed body whose Content-Length is over the limit before asking for it, as a plain one', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0', max_request_body_size: '1KiB' } });
    const port = Number(new URL(tracesUrl).port);
    for (const encoding of ['gzip', 'deflate', 'identity']) {
      // The compressed bytes count against the limit too: 4 KiB of them cannot fit, whatever they inflate to.
      const client = await rawClient(port, `POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: ${PROTOBUF}\r\nContent-Encoding: ${encoding}\r\nContent-Length: 4096\r\nExpect: 100-continue\r\n\r\n`);
      try {
        await waitUntil(() => client.received().includes('\r\n\r\n'), 5_000, 'an answer');
        expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
      } finally {
        client.socket.destroy();
      }
    }
    expect(consumer.calls).toBe(0);
    await expectStillServing(tracesUrl);
  });

  it('answers 413 for a gzip bomb, stopping decompression at the limit', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0', max_request_body_size: '1MiB' } });
    const bomb = await gzipZeros(200 * 1024 * 1024);
    const rssBefore = process.memoryUsage().rss;
    const answer = await send(tracesUrl, bomb, { 'content-type': PROTOBUF, 'content-encoding': 'gzip' });
    expect(answer.status).toBe(413);
    expect(consumer.calls).toBe(0);
    // Inflating the whole bomb would hold 200 MiB; the limit keeps it near 1 MiB.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * 1024 * 1024);
  });

  it('answers 429 with Retry-After in seconds when the pipeline pushes back', async () => {
    const { tracesUrl, consumer, telemetry } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    consumer.behaviour = () => {
      throw new ResourceExhaustedError('queue drains/acme is full', { retryAfterMs: 2500 });
    };
    const answer = await send(tracesUrl, jsonBody(), { 'content-type': JSON_TYPE });
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('3');
    expect(JSON.parse(answer.body.toString())).toEqual({ code: 8, message: 'queue drains/acme is full' });
    expect(await metricValue(telemetry, 'sluice_receiver_refused_spans_total', { transport: 'http', reason: 'backpressure' })).toBe(2);
  });

  it('answers 503 when the pipeline fails with a retryable error', async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    consumer.behaviour = () => {
      throw new Error('disk unavailable');
    };
    const answer = await send(tracesUrl, protoBody(), { 'content-type': PROTOBUF });
    expect(answer.status).toBe(503);
    expect(decodeStatus(answer.body)).toMatchObject({ code: 14, message: 'disk unavailable' });
  });

  it('logs a refusal the pipeline caused at most once per interval, not once per request', async () => {
    const lines: Array<{ msg: string }> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as { msg: string }) });
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } }, {}, logger);
    consumer.behaviour = () => {
      throw new Error('ENOSPC: no space left on device');
    };
    for (let i = 0; i < 20; i++) expect((await send(tracesUrl, protoBody(), { 'content-type': PROTOBUF })).status).toBe(503);
    const refusals = lines.filter((line) => line.msg === 'refused spans: the pipeline is unavailable');
    // One line per 10 s: all 20 fall in one interval, or two.
    expect(refusals.length).toBeLessThanOrEqual(2);
    expect(refusals[0]).toMatchObject({ spans: 2, err: { message: 'ENOSPC: no space left on device' } });
  });

  it('counts accepted spans per receiver and transport', async () => {
    const { tracesUrl, telemetry } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    await send(tracesUrl, protoBody(), { 'content-type': PROTOBUF });
    expect(await metricValue(telemetry, 'sluice_receiver_accepted_spans_total', { receiver: 'otlp', transport: 'http' })).toBe(2);
  });

  it('allows every origin, whatever its scheme and host, when cors.allowed_origins is "*"', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0', cors: { allowed_origins: ['*'] } } });
    const origin = 'https://app.test';
    const preflight = await send(tracesUrl, undefined, { origin, 'access-control-request-method': 'POST' }, 'OPTIONS');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(origin);
    const answer = await send(tracesUrl, protoBody(), { origin, 'content-type': PROTOBUF });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe(origin);
  });

  it('allows credentials to an allowed origin, as the collector does, so that a request sent with them (sendBeacon) passes', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0', cors: { allowed_origins: ['https://app.example.com'] } } });
    const origin = 'https://app.example.com';
    const preflight = await send(tracesUrl, undefined, { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }, 'OPTIONS');
    expect(preflight.headers['access-control-allow-credentials']).toBe('true');
    const answer = await send(tracesUrl, protoBody(), { origin, 'content-type': PROTOBUF, cookie: 'session=1' });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-credentials']).toBe('true');
    const stranger = await send(tracesUrl, undefined, { origin: 'https://evil.test', 'access-control-request-method': 'POST' }, 'OPTIONS');
    expect(stranger.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it("lets a browser exporter's script read the Retry-After of a cross-origin 429, as the SDK's fetch transport does to wait", async () => {
    const { tracesUrl, consumer } = await startReceiver({ http: { endpoint: '127.0.0.1:0', cors: { allowed_origins: ['https://app.example.com'] } } });
    consumer.behaviour = () => {
      throw new ResourceExhaustedError('queue drains/acme is full', { retryAfterMs: 5000 });
    };
    const answer = await send(tracesUrl, jsonBody(), { origin: 'https://app.example.com', 'content-type': JSON_TYPE });
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('5');
    // Retry-After is no CORS-safelisted response header: unexposed, fetch() shows the script none, and the SDK retries on its own backoff (a second), not as asked.
    const exposed = String(answer.headers['access-control-expose-headers'] ?? '').toLowerCase().split(/\s*,\s*/);
    expect(exposed).toContain('retry-after');
  });

  it('matches a wildcard origin on its host part only', async () => {
    const { tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0', cors: { allowed_origins: ['https://*.example.com'] } } });
    const allowed = await send(tracesUrl, undefined, { origin: 'https://a.example.com', 'access-control-request-method': 'POST' }, 'OPTIONS');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://a.example.com');
    for (const origin of ['https://example.com', 'https://a.evilexample.com', 'http://a.example.com', 'https://evil.test/.example.com']) {
      const refused = await send(tracesUrl, undefined, { origin, 'access-control-request-method': 'POST' }, 'OPTIONS');
      expect(refused.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
  });
});

function gzipZeros(size: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const gzip = createGzip({ level: 9 });
    const chunks: Buffer[] = [];
    gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
    gzip.on('end', () => resolve(Buffer.concat(chunks)));
    gzip.on('error', reject);
    const zeros = Buffer.alloc(1024 * 1024);
    let written = 0;
    function pump(): void {
      while (written < size) {
        written += zeros.length;
        if (!gzip.write(zeros)) {
          gzip.once('drain', pump);
          return;
        }
      }
      gzip.end();
    }
    pump();
  });
}
