// The gateway maximum of one process under test: a check request, a closed-loop
// warm-up, then a closed loop measured beside its CPU and the others' CPU.
import { closedLoop } from './gateway-load.js';
import { withBackground } from './gateway-machine.js';
import type { Running } from './gateway-targets.js';
import { measure } from './proc.js';
import { startThreadWindow, type ThreadWindow } from './gateway-profile.js';

export interface MaximumRow {
  readonly name: string;
  readonly perSecond: number;
  readonly failed: number;
  readonly cpuPercent: number;
  readonly others: number;
  /** The measured window's bounds and the process's per-thread CPU in it. */
  readonly threads: ThreadWindow;
}

export interface MaximumOptions {
  readonly connections: number;
  readonly warmupMs: number;
  readonly maxMs: number;
  /** How much shorter than the loop the CPU window is. */
  readonly usageMarginMs: number;
}

export function log(line: string): void {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

export async function maximum(run: Running, body: string, ownPids: readonly number[], o: MaximumOptions): Promise<MaximumRow> {
  const check = await fetch(`${run.target.origin}${run.target.path}`, { method: 'POST', headers: run.target.headers, body });
  if (check.status !== 200) throw new Error(`${run.name}: answered ${check.status}: ${(await check.text()).slice(0, 300)}`);
  await check.arrayBuffer();
  log(`${run.name}: warm-up, then ${o.maxMs / 1000} s closed loop`);
  await closedLoop(run.target, body, o.connections, o.warmupMs);
  const endThreads = startThreadWindow(run.pid);
  const [[max, usage], others] = await withBackground([run.pid, ...ownPids], () => Promise.all([closedLoop(run.target, body, o.connections, o.maxMs), measure(run.pid, o.maxMs - o.usageMarginMs)]));
  return { name: run.name, perSecond: max.perSecond, failed: max.failed, cpuPercent: usage.cpuPercent, others, threads: endThreads() };
}
