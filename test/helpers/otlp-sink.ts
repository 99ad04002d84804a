// An OTLP/HTTP destination for tests: HTTPS (with the test CA) or plain
// HTTP, records every request with its headers and raw body, decodes it,
// and answers what the test tells it to.
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { parseJsonRequest } from '../../src/otlp/json-codec.js';
import type { ExportTraceServiceRequest, Span } from '../../src/otlp/model.js';
import { decodeRequest } from '../../src/otlp/proto-codec.js';
import { testTls } from './tls.js';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  /** The exact bytes on the wire (compressed when gzip). */
  raw: Buffer;
  request: ExportTraceServiceRequest;
}

export type Responder = (req: ReceivedRequest, index: number) => { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface OtlpSink {
  url: string;
  received: ReceivedRequest[];
  respond: Responder;
  spans(): Array<{ span: Span; resource: Record<string, unknown> }>;
  waitForSpans(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpSink(options: { tls?: boolean } = {}): Promise<OtlpSink> {
  const hanging: ServerResponse[] = [];
  const sink: OtlpSink = {
    url: '',
    received: [],
    respond: () => ({ status: 200 }),
    spans() {
      return sink.received.flatMap((r) =>
        r.request.resourceSpans.flatMap((rs) => {
          const resource = Object.fromEntries((rs.resource?.attributes ?? []).map((kv) => [kv.key, kv.value?.stringValue ?? kv.value]));
          return rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ span, resource })));
        }),
      );
    },
    async waitForSpans(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (sink.spans().length < count) {
        if (Date.now() > deadline) throw new Error(`sink received ${sink.spans().length} spans, expected ${count}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: async () => {},
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      const request = req.headers['content-type'] === 'application/json' ? parseJsonRequest(body) : decodeRequest(body);
      const received = { headers: req.headers, raw, request };
      const answer = sink.respond(received, sink.received.length);
      if (answer === 'hang') {
        hanging.push(res);
        return;
      }
      if (answer.status >= 200 && answer.status < 300) sink.received.push(received);
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  }

  const tls = options.tls ?? true;
  const server = tls ? createHttpsServer({ cert: testTls().cert, key: testTls().key }, handle) : createHttpServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  sink.url = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  sink.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return sink;
}
