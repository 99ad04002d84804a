// CPU time and resident memory of a process, read from /proc (Linux).
import { readFileSync } from 'node:fs';

const CLOCK_TICKS = 100; // USER_HZ on Linux

export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may contain spaces, start after ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / CLOCK_TICKS;
}

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

/** Samples a process over a window: CPU share of one core and peak RSS. */
export async function measure(pid: number, windowMs: number): Promise<{ cpuPercent: number; rssMiB: number }> {
  const cpu0 = cpuSeconds(pid);
  const t0 = process.hrtime.bigint();
  let peak = rssMiB(pid);
  const step = 250;
  for (let waited = 0; waited < windowMs; waited += step) {
    await new Promise((r) => setTimeout(r, step));
    peak = Math.max(peak, rssMiB(pid));
  }
  const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  return { cpuPercent: ((cpuSeconds(pid) - cpu0) / elapsed) * 100, rssMiB: peak };
}
