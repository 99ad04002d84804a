// Issue 11's benchmark: the same daemon with cluster mode off and on (a
// redis-server on this machine), in one run. Gateway: a key with a
// requests_per_minute limit (local counter vs one Redis script per request),
// latency at a fixed rate and maximum rate. Pipeline: OTLP requests of 10
// traces x 10 spans into a drain whose rules depend on the path (every root
// decision is recorded, locally vs also in Redis), maximum spans/s.
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { closedLoop, openLoop, percentile, type ClosedLoopResult, type OpenLoopResult } from './lib/gateway-load.js';
import { withBackground } from './lib/gateway-machine.js';
import { startSluiceWith, startUpstream, API_KEY, MODEL, type Running } from './lib/gateway-targets.js';
import { closedLoop as otlpClosedLoop } from './lib/load.js';
import { makeRequests, SPANS_PER_REQUEST } from './lib/payload.js';
import { measure } from './lib/proc.js';
import { pinSelf, table, writeSection } from './lib/results.js';
import { startSink } from './lib/sink.js';

const LOAD_CORE = 0; // load generator, fake upstream, redis-server
const SLUICE_CORE = 1;
// Ports the OS hands out, so a run never meets another benchmark's servers.
const [UPSTREAM_PORT, GATEWAY_PORT, ADMIN_PORT, OTLP_PORT, REDIS_PORT] = (await freePorts(5)) as [number, number, number, number, number];
const WARMUP_MS = 3_000;
const RATE = 500; // requests/s
const STEADY_MS = 8_000;
const MAX_MS = 8_000;
const CONNECTIONS = 32;
const OTLP_CONNECTIONS = 8;
const USAGE_MARGIN_MS = 500;

interface Result {
  mode: string;
  steady: OpenLoopResult;
  steadyCpu: number;
  rssMiB: number;
  max: ClosedLoopResult;
  spansPerSecond: number;
  pipelineCpu: number;
  others: number;
}

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<ReturnType<typeof createServer>>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => resolve(server));
    })),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((r) => server.close(r))));
  return ports;
}

function log(message: string): void {
  process.stdout.write(`${message}\n`);
}

function yaml(dir: string, cluster: boolean, sinkUrl: string): string {
  return `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${OTLP_PORT} } } }
  gateway:
    endpoint: 127.0.0.1:${GATEWAY_PORT}
    environment: bench
    api_keys: [{ key: ${API_KEY}, name: bench, requests_per_minute: 100000000 }]
    providers:
      fake: { type: openai, base_url: "http://127.0.0.1:${UPSTREAM_PORT}/v1" }
    models:
      - id: ${MODEL}
        endpoints: [{ provider: fake, model: bench-model }]
exporters:
  drains: {}
drains:
  - name: bench
    url: "${sinkUrl}"
    insecure: true
    compression: none
    sampling:
      - { environment: production, percentage: 100, path_prefix: /api/items/0 }
      - { environment: production, percentage: 10 }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${ADMIN_PORT} }
  telemetry: { logs: { level: warn } }
${cluster ? `  cluster: { redis: { url: "redis://127.0.0.1:${REDIS_PORT}/0", key_prefix: "bench:" }, instance_id: bench }\n` : ''}  pipelines:
    traces: { receivers: [otlp, gateway], exporters: [drains] }
`;
}

async function startRedis(): Promise<() => Promise<void>> {
  const child = spawn('taskset', ['-c', String(LOAD_CORE), 'redis-server', '--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 100));
    try {
      if (execFileSync('redis-cli', ['-p', String(REDIS_PORT), 'ping']).toString().trim() === 'PONG') break;
    } catch {
      // not up yet
    }
  }
  if (execFileSync('redis-cli', ['-p', String(REDIS_PORT), 'ping']).toString().trim() !== 'PONG') throw new Error('redis-server did not start');
  return async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
}

async function measureMode(mode: string, sluice: Running, upstreamPid: number): Promise<Result> {
  const pids = [sluice.pid, upstreamPid, process.pid];
  const body = sluice.body(false);
  const check = await fetch(`${sluice.target.origin}${sluice.target.path}`, { method: 'POST', headers: sluice.target.headers, body });
  if (check.status !== 200) throw new Error(`${mode}: gateway answered ${check.status}: ${await check.text()}`);
  await closedLoop(sluice.target, body, 8, WARMUP_MS);
  log(`${mode}: gateway at ${RATE} req/s`);
  const [[steady, usage], othersSteady] = await withBackground(pids, () =>
    Promise.all([openLoop(sluice.target, body, { ratePerSecond: RATE, durationMs: STEADY_MS, firstByte: false, connections: CONNECTIONS }), measure(sluice.pid, STEADY_MS - USAGE_MARGIN_MS)]),
  );
  log(`${mode}: gateway at its maximum`);
  const [max, othersMax] = await withBackground(pids, () => closedLoop(sluice.target, body, CONNECTIONS, MAX_MS));
  log(`${mode}: pipeline at its maximum`);
  const bodies = makeRequests(50);
  await otlpClosedLoop(`http://127.0.0.1:${OTLP_PORT}/v1/traces`, bodies, OTLP_CONNECTIONS, WARMUP_MS);
  const [[load, pipelineUsage], othersPipeline] = await withBackground(pids, () =>
    Promise.all([otlpClosedLoop(`http://127.0.0.1:${OTLP_PORT}/v1/traces`, bodies, OTLP_CONNECTIONS, MAX_MS), measure(sluice.pid, MAX_MS - USAGE_MARGIN_MS)]),
  );
  return {
    mode,
    steady,
    steadyCpu: usage.cpuPercent,
    rssMiB: Math.max(usage.rssMiB, pipelineUsage.rssMiB),
    max,
    spansPerSecond: (load.requests * SPANS_PER_REQUEST) / load.seconds,
    pipelineCpu: pipelineUsage.cpuPercent,
    others: Math.max(othersSteady, othersMax, othersPipeline),
  };
}

async function main(): Promise<void> {
  pinSelf(LOAD_CORE);
  const stopRedis = await startRedis();
  const upstream = await startUpstream(UPSTREAM_PORT, LOAD_CORE);
  const sink = await startSink();
  const results: Result[] = [];
  try {
    for (const cluster of [false, true]) {
      const mode = cluster ? 'cluster on (Redis)' : 'cluster off';
      const sluice = await startSluiceWith((dir) => yaml(dir, cluster, sink.url), { port: GATEWAY_PORT, adminPort: ADMIN_PORT, core: SLUICE_CORE });
      try {
        results.push(await measureMode(mode, sluice, upstream.pid));
      } finally {
        await sluice.stop();
      }
    }
  } finally {
    await sink.close();
    await upstream.stop();
    await stopRedis();
  }
  const ms = (v: number) => v.toFixed(2);
  const rows = results.map((r) => [
    r.mode,
    `${ms(percentile(r.steady.latenciesMs, 50))} / ${ms(percentile(r.steady.latenciesMs, 99))}`,
    `${r.steady.ok} / ${r.steady.failed}`,
    `${r.steadyCpu.toFixed(1)}%`,
    Math.round(r.max.perSecond).toLocaleString('en-US'),
    Math.round(r.spansPerSecond).toLocaleString('en-US'),
    `${r.pipelineCpu.toFixed(0)}%`,
    `${r.rssMiB.toFixed(0)} MiB`,
    `${r.others.toFixed(0)}%`,
  ]);
  const busy = results.some((r) => r.others > 15);
  writeSection(
    'cluster',
    'Cluster mode off vs on: gateway and pipeline (issue 11)',
    `One daemon pinned to core ${SLUICE_CORE}; load generator, fake upstream and redis-server on core ${LOAD_CORE}. The gateway key has a requests_per_minute limit (so every request is counted: in memory, or by one Redis script); the pipeline feeds a drain whose rules depend on the path, so every root's decision is recorded (on disk, and with cluster on also in Redis). Latency is for ${RATE} req/s over ${STEADY_MS / 1000} s; maxima are closed loops of ${CONNECTIONS} (gateway) and ${OTLP_CONNECTIONS} (OTLP, 100-span requests) connections over ${MAX_MS / 1000} s.${busy ? ' **The machine was busy** (others\' CPU column): treat the figures as rough.' : ''}

${table(['mode', `gateway p50 / p99 ms at ${RATE} req/s`, 'ok / failed', 'daemon CPU at that rate', 'gateway max req/s', 'pipeline max spans/s', 'daemon CPU at pipeline max', 'peak RSS', "others' CPU (max of phases)"], rows)}`,
  );
}

await main();
