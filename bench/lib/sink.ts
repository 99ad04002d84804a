// An OTLP/HTTP destination that counts what arrives and answers 200.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Sink {
  url: string;
  requests: number;
  bytes: number;
  close(): Promise<void>;
}

export async function startSink(): Promise<Sink> {
  const sink = { url: '', requests: 0, bytes: 0, close: async () => {} };
  const server: Server = createServer(function receive(req, res) {
    req.on('data', (chunk: Buffer) => {
      sink.bytes += chunk.length;
    });
    req.on('end', () => {
      sink.requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  sink.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return sink;
}
