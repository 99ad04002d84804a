// Loads the OTLP .proto files in proto/ (written from the OTLP spec) once.
import { existsSync, readFileSync } from 'node:fs';
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
  const pending = [SERVICE_PROTO];
  const loaded = new Set<string>();
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (loaded.has(file)) continue;
    loaded.add(file);
    const parsed = protobuf.parse(readFileSync(join(base, file), 'utf8'), root, { keepCase: false });
    pending.push(...(parsed.imports ?? []));
  }
  readStringsLossily(root);
  root.resolveAll();
  return root;
}

/**
 * protobufjs 8 rejects a proto3 string that is not UTF-8, as proto3 asks.
 * Sluice does not check strings (a receiver acknowledges them, README), so
 * every decoder here reads them as the JSON transcoder does: a bad sequence
 * becomes U+FFFD. Set before resolveAll(), which fixes each field's features
 * (so root.loadSync(), which resolves at once, is not used).
 */
function readStringsLossily(namespace: protobuf.NamespaceBase): void {
  for (const nested of namespace.nestedArray) {
    if (nested instanceof protobuf.Type) {
      for (const field of nested.fieldsArray) if (field.type === 'string') field.setOption('features.utf8_validation', 'NONE');
    }
    if (nested instanceof protobuf.Namespace) readStringsLossily(nested);
  }
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
