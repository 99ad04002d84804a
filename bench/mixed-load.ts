// Issue 10's mixed load, the sidecar's real load: the gateway at 1,000
// requests/s with a realistic request (system prompt, max_tokens,
// temperature, tools) while deployments send 10,000 spans/s over OTLP/HTTP,
// with config.example.yaml's exporters (drains, file, debug) and one JSON
// drain to a local sink. Three paths in one run, each under the same load:
// direct (gateway load to the upstream, OTLP to the sink), the bare relays
// (a Node gateway relay and an OTLP passthrough, both on the measured core),
// and Sluice. Added = a path's percentile minus the direct percentile.
import { closedLoop, openLoop, percentile, type OpenLoopResult, type Target } from './lib/gateway-load.js';
import { withBackground } from './lib/gateway-machine.js';
import { API_KEY, gatewayReceiverYaml, MODEL, realisticChatBody, startPassthrough, startProcessOnCore, startSluiceWith, startUpstream, type Running } from './lib/gateway-targets.js';
import { startThreadWindow, writeProfileSection, type ThreadWindow } from './lib/gateway-profile.js';
import { addBuckets, delayBuckets, delayShares, type DelayWindow } from './lib/loop-delay.js';
import { makeRequests } from './lib/payload.js';
import { measure } from './lib/proc.js';
import { pinSelf, table, writeSection } from './lib/results.js';
import { startSink } from './lib/sink.js';

const MEASURED_CORE = 1;
const LOAD_CORE = 0; // load generators, fake upstream, sink
const UPSTREAM_PORT = 18_821;
const RELAY_PORT = 18_822;
const OTLP_PASSTHROUGH_PORT = 18_823;
const SLUICE_PORT = 18_824;
const SLUICE_OTLP_PORT = 18_825;
const SLUICE_ADMIN_PORT = 18_826;
const GATEWAY_RATE = 1_000; // requests/s
const OTLP_RATE = 100; // requests/s of 100 spans: 10,000 spans/s
const WARMUP_MS = 20_000; // at the rates, so V8 has compiled the hot paths before the window
const MEASURE_MS = 15_000;
const USAGE_MARGIN_MS = 500;
const CONNECTIONS = 64;
const OTLP_CONNECTIONS = 16;
const OTLP_PATH = '/v1/traces';
const OTLP_HEADERS = { 'content-type': 'application/x-protobuf' };
const TOP_FRAMES = 15;
// `node dist/bench/mixed-load.js --cpu-prof`: only Sluice, under --cpu-prof; writes where its time
// goes in the measured window to its own section (mixed-load-profile), leaving the table alone (KEEP_PROFILE=1 keeps the .cpuprofile).
const PROFILE = process.argv.includes('--cpu-prof');
const TARGETS = { gatewayP99AddedMs: 5, otlpP99Ms: 10, cpuPercent: 60, loopStallMs: 2 };

interface PathUnderTest {
  readonly name: string;
  readonly pids: readonly number[];
  readonly gateway: Target;
  readonly gatewayBody: string;
  readonly otlp: Target;
  /** Origins serving sluice_event_loop_delay_seconds at /metrics: Sluice's admin endpoint, each bare relay. */
  readonly loopOrigins: readonly string[];
}

interface Measured {
  readonly name: string;
  readonly gateway: OpenLoopResult;
  readonly otlp: OpenLoopResult;
  readonly cpuPercent: number;
  readonly rssMiB: number;
  readonly others: number;
  readonly loopDelay?: DelayWindow;
  /** The window's bounds and per-thread CPU of the first process under test. */
  readonly threads?: ThreadWindow;
}

function log(line: string): void {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

async function runLoad(path: PathUnderTest, bodies: readonly Uint8Array[], durationMs: number): Promise<[OpenLoopResult, OpenLoopResult]> {
  return Promise.all([
    openLoop(path.gateway, path.gatewayBody, { ratePerSecond: GATEWAY_RATE, durationMs, firstByte: false, connections: CONNECTIONS }),
    openLoop(path.otlp, bodies, { ratePerSecond: OTLP_RATE, durationMs, firstByte: false, connections: OTLP_CONNECTIONS }),
  ]);
}

async function measurePath(path: PathUnderTest, bodies: readonly Uint8Array[], ownPids: readonly number[]): Promise<Measured> {
  log(`${path.name}: warm-up, ${WARMUP_MS / 1000} s at the rates`);
  await closedLoop(path.gateway, path.gatewayBody, 8, 2_000);
  await runLoad(path, bodies, WARMUP_MS);
  log(`${path.name}: measuring ${MEASURE_MS / 1000} s`);
  const before = await Promise.all(path.loopOrigins.map(delayBuckets));
  const first = path.pids[0];
  const endThreads = first === undefined ? undefined : startThreadWindow(first);
  const [[[gateway, otlp], usages], others] = await withBackground([...path.pids, ...ownPids], () =>
    Promise.all([runLoad(path, bodies, MEASURE_MS), Promise.all(path.pids.map((pid) => measure(pid, MEASURE_MS - USAGE_MARGIN_MS)))]),
  );
  const threads = endThreads?.();
  const after = await Promise.all(path.loopOrigins.map(delayBuckets));
  const cpuPercent = usages.reduce((sum, u) => sum + u.cpuPercent, 0);
  const rssMiB = usages.reduce((sum, u) => sum + u.rssMiB, 0);
  const base = { name: path.name, gateway, otlp, cpuPercent, rssMiB, others, ...(threads === undefined ? {} : { threads }) };
  if (path.loopOrigins.length === 0) return base;
  return { ...base, loopDelay: delayShares(addBuckets(before), addBuckets(after)) };
}

const ms = (v: number): string => (Number.isNaN(v) ? 'n/a' : v.toFixed(2));
const signed = (v: number): string => (Number.isNaN(v) ? 'n/a' : `${v >= 0 ? '+' : ''}${v.toFixed(2)}`);
const p = (r: OpenLoopResult, q: number): number => percentile(r.latenciesMs, q);

function report(results: Measured[], spansPerRequest: number): string {
  const direct = results[0];
  if (direct === undefined) throw new Error('no direct measurement');
  const rows = results.map((r) => [
    r.name,
    `${ms(p(r.gateway, 50))} / ${ms(p(r.gateway, 99))}`,
    r === direct ? '—' : `**${signed(p(r.gateway, 50) - p(direct.gateway, 50))} / ${signed(p(r.gateway, 99) - p(direct.gateway, 99))}**`,
    `${ms(p(r.otlp, 50))} / ${ms(p(r.otlp, 99))}`,
    `${r.gateway.failed + r.gateway.unfinished} / ${r.otlp.failed + r.otlp.unfinished}`,
    r === direct ? '—' : r.cpuPercent.toFixed(0),
    r === direct ? '—' : r.rssMiB.toFixed(0),
    r.loopDelay === undefined ? '—' : `${r.loopDelay.over2ms} of ${r.loopDelay.count} (worst ${r.loopDelay.worst})`,
    r.others.toFixed(0),
  ]);
  const sluice = results.find((r) => r.name === 'sluice');
  let verdicts = '';
  if (sluice !== undefined) {
    const added99 = p(sluice.gateway, 99) - p(direct.gateway, 99);
    const otlp99 = p(sluice.otlp, 99);
    const stalls = sluice.loopDelay;
    const verdict = (ok: boolean, by: string): string => (ok ? 'met' : `**missed** by ${by}`);
    verdicts = table(
      ['target (issue 10)', 'Sluice measured', 'verdict'],
      [
        [`gateway p99 added <= ${TARGETS.gatewayP99AddedMs} ms`, `${signed(added99)} ms`, verdict(added99 <= TARGETS.gatewayP99AddedMs, `${(added99 - TARGETS.gatewayP99AddedMs).toFixed(2)} ms`)],
        [`OTLP acknowledgement p99 <= ${TARGETS.otlpP99Ms} ms`, `${ms(otlp99)} ms`, verdict(otlp99 <= TARGETS.otlpP99Ms, `${(otlp99 - TARGETS.otlpP99Ms).toFixed(2)} ms`)],
        [`process below ${TARGETS.cpuPercent}% of its core`, `${sluice.cpuPercent.toFixed(1)}%`, verdict(sluice.cpuPercent < TARGETS.cpuPercent, `${(sluice.cpuPercent - TARGETS.cpuPercent).toFixed(1)} points`)],
        [
          `event loop never held > ${TARGETS.loopStallMs} ms (timer samples late by more)`,
          stalls === undefined ? 'n/a' : `${stalls.over2ms} of ${stalls.count} samples; worst bucket ${stalls.worst}`,
          stalls === undefined ? 'n/a' : verdict(stalls.over2ms === 0, `${stalls.over2ms} samples`),
        ],
      ],
    );
  }
  return `Processes under test pinned to core ${MEASURED_CORE}; the load generators (this process), the fake upstream and the counting sink on core ${LOAD_CORE}. Open loops on fixed schedules, each latency from its *scheduled* send: the gateway at ${GATEWAY_RATE.toLocaleString('en-US')} req/s over ${CONNECTIONS} connections with a realistic request (system prompt, two tools, \`max_tokens\`, \`temperature\`), and OTLP/HTTP protobuf at ${OTLP_RATE} req/s of ${spansPerRequest} spans (${(OTLP_RATE * spansPerRequest).toLocaleString('en-US')} spans/s) over ${OTLP_CONNECTIONS} connections. ${WARMUP_MS / 1000} s at the rates first (JIT warm-up), then ${MEASURE_MS / 1000} s measured.

Paths: **direct** (gateway load straight to the upstream, OTLP straight to the sink: the floor both latencies are measured against); **bare relays** (\`bench/lib/gateway-passthrough.ts\` and \`bench/lib/passthrough.ts\`, two plain Node processes that forward bytes, both on core ${MEASURED_CORE}; CPU and RSS are their sum); **sluice** (\`dist/src/sluice.cjs run\`: receivers \`otlp\` and \`gateway\`, processor \`resource\`, exporters \`drains\`, \`file\` and \`debug\` (\`verbosity: basic\`, logs at info) as in \`config.example.yaml\`, and one config drain, \`format: json\`, \`compression: gzip\`, to the sink; every gateway request's spans go down the same pipeline). Sluice acknowledges OTLP only after its drain queue's durable write and the file write.

| path | gateway p50 / p99 ms | gateway added p50 / p99 ms | OTLP ack p50 / p99 ms | errors (gateway / OTLP) | CPU % of one core | RSS MiB | loop samples > 2 ms | others' CPU % |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

${verdicts}

*Loop samples*: \`sluice_event_loop_delay_seconds\` read from Sluice's \`/metrics\` before and after the window, and the same histogram from each bare relay (both relays' samples added up: each has its own loop); each sample is how late a 20 ms timer ran, so a stall shows only when the timer falls due during it. *Others' CPU* is what processes outside the benchmark used meanwhile, in % of one core: where it is high, the figures are from a busy machine.`;
}

function sluiceYaml(dir: string, sinkUrl: string): string {
  return `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${SLUICE_OTLP_PORT} }
${gatewayReceiverYaml(SLUICE_PORT, UPSTREAM_PORT, 'production')}
processors:
  resource:
    attributes: { platform.projectId: prj_bench, platform.deploymentId: dpl_bench }
exporters:
  drains: {}
  file: { path: ${dir}/traces.jsonl }
  debug: { verbosity: basic }
drains:
  - { name: sink, url: "${sinkUrl}", insecure: true, format: json, compression: gzip }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${SLUICE_ADMIN_PORT} }
  telemetry: { logs: { level: info } }
  pipelines:
    traces: { receivers: [otlp, gateway], processors: [resource], exporters: [drains, file, debug] }
`;
}

const GATEWAY_HEADERS = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };

/** Starts Sluice (under --cpu-prof when profileDir is given), measures it, stops it. */
async function measureSluice(sinkUrl: string, bodies: readonly Uint8Array[], ownPids: readonly number[], profileDir?: string): Promise<Measured> {
  const options = { port: SLUICE_PORT, adminPort: SLUICE_ADMIN_PORT, core: MEASURED_CORE };
  const sluice: Running = await startSluiceWith((dir) => sluiceYaml(dir, sinkUrl), profileDir === undefined ? options : { ...options, profileDir });
  try {
    return await measurePath(
      {
        name: 'sluice',
        pids: [sluice.pid],
        gateway: { origin: sluice.target.origin, path: sluice.target.path, headers: GATEWAY_HEADERS },
        gatewayBody: realisticChatBody(MODEL, false),
        otlp: { origin: `http://127.0.0.1:${SLUICE_OTLP_PORT}`, path: OTLP_PATH, headers: OTLP_HEADERS },
        loopOrigins: [`http://127.0.0.1:${SLUICE_ADMIN_PORT}`],
      },
      bodies,
      ownPids,
    );
  } finally {
    await sluice.stop();
  }
}

/** --cpu-prof: Sluice alone under the load, where its time goes in the measured window. */
function profileSluice(sinkUrl: string, bodies: readonly Uint8Array[], ownPids: readonly number[]): Promise<void> {
  return writeProfileSection('mixed-load', "Mixed load: where Sluice's time goes (issue 10)", TOP_FRAMES, async (profileDir) => {
    const measured = await measureSluice(sinkUrl, bodies, ownPids, profileDir);
    if (measured.threads === undefined) throw new Error('no thread window for Sluice');
    const row = `gateway p50 / p99 ${ms(p(measured.gateway, 50))} / ${ms(p(measured.gateway, 99))} ms, OTLP acknowledgement p50 / p99 ${ms(p(measured.otlp, 50))} / ${ms(p(measured.otlp, 99))} ms, ${measured.cpuPercent.toFixed(0)}% of the core, loop samples > 2 ms ${measured.loopDelay?.over2ms ?? 'n/a'} of ${measured.loopDelay?.count ?? 'n/a'}`;
    log(`sluice under --cpu-prof: ${row}`);
    return {
      threads: measured.threads,
      intro: `The mixed-load scenario above (gateway ${GATEWAY_RATE.toLocaleString('en-US')} req/s with the realistic request plus OTLP ${(OTLP_RATE * 100).toLocaleString('en-US')} spans/s, the example exporters and one JSON drain), Sluice alone, under \`node --cpu-prof\` (\`node dist/bench/mixed-load.js --cpu-prof\`), which costs it some CPU; measured in that run: ${row}.`,
    };
  });
}

async function main(): Promise<void> {
  pinSelf(LOAD_CORE);
  const bodies = makeRequests(50);
  const upstream = await startUpstream(UPSTREAM_PORT, LOAD_CORE);
  const sink = await startSink();
  const ownPids = [process.pid, upstream.pid];
  const results: Measured[] = [];
  try {
    if (PROFILE) {
      await profileSluice(sink.url, bodies, ownPids);
      return;
    }
    results.push(
      await measurePath(
        {
          name: 'direct',
          pids: [],
          loopOrigins: [],
          gateway: upstream.target,
          gatewayBody: realisticChatBody('bench-model', false),
          otlp: { origin: new URL(sink.url).origin, path: OTLP_PATH, headers: OTLP_HEADERS },
        },
        bodies,
        ownPids,
      ),
    );

    const relay = await startPassthrough(RELAY_PORT, UPSTREAM_PORT, MEASURED_CORE);
    const otlpPassthrough = await startProcessOnCore('otlp passthrough', ['passthrough.js', String(OTLP_PASSTHROUGH_PORT), sink.url], MEASURED_CORE, OTLP_PASSTHROUGH_PORT);
    try {
      results.push(
        await measurePath(
          {
            name: 'bare relays',
            pids: [relay.pid, otlpPassthrough.pid],
            loopOrigins: [relay.target.origin, `http://127.0.0.1:${OTLP_PASSTHROUGH_PORT}`],
            gateway: relay.target,
            gatewayBody: realisticChatBody('bench-model', false),
            otlp: { origin: `http://127.0.0.1:${OTLP_PASSTHROUGH_PORT}`, path: OTLP_PATH, headers: OTLP_HEADERS },
          },
          bodies,
          ownPids,
        ),
      );
    } finally {
      await relay.stop();
      await otlpPassthrough.stop();
    }

    results.push(await measureSluice(sink.url, bodies, ownPids));
  } finally {
    await sink.close();
    await upstream.stop();
  }
  writeSection('mixed-load', 'Mixed load: gateway 1,000 req/s + OTLP 10,000 spans/s, example exporters (issue 10)', report(results, 100));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
