// CPU used on this machine by processes other than the benchmark's own: the
// 2-core machine is shared, and a test run elsewhere during a phase shows up
// as latency here. Each phase reports it so a polluted figure can be told.
import { readFileSync } from 'node:fs';
import { cpuSeconds } from './proc.js';

const CLOCK_TICKS = 100; // USER_HZ on Linux
const QUIET_STEP_MS = 1_000;

/** Busy CPU seconds of the whole machine, all cores (everything but idle and iowait). */
function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}

function ownSeconds(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += cpuSeconds(pid);
    } catch {
      // exited: its time is no longer counted either way
    }
  }
  return total;
}

/** Runs `phase` and returns its result with the CPU others used meanwhile, in % of one core. */
export async function withBackground<T>(pids: readonly number[], phase: () => Promise<T>): Promise<[T, number]> {
  const machine0 = machineBusySeconds();
  const own0 = ownSeconds(pids);
  const t0 = performance.now();
  const result = await phase();
  const seconds = (performance.now() - t0) / 1000;
  const others = machineBusySeconds() - machine0 - (ownSeconds(pids) - own0);
  return [result, Math.max(0, (others / seconds) * 100)];
}

/** Waits (at most `maxMs`) until others use less than `percent` of one core over a second; returns what they used last. */
export async function waitForQuiet(pids: readonly number[], percent: number, maxMs: number): Promise<number> {
  let last = Number.POSITIVE_INFINITY;
  for (let waited = 0; waited < maxMs; waited += QUIET_STEP_MS) {
    [, last] = await withBackground(pids, () => new Promise((r) => setTimeout(r, QUIET_STEP_MS)));
    if (last < percent) break;
  }
  return last;
}
