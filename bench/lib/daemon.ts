// Starts the built daemon (dist/src/sluice.cjs) on a generated config, pinned to
// one core when asked, and waits until it is ready.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promptSamplerThread } from './sampler-thread.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const CLI = join(ROOT, 'dist', 'src', 'sluice.cjs');

export interface Daemon {
  pid: number;
  dir: string;
  stop(): Promise<void>;
}

async function waitForReady(adminPort: number, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode}`);
    try {
      const r = await fetch(`http://127.0.0.1:${adminPort}/readyz`);
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('daemon did not become ready');
}

export function withCore(core: number | undefined, command: string, args: string[]): [string, string[]] {
  return core === undefined ? [command, args] : ['taskset', ['-c', String(core), command, ...args]];
}

/** Starts `sluice run` on a config written from `yaml`; `nodeArgs` go to node before the CLI (--cpu-prof, say). */
export async function startDaemon(yaml: (dir: string) => string, adminPort: number, core?: number, nodeArgs: readonly string[] = []): Promise<Daemon> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-'));
  const configPath = join(dir, 'config.yaml');
  await writeFile(configPath, yaml(dir));
  // SLUICE_BENCH_NODE_FLAGS: extra node flags for every Sluice a benchmark starts (--cpu-prof-interval=100, say).
  const extra = (process.env.SLUICE_BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const [command, args] = withCore(core, process.execPath, [...nodeArgs, ...extra, CLI, 'run', '--config', configPath]);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForReady(adminPort, child);
  const pid = await childPid(child, core !== undefined);
  if (nodeArgs.includes('--cpu-prof')) process.stdout.write(`sluice under --cpu-prof: ${await promptSamplerThread(pid)}\n`);
  return {
    pid,
    dir,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** With taskset, the node process is taskset's own pid (taskset execs). */
async function childPid(child: ChildProcess, _pinned: boolean): Promise<number> {
  if (child.pid === undefined) throw new Error('no pid');
  return child.pid;
}

export async function startProcess(args: string[], core?: number): Promise<{ pid: number; stop(): Promise<void> }> {
  const [command, argv] = withCore(core, process.execPath, args);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
  return {
    pid: child.pid ?? 0,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
