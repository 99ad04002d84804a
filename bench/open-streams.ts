// Issue 10's open streams: 1,000 concurrent chat streams of 20 chunks per
// second each (20,000 chunks/s), through the bare Node relay and through
// Sluice (spans on), beside the same streams taken straight from the
// upstream, in one run. Per path: the delay each chunk picks up on the way
// (arrival minus the upstream's write time, on the machine's one clock), CPU
// per relayed chunk and memory per open stream.
import { withBackground } from './lib/gateway-machine.js';
import { API_KEY, startPassthrough, startProcessOnCore, startSluiceWith, type Running } from './lib/gateway-targets.js';
import { percentile, type Target } from './lib/gateway-load.js';
import { cpuTimes, rssMiB } from './lib/proc.js';
import { startThreadWindow, writeProfileSection, type ThreadWindow } from './lib/gateway-profile.js';
import { pinSelf, table, writeSection } from './lib/results.js';
import { startSink } from './lib/sink.js';
import { holdStreams, type StreamLoadResult } from './lib/stream-load.js';

const MEASURED_CORE = 1;
const LOAD_CORE = 0; // the stream clients, the fake upstream and the span sink
const UPSTREAM_PORT = 18_861;
const RELAY_PORT = 18_862;
const SLUICE_PORT = 18_863;
const SLUICE_ADMIN_PORT = 18_864;
const STREAMS = 1_000;
const CHUNKS_PER_SECOND = 20;
const RAMP_MS = 5_000;
const SETTLE_MS = 3_000; // after the last stream opened, before the window
const WINDOW_MS = 10_000;
const STREAM_MS = RAMP_MS + SETTLE_MS + WINDOW_MS + 2_000;
const WARMUP_STREAMS = 100;
const WARMUP_MS = 5_000;
const CHAT_PATH = '/v1/chat/completions';
const MODEL = 'fake/stream-model';
const TARGETS = { addedP99Ms: 5, cpuRatio: 1.5, extraKiB: 16 };
// `node dist/bench/open-streams.js --cpu-prof`: only Sluice, under --cpu-prof; writes where its
// time goes in the window to its own section (open-streams-profile), leaving the table alone (KEEP_PROFILE=1 keeps the .cpuprofile).
const PROFILE = process.argv.includes('--cpu-prof');
const PROFILE_FRAMES = 15;

function streamBody(model: string): (chunks: number) => string {
  return (chunks) =>
    JSON.stringify({
      model,
      messages: [
        { role: 'system', content: 'You are a terse assistant.' },
        { role: 'user', content: 'Tell me a long story.' },
      ],
      max_tokens: chunks,
      temperature: 0.7,
      stream: true,
    });
}

interface Measured {
  readonly name: string;
  readonly load: StreamLoadResult;
  readonly cpuSeconds: number;
  readonly idleRssMiB: number;
  readonly openRssMiB: number;
  readonly others: number;
  /** The window's bounds and the process's per-thread CPU in it. */
  readonly threads?: ThreadWindow;
}

function log(line: string): void {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

async function measurePath(name: string, target: Target, model: string, pid: number | undefined, ownPids: readonly number[]): Promise<Measured> {
  const chunks = Math.round((STREAM_MS / 1000) * CHUNKS_PER_SECOND);
  log(`${name}: warm-up, ${WARMUP_STREAMS} streams`);
  await holdStreams(target, { streams: WARMUP_STREAMS, rampMs: 1_000, chunks: (WARMUP_MS / 1000) * CHUNKS_PER_SECOND, windowMs: () => [0, 0], body: streamBody(model) });
  const idleRssMiB = pid === undefined ? 0 : rssMiB(pid);
  log(`${name}: ${STREAMS} streams x ${CHUNKS_PER_SECOND} chunks/s`);
  const opened = performance.timeOrigin + performance.now();
  const window: [number, number] = [opened + RAMP_MS + SETTLE_MS, opened + RAMP_MS + SETTLE_MS + WINDOW_MS];
  let cpu0 = 0;
  let cpu1 = 0;
  let openRssMiB = 0;
  let threads: ThreadWindow | undefined;
  const sampler = (async function sampleInWindow() {
    if (pid === undefined) return;
    await new Promise((r) => setTimeout(r, RAMP_MS + SETTLE_MS));
    const endThreads = startThreadWindow(pid);
    const t0 = cpuTimes(pid);
    cpu0 = t0.user + t0.system;
    for (let waited = 0; waited < WINDOW_MS; waited += 250) {
      await new Promise((r) => setTimeout(r, 250));
      openRssMiB = Math.max(openRssMiB, rssMiB(pid));
    }
    const t1 = cpuTimes(pid);
    cpu1 = t1.user + t1.system;
    threads = endThreads();
  })();
  const [[load], others] = await withBackground([...(pid === undefined ? [] : [pid]), ...ownPids], () =>
    Promise.all([holdStreams(target, { streams: STREAMS, rampMs: RAMP_MS, chunks, windowMs: () => window, body: streamBody(model) }), sampler]),
  );
  return { name, load, cpuSeconds: cpu1 - cpu0, idleRssMiB, openRssMiB, others, ...(threads === undefined ? {} : { threads }) };
}

function sluiceYaml(dir: string, sinkUrl: string): string {
  return `
receivers:
  gateway:
    endpoint: 127.0.0.1:${SLUICE_PORT}
    environment: production
    api_keys: [${API_KEY}]
    stream_idle_timeout: 60s
    providers:
      fake: { type: openai, base_url: "http://127.0.0.1:${UPSTREAM_PORT}/v1" }
    models:
      - id: ${MODEL}
        endpoints: [{ provider: fake, model: stream-model }]
exporters:
  otlphttp: { endpoint: "${sinkUrl}", encoding: protobuf, compression: none }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${SLUICE_ADMIN_PORT} }
  telemetry: { logs: { level: warn } }
  pipelines:
    traces: { receivers: [gateway], exporters: [otlphttp] }
`;
}

/** Starts Sluice (under --cpu-prof when profileDir is given), holds the streams through it, stops it. */
async function measureSluice(sinkUrl: string, headers: Record<string, string>, ownPids: readonly number[], profileDir?: string): Promise<Measured> {
  const options = { port: SLUICE_PORT, adminPort: SLUICE_ADMIN_PORT, core: MEASURED_CORE };
  const sluice = await startSluiceWith((dir) => sluiceYaml(dir, sinkUrl), profileDir === undefined ? options : { ...options, profileDir });
  try {
    return await measurePath('sluice', { origin: sluice.target.origin, path: CHAT_PATH, headers }, MODEL, sluice.pid, ownPids);
  } finally {
    await sluice.stop();
  }
}

/** --cpu-prof: Sluice alone with the streams open, where its time goes in the window. */
function profileSluice(sinkUrl: string, headers: Record<string, string>, ownPids: readonly number[]): Promise<void> {
  return writeProfileSection('open-streams', "Open streams: where Sluice's time goes (issue 10)", PROFILE_FRAMES, async (profileDir) => {
    const measured = await measureSluice(sinkUrl, headers, ownPids, profileDir);
    if (measured.threads === undefined) throw new Error('no thread window for Sluice');
    const ms = (q: number): string => percentile(measured.load.delaysMs, q).toFixed(2);
    const row = `chunk delay p50 / p99 ${ms(50)} / ${ms(99)} ms, ${((measured.cpuSeconds / (WINDOW_MS / 1000)) * 100).toFixed(0)}% of the core, ${((measured.cpuSeconds * 1e6) / Math.max(1, measured.load.chunks)).toFixed(1)} µs of CPU per chunk`;
    log(`sluice under --cpu-prof: ${row}`);
    return {
      threads: measured.threads,
      intro: `The open-streams scenario above (${STREAMS.toLocaleString('en-US')} streams of ${CHUNKS_PER_SECOND} chunks/s, spans to \`otlphttp\`), Sluice alone, under \`node --cpu-prof\` (\`node dist/bench/open-streams.js --cpu-prof\`), which costs it some CPU; measured in that run: ${row}.`,
    };
  });
}

async function main(): Promise<void> {
  pinSelf(LOAD_CORE);
  const upstream = await startProcessOnCore('stream upstream', ['stream-upstream.js', String(UPSTREAM_PORT)], LOAD_CORE, UPSTREAM_PORT);
  const sink = await startSink();
  const ownPids = [process.pid, upstream.pid];
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };
  const results: Measured[] = [];
  try {
    if (PROFILE) {
      await profileSluice(sink.url, headers, ownPids);
      return;
    }
    results.push(await measurePath('direct', { origin: `http://127.0.0.1:${UPSTREAM_PORT}`, path: CHAT_PATH, headers }, 'stream-model', undefined, ownPids));
    const relay: Running = await startPassthrough(RELAY_PORT, UPSTREAM_PORT, MEASURED_CORE);
    try {
      results.push(await measurePath('bare Node relay', relay.target, 'stream-model', relay.pid, ownPids));
    } finally {
      await relay.stop();
    }
    results.push(await measureSluice(sink.url, headers, ownPids));
  } finally {
    await sink.close();
    await upstream.stop();
  }
  writeSection('open-streams', 'Open streams: 1,000 x 20 chunks/s (issue 10)', report(results));
}

function report(results: Measured[]): string {
  const direct = results[0];
  if (direct === undefined) throw new Error('no direct measurement');
  const ms = (v: number): string => (Number.isNaN(v) ? 'n/a' : v.toFixed(2));
  const signed = (v: number): string => (Number.isNaN(v) ? 'n/a' : `${v >= 0 ? '+' : ''}${v.toFixed(2)}`);
  const p = (r: Measured, q: number): number => percentile(r.load.delaysMs, q);
  const perChunk = (r: Measured): number => (r.cpuSeconds * 1e6) / Math.max(1, r.load.chunks);
  const perStream = (r: Measured): number => ((r.openRssMiB - r.idleRssMiB) * 1024) / STREAMS;
  const rows = results.map((r) => [
    r.name,
    `${ms(p(r, 50))} / ${ms(p(r, 99))}`,
    r === direct ? '—' : `**${signed(p(r, 50) - p(direct, 50))} / ${signed(p(r, 99) - p(direct, 99))}**`,
    r.load.chunks.toLocaleString('en-US'),
    r.load.failedStreams,
    r === direct ? '—' : ((r.cpuSeconds / (WINDOW_MS / 1000)) * 100).toFixed(0),
    r === direct ? '—' : perChunk(r).toFixed(1),
    r === direct ? '—' : `${r.idleRssMiB.toFixed(0)} -> ${r.openRssMiB.toFixed(0)}`,
    r === direct ? '—' : perStream(r).toFixed(0),
    r.others.toFixed(0),
  ]);
  const sluice = results.find((r) => r.name === 'sluice');
  const relay = results.find((r) => r.name === 'bare Node relay');
  let verdicts = '';
  if (sluice !== undefined && relay !== undefined) {
    const added = p(sluice, 99) - p(direct, 99);
    const ratio = perChunk(sluice) / perChunk(relay);
    const extra = perStream(sluice) - perStream(relay);
    const verdict = (ok: boolean, by: string): string => (ok ? 'met' : `**missed** by ${by}`);
    verdicts = table(
      ['target (issue 10)', 'Sluice measured', 'verdict'],
      [
        [`added inter-chunk delay p99 <= ${TARGETS.addedP99Ms} ms`, `${signed(added)} ms`, verdict(added <= TARGETS.addedP99Ms, `${ms(added - TARGETS.addedP99Ms)} ms`)],
        [`CPU per chunk <= ${TARGETS.cpuRatio}x the relay's`, `${ratio.toFixed(2)}x`, verdict(ratio <= TARGETS.cpuRatio, `${(ratio - TARGETS.cpuRatio).toFixed(2)}x`)],
        [`memory per stream <= the relay's + ${TARGETS.extraKiB} KiB`, `relay's ${extra >= 0 ? '+' : '-'} ${Math.abs(extra).toFixed(0)} KiB`, verdict(extra <= TARGETS.extraKiB, `${(extra - TARGETS.extraKiB).toFixed(0)} KiB`)],
      ],
    );
  }
  return `${STREAMS.toLocaleString('en-US')} chat streams opened evenly over ${RAMP_MS / 1000} s, each receiving ${CHUNKS_PER_SECOND} chunks per second from a fake upstream (\`bench/lib/stream-upstream.ts\`: one SSE chunk every 50 ms, carrying the time it was written); measured over ${WINDOW_MS / 1000} s once all are open (${SETTLE_MS / 1000} s after the last opened). The process under test is pinned to core ${MEASURED_CORE}; the stream clients, the upstream and the span sink share core ${LOAD_CORE}. *Delay* is a chunk's arrival at the client minus its write at the upstream (both on this machine's clock), *added* the path's percentile minus direct's. CPU per chunk = the process's CPU time in the window / chunks the clients received in it. Memory per stream = (peak RSS with the streams open - RSS after warm-up) / ${STREAMS}. Sluice runs with spans on (\`otlphttp\`, protobuf, to a sink), so each stream also costs a SERVER and a CLIENT span.

${table(['path', 'chunk delay p50 / p99 ms', 'added p50 / p99 ms', 'chunks timed', 'failed streams', 'CPU % of one core', 'CPU µs per chunk', 'RSS MiB (idle -> open)', 'KiB per open stream', "others' CPU %"], rows)}

${verdicts}

*Others' CPU* is what processes outside the benchmark used meanwhile, in % of one core: where it is high, the delays are the neighbours'.`;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
