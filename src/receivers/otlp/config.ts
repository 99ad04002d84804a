// receivers.otlp config. Collector semantics for protocols: a protocol runs
// only when its key is present, and `http: {}` or a bare `http:` enables it
// with its defaults. At least one protocol is required.
import { z } from 'zod';
import { keyText } from '../../config/key-text.js';
import { byteSize, positiveByteSize } from '../../shared/units.js';
import { checkHttpTimeouts, corsSchema, grpcListenerShape, httpListenerShape, resolveGrpcLimits } from '../../core/listener/config.js';
import { endpointSchema } from '../../core/listener/endpoint.js';
import { isPlainObject } from '../../shared/plain-object.js';

export const HTTP_DEFAULTS = { endpoint: '127.0.0.1:4318', max_request_body_size: '64MiB' } as const;
// The same bound as HTTP (grpc's own default is 4MiB): a batch accepted on
// one transport is accepted on the other.
export const GRPC_DEFAULTS = { endpoint: '127.0.0.1:4317', max_recv_msg_size: '64MiB' } as const;

export function createDefaultConfig(): { protocols: Record<string, unknown> } {
  // Protocol defaults are filled per listed protocol (see withProtocolDefaults):
  // listing both here would start both whatever the user wrote.
  return { protocols: {} };
}

const httpSchema = z
  .strictObject({
    endpoint: endpointSchema(),
    max_request_body_size: positiveByteSize(),
    ...httpListenerShape,
    cors: corsSchema.optional(),
  })
  .superRefine(checkHttpTimeouts);

const grpcSchema = z
  .strictObject({
    endpoint: endpointSchema(),
    max_recv_msg_size: byteSize().refine((n) => n > 0 && n <= 2 ** 31 - 1, 'must be greater than 0 and below 2GiB'),
    ...grpcListenerShape,
  })
  .transform(resolveGrpcLimits);

/** Every OTLP request must carry `Authorization: Bearer <one of these>` (HTTP header or gRPC metadata). */
const authSchema = z.strictObject({
  api_keys: z.array(keyText({ min: 1 })).min(1, 'must list at least one key'),
});

function withProtocolDefaults(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = { ...value };
  const defaults: Readonly<Record<string, object>> = { http: HTTP_DEFAULTS, grpc: GRPC_DEFAULTS };
  for (const [name, protocolDefaults] of Object.entries(defaults)) {
    // The config merge leaves `http:` (YAML null) as a present key holding undefined.
    if (!Object.hasOwn(value, name)) continue;
    const given = value[name];
    if (given === null || given === undefined) out[name] = { ...protocolDefaults };
    else if (isPlainObject(given)) out[name] = { ...protocolDefaults, ...given };
  }
  return out;
}

const protocolsSchema = z.preprocess(
  withProtocolDefaults,
  z
    .strictObject({ http: httpSchema.optional(), grpc: grpcSchema.optional() })
    .refine((p) => p.http !== undefined || p.grpc !== undefined, 'must enable at least one of http, grpc'),
);

export const configSchema = z.strictObject({ protocols: protocolsSchema, auth: authSchema.optional() });

export type OtlpReceiverConfig = z.output<typeof configSchema>;
export type HttpProtocolConfig = z.output<typeof httpSchema>;
export type GrpcProtocolConfig = z.output<typeof grpcSchema>;
