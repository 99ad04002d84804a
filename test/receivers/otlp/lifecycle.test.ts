import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { otlpReceiverFactory } from '../../../src/receivers/otlp/factory.js';
import { EXPORT_PATH } from '../../../src/receivers/otlp/grpc-server.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { FakeConsumer, parseConfig, startReceiver, stopAll } from './harness.js';

const blockers: Server[] = [];

afterEach(async () => {
  await stopAll();
  await Promise.all(blockers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function createReceiver(protocols: Record<string, unknown>) {
  return otlpReceiverFactory.create(
    { id: 'otlp', logger: pino({ level: 'silent' }), telemetry: new Telemetry({ defaultMetrics: false }), storageDirectory: '/nonexistent', version: '0.0.0-test' },
    parseConfig({ protocols }),
    new FakeConsumer(),
  );
}

/** A deferred the fake consumer waits on, so a request stays in flight. */
function gate(): { open: () => void; wait: Promise<void> } {
  let open = (): void => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, wait };
}

function postProto(url: string): Promise<number> {
  const body = Buffer.from(ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('otlp receiver lifecycle', () => {
  it('exposes the ports it bound when configured with port 0', async () => {
    const { receiver } = await startReceiver();
    const { http, grpc } = receiver.addresses();
    expect(http?.port).toBeGreaterThan(0);
    expect(grpc?.port).toBeGreaterThan(0);
    expect(http?.port).not.toBe(grpc?.port);
  });

  it('starts only the protocols that are listed', async () => {
    const { receiver } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    expect(receiver.addresses().http).toBeUndefined();
    expect(receiver.addresses().grpc).toBeDefined();
  });

  it('reports a port in use with the endpoint key, the address and what the error means', async () => {
    const blocker = createServer();
    blockers.push(blocker);
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    const receiver = createReceiver({ http: { endpoint: `127.0.0.1:${port}` } });
    await expect(receiver.start()).rejects.toThrow(`receivers.otlp.protocols.http.endpoint: cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE)`);
    await receiver.shutdown();
  });

  it('reports a gRPC port in use the same way and releases the HTTP port it bound', async () => {
    const blocker = createServer();
    blockers.push(blocker);
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    const receiver = createReceiver({ http: { endpoint: '127.0.0.1:0' }, grpc: { endpoint: `127.0.0.1:${port}` } });
    await expect(receiver.start()).rejects.toThrow(`receivers.otlp.protocols.grpc.endpoint: cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE)`);
    const httpPort = receiver.addresses().http?.port ?? 0;
    const reuse = createServer();
    blockers.push(reuse);
    await new Promise<void>((resolve, reject) => {
      reuse.once('error', reject);
      reuse.listen(httpPort, '127.0.0.1', resolve);
    });
    await receiver.shutdown();
  });

  it('shuts down safely before start, and more than once', async () => {
    const receiver = createReceiver({ http: { endpoint: '127.0.0.1:0' }, grpc: { endpoint: '127.0.0.1:0' } });
    await receiver.shutdown();
    await receiver.shutdown();
  });

  it('answers an in-flight HTTP request during shutdown, then stops accepting', async () => {
    const { receiver, consumer, tracesUrl } = await startReceiver({ http: { endpoint: '127.0.0.1:0' } });
    const held = gate();
    let arrived = (): void => {};
    const inPipeline = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    consumer.behaviour = async () => {
      arrived();
      await held.wait;
    };
    const answer = postProto(tracesUrl);
    await inPipeline;
    const stopped = receiver.shutdown();
    held.open();
    expect(await answer).toBe(200);
    await stopped;
    await expect(postProto(tracesUrl)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('answers an in-flight gRPC call during shutdown', async () => {
    const { receiver, consumer, grpcTarget } = await startReceiver({ grpc: { endpoint: '127.0.0.1:0' } });
    const held = gate();
    let arrived = (): void => {};
    const inPipeline = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    consumer.behaviour = async () => {
      arrived();
      await held.wait;
    };
    const client = new Client(grpcTarget, credentials.createInsecure());
    try {
      const body = Buffer.from(ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!);
      const answer = new Promise<ServiceError | null>((resolve) => {
        client.makeUnaryRequest(EXPORT_PATH, (b: Buffer) => b, (b: Buffer) => b, body, new Metadata(), {}, (err) => resolve(err));
      });
      await inPipeline;
      const stopped = receiver.shutdown();
      held.open();
      expect(await answer).toBeNull();
      await stopped;
    } finally {
      client.close();
    }
  });
});
