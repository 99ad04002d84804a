// CPU time and resident memory of a process, read from /proc (Linux).
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS = 100; // USER_HZ on Linux
/** Indexes into statFields(): utime, stime and the scheduling policy (fields 14, 15 and 41 of proc(5)). */
export const STAT_UTIME = 11;
export const STAT_STIME = 12;
export const STAT_POLICY = 38;

/**
 * The fields of a /proc .../stat file after the command name (which may
 * contain spaces), so index 0 is field 3; undefined when the process or
 * thread is gone.
 */
export function statFields(path: string): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User and system CPU seconds of every thread of the process. */
export function cpuTimes(pid: number): { user: number; system: number } {
  const fields = statFields(`/proc/${pid}/stat`);
  if (fields === undefined) throw new Error(`process ${pid} is gone`);
  return { user: Number(fields[STAT_UTIME]) / CLOCK_TICKS, system: Number(fields[STAT_STIME]) / CLOCK_TICKS };
}

export function cpuSeconds(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

/** Samples a process over a window: CPU share of one core (and its user/system split) and peak RSS. */
export async function measure(pid: number, windowMs: number): Promise<{ cpuPercent: number; userPercent: number; systemPercent: number; rssMiB: number }> {
  const cpu0 = cpuTimes(pid);
  const t0 = process.hrtime.bigint();
  let peak = rssMiB(pid);
  const step = 250;
  for (let waited = 0; waited < windowMs; waited += step) {
    await new Promise((r) => setTimeout(r, step));
    peak = Math.max(peak, rssMiB(pid));
  }
  const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = cpuTimes(pid);
  const userPercent = ((cpu1.user - cpu0.user) / elapsed) * 100;
  const systemPercent = ((cpu1.system - cpu0.system) / elapsed) * 100;
  return { cpuPercent: userPercent + systemPercent, userPercent, systemPercent, rssMiB: peak };
}

/**
 * CPU seconds of the process's main thread (the event loop's) and of all its
 * other threads together (the libuv pool, V8's workers and compiler, the
 * inspector's), read from each thread's /proc stat. A thread that exits
 * between two readings takes its time with it.
 */
export function threadCpuSeconds(pid: number): { main: number; helpers: number } {
  let main = 0;
  let helpers = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const fields = statFields(`/proc/${pid}/task/${tid}/stat`);
    if (fields === undefined) continue; // exited since the listing
    const seconds = (Number(fields[STAT_UTIME]) + Number(fields[STAT_STIME])) / CLOCK_TICKS;
    if (Number(tid) === pid) main += seconds;
    else helpers += seconds;
  }
  return { main, helpers };
}
