// `sluice run` moves V8's helper threads to SCHED_BATCH and leaves the event
// loop's thread and libuv's pool alone; without chrt, or with
// SLUICE_HELPER_THREADS=default, every thread keeps its policy and the daemon
// serves as before. libuv's pool has 16 threads unless the user sets its
// size. Read from /proc, as the kernel sees the threads.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { libuvPoolSize } from '../../src/core/helper-threads.js';
import { startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';

/** The daemon's module run directly, without the sluice command's list of the threads that exist before the pool. */
const CLI_MODULE = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));

const SCHED_OTHER = 0;
const SCHED_BATCH = 3;

/** The scheduling policy (field 41) of a /proc/<pid>/task/<tid>/stat line; the command name may hold spaces. */
function policyFromStat(text: string): number {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(fields[38]); // fields[0] is field 3
}

async function threadPolicies(pid: number): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => undefined);
    if (stat !== undefined) out.set(Number(tid), policyFromStat(stat));
  }
  return out;
}

const config = ({ dir, adminPort }: { dir: string; adminPort: number }): string => `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:0" } } }
exporters:
  file: { path: "${join(dir, 'traces.jsonl')}" }
service:
  storage: { directory: "${join(dir, 'data')}" }
  telemetry: { logs: { level: debug } }
  admin: { endpoint: "127.0.0.1:${adminPort}" }
  pipelines: { traces: { receivers: [otlp], exporters: [file] } }
`;

function logged(daemon: RunningDaemon, message: string): Record<string, unknown> | undefined {
  for (const line of daemon.logs) {
    if (!line.includes(message)) continue;
    return JSON.parse(line) as Record<string, unknown>;
  }
  return undefined;
}

let daemon: RunningDaemon | undefined;
afterEach(async () => {
  await daemon?.cleanup();
  daemon = undefined;
});

describe.runIf(process.platform === 'linux')('helper threads', () => {
  it("runs V8's helper threads as SCHED_BATCH and leaves the event loop and libuv's pool to preempt", async () => {
    daemon = await startDaemon(config, { env: { UV_THREADPOOL_SIZE: '' } });
    const pid = daemon.child.pid as number;
    await waitUntil(() => logged(daemon as RunningDaemon, 'helper threads') !== undefined, 10_000, 'the helper-threads log line');
    const line = logged(daemon, 'helper threads run as SCHED_BATCH');
    expect(line, daemon.logs.join('\n')).toBeDefined();

    const policies = await threadPolicies(pid);
    expect(policies.get(pid)).toBe(SCHED_OTHER);
    const helpers = [...policies].filter(([tid]) => tid !== pid);
    const batched = helpers.filter(([, policy]) => policy === SCHED_BATCH);
    const preempting = helpers.filter(([, policy]) => policy === SCHED_OTHER);
    // V8's platform workers (at least one) are batched; libuv's pool (16 threads, the sluice command's default) is not.
    expect(batched.length).toBeGreaterThanOrEqual(1);
    expect(batched.length).toBe(line?.threads);
    expect(preempting.length).toBe(16);
    expect(line?.poolThreads).toBe(16);
    expect(batched.length + preempting.length).toBe(helpers.length);
    expect((await fetch(`http://127.0.0.1:${daemon.adminPort}/readyz`)).status).toBe(200);
  });

  it('batches every helper when run as cli.js, which cannot tell the pool from V8', async () => {
    daemon = await startDaemon(config, { entry: CLI_MODULE });
    const pid = daemon.child.pid as number;
    await waitUntil(() => logged(daemon as RunningDaemon, 'helper threads') !== undefined, 10_000, 'the helper-threads log line');
    const line = logged(daemon, 'helper threads run as SCHED_BATCH');
    expect(line, daemon.logs.join('\n')).toBeDefined();
    expect(line?.poolThreads).toBe(0);

    const policies = await threadPolicies(pid);
    expect(policies.get(pid)).toBe(SCHED_OTHER);
    const helpers = [...policies].filter(([tid]) => tid !== pid);
    // libuv's default pool of 4 and V8's workers, all batched.
    expect(helpers.length).toBeGreaterThanOrEqual(5);
    for (const [, policy] of helpers) expect(policy).toBe(SCHED_BATCH);
    expect(line?.threads).toBe(helpers.length);
  });

  it('batches every helper, and says why, when a preload started the pool before the list was made', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-preload-'));
    try {
      // An --import preload runs on the ES module loader, which starts libuv's pool before sluice.cjs runs.
      const preload = join(dir, 'preload.mjs');
      await writeFile(preload, 'export {};\n');
      daemon = await startDaemon(config, { env: { NODE_OPTIONS: `--import=${preload}`, UV_THREADPOOL_SIZE: '' } });
      const pid = daemon.child.pid as number;
      await waitUntil(() => logged(daemon as RunningDaemon, 'helper threads') !== undefined, 10_000, 'the helper-threads log line');
      const line = logged(daemon, 'helper threads run as SCHED_BATCH');
      expect(line, daemon.logs.join('\n')).toBeDefined();
      expect(line?.poolThreads).toBe(0);
      // The pool started at libuv's default of 4, before the sluice command could size it.
      expect(line?.poolUnknown).toBe("0 threads started after the sluice command's list where libuv's pool of 16 was expected");
      const helpers = [...(await threadPolicies(pid))].filter(([tid]) => tid !== pid);
      for (const [, policy] of helpers) expect(policy).toBe(SCHED_BATCH);
      expect(line?.threads).toBe(helpers.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads UV_THREADPOOL_SIZE as libuv does', () => {
    expect(libuvPoolSize(undefined)).toBe(4);
    expect(libuvPoolSize('16')).toBe(16);
    expect(libuvPoolSize('')).toBe(1);
    expect(libuvPoolSize('0')).toBe(1);
    expect(libuvPoolSize('abc')).toBe(1);
    expect(libuvPoolSize('8threads')).toBe(8);
    expect(libuvPoolSize('5000')).toBe(1024);
  });

  it("gives libuv's pool 16 threads, or as many as UV_THREADPOOL_SIZE says", async () => {
    const helpersOf = async (env: Record<string, string>): Promise<number> => {
      daemon = await startDaemon(config, { env });
      await waitUntil(() => logged(daemon as RunningDaemon, 'helper threads run as SCHED_BATCH') !== undefined, 10_000, 'the helper-threads log line');
      // The log line comes once the pool exists: its start-up made sure of it.
      const helpers = (await threadPolicies(daemon.child.pid as number)).size - 1;
      await daemon.cleanup();
      daemon = undefined;
      return helpers;
    };
    // Empty counts as unset, whatever this test's own environment holds.
    const withDefault = await helpersOf({ UV_THREADPOOL_SIZE: '' });
    const withFour = await helpersOf({ UV_THREADPOOL_SIZE: '4' });
    expect(withDefault - withFour).toBe(12);
  });

  it('leaves every thread alone with SLUICE_HELPER_THREADS=default', async () => {
    daemon = await startDaemon(config, { env: { SLUICE_HELPER_THREADS: 'default' } });
    const pid = daemon.child.pid as number;
    await waitUntil(() => logged(daemon as RunningDaemon, 'helper threads keep their scheduling policy') !== undefined, 10_000, 'the helper-threads log line');
    expect(logged(daemon, 'helper threads keep their scheduling policy')?.reason).toBe('SLUICE_HELPER_THREADS=default');
    const policies = await threadPolicies(pid);
    expect(policies.size).toBeGreaterThan(1);
    for (const policy of policies.values()) expect(policy).toBe(SCHED_OTHER);
  });

  it('keeps serving, and says why, when chrt is not installed', async () => {
    const emptyPath = await mkdtemp(join(tmpdir(), 'sluice-no-chrt-'));
    try {
      daemon = await startDaemon(config, { env: { PATH: emptyPath } });
      const pid = daemon.child.pid as number;
      await waitUntil(() => logged(daemon as RunningDaemon, 'moving them to SCHED_BATCH failed') !== undefined, 10_000, 'the failure log line');
      const line = logged(daemon, 'moving them to SCHED_BATCH failed');
      expect(line?.level).toBe(30); // info: the daemon runs on
      expect(line?.err).toBe('chrt (util-linux) is not installed');
      for (const policy of (await threadPolicies(pid)).values()) expect(policy).toBe(SCHED_OTHER);
      expect((await fetch(`http://127.0.0.1:${daemon.adminPort}/readyz`)).status).toBe(200);
    } finally {
      await rm(emptyPath, { recursive: true, force: true });
    }
  });
});
