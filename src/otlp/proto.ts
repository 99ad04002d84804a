// Loads the OTLP .proto files in proto/ (written from the OTLP spec) once.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const SERVICE_PROTO = 'opentelemetry/proto/collector/trace/v1/trace_service.proto';

/** proto/ sits at the package root, above src/otlp and above dist/src/otlp alike. */
export function protoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'proto');
    if (existsSync(join(candidate, SERVICE_PROTO))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find proto/${SERVICE_PROTO} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export const SERVICE_PROTO_FILE = SERVICE_PROTO;

function load(): protobuf.Root {
  const root = new protobuf.Root();
  const base = protoRoot();
  root.resolvePath = (_origin, target) => join(base, target);
  root.loadSync(SERVICE_PROTO, { keepCase: false });
  root.resolveAll();
  return root;
}

const root = load();

export const ProtoTypes = {
  ExportTraceServiceRequest: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
  ExportTraceServiceResponse: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
  Resource: root.lookupType('opentelemetry.proto.resource.v1.Resource'),
  Span: root.lookupType('opentelemetry.proto.trace.v1.Span'),
  ScopeSpans: root.lookupType('opentelemetry.proto.trace.v1.ScopeSpans'),
  KeyValue: root.lookupType('opentelemetry.proto.common.v1.KeyValue'),
};
