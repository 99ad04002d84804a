// grpc's connection limits on the OTLP/gRPC receiver, as a @grpc/grpc-js
// client meets them: max_concurrent_streams caps the calls in flight on one
// connection (the client queues the rest; none is lost), max_connection_idle
// and max_connection_age end a connection with GOAWAY, and the client
// reconnects for its next call without an error.
import { connectivityState, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../helpers/daemon.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { exportBytes, grpcClient, metricValue, startReceiver, stopAll, type Harness } from './harness.js';

afterEach(stopAll);

const BODY = Buffer.from(ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!);

/** One Export call on `client`; resolves with null on success or the ServiceError. */
async function exportOn(client: Client): Promise<ServiceError | null> {
  const answer = await exportBytes(client, BODY);
  return Buffer.isBuffer(answer) ? null : answer;
}

function openConnections(harness: Harness): Promise<number> {
  return metricValue(harness.telemetry, 'sluice_listener_connections', { listener: 'otlp/grpc' });
}

/** A consumer that holds every batch until the test lets it go, counting the calls in flight. */
function holdCalls(harness: Harness): { readonly inFlight: () => number; readonly maxInFlight: () => number; release(): void; stopHolding(): void } {
  let inFlight = 0;
  let maxInFlight = 0;
  const waiting: Array<() => void> = [];
  harness.consumer.behaviour = async () => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight -= 1;
  };
  return {
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    release() {
      waiting.shift()?.();
    },
    /** Lets every held call go and consumes the next ones at once. */
    stopHolding() {
      harness.consumer.behaviour = undefined;
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('OTLP/gRPC connection limits', () => {
  it('serves no more calls at once on a connection than max_concurrent_streams; the others wait and all are answered', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', max_concurrent_streams: 2 } });
    const held = holdCalls(harness);
    const client = grpcClient(harness.grpcTarget);
    const calls = Array.from({ length: 6 }, () => exportOn(client));
    for (let answered = 0; answered < calls.length; answered += 1) {
      await waitUntil(() => held.inFlight() === Math.min(2, calls.length - answered), 5_000, 'the calls the limit lets in');
      // Time for calls beyond the limit to arrive if it were not enforced.
      await pause(50);
      held.release();
    }
    expect(await Promise.all(calls)).toEqual([null, null, null, null, null, null]);
    expect(held.maxInFlight()).toBe(2);
    expect(harness.consumer.batches).toHaveLength(6);
    expect(await openConnections(harness)).toBe(1);
  });

  it('closes a connection idle for max_connection_idle with GOAWAY; the client reconnects for its next call', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', max_connection_idle: '300ms' } });
    const client = grpcClient(harness.grpcTarget);
    expect(await exportOn(client)).toBeNull();
    expect(client.getChannel().getConnectivityState(false)).toBe(connectivityState.READY);
    expect(await openConnections(harness)).toBe(1);

    await waitUntil(async () => (await openConnections(harness)) === 0, 5_000, 'the idle connection to close');
    // The client saw the GOAWAY: its channel went idle rather than failing.
    await waitUntil(() => client.getChannel().getConnectivityState(false) === connectivityState.IDLE, 5_000, 'the channel to go idle');
    expect(await exportOn(client)).toBeNull();
    expect(await openConnections(harness)).toBe(1);
    expect(harness.consumer.batches).toHaveLength(2);
  });

  it('keeps a connection with a call in flight open past max_connection_idle', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', max_connection_idle: '200ms' } });
    const held = holdCalls(harness);
    const client = grpcClient(harness.grpcTarget);
    const call = exportOn(client);
    await waitUntil(() => held.inFlight() === 1, 5_000, 'the call to arrive');
    await pause(600);
    expect(await openConnections(harness)).toBe(1);
    held.release();
    expect(await call).toBeNull();
  });

  it('ends a connection older than max_connection_age with GOAWAY, lets its call finish, and the client reconnects', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', max_connection_age: '300ms', max_connection_age_grace: '10s' } });
    const held = holdCalls(harness);
    const client = grpcClient(harness.grpcTarget);
    const call = exportOn(client);
    await waitUntil(() => held.inFlight() === 1, 5_000, 'the call to arrive');
    // Past the age (300 ms, +10% jitter) the connection has had its GOAWAY; the call in flight is still served.
    await waitUntil(() => client.getChannel().getConnectivityState(false) !== connectivityState.READY, 5_000, 'the GOAWAY');
    held.stopHolding();
    expect(await call).toBeNull();
    await waitUntil(async () => (await openConnections(harness)) === 0, 5_000, 'the old connection to close');

    expect(await exportOn(client)).toBeNull();
    expect(await openConnections(harness)).toBe(1);
    expect(harness.consumer.batches).toHaveLength(2);
  });

  it('cuts a call still running when max_connection_age_grace is over after the GOAWAY', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', max_connection_age: '200ms', max_connection_age_grace: '200ms' } });
    const held = holdCalls(harness);
    const client = grpcClient(harness.grpcTarget);
    const call = exportOn(client);
    await waitUntil(() => held.inFlight() === 1, 5_000, 'the call to arrive');
    const answer = await call;
    expect(answer?.code).toBe(status.UNAVAILABLE);
    held.stopHolding();
    await waitUntil(async () => (await openConnections(harness)) === 0, 5_000, 'the connection to close');
    // A new call gets a new connection.
    expect(await exportOn(client)).toBeNull();
  });

  it('reads 0 as no limit for max_connection_idle and max_connection_age: the connection stays open between calls', async () => {
    const harness = await startReceiver({ grpc: { endpoint: '127.0.0.1:0', max_connection_idle: 0, max_connection_age: 0 } });
    const client = grpcClient(harness.grpcTarget);
    expect(await exportOn(client)).toBeNull();
    await pause(300);
    expect(await openConnections(harness)).toBe(1);
    expect(client.getChannel().getConnectivityState(false)).toBe(connectivityState.READY);
    expect(await exportOn(client)).toBeNull();
    expect(await openConnections(harness)).toBe(1);
  });
});
