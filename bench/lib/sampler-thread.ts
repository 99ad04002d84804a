// Under --cpu-prof, V8's sampling thread wakes every millisecond to take a
// sample of the main thread. Sluice moves its helper threads, that one
// included, to SCHED_BATCH (src/core/helper-threads.ts), and a batch thread
// does not preempt on waking: the sampler then runs mostly when the event
// loop yields, so a lightly loaded loop looks idle and the busy samples it
// does take are skewed towards system calls. Profiled benchmark runs put the
// sampler back to SCHED_OTHER once Sluice has batched its helpers.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { STAT_POLICY, statFields } from './proc.js';

const run = promisify(execFile);
const SCHED_BATCH = 3;
const BATCH_WAIT_MS = 5_000;
const COUNT_MS = 500;
/** The sampler wakes about 1,000 times a second; an idle daemon's other helpers hardly at all. */
const MIN_SAMPLER_WAKEUPS = 200;

function helperTids(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).filter((tid) => tid !== String(pid));
}

function policy(pid: number, tid: string): number {
  return Number(statFields(`/proc/${pid}/task/${tid}/stat`)?.[STAT_POLICY]);
}

function wakeups(pid: number, tid: string): number {
  let status = '';
  try {
    status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
  } catch {
    // the thread exited: no wake-ups to count
  }
  return Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Finds the profiled, still idle process's sampling thread (the helper that
 * wakes most) and gives it SCHED_OTHER back. Returns what it did, for the log.
 */
export async function promptSamplerThread(pid: number): Promise<string> {
  for (let waited = 0; !helperTids(pid).some((tid) => policy(pid, tid) === SCHED_BATCH); waited += 100) {
    if (waited >= BATCH_WAIT_MS) return 'helpers not batched: sampler left as it is';
    await sleep(100);
  }
  const before = new Map(helperTids(pid).map((tid) => [tid, wakeups(pid, tid)]));
  await sleep(COUNT_MS);
  let sampler: string | undefined;
  let most = 0;
  for (const [tid, count] of before) {
    const woke = wakeups(pid, tid) - count;
    if (woke > most) [sampler, most] = [tid, woke];
  }
  if (sampler === undefined || most < MIN_SAMPLER_WAKEUPS) return `no helper woke ${MIN_SAMPLER_WAKEUPS} times in ${COUNT_MS} ms: sampler not found`;
  await run('chrt', ['--other', '--pid', '0', sampler]);
  return `sampler thread ${sampler} (${most} wake-ups in ${COUNT_MS} ms) back to SCHED_OTHER`;
}
