import { connect, constants } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { compressionAlgorithms, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, describe, expect, it } from 'vitest';
import { ResourceExhaustedError } from '../../../src/shared/errors.js';
import { decodeStatus } from '../../../src/otlp/rpc-status.js';
import { waitUntil } from '../../helpers/daemon.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { EXPORT_PATH } from '../../../src/receivers/otlp/grpc-server.js';
import { exportBytes, grpcClient, metricValue, startReceiver, stopAll } from './harness.js';

afterEach(stopAll);

/** One raw Export call; resolves with the response bytes or the ServiceError. */
function exportRaw(target: string, body: Uint8Array, gzip = false): Promise<Buffer | ServiceError> {
  const client = grpcClient(target, gzip ? { 'grpc.default_compression_algorithm': compressionAlgorithms.gzip } : {});
  return exportBytes(client, Buffer.from(body));
}

function protoBody(): Uint8Array {
  return ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!;
}

/** gRPC's length-prefixed framing of one uncompressed message; `announced` overrides the length it states. */
function frame(message: Uint8Array, announced = message.length): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(announced, 1);
  return Buffer.concat([head, message]);
}

/** An Export call whose body is `body` as it is, over a bare HTTP/2 client; resolves with its grpc-status and message. */
function exportFramed(target: string, body: Buffer, headers: Record<string, string> = {}): Promise<{ code: number; details: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://${target}`);
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': EXPORT_PATH, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    let answer: Record<string, unknown> = {};
    stream.on('response', (h) => (answer = { ...h }));
    stream.on('trailers', (t) => (answer = { ...answer, ...t }));
    stream.on('error', reject);
    stream.resume();
    stream.on('close', () => {
      session.close();
      resolve({ code: Number(answer['grpc-status']), details: decodeURIComponent(String(answer['grpc-message'] ?? '')) });
    });
    stream.end(body);
  });
}

/** One compressed message in gRPC's framing (the flag set; the encoding is the call's `grpc-encoding`). */
function compressedFrame(compressed: Buffer): Buffer {
  const framed = frame(compressed);
  framed.writeUInt8(1, 0);
  return framed;
}

function isServiceError(value: Buffer | ServiceError): value is ServiceError {
  return !Buffer.isBuffer(value);
}

describe('OTLP/gRPC receiver', () => {
  it('accepts an Export call and hands the request bytes to the pipeline undecoded', async () => {
    const { grpcTarget, consumer } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    const body = protoBody();
    const answer = await exportRaw(grpcTarget, body);
    expect(isServiceError(answer)).toBe(false);
    expect(Buffer.from(consumer.batches[0]!.toProto()).equals(Buffer.from(body))).toBe(true);
  });

  it('accepts a gzip-compressed Export call', async () => {
    const { grpcTarget, consumer } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    const answer = await exportRaw(grpcTarget, protoBody(), true);
    expect(isServiceError(answer)).toBe(false);
    expect(consumer.spans()).toHaveLength(2);
  });

  it('answers INVALID_ARGUMENT for malformed protobuf and keeps serving', async () => {
    const { grpcTarget, consumer, telemetry } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    const answer = await exportRaw(grpcTarget, Buffer.from([0x0a, 0xff, 0x01, 0x02]));
    expect(isServiceError(answer) && answer.code).toBe(status.INVALID_ARGUMENT);
    expect(isServiceError(answer) && answer.details).not.toBe('');
    expect(await metricValue(telemetry, 'sluice_receiver_refused_requests_total', { transport: 'grpc', reason: 'malformed' })).toBe(1);
    expect(isServiceError(await exportRaw(grpcTarget, protoBody()))).toBe(false);
    expect(consumer.calls).toBe(1);
  });

  it('answers INVALID_ARGUMENT for a call that ends without one whole message or sends two, counting the second message as malformed', async () => {
    const { grpcTarget, consumer, telemetry } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    const body = protoBody();
    const calls = [
      frame(body, body.length + 10), // cut short: the frame announces more than it carries
      Buffer.alloc(0), // no message at all
      Buffer.from([0, 0, 0]), // a frame header cut short
      Buffer.concat([frame(body), frame(body)]), // a unary call carries one message
    ];
    for (const call of calls) {
      const answer = await exportFramed(grpcTarget, call);
      expect(answer.code).toBe(status.INVALID_ARGUMENT);
      expect(answer.details).not.toBe('');
    }
    // A call ended without a whole message is how a Node client's cancel arrives: not counted.
    expect(await metricValue(telemetry, 'sluice_receiver_refused_requests_total', { transport: 'grpc', reason: 'malformed' })).toBe(1);
    expect(consumer.calls).toBe(0);
    expect(await exportFramed(grpcTarget, frame(body))).toEqual({ code: status.OK, details: 'OK' });
  });

  it('does not count a call its client cancels while the request message is still arriving as a refusal', async () => {
    const { grpcTarget, consumer, telemetry } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    const body = protoBody();
    const session = connect(`http://${grpcTarget}`);
    // As grpc-js cancels: part of the message, then the stream closed with CANCEL.
    for (const sent of [frame(body).subarray(0, 20), Buffer.alloc(0)]) {
      const stream = session.request({ ':method': 'POST', ':path': EXPORT_PATH, 'content-type': 'application/grpc', te: 'trailers' });
      stream.on('error', () => {});
      stream.resume();
      await new Promise<void>((resolve) => stream.write(sent, () => resolve()));
      const closed = new Promise((resolve) => stream.on('close', resolve));
      stream.close(constants.NGHTTP2_CANCEL);
      await closed;
    }
    session.close();
    // A whole call after them is answered: the cancels were read.
    expect(await exportFramed(grpcTarget, frame(body))).toEqual({ code: status.OK, details: 'OK' });
    for (const reason of ['malformed', 'too_large', 'error']) {
      expect(await metricValue(telemetry, 'sluice_receiver_refused_requests_total', { transport: 'grpc', reason })).toBe(0);
    }
    expect(consumer.calls).toBe(1);
  });

  it('answers RESOURCE_EXHAUSTED with RetryInfo when the pipeline pushes back', async () => {
    const { grpcTarget, consumer, telemetry } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    consumer.behaviour = () => {
      throw new ResourceExhaustedError('queue drains/acme is full', { retryAfterMs: 1500 });
    };
    const answer = await exportRaw(grpcTarget, protoBody());
    if (!isServiceError(answer)) throw new Error('expected an error');
    expect(answer.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(answer.details).toBe('queue drains/acme is full');
    const details = answer.metadata.get('grpc-status-details-bin')[0];
    expect(Buffer.isBuffer(details)).toBe(true);
    expect(decodeStatus(details as Buffer)).toEqual({ code: status.RESOURCE_EXHAUSTED, message: 'queue drains/acme is full', retryDelayMs: 1500 });
    expect(await metricValue(telemetry, 'sluice_receiver_refused_spans_total', { transport: 'grpc', reason: 'backpressure' })).toBe(2);
  });

  it('answers UNAVAILABLE when the pipeline fails with a retryable error', async () => {
    const { grpcTarget, consumer } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    consumer.behaviour = () => {
      throw new Error('disk unavailable');
    };
    const answer = await exportRaw(grpcTarget, protoBody());
    expect(isServiceError(answer) && answer.code).toBe(status.UNAVAILABLE);
    expect(isServiceError(answer) && answer.details).toBe('disk unavailable');
  });

  it('refuses a message over max_recv_msg_size with RESOURCE_EXHAUSTED', async () => {
    const { grpcTarget, consumer } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', max_recv_msg_size: '1KiB' } });
    const answer = await exportRaw(grpcTarget, Buffer.alloc(4096));
    expect(isServiceError(answer) && answer.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(consumer.calls).toBe(0);
  });

  it('counts the refusals grpc-js answers itself as the HTTP receiver counts them, and keeps serving', async () => {
    const { grpcTarget, consumer, telemetry } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', max_recv_msg_size: '1KiB' } });
    const refused = (reason: string) => metricValue(telemetry, 'sluice_receiver_refused_requests_total', { transport: 'grpc', reason });
    // Over the limit as sent, and only once decompressed: HTTP's 413, too_large.
    expect(await exportFramed(grpcTarget, frame(Buffer.alloc(4096)))).toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    const bomb = gzipSync(Buffer.alloc(64 * 1024));
    expect(await exportFramed(grpcTarget, compressedFrame(bomb), { 'grpc-encoding': 'gzip' })).toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    expect(await refused('too_large')).toBe(2);
    // A body that does not decompress: HTTP's 400 for a bad gzip body, malformed.
    expect(await exportFramed(grpcTarget, compressedFrame(Buffer.from('not gzip')), { 'grpc-encoding': 'gzip' })).toMatchObject({ code: status.INTERNAL });
    expect(await refused('malformed')).toBe(1);
    // An unknown encoding is HTTP's uncounted 415.
    expect(await exportFramed(grpcTarget, compressedFrame(Buffer.from('x')), { 'grpc-encoding': 'br' })).toMatchObject({ code: status.UNIMPLEMENTED });
    // A call its client cancels while the pipeline holds it ends unanswered: no refusal either.
    let release = () => {};
    consumer.behaviour = (_batch, call) => (call === 1 ? new Promise<void>((resolve) => (release = resolve)) : undefined);
    const client = grpcClient(grpcTarget);
    const cancelled = client.makeUnaryRequest(EXPORT_PATH, (b: Buffer) => b, (b: Buffer) => b, Buffer.from(protoBody()), () => {});
    await waitUntil(() => consumer.calls === 1, 5_000, 'the call in the pipeline');
    cancelled.cancel();
    // A call after it on the same connection is answered once the cancel was read.
    expect(isServiceError(await exportBytes(client, Buffer.from(protoBody())))).toBe(false);
    release();
    await waitUntil(() => consumer.batches.length === 2, 5_000, 'the cancelled call let through');
    expect(await refused('too_large')).toBe(2);
    expect(await refused('malformed')).toBe(1);
    expect(await refused('error')).toBe(0);
    expect(consumer.calls).toBe(2);
  });

  it('answers UNAUTHENTICATED, counted as such, to a call without a known key whatever it sends, and serves one with a key', async () => {
    const { grpcTarget, consumer, telemetry } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } }, { auth: { api_keys: ['k1'] } });
    const body = protoBody();
    const calls: Array<[Buffer, Record<string, string>]> = [
      [frame(body), {}],
      [frame(body), { authorization: 'Bearer wrong' }],
      [Buffer.alloc(0), {}], // no message at all
      [Buffer.concat([frame(body), frame(body)]), {}], // two messages
      [frame(Buffer.from('not protobuf')), {}],
    ];
    for (const [call, headers] of calls) {
      expect(await exportFramed(grpcTarget, call, headers)).toEqual({ code: status.UNAUTHENTICATED, details: expect.stringContaining('API key') });
    }
    expect(await metricValue(telemetry, 'sluice_receiver_refused_requests_total', { transport: 'grpc', reason: 'unauthenticated' })).toBe(calls.length);
    expect(await metricValue(telemetry, 'sluice_receiver_refused_requests_total', { transport: 'grpc', reason: 'malformed' })).toBe(0);
    expect(consumer.calls).toBe(0);
    const metadata = new Metadata();
    metadata.set('authorization', 'Bearer k1');
    expect(isServiceError(await exportBytes(grpcClient(grpcTarget), Buffer.from(body), metadata))).toBe(false);
    expect(consumer.calls).toBe(1);
  });

  it('counts accepted spans for the grpc transport', async () => {
    const { grpcTarget, telemetry } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    await exportRaw(grpcTarget, protoBody());
    expect(await metricValue(telemetry, 'sluice_receiver_accepted_spans_total', { receiver: 'otlp', transport: 'grpc' })).toBe(2);
  });
});
