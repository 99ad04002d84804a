// OTLP/gRPC: opentelemetry.proto.collector.trace.v1.TraceService/Export.
// The method is registered with identity (de)serializers so the request
// bytes reach decodeBody undecoded; grpc-js itself handles
// `grpc-encoding: gzip` and enforces the message size limit, answering what
// fails there before any interceptor or handler sees the call (counted by
// callEndInterceptor, from the status it wrote). Connections come
// from the shared socket listener (TLS, max_connections, counting, forced
// close) and are injected into grpc-js, which speaks HTTP/2 over them.
import {
  type ConnectionInjector,
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
import type { PortKeeper } from '../../core/listener/bound-ports.js';
import type { BearerKeys } from '../../core/listener/bearer.js';
import { SocketListener } from '../../core/listener/socket-listener.js';
import { leftOutField, LogThrottle } from '../../shared/log-throttle.js';
import type { Telemetry } from '../../shared/telemetry.js';
import type { TraceBatch } from '../../otlp/batch.js';
import { decodeBody } from './body-decode.js';
import { encodeResponse } from '../../otlp/proto-codec.js';
import type { GrpcProtocolConfig } from './config.js';
import { formatEndpoint, type Endpoint } from '../../core/listener/endpoint.js';
import { authInterceptor } from './grpc-auth.js';
import { callEndInterceptor } from './grpc-call-end.js';
import { oneMessageInterceptor } from './grpc-one-message.js';
import { readTimeoutInterceptor } from './grpc-read-timeout.js';
import { listenError } from '../../core/listener/listen-error.js';
import type { TransportMetrics } from './metrics.js';
import { classify } from './outcome.js';
import { encodeStatus } from '../../otlp/rpc-status.js';

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
  readonly telemetry: Telemetry;
  /** receivers.otlp.auth (checked by authInterceptor): undefined when calls need no key. */
  readonly keys: BearerKeys | undefined;
}

/** `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`: a plaintext client that has not sent it by read_header_timeout is closed. */
const HTTP2_PREFACE_BYTES = 24;

export class OtlpGrpcServer {
  readonly #options: GrpcReceiverOptions;
  readonly #server: Server;
  readonly #injector: ConnectionInjector;
  /** A full disk refuses every request: one line per interval says so. */
  readonly #unavailable = new LogThrottle();
  readonly #listener: SocketListener;
  #closed: Promise<void> | undefined;

  constructor(options: GrpcReceiverOptions) {
    this.#options = options;
    const { config } = options;
    this.#server = new Server({
      'grpc.max_receive_message_length': config.max_recv_msg_size,
      'grpc.max_concurrent_streams': config.max_concurrent_streams,
      ...connectionLimits(config),
      // The last listed is the outermost; what the client sends reaches the innermost first. The
      // call's end is watched innermost: every answer Sluice sends passes through it. Authentication
      // comes after the read timeout, so a call without a key is refused as such, whatever it sends.
      interceptors: [
        callEndInterceptor(function countGrpcJsRefusal(reason) {
          options.metrics.refused(reason, 0);
        }),
        ...(config.read_timeout > 0 ? [readTimeoutInterceptor(config.read_timeout)] : []),
        ...(options.keys === undefined
          ? []
          : [
              authInterceptor(options.keys, function countUnauthenticated() {
                options.metrics.refused('unauthenticated', 0);
              }),
            ]),
        oneMessageInterceptor(function countMalformed() {
          options.metrics.refused('malformed', 0);
        }),
      ],
    });
    this.#server.addService(TRACE_SERVICE, { Export: this.#export.bind(this) });
    // TLS is terminated by the listener: grpc-js sees plaintext HTTP/2.
    const injector = this.#server.createConnectionInjector(ServerCredentials.createInsecure());
    this.#injector = injector;
    this.#listener = new SocketListener({
      name: `${options.id}/grpc`,
      endpoint: config.endpoint,
      tls: config.tls,
      maxConnections: config.max_connections,
      // A TLS handshake or HTTP/2's preface is the connection's header.
      silentTimeoutMs: config.read_header_timeout,
      minFirstBytes: HTTP2_PREFACE_BYTES,
      alpn: ['h2'],
      telemetry: options.telemetry,
      onConnection: function inject(socket) {
        injector.injectConnection(socket);
      },
    });
    const server = this.#server;
    this.#listener.onForceClose(function forceShutdown() {
      server.forceShutdown();
    });
  }

  get address(): Endpoint | undefined {
    return this.#listener.address;
  }

  /** The listener, for the service's shutdown group. */
  get listener(): SocketListener {
    return this.#listener;
  }

  async listen(ports?: PortKeeper): Promise<Endpoint> {
    const { host, port } = this.#options.config.endpoint;
    try {
      return await this.#listener.listen(ports);
    } catch (err) {
      throw listenError(`receivers.${this.#options.id}.protocols.grpc.endpoint`, formatEndpoint(host, port), err);
    }
  }

  /** Stops accepting calls and resolves once in-flight calls are answered (or forced closed). */
  close(): Promise<void> {
    if (this.#closed !== undefined) return this.#closed;
    const server = this.#server;
    const injector = this.#injector;
    const calls = new Promise<void>(function waitForCalls(resolve) {
      server.tryShutdown(function closed() {
        resolve();
      });
    });
    this.#closed = Promise.all([calls, this.#listener.close()]).then(function closeInjector() {
      injector.destroy();
    });
    return this.#closed;
  }

  #export(call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void {
    decodeBody('protobuf', call.request).then(
      (batch) => this.#consume(batch, callback),
      (err: unknown) => this.#refuse(callback, err, 0),
    );
  }

  #consume(batch: TraceBatch, callback: sendUnaryData<Buffer>): void {
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
    if (refusal.reason === 'error') {
      const logger = this.#options.logger;
      this.#unavailable.run(function logRefusal(leftOut) {
        logger.warn({ err, spans, ...leftOutField(leftOut) }, 'refused spans: the pipeline is unavailable');
      });
    }
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

/**
 * grpc-js's options for the connection timers. A limit of 0 (or an absent
 * max_connection_age) is no limit: the option is left out, which grpc-js
 * reads as unlimited; given as 0 it would close every connection at once.
 */
function connectionLimits(config: GrpcProtocolConfig): Record<string, number> {
  const limits: Record<string, number> = {};
  if (config.max_connection_idle > 0) limits['grpc.max_connection_idle_ms'] = config.max_connection_idle;
  if (config.max_connection_age !== undefined && config.max_connection_age > 0) limits['grpc.max_connection_age_ms'] = config.max_connection_age;
  if (config.max_connection_age_grace > 0) limits['grpc.max_connection_age_grace_ms'] = config.max_connection_age_grace;
  return limits;
}
