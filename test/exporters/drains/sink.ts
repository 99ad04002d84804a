// An HTTPS OTLP sink on port 0 that records every request it receives.
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { parseJsonRequest } from '../../../src/otlp/json-codec.js';
import type { ExportTraceServiceRequest } from '../../../src/otlp/model.js';
import { decodeRequest } from '../../../src/otlp/proto-codec.js';
import type { TestTls } from '../../helpers/tls.js';

export interface SinkRequest {
  readonly headers: Record<string, string | string[] | undefined>;
  /** The bytes as sent (compressed when gzip). */
  readonly raw: Buffer;
  readonly request: ExportTraceServiceRequest;
  readonly receivedAt: number;
}

export interface Sink {
  readonly url: string;
  readonly requests: SinkRequest[];
  /** Answers with this status while set (default 200); 'hang' never answers. */
  behaviour: number | 'hang';
  spanIds(): string[];
  traceIds(): Set<string>;
  signatureValid(request: SinkRequest, secret: string): boolean;
  close(): Promise<void>;
}

export async function startSink(pki: TestTls): Promise<Sink> {
  const requests: SinkRequest[] = [];
  const sink: Partial<Sink> & { behaviour: number | 'hang' } = { behaviour: 200 };
  const server: Server = createServer({ key: pki.key, cert: pki.cert }, function handle(req, res) {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (sink.behaviour === 'hang') return;
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      const request = String(req.headers['content-type']).includes('json') ? parseJsonRequest(body) : decodeRequest(body);
      if (sink.behaviour >= 200 && sink.behaviour < 300) requests.push({ headers: req.headers, raw, request, receivedAt: Date.now() });
      res.writeHead(sink.behaviour, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(sink, {
    url: `https://127.0.0.1:${port}/v1/traces`,
    requests,
    spanIds: () => requests.flatMap((r) => r.request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.spanId)))),
    traceIds: () => new Set(requests.flatMap((r) => r.request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.traceId))))),
    signatureValid: (request: SinkRequest, secret: string) => request.headers['x-sluice-signature'] === createHmac('sha256', secret).update(request.raw).digest('hex'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as Sink;
}

export async function waitFor(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
