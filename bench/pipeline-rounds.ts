// Issue 10's pipeline rounds: the otlp-throughput pipeline (OTLP/HTTP
// protobuf -> resource -> otlphttp protobuf, disk queue) driven at its
// maximum in several closed-loop rounds back to back against one daemon, the
// bare passthrough the same way in the same run. After each round: spans/s
// acknowledged, CPU, RSS, spans delivered during the round and the backlog
// left in the sending queue, which is what explains a round falling behind
// the one before it.
import { startDaemon } from './lib/daemon.js';
import { closedLoop } from './lib/load.js';
import { SPANS_PER_REQUEST, makeRequests } from './lib/payload.js';
import { measure } from './lib/proc.js';
import { pinSelf, table, writeSection } from './lib/results.js';
import { startSink } from './lib/sink.js';
import { startPassthrough as startPassthroughTarget, sluiceConfig, type Target } from './otlp-throughput.js';
import { withBackground } from './lib/gateway-machine.js';
import { startThreadWindow, writeProfileSection, type ThreadWindow } from './lib/gateway-profile.js';

const DAEMON_CORE = 1;
const LOAD_CORE = 0;
const ADMIN_PORT = 14133;
const OTLP_PORT = 14318;
const ROUNDS = 4;
const WARMUP_MS = 3_000;
const ROUND_MS = 10_000;
const CONCURRENCY = 32;
const TARGET_SPANS_PER_SECOND = 200_000;
// `node dist/bench/pipeline-rounds.js --cpu-prof`: only Sluice, under --cpu-prof; writes where its
// time goes over the rounds to its own section (pipeline-rounds-profile), leaving the table alone (KEEP_PROFILE=1 keeps the .cpuprofile).
const PROFILE = process.argv.includes('--cpu-prof');
const PROFILE_FRAMES = 15;

interface Round {
  readonly spansPerSecond: number;
  readonly failures: number;
  readonly cpuPercent: number;
  readonly rssMiB: number;
  readonly others: number;
  /** Spans the exporter delivered during the round, per second (Sluice only). */
  readonly sentPerSecond?: number;
  /** Queue backlog at the end of the round, MiB (Sluice only). */
  readonly backlogMiB?: number;
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${ADMIN_PORT}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'gm'))) total += Number(m[1]);
  return total;
}

function log(line: string): void {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

/** Warm-up, then the rounds back to back; `started` is called as the first round starts. */
async function rounds(target: Target, bodies: Uint8Array[], isSluice: boolean, started?: () => void): Promise<Round[]> {
  await closedLoop(target.url, bodies, CONCURRENCY, WARMUP_MS);
  started?.();
  const out: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    log(`${target.name}: round ${i + 1}`);
    const sent0 = isSluice ? await metric('sluice_exporter_sent_spans_total') : 0;
    const [[load, usage], others] = await withBackground([target.pid, process.pid], () => Promise.all([closedLoop(target.url, bodies, CONCURRENCY, ROUND_MS), measure(target.pid, ROUND_MS - 500)]));
    const round: Round = { spansPerSecond: (load.requests * SPANS_PER_REQUEST) / load.seconds, failures: load.failures, cpuPercent: usage.cpuPercent, rssMiB: usage.rssMiB, others };
    if (!isSluice) out.push(round);
    else {
      const sent = (await metric('sluice_exporter_sent_spans_total')) - sent0;
      out.push({ ...round, sentPerSecond: sent / load.seconds, backlogMiB: (await metric('sluice_queue_size_bytes')) / 2 ** 20 });
    }
  }
  return out;
}

const count = (v: number): string => Math.round(v).toLocaleString('en-US');

/** --cpu-prof: Sluice's rounds under the profiler, where its time goes over all of them. */
function profileSluice(sinkUrl: string, bodies: Uint8Array[]): Promise<void> {
  return writeProfileSection('pipeline-rounds', "Pipeline rounds: where Sluice's time goes (issue 10)", PROFILE_FRAMES, async (profileDir) => {
    const daemon = await startDaemon(sluiceConfig(sinkUrl, 'disk'), ADMIN_PORT, DAEMON_CORE, ['--cpu-prof', '--cpu-prof-dir', profileDir]);
    let list: Round[];
    let threads: ThreadWindow;
    try {
      let endThreads: (() => ThreadWindow) | undefined;
      list = await rounds({ name: 'sluice', url: `http://127.0.0.1:${OTLP_PORT}/v1/traces`, pid: daemon.pid, stop: daemon.stop }, bodies, true, () => (endThreads = startThreadWindow(daemon.pid)));
      if (endThreads === undefined) throw new Error('the rounds did not start');
      threads = endThreads();
    } finally {
      await daemon.stop();
    }
    const measured = list.map((r, i) => `round ${i + 1} ${count(r.spansPerSecond)} spans/s at ${r.cpuPercent.toFixed(0)}%`).join(', ');
    log(`sluice under --cpu-prof: ${measured}`);
    return {
      threads,
      intro: `The pipeline-rounds scenario above (OTLP/HTTP protobuf at the maximum, ${CONCURRENCY} connections, ${ROUNDS} rounds of ${ROUND_MS / 1000} s, disk queue, \`otlphttp\` protobuf to a sink), Sluice alone, under \`node --cpu-prof\` (\`node dist/bench/pipeline-rounds.js --cpu-prof\`), which costs it some CPU; measured in that run: ${measured}. The window is the ${ROUNDS} rounds.`,
    };
  });
}

async function main(): Promise<void> {
  pinSelf(LOAD_CORE);
  const bodies = makeRequests(200);
  const sink = await startSink();
  const results: Array<[string, Round[]]> = [];
  try {
    if (PROFILE) {
      await profileSluice(sink.url, bodies);
      return;
    }
    const daemon = await startDaemon(sluiceConfig(sink.url, 'disk'), ADMIN_PORT, DAEMON_CORE);
    try {
      results.push(['sluice (disk queue)', await rounds({ name: 'sluice', url: `http://127.0.0.1:${OTLP_PORT}/v1/traces`, pid: daemon.pid, stop: daemon.stop }, bodies, true)]);
    } finally {
      await daemon.stop();
    }
    const passthrough = await startPassthroughTarget(sink.url);
    try {
      results.push([passthrough.name, await rounds(passthrough, bodies, false)]);
    } finally {
      await passthrough.stop();
    }
  } finally {
    await sink.close();
  }
  const base = results.find(([name]) => name === 'bare passthrough')?.[1];
  const rows = results.flatMap(([name, list]) =>
    list.map((r, i) => [
      name,
      i + 1,
      count(r.spansPerSecond),
      base?.[i] === undefined ? '—' : (r.spansPerSecond / base[i].spansPerSecond).toFixed(2),
      r.sentPerSecond === undefined ? '—' : count(r.sentPerSecond),
      r.backlogMiB === undefined ? '—' : r.backlogMiB.toFixed(0),
      r.cpuPercent.toFixed(0),
      ((r.cpuPercent / 100) * 1e9 / r.spansPerSecond).toFixed(0),
      r.rssMiB.toFixed(0),
      r.failures,
      r.others.toFixed(0),
    ]),
  );
  const sluice = results[0]?.[1] ?? [];
  const worst = Math.min(...sluice.map((r) => r.spansPerSecond));
  writeSection(
    'pipeline-rounds',
    'Pipeline maximum, round after round (issue 10)',
    `The otlp-throughput pipeline (OTLP/HTTP protobuf, ${SPANS_PER_REQUEST}-span requests -> resource -> otlphttp protobuf to a local sink, disk queue acknowledged after fsync), daemon pinned to core ${DAEMON_CORE}, load generator and sink on core ${LOAD_CORE}. One daemon, ${WARMUP_MS / 1000} s of warm-up, then ${ROUNDS} closed-loop rounds of ${ROUND_MS / 1000} s back to back (${CONCURRENCY} connections); the bare passthrough the same way in the same run. *Delivered* is what the exporter sent to the sink during the round; *backlog* what its queue held when the round ended. CPU per 1,000 spans is the process's CPU time over the spans it acknowledged: it does not depend on how much of the core the process was given, so it shows whether a round got more expensive or only less scheduled. *Others' CPU* is what processes outside the benchmark used meanwhile, in % of one core.

${table(['process', 'round', 'acknowledged spans/s', 'of passthrough', 'delivered spans/s', 'backlog MiB', 'CPU % of one core', 'CPU µs per 1,000 spans', 'peak RSS MiB', 'non-200', "others' CPU %"], rows)}

Target (issue 10): at least ${count(TARGET_SPANS_PER_SECOND)} spans/s in every round: ${worst >= TARGET_SPANS_PER_SECOND ? 'met' : `**missed**, worst round ${count(worst)}`}.`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
