// OTLP/gRPC: opentelemetry.proto.collector.trace.v1.TraceService/Export.
// The method is registered with identity (de)serializers so the request
// bytes reach TraceBatch.fromProto undecoded; grpc-js itself handles
// `grpc-encoding: gzip` and enforces the message size limit.
import {
  Metadata,
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerErrorResponse,
  type ServerUnaryCall,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { TracesConsumer } from '../../core/component.js';
import { MalformedDataError } from '../../core/errors.js';
import { TraceBatch } from '../../otlp/batch.js';
import { encodeResponse } from '../../otlp/proto-codec.js';
import type { GrpcProtocolConfig } from './config.js';
import { formatEndpoint, type Endpoint } from './endpoint.js';
import { listenError } from './listen-error.js';
import type { TransportMetrics } from './metrics.js';
import { classify } from './outcome.js';
import { encodeStatus } from './rpc-status.js';

export const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

const EMPTY_RESPONSE = Buffer.from(encodeResponse({}));

function identity(bytes: Buffer): Buffer {
  return bytes;
}

const TRACE_SERVICE: ServiceDefinition = {
  Export: {
    path: EXPORT_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

export interface GrpcReceiverOptions {
  readonly id: string;
  readonly config: GrpcProtocolConfig;
  readonly next: TracesConsumer;
  readonly logger: Logger;
  readonly metrics: TransportMetrics;
}

export class OtlpGrpcServer {
  readonly #options: GrpcReceiverOptions;
  readonly #server: Server;
  #address: Endpoint | undefined;
  #closed: Promise<void> | undefined;

  constructor(options: GrpcReceiverOptions) {
    this.#options = options;
    this.#server = new Server({
      'grpc.max_receive_message_length': options.config.max_recv_msg_size,
    });
    this.#server.addService(TRACE_SERVICE, { Export: this.#export.bind(this) });
  }

  get address(): Endpoint | undefined {
    return this.#address;
  }

  listen(): Promise<Endpoint> {
    const { host, port } = this.#options.config.endpoint;
    const target = formatEndpoint(host, port);
    const id = this.#options.id;
    return new Promise<Endpoint>((resolve, reject) => {
      this.#server.bindAsync(target, ServerCredentials.createInsecure(), (err, boundPort) => {
        if (err !== null) {
          reject(listenError(id, target, err));
          return;
        }
        this.#address = { host, port: boundPort };
        resolve(this.#address);
      });
    });
  }

  /** Stops accepting calls and resolves once in-flight calls are answered. */
  close(): Promise<void> {
    if (this.#closed !== undefined) return this.#closed;
    const server = this.#server;
    this.#closed = new Promise<void>(function waitForCalls(resolve) {
      server.tryShutdown(function closed() {
        resolve();
      });
    });
    return this.#closed;
  }

  #export(call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void {
    let batch: TraceBatch;
    try {
      batch = decode(call.request);
    } catch (err) {
      this.#refuse(callback, err, 0);
      return;
    }
    const spans = batch.spanCount;
    if (spans === 0) {
      callback(null, EMPTY_RESPONSE);
      return;
    }
    const options = this.#options;
    options.next.consume(batch).then(
      function accepted() {
        options.metrics.accepted(spans);
        callback(null, EMPTY_RESPONSE);
      },
      (err: unknown) => {
        this.#refuse(callback, err, spans);
      },
    );
  }

  #refuse(callback: sendUnaryData<Buffer>, err: unknown, spans: number): void {
    const refusal = classify(err);
    this.#options.metrics.refused(refusal.reason, spans);
    if (refusal.reason === 'error') this.#options.logger.warn({ err, spans }, 'refused spans: the pipeline is unavailable');
    const metadata = new Metadata();
    if (refusal.retryAfterMs !== undefined) {
      // google.rpc.RetryInfo, which OTLP/gRPC clients honour as the retry delay.
      metadata.set('grpc-status-details-bin', Buffer.from(encodeStatus(refusal.grpcCode, refusal.message, refusal.retryAfterMs)));
    }
    const error: ServerErrorResponse = Object.assign(new Error(refusal.message), {
      code: refusal.grpcCode,
      details: refusal.message,
      metadata,
    });
    callback(error, null);
  }
}

function decode(request: Buffer): TraceBatch {
  try {
    return TraceBatch.fromProto(request);
  } catch (err) {
    if (err instanceof MalformedDataError) throw err;
    throw new MalformedDataError(`malformed protobuf: ${err instanceof Error ? err.message : String(err)}`);
  }
}
