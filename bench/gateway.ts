// Issue 5's benchmark: the same fake OpenAI-compatible upstream reached three
// ways (direct, through Sluice's gateway receiver, through @portkey-ai/gateway
// 1.15.2), all at the same request rates. Sluice runs with spans on: every
// request's SERVER and CLIENT spans go down a pipeline to the file exporter.
// Latency added by a gateway = its percentile minus the direct percentile.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedLoop, openLoop, percentile, type ClosedLoopResult, type OpenLoopResult } from './lib/gateway-load.js';
import { waitForQuiet, withBackground } from './lib/gateway-machine.js';
import { summarizeProfile, type ProfileSummary } from './lib/gateway-profile.js';
import { startPassthrough, startPortkey, startSluice, startUpstream, viaAiSdkProtocol, type Running } from './lib/gateway-targets.js';
import { measure } from './lib/proc.js';
import { startSink, type Sink } from './lib/sink.js';
import { pinSelf, table, writeSection } from './lib/results.js';

const GATEWAY_CORE = 1;
const LOAD_CORE = 0; // load generator and fake upstream
const UPSTREAM_PORT = 18_801;
const SLUICE_PORT = 18_802;
const SLUICE_ADMIN_PORT = 18_803;
const PORTKEY_PORT = 18_804;
const PASSTHROUGH_PORT = 18_805;
const WARMUP_MS = 2_000;
const WARMUP_CONNECTIONS = 8;
const LOW_RATE = 100; // requests/s
const HIGH_RATE = 1_000; // requests/s
const STEADY_MS = 10_000;
const STREAM_RATE = 100; // requests/s
const STREAM_MS = 10_000;
const OPEN_CONNECTIONS = 64; // enough that a slow answer never holds back a scheduled send
const MAX_CONNECTIONS = 64;
const MAX_WARMUP_MS = 3_000;
const MAX_MS = 10_000;
const USAGE_MARGIN_MS = 500; // the CPU/RSS window ends this long before its load phase
const PROFILE_MS = 5_000;
const PROFILE_WARMUP_MS = 2_000;
const TOP_FRAMES = 12;
const QUIET_PERCENT = 15; // % of one core others may use before a path starts
const QUIET_WAIT_MS = 5_000;

interface Usage {
  cpuPercent: number;
  rssMiB: number;
}

interface Measured {
  name: string;
  low: OpenLoopResult;
  high: OpenLoopResult;
  highUsage: Usage;
  stream: OpenLoopResult;
  max: ClosedLoopResult;
  maxUsage: { gateway: Usage; upstream: Usage; load: Usage };
  /** CPU other processes on the machine used during each phase, % of one core. */
  background: { before: number; low: number; high: number; stream: number; max: number };
}

/** One request of each kind, checked, so a broken path fails the run instead of measuring errors. */
async function smokeTest(run: Running): Promise<void> {
  for (const stream of [false, true]) {
    const target = stream ? (run.streamTarget ?? run.target) : run.target;
    const r = await fetch(`${target.origin}${target.path}`, { method: 'POST', headers: target.headers, body: run.body(stream), signal: AbortSignal.timeout(5_000) });
    const text = await r.text();
    // Chat Completions ends a stream with [DONE]; the AI SDK protocol with a `finish` part.
    const good = r.status === 200 && (stream ? text.trimEnd().endsWith('data: [DONE]') || text.includes('"type":"finish"') : text.includes('"chat.completion"') || text.includes('"finishReason"'));
    if (!good) throw new Error(`${run.name}: ${stream ? 'streamed' : 'plain'} request answered ${r.status}: ${text.slice(0, 300)}`);
  }
}

async function measurePath(run: Running, upstreamPid: number): Promise<Measured> {
  const pids = [...new Set([run.pid, upstreamPid, process.pid])];
  await smokeTest(run);
  const plain = run.body(false);
  const streamed = run.body(true);
  await closedLoop(run.target, plain, WARMUP_CONNECTIONS, WARMUP_MS);
  const before = await waitForQuiet(pids, QUIET_PERCENT, QUIET_WAIT_MS);
  log(`${run.name}: ${LOW_RATE} req/s (others on the machine: ${before.toFixed(0)}% of a core)`);
  const [low, lowOthers] = await withBackground(pids, () => openLoop(run.target, plain, { ratePerSecond: LOW_RATE, durationMs: STEADY_MS, firstByte: false, connections: OPEN_CONNECTIONS }));
  log(`${run.name}: ${HIGH_RATE} req/s`);
  const [[high, highUsage], highOthers] = await withBackground(pids, () =>
    Promise.all([
      openLoop(run.target, plain, { ratePerSecond: HIGH_RATE, durationMs: STEADY_MS, firstByte: false, connections: OPEN_CONNECTIONS }),
      measure(run.pid, STEADY_MS - USAGE_MARGIN_MS),
    ]),
  );
  log(`${run.name}: streaming at ${STREAM_RATE} req/s`);
  const [stream, streamOthers] = await withBackground(pids, () => openLoop(run.streamTarget ?? run.target, streamed, { ratePerSecond: STREAM_RATE, durationMs: STREAM_MS, firstByte: true, connections: OPEN_CONNECTIONS }));
  log(`${run.name}: maximum, ${MAX_CONNECTIONS} connections`);
  await closedLoop(run.target, plain, MAX_CONNECTIONS, MAX_WARMUP_MS);
  const window = MAX_MS - USAGE_MARGIN_MS;
  const [[max, gateway, upstream, load], maxOthers] = await withBackground(pids, () =>
    Promise.all([closedLoop(run.target, plain, MAX_CONNECTIONS, MAX_MS), measure(run.pid, window), measure(upstreamPid, window), measure(process.pid, window)]),
  );
  return {
    name: run.name,
    low,
    high,
    highUsage,
    stream,
    max,
    maxUsage: { gateway, upstream, load },
    background: { before, low: lowOthers, high: highOthers, stream: streamOthers, max: maxOthers },
  };
}

/** Sluice again, under --cpu-prof, at its maximum rate: where its time goes per request. */
export async function profileSluice(sink: Sink): Promise<ProfileSummary> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-profile-'));
  try {
    const run = await startSluice({ port: SLUICE_PORT, adminPort: SLUICE_ADMIN_PORT, upstreamPort: UPSTREAM_PORT, core: GATEWAY_CORE, spansUrl: sink.url, profileDir: dir });
    // Start-up and warm-up are left out: the profile covers the load phase (and shutdown).
    const skipMs = (run.startupMs ?? 0) + PROFILE_WARMUP_MS;
    try {
      const plain = run.body(false);
      await closedLoop(run.target, plain, MAX_CONNECTIONS, PROFILE_WARMUP_MS);
      await closedLoop(run.target, plain, MAX_CONNECTIONS, PROFILE_MS);
    } finally {
      await run.stop();
    }
    return summarizeProfile(dir, TOP_FRAMES, { skipMs });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function log(line: string): void {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

const ms = (v: number): string => (Number.isNaN(v) ? 'n/a' : v.toFixed(2));
const signed = (v: number): string => (Number.isNaN(v) ? 'n/a' : `${v >= 0 ? '+' : ''}${v.toFixed(2)}`);
const count = (v: number): string => Math.round(v).toLocaleString('en-US');

function errors(r: OpenLoopResult): number {
  return r.failed + r.unfinished;
}

function pair(r: OpenLoopResult): string {
  return `${ms(percentile(r.latenciesMs, 50))} / ${ms(percentile(r.latenciesMs, 99))}`;
}

function added(r: OpenLoopResult, base: OpenLoopResult): { p50: number; p99: number } {
  return {
    p50: percentile(r.latenciesMs, 50) - percentile(base.latenciesMs, 50),
    p99: percentile(r.latenciesMs, 99) - percentile(base.latenciesMs, 99),
  };
}

function addedPair(r: OpenLoopResult, base: OpenLoopResult, isBase: boolean): string {
  if (isBase) return '—';
  const a = added(r, base);
  return `**${signed(a.p50)} / ${signed(a.p99)}**`;
}

function achieved(r: OpenLoopResult, durationMs: number): string {
  return count(r.ok / (durationMs / 1000));
}

function verdict(ok: boolean): string {
  return ok ? 'met' : '**missed**';
}

/** Share of busy time in the areas whose name starts with one of `prefixes`, %. */
function share(profile: ProfileSummary, prefixes: readonly string[]): number {
  return profile.areas.filter((a) => prefixes.some((p) => a.name.startsWith(p))).reduce((sum, a) => sum + a.percent, 0);
}

function cpuPerRequest(r: Measured): number {
  return ((r.maxUsage.gateway.cpuPercent / 100) * 1e6) / r.max.perSecond;
}

/** The profile in a sentence or two: where Sluice's added cost goes. */
function profileReading(profile: ProfileSummary, sluice: Measured | undefined, passthrough: Measured | undefined): string {
  const pct = (v: number): string => `${v.toFixed(0)}%`;
  const cost =
    sluice !== undefined && passthrough !== undefined
      ? `At its maximum Sluice spent ${cpuPerRequest(sluice).toFixed(0)} µs of CPU per request, the bare passthrough ${cpuPerRequest(passthrough).toFixed(0)} µs (both inflated when others' CPU is high: the two cores share the machine). `
      : '';
  const gateway = share(profile, ['src/receivers/gateway']);
  const spanPath = share(profile, ['src/exporters', 'src/queue', 'src/otlp', 'src/core', 'node:fs', 'protobufjs', 'long']);
  const io = share(profile, ['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'node:stream_base_commons', 'node:net', 'node:_http_', 'node:streams', 'node:events']);
  return `${cost}Of Sluice's busy time in this profile: ${pct(io)} is Node's HTTP and socket machinery (\`writev\` on loopback includes the kernel delivering the bytes to the peer), ${pct(share(profile, ['undici']))} undici, ${pct(share(profile, ['(garbage collector)']))} garbage collection, ${pct(gateway)} the gateway's own code (mostly \`JSON.parse\` of the request and of the upstream answer, \`JSON.stringify\` of the upstream request, and span attribute writes), ${pct(share(profile, ['prom-client']))} Prometheus metrics, ${pct(share(profile, ['zod']))} zod (plain text requests take a fast path that returns zod's exact output) and ${pct(spanPath)} the span path after the gateway (pipeline, disk queue, otlphttp exporter, \`src/otlp\`, file I/O).`;
}

/** What the counting sink received from Sluice's otlphttp exporter during its measured run. */
interface SpanExports {
  posts: number;
  bytes: number;
}

function report(results: Measured[], profile: ProfileSummary | undefined, spans: SpanExports | undefined): string {
  const base = results[0];
  if (base === undefined) throw new Error('no direct measurement');
  const latencyRows = results.map((r) => [
    r.name,
    pair(r.low),
    addedPair(r.low, base.low, r === base),
    pair(r.high),
    addedPair(r.high, base.high, r === base),
    `${achieved(r.high, STEADY_MS)} req/s`,
    pair(r.stream),
    addedPair(r.stream, base.stream, r === base),
    `${errors(r.low)} / ${errors(r.high)} / ${errors(r.stream)}`,
  ]);
  const capacityRows = results.map((r) => [
    r.name,
    count(r.max.perSecond),
    r.max.failed,
    r === base ? '—' : r.highUsage.cpuPercent.toFixed(0),
    r === base ? '—' : r.highUsage.rssMiB.toFixed(0),
    r === base ? '—' : r.maxUsage.gateway.cpuPercent.toFixed(0),
    r === base ? '—' : ((r.maxUsage.gateway.cpuPercent / 100) * 1e6 / r.max.perSecond).toFixed(0),
    r.maxUsage.upstream.cpuPercent.toFixed(0),
    r.maxUsage.load.cpuPercent.toFixed(0),
    [r.background.low, r.background.high, r.background.stream, r.background.max].map((v) => v.toFixed(0)).join(' / '),
  ]);
  const sluice = results.find((r) => r.name === 'sluice');
  let targets = '';
  if (sluice !== undefined) {
    const a = added(sluice.high, base.high);
    const maxOk = sluice.max.perSecond >= 10_000;
    targets = table(
      ['target (issue 5)', 'Sluice measured', 'verdict'],
      [
        [`p50 added at ${count(HIGH_RATE)} req/s <= 1 ms`, `${signed(a.p50)} ms`, verdict(a.p50 <= 1)],
        [`p99 added at ${count(HIGH_RATE)} req/s <= 5 ms`, `${signed(a.p99)} ms`, verdict(a.p99 <= 5)],
        ['maximum >= 10,000 req/s', `${count(sluice.max.perSecond)} req/s`, maxOk ? 'met' : `**missed** by ${count(10_000 - sluice.max.perSecond)} req/s`],
      ],
    );
  }
  const passthrough = results.find((r) => r.name === 'bare Node passthrough');
  const profileText =
    profile === undefined
      ? ''
      : `### Where Sluice's time goes (node --cpu-prof, ${PROFILE_MS / 1000} s at its maximum rate after ${PROFILE_WARMUP_MS / 1000} s of warm-up, start-up left out; ${count(profile.busyMs)} ms busy)

${table(['self time by package / source folder', '% of busy'], profile.areas.slice(0, TOP_FRAMES).map((f) => [`\`${f.name}\``, f.percent.toFixed(1)]))}

${table(['top functions by self time', '% of busy'], profile.frames.map((f) => [`\`${f.name}\``, f.percent.toFixed(1)]))}

${profileReading(profile, sluice, passthrough)}
`;
  return `Gateway under test pinned to core ${GATEWAY_CORE}; the undici load generator and the fake upstream (its own Node process, \`taskset -c ${LOAD_CORE}\`) share core ${LOAD_CORE}. The fake upstream answers a fixed \`chat.completion\` (non-streaming) or 8 SSE events and \`data: [DONE]\` (streaming) at once. Open loops send on a fixed schedule over ${OPEN_CONNECTIONS} keep-alive connections and time each request from its *scheduled* send (no coordinated omission): ${STEADY_MS / 1000} s each at ${LOW_RATE} and ${count(HIGH_RATE)} req/s (complete answers) and ${STREAM_MS / 1000} s of streams at ${STREAM_RATE} req/s (time to the first body byte). Maximum: closed loop, ${MAX_CONNECTIONS} connections, ${MAX_MS / 1000} s after ${MAX_WARMUP_MS / 1000} s of warm-up. Requests time out after 5 s; stragglers are counted as errors after a 6 s drain. *Added* = the gateway's percentile minus the direct percentile at the same rate (a difference of percentiles, not a percentile of per-request differences).

Sluice: \`dist/src/sluice.cjs run\` with the \`gateway\` receiver, provider \`fake\` (type \`openai\`) serving \`fake/bench-model\`, spans on: each request's SERVER and CLIENT spans go through the \`traces\` pipeline to the \`otlphttp\` exporter (protobuf, \`compression: none\`, default disk-backed sending queue) and on to a counting OTLP sink inside the load generator process (core ${LOAD_CORE}). The gateway batches its spans (up to 512, or every 50 ms) and writes them straight to OTLP protobuf, so the per-request tracing cost is a few attribute writes; the queue and exporter work once per batch.${spans === undefined ? '' : ` During Sluice's measured run the sink received ${count(spans.posts)} export requests, ${(spans.bytes / 1024 / 1024).toFixed(1)} MiB of spans.`} Portkey: \`@portkey-ai/gateway\` 1.15.2 \`--headless\`, started plainly (\`node_modules/@portkey-ai/gateway/build/start-server.js\`; an npm \`overrides\` entry pins its \`@hono/node-server\` to 1.14.1, Portkey #1389, and the smoke test checks a streamed request through it), headers \`x-portkey-provider: openai\` and \`x-portkey-custom-host\`; it has no span export, so its figures carry no tracing cost. *sluice, AI SDK protocol*: the same Sluice configuration (a fresh process) reached as \`createGateway()\` from \`ai\` 6 calls it, \`POST /v1/ai/language-model\` with the same conversation as call options and streaming chosen by the \`ai-language-model-streaming\` header; its answers are AI SDK generate results and stream parts mapped from the upstream's Chat Completions (never the upstream bytes passed through, as on the Chat Completions row).

### Latency, ms (p50 / p99)

${table(
  [
    'path',
    `${LOW_RATE} req/s`,
    `added at ${LOW_RATE}`,
    `${count(HIGH_RATE)} req/s`,
    `added at ${count(HIGH_RATE)}`,
    `achieved at ${count(HIGH_RATE)}`,
    `stream TTFB at ${STREAM_RATE} req/s`,
    'added TTFB',
    `errors (${LOW_RATE} / ${count(HIGH_RATE)} / stream)`,
  ],
  latencyRows,
)}

### Capacity and cost

${table(
  [
    'path',
    `max req/s (${MAX_CONNECTIONS} conns)`,
    'errors at max',
    `gateway CPU % at ${count(HIGH_RATE)} req/s`,
    `gateway peak RSS MiB at ${count(HIGH_RATE)} req/s`,
    'gateway CPU % at max',
    'gateway CPU µs per request at max',
    'upstream CPU % at max',
    'load generator CPU % at max',
    `others' CPU % (${LOW_RATE} / ${count(HIGH_RATE)} / stream / max)`,
  ],
  capacityRows,
)}

CPU % is of one core. The bare Node passthrough (\`bench/lib/gateway-passthrough.ts\`: \`node:http\` server, body forwarded unparsed over an undici pool, answer copied back; no auth, validation or spans) is the floor any Node gateway starts from on this core. The direct row's maximum is the ceiling of core ${LOAD_CORE} (load generator plus upstream), which every gateway row shares. *Others' CPU* is what processes outside the benchmark (other sessions' tests and builds on this shared machine) used during each phase, in % of one core: where it is high, that row's latencies and maximum are pessimistic.

${targets}

${profileText}`;
}

async function main(): Promise<void> {
  pinSelf(LOAD_CORE);
  const upstream = await startUpstream(UPSTREAM_PORT, LOAD_CORE);
  const sink = await startSink();
  const results: Measured[] = [];
  let profile: ProfileSummary | undefined;
  let spanExports: SpanExports | undefined;
  try {
    const starters: Array<() => Promise<Running>> = [
      async () => upstream,
      () => startPassthrough(PASSTHROUGH_PORT, UPSTREAM_PORT, GATEWAY_CORE),
      () => startSluice({ port: SLUICE_PORT, adminPort: SLUICE_ADMIN_PORT, upstreamPort: UPSTREAM_PORT, core: GATEWAY_CORE, spansUrl: sink.url }),
      async () => viaAiSdkProtocol(await startSluice({ port: SLUICE_PORT, adminPort: SLUICE_ADMIN_PORT, upstreamPort: UPSTREAM_PORT, core: GATEWAY_CORE, spansUrl: sink.url })),
      () => startPortkey(PORTKEY_PORT, UPSTREAM_PORT, GATEWAY_CORE),
    ];
    for (const start of starters) {
      const run = await start();
      const posts = sink.requests;
      const bytes = sink.bytes;
      try {
        results.push(await measurePath(run, upstream.pid));
      } finally {
        // stop() waits for the exit, and shutdown flushes the exporter queue first.
        if (run !== upstream) await run.stop();
      }
      if (run.name === 'sluice') spanExports = { posts: sink.requests - posts, bytes: sink.bytes - bytes };
    }
    log('sluice under --cpu-prof');
    profile = await profileSluice(sink);
  } finally {
    await sink.close();
    await upstream.stop();
  }
  writeSection('gateway', 'Chat gateway: direct vs Sluice vs Portkey (issue 5)', report(results, profile, spanExports));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
