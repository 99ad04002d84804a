// The otlp receiver: one HTTP and/or one gRPC server feeding one consumer.
import type { Logger } from 'pino';
import type { CreateSettings, Host, Receiver, TracesConsumer } from '../../core/component.js';
import { BearerKeys } from '../../core/listener/bearer.js';
import { BOUND_PORTS, hostService, LISTENER_GROUP } from '../../core/host-services.js';
import type { OtlpReceiverConfig } from './config.js';
import type { Endpoint } from '../../core/listener/endpoint.js';
import type { GrpcReceiverOptions, OtlpGrpcServer } from './grpc-server.js';
import { OtlpHttpServer } from './http-server.js';
import { transportMetrics } from './metrics.js';

export interface OtlpAddresses {
  readonly http?: Endpoint;
  readonly grpc?: Endpoint;
}

export class OtlpReceiver implements Receiver {
  readonly #logger: Logger;
  readonly #http: OtlpHttpServer | undefined;
  readonly #grpcOptions: GrpcReceiverOptions | undefined;
  #grpc: OtlpGrpcServer | undefined;
  #started: Promise<void> | undefined;
  #shutdown: Promise<void> | undefined;

  constructor(settings: CreateSettings, config: OtlpReceiverConfig, next: TracesConsumer) {
    this.#logger = settings.logger.child({ receiver: settings.id });
    const { http, grpc } = config.protocols;
    const keys = config.auth === undefined ? undefined : new BearerKeys(config.auth.api_keys);
    if (http !== undefined) {
      this.#http = new OtlpHttpServer({
        id: settings.id,
        config: http,
        next,
        logger: this.#logger.child({ protocol: 'http' }),
        metrics: transportMetrics(settings.telemetry, settings.id, 'http'),
        telemetry: settings.telemetry,
        keys,
      });
    }
    if (grpc !== undefined) {
      this.#grpcOptions = {
        id: settings.id,
        config: grpc,
        next,
        logger: this.#logger.child({ protocol: 'grpc' }),
        metrics: transportMetrics(settings.telemetry, settings.id, 'grpc'),
        telemetry: settings.telemetry,
        keys,
      };
    }
  }

  /** The bound host and port of each started protocol (port 0 resolved). */
  addresses(): OtlpAddresses {
    const http = this.#http?.address;
    const grpc = this.#grpc?.address;
    return { ...(http === undefined ? {} : { http }), ...(grpc === undefined ? {} : { grpc }) };
  }

  start(host?: Host): Promise<void> {
    this.#started ??= this.#listen(host);
    return this.#started;
  }

  async #listen(host: Host | undefined): Promise<void> {
    if (this.#grpcOptions !== undefined) {
      // grpc-js costs about 5 MiB of memory: loaded only when protocols.grpc is configured.
      const { OtlpGrpcServer } = await import('./grpc-server.js');
      this.#grpc = new OtlpGrpcServer(this.#grpcOptions);
    }
    const servers = [this.#http, this.#grpc].filter((server) => server !== undefined);
    const group = host === undefined ? undefined : hostService(host, LISTENER_GROUP);
    for (const server of servers) group?.add(server.listener);
    const ports = host === undefined ? undefined : hostService(host, BOUND_PORTS);
    const results = await Promise.allSettled(servers.map((server) => server.listen(ports)));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed !== undefined) {
      // Half a receiver is worse than none: the port that did bind is released at once. The
      // connections it took (on a reload, those that waited at the port) are the shutdown's to
      // close, within service.shutdown_grace: a request on one could hold the start for ever.
      for (const server of servers) server.listener.stopAccepting();
      throw failed.reason;
    }
    for (const [protocol, server] of [['http', this.#http], ['grpc', this.#grpc]] as const) {
      const address = server?.address;
      if (address !== undefined) this.#logger.info({ protocol, host: address.host, port: address.port }, 'listening');
    }
  }

  shutdown(): Promise<void> {
    this.#shutdown ??= this.#close();
    return this.#shutdown;
  }

  async #close(): Promise<void> {
    // Let a start in progress finish binding, so its sockets are closed too.
    await this.#started?.catch(function ignore() {});
    await Promise.all([this.#http?.close(), this.#grpc?.close()]);
  }
}
