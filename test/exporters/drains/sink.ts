// The drains tests' view of the shared HTTPS OTLP sink (test/helpers/otlp-sink.ts):
// a status to answer with, and span/trace ids and signatures of what arrived.
import { createHmac } from 'node:crypto';
import { waitUntil } from '../../helpers/daemon.js';
import { startOtlpSink, type ReceivedRequest } from '../../helpers/otlp-sink.js';

export type SinkRequest = ReceivedRequest;

export interface Sink {
  readonly url: string;
  readonly requests: SinkRequest[];
  /** Answers with this status while set (default 200); 'hang' never answers. */
  behaviour: number | 'hang';
  /** The JSON body of each answer (default an empty ExportTraceServiceResponse). */
  body: string;
  spanIds(): string[];
  traceIds(): Set<string>;
  signatureValid(request: SinkRequest, secret: string): boolean;
  close(): Promise<void>;
}

export async function startSink(): Promise<Sink> {
  const otlp = await startOtlpSink();
  const spans = () => otlp.spans().map((s) => s.span);
  const sink: Sink = {
    url: otlp.url,
    requests: otlp.received,
    behaviour: 200,
    body: '{}',
    spanIds: () => spans().map((s) => s.spanId),
    traceIds: () => new Set(spans().map((s) => s.traceId)),
    signatureValid: (request, secret) => request.headers['x-sluice-signature'] === createHmac('sha256', secret).update(request.raw).digest('hex'),
    close: () => otlp.close(),
  };
  otlp.respond = () => (sink.behaviour === 'hang' ? 'hang' : { status: sink.behaviour, headers: { 'content-type': 'application/json' }, body: sink.body });
  return sink;
}

export function waitFor(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  return waitUntil(check, timeoutMs, what);
}
