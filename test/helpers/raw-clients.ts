// Clients that misbehave on purpose, with real sockets: half-sent headers,
// half-sent bodies, idle keep-alives, gRPC calls that never half-close.
import { connect as connectHttp2, type ClientHttp2Session } from 'node:http2';
import { connect, type Socket } from 'node:net';

export interface RawClient {
  readonly socket: Socket;
  /** Everything the server sent. */
  received(): string;
  /** Resolves when the server (or anyone) closed the connection. */
  readonly closed: Promise<void>;
}

export async function rawClient(port: number, first?: string): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  if (first !== undefined) socket.write(first);
  return { socket, received: () => Buffer.concat(chunks).toString('utf8'), closed };
}

/** Request headers cut in the middle of a header line. */
export function halfHeaders(port: number): Promise<RawClient> {
  return rawClient(port, 'POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty');
}

/** Complete headers announcing 1000 bytes, then 10 of them. */
export function halfBody(port: number, path = '/v1/traces', headers: Record<string, string> = {}): Promise<RawClient> {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return rawClient(port, `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n${extra}\r\n{"resource`);
}

/** One complete request answered, then the connection kept open and silent. */
export async function idleKeepAlive(port: number, path: string, headers: Record<string, string> = {}): Promise<RawClient> {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const client = await rawClient(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`);
  const deadline = Date.now() + 5_000;
  while (!client.received().includes('\r\n\r\n')) {
    if (Date.now() > deadline) throw new Error('no answer to the keep-alive request');
    await new Promise((r) => setTimeout(r, 20));
  }
  return client;
}

export interface OpenGrpcCall {
  readonly session: ClientHttp2Session;
  readonly closed: Promise<void>;
}

/** A unary gRPC call whose message is half sent and whose stream is never half-closed. */
export async function openGrpcCall(port: number, path: string): Promise<OpenGrpcCall> {
  const session = connectHttp2(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('error', () => {});
  // gRPC framing: uncompressed, a 100-byte message announced, 3 bytes sent.
  stream.write(Buffer.from([0, 0, 0, 0, 100, 10, 1, 2]));
  return { session, closed };
}
