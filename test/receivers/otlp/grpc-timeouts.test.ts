// The listener timeouts every listener takes, on OTLP/gRPC: read_header_timeout
// bounds a connection's start (HTTP/2's preface), read_timeout each call's
// request, and idle_timeout is max_connection_idle by its HTTP name. Clients
// are a raw HTTP/2 session (to stall a call mid-message), a raw TCP socket
// and @grpc/grpc-js.
import { connect as connectHttp2, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { connect } from 'node:net';
import { connectivityState, status } from '@grpc/grpc-js';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, describe, expect, it } from 'vitest';
import { EXPORT_PATH } from '../../../src/receivers/otlp/grpc-server.js';
import { waitUntil } from '../../helpers/daemon.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { exportBytes, grpcClient, metricValue, startReceiver, stopAll, type Harness } from './harness.js';

afterEach(stopAll);

const BODY = Buffer.from(ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!);

function openConnections(harness: Harness): Promise<number> {
  return metricValue(harness.telemetry, 'sluice_listener_connections', { listener: 'otlp/grpc' });
}

/** gRPC's length-prefixed message frame: not compressed, then the length. */
function framePrefix(length: number): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(length, 1);
  return prefix;
}

/**
 * Opens an Export call that sends its headers and `sent` bytes of the
 * message, then stalls without ending its side; resolves with the answer's
 * headers and trailers once the server has closed the stream.
 */
function stalledCall(session: ClientHttp2Session, sent: Buffer, headers: Record<string, string> = {}): Promise<IncomingHttpHeaders> {
  const stream = session.request({ ':method': 'POST', ':path': EXPORT_PATH, 'content-type': 'application/grpc', te: 'trailers', ...headers });
  stream.on('error', () => {});
  stream.resume();
  stream.write(sent);
  return new Promise((resolve) => {
    let answer: IncomingHttpHeaders = {};
    stream.on('response', (headers) => {
      answer = { ...answer, ...headers };
    });
    stream.on('trailers', (trailers) => {
      answer = { ...answer, ...trailers };
    });
    stream.on('close', () => resolve(answer));
  });
}

/** A whole call of BODY; resolves to the call's trailers. */
function wholeCall(session: ClientHttp2Session, headers: Record<string, string> = {}): Promise<IncomingHttpHeaders> {
  const stream = session.request({ ':method': 'POST', ':path': EXPORT_PATH, 'content-type': 'application/grpc', te: 'trailers', ...headers });
  const trailers = new Promise<IncomingHttpHeaders>((resolve) => stream.on('trailers', resolve));
  stream.resume();
  stream.end(Buffer.concat([framePrefix(BODY.length), BODY]));
  return trailers;
}

describe('OTLP/gRPC listener timeouts', () => {
  it('answers DEADLINE_EXCEEDED to a call whose message has not arrived whole by read_timeout; the connection serves the next call', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', read_timeout: '300ms' } });
    const session = connectHttp2(`http://${harness.grpcTarget}`);
    session.on('error', () => {});
    // Half of the message, then nothing.
    const answer = await stalledCall(session, Buffer.concat([framePrefix(BODY.length), BODY.subarray(0, BODY.length >> 1)]));
    expect(answer['grpc-status']).toBe(String(status.DEADLINE_EXCEEDED));
    expect(decodeURIComponent(String(answer['grpc-message']))).toBe('the request was not received whole within read_timeout (300 ms)');
    expect(harness.consumer.batches).toHaveLength(0);

    // The same connection still serves a whole call.
    expect((await wholeCall(session))['grpc-status']).toBe(String(status.OK));
    expect(harness.consumer.batches).toHaveLength(1);
    session.close();
  });

  it('resets a timed-out call\'s stream, so a client that never ends it does not keep its connection from going idle', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', read_timeout: '200ms', idle_timeout: '300ms' } });
    const session = connectHttp2(`http://${harness.grpcTarget}`);
    session.on('error', () => {});
    const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    const answer = await stalledCall(session, framePrefix(BODY.length));
    expect(answer['grpc-status']).toBe(String(status.DEADLINE_EXCEEDED));
    // The client still holds its side of the stream open; the server's idle limit ends the connection.
    await closed;
    await waitUntil(async () => (await openConnections(harness)) === 0, 3_000, 'the slot to be free');
  });

  it('resets the stream of a call refused before its client is done (no key, over the size limit), so the client cannot hold it', async () => {
    const harness = await startReceiver(
      { grpc: { endpoint: '127.0.0.1:0', max_recv_msg_size: '1KiB', max_concurrent_streams: 1 } },
      { auth: { api_keys: ['k1'] } },
    );
    const session = connectHttp2(`http://${harness.grpcTarget}`);
    session.on('error', () => {});
    const key = { authorization: 'Bearer k1' };
    // Each call resolves once the server closes its stream: the client never ends its side.
    expect((await stalledCall(session, framePrefix(BODY.length)))['grpc-status']).toBe(String(status.UNAUTHENTICATED));
    expect((await stalledCall(session, framePrefix(4096), key))['grpc-status']).toBe(String(status.RESOURCE_EXHAUSTED));
    // The one stream the connection may have open is free for a whole call.
    expect((await wholeCall(session, key))['grpc-status']).toBe(String(status.OK));
    expect(harness.consumer.batches).toHaveLength(1);
    session.close();
  });

  it('serves a call whose message arrives in pieces within read_timeout', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', read_timeout: '2s' } });
    const session = connectHttp2(`http://${harness.grpcTarget}`);
    session.on('error', () => {});
    const stream = session.request({ ':method': 'POST', ':path': EXPORT_PATH, 'content-type': 'application/grpc', te: 'trailers' });
    const served = new Promise<IncomingHttpHeaders>((resolve) => stream.on('trailers', resolve));
    stream.resume();
    stream.write(Buffer.concat([framePrefix(BODY.length), BODY.subarray(0, 10)]));
    await new Promise((resolve) => setTimeout(resolve, 300));
    stream.end(BODY.subarray(10));
    expect((await served)['grpc-status']).toBe(String(status.OK));
    expect(harness.consumer.batches).toHaveLength(1);
    session.close();
  });

  it('closes a connection that has not sent HTTP/2\'s preface by read_header_timeout', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', read_header_timeout: '200ms' } });
    const [host, port] = harness.grpcTarget.split(':');
    const socket = connect({ host, port: Number(port) });
    socket.on('error', () => {});
    socket.resume();
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('PRI * HTTP/2.0');
    // Well inside the 10 s the listener waits by default.
    await waitUntil(() => socket.destroyed, 5_000, 'the connection to close');
    await waitUntil(async () => (await openConnections(harness)) === 0, 2_000, 'the slot to be free');
    // A real client is served.
    expect(Buffer.isBuffer(await exportBytes(grpcClient(harness.grpcTarget), BODY))).toBe(true);
  });

  it('closes a connection idle for idle_timeout with GOAWAY, as max_connection_idle does; the client reconnects', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', idle_timeout: '300ms' } });
    const client = grpcClient(harness.grpcTarget);
    expect(Buffer.isBuffer(await exportBytes(client, BODY))).toBe(true);
    expect(await openConnections(harness)).toBe(1);
    await waitUntil(async () => (await openConnections(harness)) === 0, 3_000, 'the idle connection to close');
    await waitUntil(() => client.getChannel().getConnectivityState(false) === connectivityState.IDLE, 3_000, 'the channel to go idle');
    expect(Buffer.isBuffer(await exportBytes(client, BODY))).toBe(true);
    expect(harness.consumer.batches).toHaveLength(2);
  });
});
