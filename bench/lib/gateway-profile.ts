// Reads a V8 .cpuprofile (node --cpu-prof) and ranks functions by self time.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadCpuSeconds } from './proc.js';
import { table, writeSection } from './results.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const IDLE = '(idle)';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  startTime: number; // µs
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  readonly name: string;
  /** Share of the busy (non-idle) time, %. */
  readonly percent: number;
}

/** Where a frame's code lives: a package, a source folder, a Node internal module, or a V8 pseudo-frame. */
function area(frame: CallFrame): string {
  const url = frame.url;
  if (url === '') return frame.functionName === '' ? '(native, unnamed)' : frame.functionName;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1] !== undefined) return pkg[1];
  const own = /\/dist\/((?:src|bench)\/(?:[^/]+\/)?[^/]+)\//.exec(url) ?? /\/dist\/((?:src|bench))\//.exec(url);
  if (own?.[1] !== undefined) return own[1];
  const internal = /^node:(?:internal\/)?([^/]+)/.exec(url);
  if (internal?.[1] !== undefined) return `node:${internal[1]}`;
  return url;
}

function label(frame: CallFrame): string {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (frame.url === '') return name;
  const path = frame.url.startsWith('file://') ? relative(ROOT, fileURLToPath(frame.url)) : frame.url;
  return `${name} ${path}:${frame.lineNumber + 1}`;
}

export interface ProfileSummary {
  /** Top functions by self time. */
  readonly frames: Frame[];
  /** Self time summed per package, source folder or Node module, all of them, largest first. */
  readonly areas: Frame[];
  readonly busyMs: number;
  /**
   * The longest runs of consecutive busy samples (the event loop never went
   * idle in between), longest first, each with the function that had the
   * most self time in it. A run includes time the thread was descheduled.
   */
  readonly stretches: Stretch[];
  /** Runs of consecutive samples that were all batch work (issue 10's list), longest first. */
  readonly batchStretches: BatchStretches;
}

export interface Stretch {
  readonly ms: number;
  readonly top: string;
}

export interface BatchStretches {
  readonly count: number;
  /** Of them, how many lasted more than 2 ms, and how many worked more than 2 ms. */
  readonly over2ms: number;
  readonly workOver2ms: number;
  /** The longest by time worked, with their whole length. */
  readonly longest: BatchRun[];
  /** The profile's median time between two samples. */
  readonly intervalUs: number;
}

export interface BatchRun {
  readonly wallMs: number;
  readonly workMs: number;
  readonly top: string;
}

/**
 * Issue 10's batch work, by where its code lives: a sample whose stack holds
 * one of these frames was doing batch work. Queue appends (the durable write
 * a receiver answers after) are not batch work; reads are.
 */
function batchKind(frame: CallFrame): string | undefined {
  const { url, functionName } = frame;
  if (/\/dist\/src\/otlp\/json-(transcoder|reuse|codec|memo)\.js$/.test(url)) return 'JSON encoding';
  // zlib's own frames count through the code that called them: gzipSliced compresses; the queue's CRC is its append's or its read's.
  if (url.endsWith('/dist/src/exporters/otlphttp/gzip-sliced.js')) return 'compression';
  // A delivery's body is batch work; sending it is the socket's.
  if ((url.endsWith('/dist/src/exporters/otlphttp/transport.js') && functionName === 'serializeBody') || url.endsWith('/dist/src/exporters/otlphttp/body-sliced.js')) return 'delivery body';
  if (url.includes('/dist/src/exporters/file/')) return 'file write';
  if (url.includes('/dist/src/exporters/debug/')) return 'debug output';
  if (url.endsWith('/dist/src/exporters/exporterhelper/batch-reader.js')) return 'queue read';
  if (url.includes('/dist/src/queue/') && /read/i.test(functionName)) return 'queue read';
  return undefined;
}

/** For every node, the batch work its stack is doing (the frame nearest the leaf), if any. */
function batchKinds(nodes: readonly ProfileNode[]): Map<number, string> {
  const parent = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const kinds = new Map<number, string>();
  for (const node of nodes) {
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      const kind = frame === undefined ? undefined : batchKind(frame);
      if (kind !== undefined) {
        kinds.set(node.id, kind);
        break;
      }
    }
  }
  return kinds;
}

const BATCH_STRETCH_LIMIT_US = 2_000;

const STRETCHES_KEPT = 8;

function closeStretch(kept: Stretch[], us: number, self: Map<string, number>): void {
  if (us === 0) return;
  const top = [...self.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '(unknown)';
  kept.push({ ms: us / 1000, top });
  kept.sort((a, b) => b.ms - a.ms);
  kept.length = Math.min(kept.length, STRETCHES_KEPT);
}

function rank(totals: Map<string, number>, busy: number, count: number): Frame[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, percent: (us / busy) * 100 }));
}

/**
 * Which samples count: all but the first `skipMs` of the profile (start-up),
 * or those between two readings of the monotonic clock in µs (monotonicUs()
 * in any process of this machine: V8 stamps its samples with the same clock).
 */
export type ProfileWindow = { readonly skipMs: number } | { readonly fromUs: number; readonly toUs: number };

/** The machine's monotonic clock in µs, the clock a .cpuprofile's samples are stamped with. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** The top `count` functions and areas by self time in the newest profile of `dir`, over `window`. */
export function summarizeProfile(dir: string, count: number, window: ProfileWindow): ProfileSummary {
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .at(-1);
  if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const labels = new Map<number, string>(profile.nodes.map((n) => [n.id, label(n.callFrame)]));
  const areas = new Map<number, string>(profile.nodes.map((n) => [n.id, area(n.callFrame)]));
  const self = new Map<string, number>();
  const byArea = new Map<string, number>();
  let busy = 0;
  let at = profile.startTime; // µs, monotonic
  const [from, to] = 'skipMs' in window ? [profile.startTime + window.skipMs * 1000, Number.POSITIVE_INFINITY] : [window.fromUs, window.toUs];
  const stretches: Stretch[] = [];
  let stretchUs = 0;
  let stretchSelf = new Map<string, number>();
  profile.samples.forEach(function addSample(id, i) {
    const name = labels.get(id) ?? '(unknown)';
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (name === IDLE || at < from || at > to) {
      closeStretch(stretches, stretchUs, stretchSelf);
      stretchUs = 0;
      stretchSelf = new Map();
      return;
    }
    stretchUs += us;
    stretchSelf.set(name, (stretchSelf.get(name) ?? 0) + us);
    busy += us;
    self.set(name, (self.get(name) ?? 0) + us);
    const where = areas.get(id) ?? '(unknown)';
    byArea.set(where, (byArea.get(where) ?? 0) + us);
  });
  closeStretch(stretches, stretchUs, stretchSelf);
  return { frames: rank(self, busy, count), areas: rank(byArea, busy, byArea.size), busyMs: busy / 1000, stretches, batchStretches: batchStretches(profile, from, to) };
}

/**
 * Consecutive samples that were all batch work, named by the kinds in them.
 * Two slices with a turn of the loop between them in which nothing else ran
 * (or less than a sampling interval's worth) count as one run, so each run
 * is at most the longest the loop was held by batch work. A gap between two
 * samples longer than twice the profile's interval is the thread waiting
 * for the core (another thread had it): a run's work counts such a gap as
 * twice the interval.
 */
function batchStretches(profile: CpuProfile, from: number, to: number): BatchStretches {
  const kinds = batchKinds(profile.nodes);
  const sorted = [...profile.timeDeltas].sort((a, b) => a - b);
  const intervalUs = sorted[sorted.length >> 1] ?? 0;
  const runs: BatchRun[] = [];
  let wallUs = 0;
  let workUs = 0;
  let runKinds = new Map<string, number>();
  function close(): void {
    if (wallUs === 0) return;
    const top = [...runKinds.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '(unknown)';
    runs.push({ wallMs: wallUs / 1000, workMs: workUs / 1000, top });
    wallUs = 0;
    workUs = 0;
    runKinds = new Map();
  }
  let at = profile.startTime;
  profile.samples.forEach(function addSample(id, i) {
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    const kind = kinds.get(id);
    if (kind === undefined || at < from || at > to) {
      close();
      return;
    }
    wallUs += us;
    workUs += Math.min(us, 2 * intervalUs);
    runKinds.set(kind, (runKinds.get(kind) ?? 0) + us);
  });
  close();
  const limitMs = BATCH_STRETCH_LIMIT_US / 1000;
  return {
    count: runs.length,
    over2ms: runs.filter((r) => r.wallMs > limitMs).length,
    workOver2ms: runs.filter((r) => r.workMs > limitMs).length,
    longest: runs.sort((a, b) => b.workMs - a.workMs).slice(0, STRETCHES_KEPT),
    intervalUs,
  };
}

/** A measured window of a profiled process: its monotonic bounds and the CPU its threads used in it. */
export interface ThreadWindow {
  readonly fromUs: number;
  readonly toUs: number;
  /** Share of one core, %, of the event loop's thread and of all the others together. */
  readonly mainPercent: number;
  readonly helpersPercent: number;
}

/** Starts timing a window of process `pid`; the function returned ends it. */
export function startThreadWindow(pid: number): () => ThreadWindow {
  const fromUs = monotonicUs();
  const before = threadCpuSeconds(pid);
  return function endThreadWindow() {
    const toUs = monotonicUs();
    const after = threadCpuSeconds(pid);
    const seconds = (toUs - fromUs) / 1e6;
    return { fromUs, toUs, mainPercent: ((after.main - before.main) / seconds) * 100, helpersPercent: ((after.helpers - before.helpers) / seconds) * 100 };
  };
}

/** A results section's "where the time goes": the threads' shares, then the main thread's profile. */
export function profileMarkdown(summary: ProfileSummary, window: ThreadWindow, count: number): string {
  const rows = (list: readonly Frame[]) => list.slice(0, count).map((f) => [`\`${f.name}\``, f.percent.toFixed(1)]);
  const seconds = (window.toUs - window.fromUs) / 1e6;
  return `Over the ${seconds.toFixed(1)} s window Sluice's event-loop thread used ${window.mainPercent.toFixed(1)}% of the core and its other threads together ${window.helpersPercent.toFixed(1)}% (the libuv pool's file writes, fsyncs and zlib, V8's collector and compiler, the profiler's sampler), read from \`/proc/<pid>/task\`. The tables are that thread's \`node --cpu-prof\` samples in the same window (${Math.round(summary.busyMs).toLocaleString('en-US')} ms busy). The profiler samples the thread's stack on a timer, so a native call (\`writev\`: socket writes; \`writeBuffers\`, \`fdatasync\`: handing a file write or sync to the libuv pool) is charged for time the thread spent in it off the core too, blocked or waiting for its turn, and *busy* need not equal the thread's CPU time. The profiler's sampling thread is kept at \`SCHED_OTHER\` (\`bench/lib/sampler-thread.ts\`).

${table(['self time by package / source folder', '% of busy'], rows(summary.areas))}

${table(['top functions by self time', '% of busy'], rows(summary.frames))}

${table(['longest runs without an idle sample, ms', 'most self time in the run'], summary.stretches.map((s) => [s.ms.toFixed(1), `\`${s.top}\``]))}

${batchStretchesMarkdown(summary.batchStretches)}`;
}

function batchStretchesMarkdown(runs: BatchStretches): string {
  if (runs.count === 0) return 'No sample in the window was batch work.';
  const interval = (runs.intervalUs / 1000).toFixed(2);
  return `**Batch work's hold on the loop.** Runs of consecutive samples that were all batch work (JSON encoding, compression, delivery bodies, file writes, debug output, queue reads; the durable append a receiver answers after is not counted): ${runs.count.toLocaleString('en-US')} runs; ${runs.over2ms} lasted longer than 2 ms, and ${runs.workOver2ms} of them worked longer than 2 ms. *Worked* counts a gap between two samples of more than twice the sampling interval (${interval} ms here) as twice the interval: the rest of such a gap the thread was waiting for the core while another thread had it. Two slices with a turn of the loop between them in which nothing else was sampled count as one run, so a run is at most how long batch work held the loop, known to about the interval (\`SLUICE_BENCH_NODE_FLAGS=--cpu-prof-interval=100\` samples every 0.1 ms).

${table(['longest runs of batch work: worked ms', 'lasted ms', 'mostly'], runs.longest.map((r) => [r.workMs.toFixed(2), r.wallMs.toFixed(2), r.top]))}`;
}

/** What a profiled run reports: its measured window and the sentence that introduces its section. */
export interface ProfiledRun {
  readonly threads: ThreadWindow;
  readonly intro: string;
}

/**
 * A scenario's `--cpu-prof` mode: `run` starts Sluice under the profiler
 * writing into the directory it is given, measures and stops it; then the
 * section `<scenario>-profile` gets its introduction and where the time went
 * in the window. KEEP_PROFILE=1 keeps the .cpuprofile.
 */
export async function writeProfileSection(scenario: string, title: string, count: number, run: (profileDir: string) => Promise<ProfiledRun>): Promise<void> {
  const profileDir = await mkdtemp(join(tmpdir(), `sluice-bench-${scenario}-profile-`));
  try {
    const { threads, intro } = await run(profileDir);
    const summary = summarizeProfile(profileDir, count, threads);
    writeSection(`${scenario}-profile`, title, `${intro}\n\n${profileMarkdown(summary, threads, count)}`);
  } finally {
    if (process.env.KEEP_PROFILE === undefined) await rm(profileDir, { recursive: true, force: true });
    else process.stdout.write(`profile kept in ${profileDir}\n`);
  }
}
