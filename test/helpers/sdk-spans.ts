// Spans made by the OpenTelemetry JS SDK itself, with every attribute value
// type, events, links and status, for codec and end-to-end tests.
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export function makeSdkSpans(resourceAttributes: Record<string, string> = { 'service.name': 'checkout' }): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resourceAttributes),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('test-scope', '1.2.3');
  const root = tracer.startSpan('GET /api/cart', {
    kind: SpanKind.SERVER,
    attributes: {
      'url.path': '/api/cart',
      'http.response.status_code': 200,
      'sample.double': 3.25,
      'sample.bool': true,
      'sample.strings': ['a', 'b'],
      'sample.ints': [1, 2, 3],
      'sample.big': 9007199254740991,
    },
  });
  const child = tracer.startSpan('SELECT cart', { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgresql' } }, trace.setSpan(context.active(), root));
  child.addEvent('rows', { count: 3 });
  child.addLink({ context: root.spanContext(), attributes: { 'link.kind': 'parent' } });
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'timeout' });
  child.end();
  root.setStatus({ code: SpanStatusCode.OK });
  root.end();
  return exporter.getFinishedSpans();
}
