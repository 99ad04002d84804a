// Issue 2's benchmark: OTLP/HTTP protobuf in -> resource processor ->
// otlphttp protobuf out to a local sink, batches of 100 spans with 10
// attributes each. In one run: (a) maximum sustained spans/s with the daemon
// on one core, (b) its CPU share and RSS at a steady 10,000 spans/s, and
// (c) the same for a bare passthrough that forwards bytes unparsed.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDaemon, startProcess } from './lib/daemon.js';
import { closedLoop, openLoop } from './lib/load.js';
import { SPANS_PER_REQUEST, makeRequests } from './lib/payload.js';
import { measure } from './lib/proc.js';
import { pinSelf, table, writeSection } from './lib/results.js';
import { startSink } from './lib/sink.js';

const DAEMON_CORE = 1;
const LOAD_CORE = 0;
const WARMUP_MS = 3_000;
// At 100 requests/s V8 is still compiling the hot path 15 s after start
// (a quarter of the CPU samples were TurboFan); steady state means after that.
const STEADY_WARMUP_MS = 30_000;
const MAX_MS = 10_000;
const STEADY_MS = 15_000;
const STEADY_SPANS_PER_SECOND = 10_000;
const CONCURRENCY = 32;
const OTLP_PORT = 14318;
const ADMIN_PORT = 14133;
const PASSTHROUGH_PORT = 14319;

export interface Target {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export function sluiceConfig(sinkUrl: string, queue: 'disk' | 'memory' = 'disk') {
  return (dir: string) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${OTLP_PORT} }
processors:
  resource:
    attributes: { platform.projectId: prj_bench, platform.deploymentId: dpl_bench }
exporters:
  otlphttp/sink:
    endpoint: ${sinkUrl}
    encoding: protobuf
    compression: none
    sending_queue: { storage: ${queue} }
service:
  storage: { directory: ${join(dir, 'data')} }
  admin: { endpoint: 127.0.0.1:${ADMIN_PORT} }
  telemetry: { logs: { level: warn } }
  pipelines:
    traces: { receivers: [otlp], processors: [resource], exporters: [otlphttp/sink] }
`;
}

export async function startSluice(sinkUrl: string, queue: 'disk' | 'memory' = 'disk'): Promise<Target> {
  const daemon = await startDaemon(sluiceConfig(sinkUrl, queue), ADMIN_PORT, DAEMON_CORE);
  return { name: `sluice (${queue} queue)`, url: `http://127.0.0.1:${OTLP_PORT}/v1/traces`, pid: daemon.pid, stop: daemon.stop };
}

export async function startPassthrough(sinkUrl: string): Promise<Target> {
  const script = fileURLToPath(new URL('./lib/passthrough.js', import.meta.url));
  const p = await startProcess([script, String(PASSTHROUGH_PORT), sinkUrl], DAEMON_CORE);
  return { name: 'bare passthrough', url: `http://127.0.0.1:${PASSTHROUGH_PORT}/v1/traces`, pid: p.pid, stop: p.stop };
}

export async function maxThroughput(target: Target, bodies: Uint8Array[]): Promise<{ spansPerSecond: number; failures: number }> {
  await closedLoop(target.url, bodies, CONCURRENCY, WARMUP_MS);
  const r = await closedLoop(target.url, bodies, CONCURRENCY, MAX_MS);
  return { spansPerSecond: (r.requests * SPANS_PER_REQUEST) / r.seconds, failures: r.failures };
}

export async function steady(target: Target, bodies: Uint8Array[]) {
  const rate = STEADY_SPANS_PER_SECOND / SPANS_PER_REQUEST;
  await openLoop(target.url, bodies, rate, STEADY_WARMUP_MS);
  const [load, usage] = await Promise.all([openLoop(target.url, bodies, rate, STEADY_MS), measure(target.pid, STEADY_MS - 500)]);
  return { ...usage, failures: load.failures };
}

async function main(): Promise<void> {
  pinSelf(LOAD_CORE);
  const bodies = makeRequests(200);
  const sink = await startSink();
  const rows: Array<Array<string | number>> = [];
  for (const start of [startSluice, startPassthrough]) {
    const target = await start(sink.url);
    try {
      // Steady state first, so its RSS is not the heap grown at full load.
      const s = await steady(target, bodies);
      const max = await maxThroughput(target, bodies);
      rows.push([
        target.name,
        Math.round(max.spansPerSecond).toLocaleString('en-US'),
        s.cpuPercent.toFixed(1),
        `${s.userPercent.toFixed(1)} / ${s.systemPercent.toFixed(1)}`,
        s.rssMiB.toFixed(0),
        max.failures + s.failures,
      ]);
    } finally {
      await target.stop();
    }
  }
  await sink.close();
  writeSection(
    'otlp-throughput',
    'OTLP/HTTP protobuf -> resource -> otlphttp (issue 2)',
    `Load generator and sink pinned to core ${LOAD_CORE}, the process under test to core ${DAEMON_CORE}. Requests of ${SPANS_PER_REQUEST} spans with 10 attributes each; ${CONCURRENCY} concurrent keep-alive connections for the maximum (${MAX_MS / 1000} s after ${WARMUP_MS / 1000} s warm-up); an open loop of ${STEADY_SPANS_PER_SECOND / SPANS_PER_REQUEST} requests/s for the steady state (${STEADY_MS / 1000} s, after ${STEADY_WARMUP_MS / 1000} s at that rate so that V8 has finished compiling the hot path). Sluice acknowledges only after its durable queue has fsynced the data.

${table(['process', 'max spans/s (acknowledged)', `CPU % of one core at ${STEADY_SPANS_PER_SECOND.toLocaleString('en-US')} spans/s`, 'user / system %', 'peak RSS MiB', 'non-200 answers'], rows)}

Targets (issue 2): at least 200,000 spans/s on one core; at 10,000 spans/s at most 5% of one core and 100 MiB RSS.`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
