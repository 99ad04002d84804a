// Shared pieces of the fault tests (issue 4): requests whose span ids the
// test knows, a client that records which requests the daemon acknowledged,
// a daemon config with one otlphttp exporter to a local sink, and readers
// for what the sink got and what /metrics says.
import { randomBytes } from 'node:crypto';
import type { Span } from '../../src/otlp/model.js';
import { encodeRequest } from '../../src/otlp/proto-codec.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import type { OtlpSink } from '../helpers/otlp-sink.js';

export const EXPORTER = 'otlphttp/sink';

export interface TestRequest {
  readonly body: Uint8Array;
  readonly spanIds: readonly string[];
}

export function makeRequest(spans: number): TestRequest {
  const traceId = randomBytes(16).toString('hex');
  const start = BigInt(Date.now()) * 1_000_000n;
  const list: Span[] = Array.from({ length: spans }, (_, i) => ({
    traceId,
    spanId: randomBytes(8).toString('hex'),
    name: `op ${i}`,
    kind: 2,
    startTimeUnixNano: (start + BigInt(i)).toString(),
    endTimeUnixNano: (start + BigInt(i) + 1000n).toString(),
    attributes: [{ key: 'url.path', value: { stringValue: `/api/${i}` } }],
    status: { code: 1 },
  }));
  const body = encodeRequest({
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'faults' } },
            { key: 'deployment.environment.name', value: { stringValue: 'production' } },
          ],
        },
        scopeSpans: [{ spans: list }],
      },
    ],
  });
  return { body, spanIds: list.map((s) => s.spanId) };
}

export function makeRequests(count: number, spansEach: number): TestRequest[] {
  return Array.from({ length: count }, () => makeRequest(spansEach));
}

/** POSTs one request; resolves with the status, or 0 when the connection failed. */
export async function post(url: string, request: TestRequest): Promise<number> {
  try {
    const res = await fetch(url, { method: 'POST', body: request.body, headers: { 'content-type': 'application/x-protobuf' } });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Sends every request with `concurrency` in flight; returns those answered 200 (acknowledged). */
export async function sendAll(
  url: string,
  requests: readonly TestRequest[],
  concurrency: number,
  hooks: { readonly stop?: () => boolean; readonly onAck?: (acked: readonly TestRequest[]) => void } = {},
): Promise<TestRequest[]> {
  const acked: TestRequest[] = [];
  let next = 0;
  async function worker(): Promise<void> {
    while (next < requests.length && hooks.stop?.() !== true) {
      const request = requests[next++];
      if (request !== undefined && (await post(url, request)) === 200) {
        acked.push(request);
        hooks.onAck?.(acked);
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return acked;
}

export function spanIdsOf(requests: readonly TestRequest[]): string[] {
  return requests.flatMap((r) => r.spanIds);
}

/** Span ids the sink accepted (200), with repeats. */
export function receivedSpanIds(sink: OtlpSink): string[] {
  return sink.spans().map((s) => s.span.spanId);
}

export async function waitForSpanIds(sink: OtlpSink, ids: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = new Set(receivedSpanIds(sink));
    const missing = ids.filter((id) => !got.has(id)).length;
    if (missing === 0) return;
    if (Date.now() > deadline) throw new Error(`${missing} of ${ids.length} spans never reached the sink`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface FaultDaemonOptions {
  readonly sinkUrl: string;
  readonly otlpPort: number;
  /** Extra YAML under the exporter (indented 4 spaces), e.g. a sending_queue block. */
  readonly exporterYaml?: string;
  readonly serviceYaml?: string;
  readonly dir?: string;
}

export function faultConfig(options: FaultDaemonOptions) {
  return ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${options.otlpPort} }
exporters:
  ${EXPORTER}:
    endpoint: ${options.sinkUrl}
    encoding: protobuf
    compression: none
    timeout: 2s
    retry_on_failure: { initial_interval: 50ms, max_interval: 300ms }
${options.exporterYaml ?? ''}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  telemetry: { logs: { level: warn } }
${options.serviceYaml ?? ''}
  pipelines:
    traces: { receivers: [otlp], exporters: [${EXPORTER}] }
`;
}

export async function startFaultDaemon(options: FaultDaemonOptions): Promise<RunningDaemon> {
  return startDaemon(faultConfig(options), options.dir === undefined ? {} : { dir: options.dir });
}

export async function otlpEndpoint(): Promise<{ port: number; url: string }> {
  const port = await freePort();
  return { port, url: `http://127.0.0.1:${port}/v1/traces` };
}

export async function metricsText(daemon: RunningDaemon): Promise<string> {
  return (await fetch(`http://127.0.0.1:${daemon.adminPort}/metrics`)).text();
}

/** The value of one series in Prometheus text, or undefined when absent. */
export function metricValue(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.indexOf('}');
    const labelText = line.slice(name.length + 1, close);
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) return Number(line.slice(close + 1).trim());
  }
  return undefined;
}
